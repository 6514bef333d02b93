"""stream_map over a Dask array on GPUs: the threaded scheduler on one GPU and a LocalCUDACluster of two workers
(one GPU each) give results bit-identical to the in-process call, and an error in fn names the block."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.ensure_device()
    return cupy


def chain(c):
    for _ in range(20):
        c = c * 1.0001 + 0.25
    return c


def test_threaded_scheduler_equals_the_in_process_call(cp):
    from gpumemlab import stream_map

    x = np.random.default_rng(5).random((300_001, 3), dtype=np.float32)
    want = stream_map(chain, x, chunk_bytes=1 << 20)
    y = stream_map(chain, da.from_array(x, chunks=(100_000, 3)), chunk_bytes=1 << 20)
    got = y.compute(scheduler="threads")
    assert got.tobytes() == want.tobytes() and y.chunks[0] == (100_000, 100_000, 100_000, 1)


@pytest.fixture(scope="module")
def cuda_cluster(two_gpus):
    pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    import sys

    import cloudpickle
    from dask_cuda import LocalCUDACluster

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module

    with LocalCUDACluster(CUDA_VISIBLE_DEVICES="0,1", n_workers=2, threads_per_worker=1,
                          dashboard_address=None, protocol="tcp") as cluster, distributed.Client(cluster) as client:
        yield client


def test_two_cuda_workers_equal_the_in_process_call(cuda_cluster):
    from gpumemlab import stream_map

    x = np.random.default_rng(6).random((1 << 21, 2), dtype=np.float32)
    want = stream_map(chain, x)
    dx = da.from_array(x, chunks=(1 << 18, 2))
    got = stream_map(chain, dx).compute()
    assert got.tobytes() == want.tobytes()
    who = cuda_cluster.run(lambda: __import__("os").environ.get("CUDA_VISIBLE_DEVICES", "")[:1])
    assert sorted(who.values()) == ["0", "1"]  # one GPU per worker


def test_an_error_on_a_cuda_worker_names_the_block(cuda_cluster):
    from gpumemlab import stream_map

    class Boom(RuntimeError):
        pass

    def fn(c):
        if float(c[0, 0].get()) == 4096.0:
            raise Boom("fn failed")
        return c + 1

    x = np.arange(8192 * 2, dtype=np.float32).reshape(8192, 2)
    with pytest.raises(Exception) as info:
        stream_map(fn, da.from_array(x, chunks=(2048, 2))).compute()
    notes = getattr(info.value, "__notes__", [])
    assert "fn failed" in str(info.value)
    assert any("block 1 (rows 2048:4096 of x)" in n for n in notes), notes
