"""The seeds' partial items on the GPU: bank_stride's result at every stride, the exercise's small tiles against
float64, and dynamic-shared-memory padding that holds the copy at the resident blocks asked for."""

from __future__ import annotations

import math

import _checks as C
import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("stride", [1, 2, 4, 8, 16, 32])
def test_bank_stride_adds_reps(stride):
    import cupy

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments.bank_conflicts_global_bound import expected
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import banks as B

    x = device_random_nonzero(100_003, np.float32, 7)
    out = cupy.full_like(x, np.nan)
    runtime.launch(B.bank_stride(stride), 5, B.BLOCK, out, x, np.int64(x.size), np.int32(5))
    assert bool((out == expected(x, 5)).all())
    assert not bool((out == x).any())


@pytest.mark.parametrize("tile", [2, 4])
def test_small_square_tiles_match_float64(tile):
    import cupy

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import matmul as M

    m, n, k = 67, 45, 37
    a, b = device_random_nonzero((m, k), np.float32, 1), device_random_nonzero((k, n), np.float32, 2)
    out = C.poisoned(cupy, (m, n), cupy.float32)
    run = lambda: runtime.launch(M.tiled(tile), (math.ceil(n / tile), math.ceil(m / tile)), (tile, tile),  # noqa: E731
                                 out, a, b, m, n, k)
    for i in range(2):  # poisoned before each run; fenced by device-wide synchronizations (the launch's stream)
        C.poison(out)
        runtime.synchronize()
        run()
        runtime.synchronize()
        C.expect_matmul(out, a, b, f"tiled<{tile}> run {i}")


@pytest.mark.parametrize("blocks", [1, 2, 4])
def test_padding_holds_resident_blocks(blocks):
    from gpumemlab.experiments.occupancy_sweep import BLOCK, padding_for
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import copy as C

    info = runtime.device_info()
    kernel = runtime.get_kernel(C.copy_vec("float4", 4))
    runtime.set_max_dynamic_shared(kernel, info["shared_per_block_optin_bytes"])
    smem = padding_for(kernel, blocks, info)
    assert smem > 0
    assert runtime.max_active_blocks(kernel, BLOCK, smem) == blocks
