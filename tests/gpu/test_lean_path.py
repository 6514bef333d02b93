"""The cached call path on the GPU: per-shape caches never keep a previous call's arrays or stream, and a failed
launch is one line naming the geometry."""

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.work_stream()
    return cupy


def _calls(cp):
    import gpumemlab

    return {  # name -> (shapes, ours, reference on the host)
        "matmul": ([(64, 48), (48, 40)], gpumemlab.matmul, lambda a, b: a.astype(np.float64) @ b),
        "matmul split-K": ([(8, 4096), (4096, 8)],  # few output tiles, deep K: the chooser may split K
                           gpumemlab.matmul, lambda a, b: a.astype(np.float64) @ b),
        "sum": ([(5000,)], gpumemlab.sum, lambda x: x.astype(np.float64).sum()),
        "sum two-pass": ([(1 << 20,)], gpumemlab.sum, lambda x: x.astype(np.float64).sum()),
        "transpose": ([(96, 64)], gpumemlab.transpose, lambda x: x.T),
        "transpose odd": ([(33, 7)], gpumemlab.transpose, lambda x: x.T),
        "matmul M=1": ([(1, 300), (300, 4096)], gpumemlab.matmul,  # gemv_cols, k ranges split, added in the same launch
                       lambda a, b: a.astype(np.float64) @ b),
        "matmul N=1": ([(777, 301), (301, 1)], gpumemlab.matmul, lambda a, b: a.astype(np.float64) @ b),
        "sum axis 0": ([(300, 257)], lambda x: gpumemlab.sum(x, axis=0), lambda x: x.astype(np.float64).sum(axis=0)),
        "mean split rows": ([(3, (1 << 18) + 4)], lambda x: gpumemlab.mean(x, axis=1),
                            lambda x: x.astype(np.float64).mean(axis=1)),
        "transpose thin": ([(5, 1 << 20)], gpumemlab.transpose, lambda x: x.T),
        "copy": ([(1001,)], gpumemlab.copy, lambda x: x),
    }


CALLS = ["matmul", "matmul split-K", "matmul M=1", "matmul N=1", "sum", "sum two-pass", "sum axis 0", "mean split rows",
         "transpose", "transpose odd", "transpose thin", "copy"]


@pytest.mark.parametrize("name", CALLS)
def test_same_shape_new_arrays_and_streams_give_their_own_results(cp, name):
    """Three calls of one shape (so the second and third hit every cache) with new arrays each time, on the work
    stream, on a second stream and again on the first: each result is that call's, checked on the host."""
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime

    shapes, fn, ref = _calls(cp)[name]
    other = runtime.new_stream()
    results = []
    for i, ws in enumerate([runtime.work_stream(), other, runtime.work_stream()]):
        hosts = [random_nonzero(s, np.float32, np.random.default_rng(10 * i + j)) for j, s in enumerate(shapes)]
        with ws:
            args = [cp.asarray(h) for h in hosts]
            out = fn(*args)
            del args  # the pool may hand these blocks to the next call's inputs: a stale pointer would read them
            got = cp.asnumpy(out)
        results.append(got)
        want = ref(*hosts)
        if name.startswith(("matmul", "sum", "mean")):
            terms = shapes[0][-1] if name.startswith(("matmul", "mean")) else hosts[0].size
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * terms, err_msg=f"{name} call {i}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{name} call {i}")
    assert not np.array_equal(results[0], results[1])  # different inputs: a repeated result would be stale


def test_copy_into_out_on_another_stream_writes_only_out(cp):
    import gpumemlab
    from gpumemlab.gpu import runtime

    x1 = cp.arange(4096, dtype=cp.float32) + 1
    x2 = cp.arange(4096, dtype=cp.float32) * -2 - 1
    o1, o2 = cp.full_like(x1, np.nan), cp.full_like(x1, np.nan)
    gpumemlab.copy(x1, out=o1)
    with runtime.new_stream() as s:
        gpumemlab.copy(x2, out=o2)
        s.sync()
    np.testing.assert_array_equal(o1.get(), x1.get())
    np.testing.assert_array_equal(o2.get(), x2.get())


def test_a_failed_launch_is_one_line_naming_the_geometry(cp):
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import copy as K

    x = cp.ones(8, cp.float32)
    with pytest.raises(RuntimeError) as info:
        runtime.launch(K.copy_vec("float4", 1), 1, 4096, x, x, np.int64(0))  # 4096 threads: above the 1024 limit
    assert str(info.value) == "cuLaunchKernel(grid=(1, 1, 1), block=(4096, 1, 1), shmem=0) failed: CUDA_ERROR_INVALID_VALUE"
    runtime.launch(K.copy_vec("float4", 1), 1, 32, x, x, np.int64(2))  # the context is still usable
    cp.cuda.get_current_stream().synchronize()
