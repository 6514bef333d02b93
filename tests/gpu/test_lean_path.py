"""The cached call path on the GPU: per-shape caches never keep a previous call's arrays or stream, and a failed
launch is one line naming the geometry."""

import _checks as C
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

    def mm(a, b):
        return a.astype(np.float64) @ b

    return {  # name -> (shapes, ours, reference on the host or a check of the result against the inputs)
        "matmul": ([(64, 48), (48, 40)], gpumemlab.matmul, mm),
        "matmul split-K": ([(8, 4096), (4096, 8)], gpumemlab.matmul, mm),  # deep K: the chooser may split it
        "sum": ([(5000,)], gpumemlab.sum, lambda x: x.astype(np.float64).sum()),
        "sum two-pass": ([(1 << 20,)], gpumemlab.sum, lambda x: x.astype(np.float64).sum()),
        "transpose": ([(96, 64)], gpumemlab.transpose, lambda x: x.T),
        "transpose odd": ([(33, 7)], gpumemlab.transpose, lambda x: x.T),
        "matmul M=1": ([(1, 300), (300, 4096)], gpumemlab.matmul, mm),  # gemv_cols: k ranges split, added in one launch
        "matmul N=1": ([(777, 301), (301, 1)], gpumemlab.matmul, mm),
        "sum axis 0": ([(300, 257)], lambda x: gpumemlab.sum(x, axis=0), lambda x: x.astype(np.float64).sum(axis=0)),
        "mean split rows": ([(3, (1 << 18) + 4)], lambda x: gpumemlab.mean(x, axis=1),
                            lambda x: x.astype(np.float64).mean(axis=1)),
        "transpose thin": ([(5, 1 << 20)], gpumemlab.transpose, lambda x: x.T),
        "copy": ([(1001,)], gpumemlab.copy, lambda x: x),
    }


CALLS = ["matmul", "matmul split-K", "matmul M=1", "matmul N=1", "sum", "sum two-pass", "sum axis 0", "mean split rows",
         "transpose", "transpose odd", "transpose thin", "copy"]


def integer_valued(shape, seed: int) -> np.ndarray:
    """float32 inputs in +-[1, 9], integers: every product and partial sum of these calls is below 2^24, so exact in
    float32 in any order; a sum or product must then equal the float64 result bit for bit (a wrong or missing term
    of any size shows, which no worst-case rounding bound of a large sum could promise)."""
    from gpumemlab.bench.verify import random_nonzero

    return random_nonzero(shape, np.int32, np.random.default_rng(seed)).astype(np.float32)


@pytest.mark.parametrize("name", CALLS)
def test_same_shape_new_arrays_and_streams_give_their_own_results(cp, poisoned_pool, name):
    """Three calls of one shape (so the second and third hit every cache) with new arrays each time, on the work
    stream, on a second stream and again on the first: each result is that call's, every element equal to the
    float64 result (a mean: within its division's roundings), the pool poisoned before each call."""
    from gpumemlab.gpu import runtime

    shapes, fn, ref = _calls(cp)[name]
    other = runtime.new_stream()
    results = []
    for i, ws in enumerate([runtime.work_stream(), other, runtime.work_stream()]):
        hosts = [integer_valued(s, 10 * i + j) for j, s in enumerate(shapes)]
        want = ref(*hosts)
        with ws:
            args = [cp.asarray(h) for h in hosts]
            poisoned_pool(cp, np.shape(want), cp.float32)  # an unwritten element shows as NaN, not a stale value
            out = fn(*args)
            del args  # the pool may hand these blocks to the next call's inputs: a stale pointer would read them
            got = cp.asnumpy(out)
        results.append(got)
        if name.startswith("mean"):
            C.expect_sum(got, hosts[0], axis=1, mean=True, exact_sums=True, what=f"{name} call {i}")
        else:
            C.expect_equal(got, want, f"{name} call {i}")  # exact: every partial sum is an integer below 2^24
    assert not np.array_equal(results[0], results[1])  # different inputs: a repeated result would be stale


def test_copy_into_out_on_another_stream_writes_only_out(cp):
    import gpumemlab
    from gpumemlab.gpu import runtime

    x1 = cp.arange(4096, dtype=cp.float32) + 1
    x2 = cp.arange(4096, dtype=cp.float32) * -2 - 1
    o1, o2 = C.poisoned(cp, 4096, cp.float32), C.poisoned(cp, 4096, cp.float32)
    runtime.synchronize()  # the poison is in place before another stream writes o2
    gpumemlab.copy(x1, out=o1)
    with runtime.new_stream() as s:
        gpumemlab.copy(x2[:4000], out=o2[:4000])
        s.sync()
    C.expect_equal(o1, x1, "out on the work stream")
    C.expect_equal(o2[:4000], x2[:4000], "out on another stream")
    C.expect_tail(o2, 4000, "past a 4000-element out")


def test_a_failed_launch_is_one_line_naming_the_geometry(cp):
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import copy as K

    x = cp.ones(8, cp.float32)
    with pytest.raises(RuntimeError) as info:
        runtime.launch(K.copy_vec("float4", 1), 1, 4096, x, x, np.int64(0))  # 4096 threads: above the 1024 limit
    assert str(info.value) == "cuLaunchKernel(grid=(1, 1, 1), block=(4096, 1, 1), shmem=0) failed: CUDA_ERROR_INVALID_VALUE"
    runtime.launch(K.copy_vec("float4", 1), 1, 32, x, x, np.int64(2))  # the context is still usable
    cp.cuda.get_current_stream().synchronize()
