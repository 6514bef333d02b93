"""The p2p experiment's SM copy kernels on one GPU (a local copy: the same code paths as a peer copy, without the
peer): every byte copied for sizes that leave a partial grid, a partial bulk chunk and a single granule."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("copier", ["x1", "x4", "x8", "bulk"])
@pytest.mark.parametrize("nbytes", [16, 4096, 8192 * 4 * 3 + 48, (7 << 20) + 16 * 3])
def test_local_sm_copy_equals_the_source(copier, nbytes):
    import cupy

    from gpumemlab.bench.verify import INT_POISON, device_random_nonzero, poison
    from gpumemlab.experiments.p2p import sm_copy
    from gpumemlab.gpu import runtime
    from gpumemlab.gpu.compile import runs_on
    from gpumemlab.kernels import peer as K

    runtime.ensure_device()
    if copier == "bulk" and not runs_on(K.PEER_BULK, runtime.device_arch()):
        pytest.skip("the bulk-copy unit needs sm_90")
    n = nbytes // 4
    src = device_random_nonzero(n + 4, np.int32, 11)
    dst = cupy.empty_like(src)
    poison(dst)
    sm_copy(copier, runtime.current_ordinal(), dst, src, nbytes)()
    cupy.cuda.Device().synchronize()
    got, want = dst.get(), src.get()
    assert np.array_equal(got[:n], want[:n])
    assert (got[n:] == INT_POISON).all()  # nothing past nbytes was written: every tail element keeps the poison
