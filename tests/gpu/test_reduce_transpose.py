"""GPU tests: every reduce / transpose kernel against NumPy on random non-zero data and odd sizes, the
library's sum and transpose (sizes 0 and 1, odd shapes, dtypes, bad input), the divergence / intrinsics /
register-pressure kernels (every experiment in quick mode: tests/gpu/test_experiments.py)."""

from __future__ import annotations

import math

import _checks as C
import numpy as np
import pytest

pytestmark = pytest.mark.gpu

ODD_SIZES = [1, 2, 3, 31, 255, 257, 1000, 12_345, 16_385, 100_003, (1 << 20) + 7]


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.work_stream()
    return cupy


def sum_tolerance(p, dtype, abs_sum: float) -> float:
    """gamma_h * sum |x| (Higham, Accuracy and Stability of Numerical Algorithms, sec. 4.2: every x_i through at
    most h roundings, any order), with h bounded here from n and the launch (grid, block, unroll) alone, not by
    ops.reduce's tree_depth: as if each thread added its elements one after another.

    One block: a thread adds ceil(n / FINAL_BLOCK) elements, then a tree of log2(FINAL_BLOCK) levels. Several: a
    block reads at most ceil(n_vectors / grid) + one tile of vectors (either mapping), a thread ceil(that / block)
    + unroll of them plus two unaligned scalars; then the block tree, and in the last block ceil(grid /
    final_block) partials per thread and its tree.
    """
    from gpumemlab.kernels import reduce as K

    u = {np.dtype(np.float32): 2.0**-24, np.dtype(np.float64): 2.0**-53}[np.dtype(dtype)]
    if p.grid == 0:
        h = math.ceil(p.n / K.FINAL_BLOCK) + math.log2(K.FINAL_BLOCK)
    else:
        width = 16 // np.dtype(dtype).itemsize
        per_block = math.ceil(math.ceil(p.n / width) / p.grid) + p.block * p.unroll
        per_thread = width * (math.ceil(per_block / p.block) + p.unroll) + 2
        h = per_thread + math.log2(p.block) + math.ceil(p.grid / p.final_block) + math.log2(p.final_block)
    return h * u / (1 - h * u) * abs_sum


def host(n_or_shape, dtype, seed=0):
    from gpumemlab.bench.verify import random_nonzero

    return random_nonzero(n_or_shape, dtype, np.random.default_rng(seed))


# ------------------------------------------------------------------ reduction kernels

@pytest.mark.parametrize("step", range(6))
@pytest.mark.parametrize("n", [1, 31, 257, 1000, 100_003])
def test_ladder_kernel_block_partials(cp, step, n):
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import reduce as K

    ladder = K.LADDER[step]
    x = host(n, np.float32, seed=n + step)
    blocks = math.ceil(n / ladder.per_block)
    out = cp.full(blocks, np.nan, np.float32)
    runtime.launch(ladder.spec, blocks, K.BLOCK, out, cp.asarray(x), np.int64(n))
    padded = np.zeros(blocks * ladder.per_block)
    padded[:n] = x
    want = padded.reshape(blocks, ladder.per_block).sum(axis=1)
    bound = 12 * 2.0**-24 * np.abs(padded).reshape(blocks, ladder.per_block).sum(axis=1)
    got = out.get().astype(np.float64)
    assert np.all(np.abs(got - want) <= bound), ladder.name


def _vectorized_configs(space: str):
    from gpumemlab.kernels import reduce as K

    configs = K.VECTORIZED if space == "ladder" else [c.with_waves(max(K.TUNING_WAVES)) for c in K.TUNING]
    return [pytest.param(c, id=c.label.replace(" ", "-")) for c in configs]


def _check_vectorized(cp, config, n, offset):
    from types import SimpleNamespace

    from gpumemlab.experiments.reduce import vectorized_runner
    from gpumemlab.gpu import runtime
    session = SimpleNamespace(sm_count=runtime.device_info()["sm_count"])
    base = host(n + offset, np.float32, seed=n)
    x = cp.asarray(base)[offset:]  # contiguous, but 4 or 12 bytes past a 16-byte boundary
    result = cp.full(1, np.nan, np.float32)
    run, plan = vectorized_runner(session, config, x, result)
    ref = math.fsum(base[offset:].astype(np.float64))
    bound = sum_tolerance(plan, np.float32, float(np.abs(base[offset:]).astype(np.float64).sum()))
    for _ in range(2):  # reduce7 must leave its ticket at 0 for the next launch
        result.fill(np.nan)
        run()
        assert abs(float(result[0]) - ref) <= bound


@pytest.mark.parametrize("config", _vectorized_configs("ladder"))
@pytest.mark.parametrize("n", [5, 4099, 100_003, (1 << 21) + 3])
@pytest.mark.parametrize("offset", [0, 1, 3])
def test_vectorized_passes_any_alignment(cp, config, n, offset):
    _check_vectorized(cp, config, n, offset)


@pytest.mark.parametrize("config", _vectorized_configs("tuning"))
@pytest.mark.parametrize("n,offset", [(4099, 1), ((1 << 21) + 3, 3), ((1 << 22) + 17, 0)])
def test_tuning_configurations(cp, config, n, offset):
    """Every candidate of the library's configuration, with more waves than fit (later blocks, partial tiles)."""
    _check_vectorized(cp, config, n, offset)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("n,offset", [(7, 0), (16_385, 1), (300_001, 3), ((1 << 22) + 9, 1)])
def test_sum_typed_paths_on_the_gpu(cp, dtype, n, offset):
    """float64 and int32 through the library's multi-block kernel (and the single block), misaligned too."""
    import gpumemlab
    from gpumemlab.ops.reduce import SINGLE_PASS_MAX, device_plan

    base = host(n + offset, dtype, seed=n)
    x = base[offset:]
    assert (device_plan(n, dtype).grid > 0) == (n > SINGLE_PASS_MAX)
    got = gpumemlab.sum(cp.asarray(base)[offset:]).get()
    if dtype == "int32":
        assert got.dtype == np.int64 and int(got) == int(x.astype(np.int64).sum())
    else:
        assert got.dtype == np.float64 and abs(float(got) - math.fsum(x)) <= 1e-13 * np.abs(x).sum()


# ------------------------------------------------------------------ gpumemlab.sum

@pytest.mark.parametrize("n", [0] + ODD_SIZES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_sum_matches_numpy_within_the_bound(cp, n, dtype):
    """Against math.fsum in float64, within a tolerance derived in the test; the library's own error_bound must
    lie between the measured error and that tolerance."""
    import gpumemlab
    from gpumemlab.ops.reduce import device_plan, error_bound, relative_bound

    x = host(n, dtype, seed=n) if n else np.zeros(0, dtype)
    xd = cp.asarray(x)
    got_dtype = {"float32": np.float32, "float64": np.float64, "int32": np.int64}[dtype]
    out = cp.full((), 7, got_dtype)  # a sentinel that no sum here equals
    got = gpumemlab.sum(xd, out=out)
    assert got is out and got.shape == () and got.dtype == got_dtype
    if dtype == "int32":
        assert int(got) == int(x.astype(np.int64).sum())  # 7 (the sentinel) is never the sum of 0 elements
    else:
        ref = math.fsum(x.astype(np.float64))
        abs_sum = float(np.abs(x.astype(np.float64)).sum())
        err = abs(float(got) - ref)
        if n == 0:
            assert float(got) == 0.0
        else:
            p = device_plan(n, dtype)
            assert err <= sum_tolerance(p, dtype, abs_sum)
            assert error_bound(xd) == pytest.approx(relative_bound(p, dtype) * abs_sum, rel=1e-12)
            assert err <= error_bound(xd) <= sum_tolerance(p, dtype, abs_sum)
        if n == 1:
            assert float(got) == float(x[0])


def test_sum_error_is_well_inside_the_bound_on_a_large_input(cp):
    import gpumemlab
    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.ops.reduce import device_plan, error_bound

    x = device_random_nonzero((1 << 24) + 13, np.float32, seed=5)
    ref = math.fsum(x.get().astype(np.float64))
    abs_sum = float(cp.abs(x).sum(dtype=np.float64))
    p = device_plan(x.size, np.float32)
    assert p.grid > 0
    err = abs(float(gpumemlab.sum(x)) - ref)
    assert err <= error_bound(x) <= sum_tolerance(p, np.float32, abs_sum)
    assert err <= 1e-5 * abs_sum  # the stated float32 accuracy


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n,offset", [(1, 0), (16_384, 1), (16_385, 0), (100_003, 3), ((1 << 22) + 9, 1)])
def test_sum_is_exact_when_every_partial_sum_is_representable(cp, dtype, n, offset):
    """Integers in +-[1, 3]: every partial sum is an integer below 2^24 in magnitude, so any order of additions is
    exact and the result must equal the integer sum (a dropped or doubled element cannot hide in a tolerance)."""
    import gpumemlab

    base = host(n + offset, np.int32, seed=n) % 3 + 1  # 1..3
    base = (base * np.where(np.random.default_rng(n).random(base.size) < 0.5, -1, 1)).astype(dtype)
    assert 3 * base.size < 2**24
    out = cp.full((), np.nan, dtype)
    gpumemlab.sum(cp.asarray(base)[offset:], out=out)
    assert float(out) == float(base[offset:].astype(np.int64).sum())


def test_sum_on_another_stream_is_ordered(cp):
    import gpumemlab

    other = cp.cuda.Stream(non_blocking=True)
    with other:
        x = cp.asarray(host((1 << 22) + 1, np.float32, seed=11)) * 2  # queued on `other`
        s = gpumemlab.sum(x)
        t = gpumemlab.transpose(x[: 1 << 22].reshape(2048, 2048))
        got_s, got_t = float(s), t.get()
    xh = x.get()
    assert abs(got_s - math.fsum(xh.astype(np.float64))) < 1e-5 * np.abs(xh).sum()
    np.testing.assert_array_equal(got_t, xh[: 1 << 22].reshape(2048, 2048).T)


def accumulators_reference(x: np.ndarray, threads: int, nacc: int) -> tuple[np.ndarray, np.ndarray]:
    """Host float64 model of launch.cu's accumulators<NACC> over a grid of ``threads``: thread g folds x[g],
    x[g + threads], ... into acc_k = acc_k * (x / 2) + (k + 1) / NACC and writes sum_k acc_k.
    Returns (outputs, sum_k |acc_k| per thread)."""
    c = np.arange(1, nacc + 1) / nacc
    acc = np.zeros((threads, nacc))
    for start in range(0, x.size, threads):
        half = 0.5 * x[start:start + threads].astype(np.float64)
        acc[:half.size] = acc[:half.size] * half[:, None] + c
    return acc.sum(axis=1), np.abs(acc).sum(axis=1)


def test_register_limited_kernels_compute_the_same_values(cp):
    """Every --maxrregcount instantiation against a float64 host model (outputs poisoned), then bit-equal to the
    unconstrained kernel: spilling moves registers to local memory, never changes the arithmetic."""
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import register_pressure as K

    grid, block = 132, 256
    xh = host(1 << 16, np.float32, seed=8)
    x = cp.asarray(xh)
    want, scale = accumulators_reference(xh, grid * block, K.NACC)
    # float32: one rounding per fmaf step (|x / 2| < 1 shrinks earlier errors; (k + 1) / NACC and x / 2 are exact),
    # then NACC - 1 sequential adds: within gamma_(steps + NACC) of sum |acc_k| (Higham's recursive-summation bound)
    steps = -(-xh.size // (grid * block))
    h = steps + K.NACC
    bound = h * 2.0**-24 / (1 - h * 2.0**-24) * scale
    outs = []
    for spec in [K.NATURAL] + K.SPILL_DEMO:
        out = cp.full(grid * block, np.nan, np.float32)
        runtime.launch(spec, grid, block, out, x, np.int64(x.size))
        got = out.get()
        assert np.isfinite(got).all(), spec.label
        assert np.all(np.abs(got - want) <= bound), spec.label
        outs.append(got)
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


def test_sum_is_deterministic_and_writes_out(cp):
    import gpumemlab

    x = cp.asarray(host((1 << 22) + 5, np.float32, seed=9))
    first = gpumemlab.sum(x)
    out = cp.full((), np.nan, np.float32)
    again = gpumemlab.sum(x, out=out)
    assert again is out
    assert first.get().tobytes() == out.get().tobytes()
    for _ in range(3):
        assert gpumemlab.sum(x).get().tobytes() == first.get().tobytes()


def test_sum_of_nd_and_offset_views(cp):
    import gpumemlab

    x = host((37, 41, 3), np.float32, seed=2)
    xd = cp.asarray(x)
    assert abs(float(gpumemlab.sum(xd)) - math.fsum(x.ravel())) < 1e-3
    flat = cp.asarray(host(20_001, np.int32, seed=4))
    assert int(gpumemlab.sum(flat[1:])) == int(flat[1:].get().astype(np.int64).sum())


def test_int32_sum_does_not_overflow(cp):
    import gpumemlab

    x = cp.full(100_000, 2**31 - 1, np.int32)
    assert int(gpumemlab.sum(x)) == 100_000 * (2**31 - 1)


def test_sum_bad_input(cp):
    import gpumemlab

    with pytest.raises(TypeError, match="dtype"):
        gpumemlab.sum(cp.ones(4, np.float16))
    with pytest.raises(TypeError, match="out"):
        gpumemlab.sum(cp.ones(4, np.int32), out=cp.empty((), np.int32))  # int32 sums are int64
    with pytest.raises(ValueError, match="out"):
        gpumemlab.sum(cp.ones(4, np.float32), out=cp.empty(1, np.float32))


# ------------------------------------------------------------------ transpose kernels

SHAPES = [(1, 1), (1, 37), (37, 1), (33, 65), (4097, 31), (64, 64), (128, 96), (96, 200), (8, 4), (260, 124)]


def _variants_and_shapes():
    from gpumemlab.kernels import CTYPES
    from gpumemlab.kernels import transpose as K

    for v in K.LADDER:
        for ctype in (CTYPES[d] for d in K.DTYPES):
            for rows, cols in SHAPES:
                w = v.width(ctype)
                if rows % w == 0 and cols % w == 0:
                    yield pytest.param(v, ctype, rows, cols, id=f"{v.kernel}-{v.targs}-{ctype}-{rows}x{cols}")


@pytest.mark.parametrize("variant,ctype,rows,cols", list(_variants_and_shapes()))
def test_transpose_kernels(cp, variant, ctype, rows, cols):
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import CTYPES

    dtype = {v: k for k, v in CTYPES.items()}[ctype]
    x = host((rows, cols), dtype, seed=rows * 7 + cols)
    xd = cp.asarray(x)
    out_shape = (cols, rows) if variant.transposes else (rows, cols)
    out = cp.empty(out_shape, dtype)
    from gpumemlab.bench.verify import poison

    poison(out)
    runtime.launch(variant.spec(ctype), variant.grid(rows, cols), variant.block, out, xd, rows, cols)
    np.testing.assert_array_equal(out.get(), x.T if variant.transposes else x)


@pytest.mark.parametrize("rows,cols,dtype", [(65536 * 32 + 33, 2, np.float32), (64 * 65537, 4, np.int32)])
def test_transpose_taller_than_the_grid_limit(cp, poisoned_pool, rows, cols, dtype):
    import gpumemlab

    x = cp.arange(rows * cols, dtype=dtype).reshape(rows, cols)
    poisoned_pool(cp, (cols, rows), dtype)
    t = gpumemlab.transpose(x)
    assert bool((t == x.T).all())


# ------------------------------------------------------------------ transpose_vec past the grid's row limit

def test_transpose_vec_past_the_grid_y_limit(cp):
    """65537 + 1 tile rows: the launch rectangle holds 65535 of them, the kernel's grid-stride loop takes the rest."""
    from gpumemlab.bench.verify import poison
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import transpose as K

    rows, cols = 64 * 65537 + 4, 8
    v = K.LIBRARY_VECTORIZED
    assert v.grid(rows, cols)[1] == K.MAX_GRID_Y
    x = cp.random.random((rows, cols), dtype=cp.float32)  # distinct values (an arange rounds past 2^24)
    out = cp.empty((cols, rows), x.dtype)
    poison(out)
    runtime.launch(v.spec("float"), v.grid(rows, cols), v.block, out, x, np.int32(rows), np.int32(cols))
    assert bool((out == x.T).all())


# ------------------------------------------------------------------ gpumemlab.transpose

@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (1, 1), (1, 1000), (1000, 1), (4097, 31), (31, 4097),
                                   (1024, 2048), (100, 100), (6, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_library_transpose(cp, poisoned_pool, shape, dtype):
    import gpumemlab

    x = host(shape, dtype, seed=sum(shape)) if 0 not in shape else np.zeros(shape, dtype)
    poisoned_pool(cp, shape[::-1], dtype)
    t = gpumemlab.transpose(cp.asarray(x))
    assert t.shape == shape[::-1] and t.dtype == np.dtype(dtype) and t.flags.c_contiguous
    np.testing.assert_array_equal(t.get(), x.T)


def test_library_transpose_misaligned_view_uses_the_fallback(cp, poisoned_pool):
    import gpumemlab

    flat = cp.asarray(host(1 + 64 * 64, np.float32, seed=1))
    x = flat[1:].reshape(64, 64)  # contiguous, 4 bytes past 16-byte alignment
    poisoned_pool(cp, (64, 64), np.float32)
    np.testing.assert_array_equal(gpumemlab.transpose(x).get(), x.get().T)


def test_transpose_accepts_torch_tensors(cp):
    torch = pytest.importorskip("torch")
    import gpumemlab

    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(gpumemlab.transpose(t).get(), t.cpu().numpy().T)


# ------------------------------------------------------------------ intrinsics accuracy (guide bounds)

def test_accurate_math_within_the_guide_and_fast_sin_within_its_absolute_bound(cp):
    from gpumemlab.experiments.intrinsics import accuracy
    from gpumemlab.kernels import intrinsics as K

    for f in K.FUNCTIONS:
        acc = accuracy(f, fast=False, points=1 << 16, seed=3)
        assert acc["max_ulp"] <= f.guide_ulp + 1, (f.name, acc)
    for f, log2_bound in zip(K.FUNCTIONS[:2], (-21.41, -21.19)):
        assert accuracy(f, fast=True, points=1 << 16, seed=3)["max_abs_error"] <= 2.0**log2_bound * 1.01
    exp = K.FUNCTIONS[2]
    fast_exp = accuracy(exp, fast=True, points=1 << 16, seed=3)
    assert fast_exp["max_ulp"] <= 2 + math.floor(1.173 * max(abs(exp.lo), abs(exp.hi))) + 1


# ------------------------------------------------------------------ gpumemlab.sum / mean along axes

AXIS_CASES = [((16384,), 0), ((7, 5003), 1), ((2, 70_001), 1), ((3, 5, 7, 9), (1, 3)), ((2, 3, 20_000), 2), ((3, 9001), -1), ((300, 4096), 1), ((5003, 7), 0), ((2000, 33), 0),
              ((4096, 256), 0), ((3, 517, 9), 1), ((4, 6, 8), (0, 2)), ((4, 6, 8), (1, 2)), ((4, 6, 8), (0, 1)),
              ((2, 3, 4, 5), (1, 3)), ((5, 1, 7), 1), ((1, 64, 1), (0, 1)), ((33, 65), (0, 1)), ((33, 65), None),
              # sum_cols_narrow: vector periods with a tail, runs off 16 bytes (scalar), several runs; sum_cols_thread
              ((70_001, 2), 0), ((5, 3001, 3), 1), ((4, 20_000, 8), 1), ((3, 3_000_001), 0), ((5, 1 << 22), 0)]


@pytest.mark.parametrize("shape,axis", [((262_147, 3), 0), ((4, 70_001, 2), 1)], ids=["one run", "four runs"])
def test_narrow_splits_add_up_in_one_launch_the_same_on_every_stream(cp, shape, axis):
    """The last block of each run adds its splits: the same bits on every call and on another stream, within the
    bound, and every ticket back at 0 for the next launch."""
    import gpumemlab
    from gpumemlab.ops import _workspace, reduce_axis
    from gpumemlab.ops import reduce as ops_reduce

    x = cp.asarray(host(shape, "float32", seed=5))
    prep = reduce_axis._prepared(x.shape, axis, x.dtype, None, False, False, True)
    (p,) = prep.passes
    assert p.kind == "narrow" and p.splits > 1
    first = gpumemlab.sum(x, axis=axis)
    again = [gpumemlab.sum(x, axis=axis) for _ in range(3)]
    with cp.cuda.Stream(non_blocking=True) as other:
        there = gpumemlab.sum(x, axis=axis)
        tickets_there = _workspace.ticket_workspace(p.splits * p.outer * p.inner, p.outer)[1]
        other.synchronize()
    for got in again + [there]:
        np.testing.assert_array_equal(got.get(), first.get())
    want = x.get().astype(np.float64).sum(axis=axis)
    assert np.all(np.abs(first.get() - want) <= ops_reduce.error_bound(x, axis=axis).get())
    tickets = _workspace.ticket_workspace(p.splits * p.outer * p.inner, p.outer)[1]
    assert int(tickets.sum()) == 0 and int(tickets_there.sum()) == 0 and tickets.data.ptr != tickets_there.data.ptr


@pytest.mark.parametrize("shape,axis", AXIS_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_sum_along_axes_within_the_bound(cp, poisoned_pool, shape, axis, dtype):
    import gpumemlab
    from gpumemlab.ops import reduce as ops_reduce

    x = host(shape, dtype, seed=len(shape))
    want_shape = np.sum(x, axis=axis).shape
    expect_dtype = np.sum(x, axis=axis).dtype
    poisoned_pool(cp, want_shape, expect_dtype)
    xd = cp.asarray(x)
    got = gpumemlab.sum(xd, axis=axis)
    assert got.shape == want_shape and got.dtype == expect_dtype
    want = x.astype(np.float64).sum(axis=axis)
    C.expect_sum(got, x, axis=axis, what=f"sum {shape} axis {axis}")  # gamma_(n-1) sum|x|, independent of ops
    if dtype != "int32":  # the library's own error_bound covers the error it claims to
        bound = np.asarray(ops_reduce.error_bound(xd, axis=axis).get() if axis is not None
                           else ops_reduce.error_bound(xd))
        assert np.all(np.abs(got.get().astype(np.float64) - want) <= bound)
        assert np.all(bound <= 1e-4 * np.abs(x.astype(np.float64)).sum(axis=axis) + 1e-300)


@pytest.mark.parametrize("shape,axis", AXIS_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sum_and_mean_along_axes_exact_on_integer_valued_floats(cp, shape, axis, dtype):
    """Integers in +-[1, 3] as floats: every partial sum is exact, so each output must equal the float64 sum (a
    mean: within its division's roundings) whatever the order; a dropped, doubled or misplaced term of any size
    shows. Into one out, poisoned before each of two calls (the second hits every cache)."""
    import gpumemlab

    x = host(shape, np.int32, seed=len(shape) + 7) % 3 + 1
    x = (x * np.where(np.random.default_rng(3).random(x.shape) < 0.5, -1, 1)).astype(dtype)
    xd = cp.asarray(x)
    for op, mean in ((gpumemlab.sum, False), (gpumemlab.mean, True)):
        out = C.poisoned(cp, np.sum(x, axis=axis).shape, dtype)
        for i in range(2):
            assert C.run_poisoned(out, lambda: op(xd, axis=axis, out=out)) is out
            C.expect_sum(out, x, axis=axis, mean=mean, exact_sums=True, what=f"{op.__name__} {shape} {axis} {i}")


@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_dtypes_keepdims_and_out(cp, keepdims):
    import gpumemlab
    from gpumemlab.ops import reduce as ops_reduce

    x = host((6, 70, 33), "int32", seed=3)
    got = gpumemlab.mean(cp.asarray(x), axis=(0, 1), keepdims=keepdims)
    want = np.mean(x, axis=(0, 1), keepdims=keepdims)
    assert got.dtype == np.float64 and got.shape == want.shape
    C.expect_sum(got, cp.asarray(x), axis=(0, 1), mean=True, keepdims=keepdims, what="int32 mean")
    f = cp.asarray(host((257, 129), "float32", seed=4))
    out = C.poisoned(cp, (129,), np.float32)
    assert gpumemlab.mean(f, axis=0, out=out) is out
    assert bool((out == gpumemlab.sum(f, axis=0) / np.float32(257)).all())  # the same sums, one division
    err = np.abs(out.get() - f.get().astype(np.float64).mean(axis=0))
    assert np.all(err <= ops_reduce.error_bound(f, axis=0).get() / 257 + np.spacing(np.abs(out.get())))
    C.expect_sum(out, f, axis=0, mean=True, what="float32 mean axis 0")
    C.expect_sum(gpumemlab.mean(f), f, mean=True, what="float32 mean")
    s64 = gpumemlab.sum(f, axis=1, dtype=np.float64)
    assert s64.dtype == np.float64
    C.expect_sum(s64, f, axis=1, acc=np.float64, what="float64 sums of float32 rows")


@pytest.mark.parametrize("shape,kind", [((70_001, 3), "narrow"), ((3, 3_000_001), "thread")])
def test_mean_on_the_narrow_and_thread_paths(cp, shape, kind):
    """A mean divides once, in the kernel (one run) or in sum_splits (several): within the sum's bound / count."""
    import gpumemlab
    from gpumemlab.ops import reduce as ops_reduce
    from gpumemlab.ops import reduce_axis

    x = cp.asarray(host(shape, "float32", seed=6))
    prep = reduce_axis._prepared(x.shape, 0, x.dtype, None, False, True, x.data.ptr % 16 == 0)
    assert [p.kind for p in prep.passes] == [kind]
    out = C.poisoned(cp, shape[1], np.float32)
    gpumemlab.mean(x, axis=0, out=out)
    got = out.get().astype(np.float64)
    want = x.get().astype(np.float64).mean(axis=0)
    bound = ops_reduce.error_bound(x, axis=0).get() / shape[0] + np.spacing(np.abs(want).astype(np.float32))
    assert np.all(np.abs(got - want) <= bound)
    C.expect_sum(out, x, axis=0, mean=True, what=f"mean {shape} on the {kind} path")


def test_sum_along_axes_empty_and_length_one(cp):
    import gpumemlab

    assert gpumemlab.sum(cp.zeros((0, 5), np.float32), axis=0).get().tolist() == [0.0] * 5
    assert gpumemlab.sum(cp.zeros((0, 5), np.float32), axis=1).shape == (0,)
    assert np.isnan(gpumemlab.mean(cp.zeros((0, 3), np.float32), axis=0).get()).all()
    x = cp.arange(12, dtype=np.int32).reshape(3, 1, 4)
    assert gpumemlab.sum(x, axis=1).get().tolist() == x.get().reshape(3, 4).tolist()


def test_sum_along_axes_is_deterministic(cp):
    import gpumemlab

    x = cp.asarray(host((3000, 4100), "float32", seed=9))
    for axis in (0, 1):
        a, b = gpumemlab.sum(x, axis=axis), gpumemlab.sum(x, axis=axis)
        assert bool((a == b).all())


@pytest.mark.parametrize("axis,exc,msg", [
    (2, "UsageError", "axis 2 is out of bounds for array of dimension 2"),
    (-3, "UsageError", "axis -3 is out of bounds for array of dimension 2"),
    ((0, 0), "UsageError", "axis: duplicate value in (0, 0)"),
    ((0, -2), "UsageError", "axis: duplicate value in (0, -2)"),
    (1.5, "InputTypeError", "axis: expected an int or a tuple of ints, got float"),
])
def test_sum_bad_axis(cp, axis, exc, msg):
    import gpumemlab
    from gpumemlab import errors

    with pytest.raises(getattr(errors, exc)) as e:
        gpumemlab.sum(cp.ones((3, 4), np.float32), axis=axis)
    assert str(e.value) == msg


def test_sum_bad_dtype_and_out(cp):
    import gpumemlab
    from gpumemlab.errors import InputTypeError, UsageError

    x = cp.ones((3, 4), np.float32)
    with pytest.raises(InputTypeError, match="^dtype: float16 not supported for float32 input; expected float32, float64$"):
        gpumemlab.sum(x, axis=0, dtype=np.float16)
    with pytest.raises(InputTypeError, match="^dtype: int64 not supported for float32 input; expected float32, float64$"):
        gpumemlab.mean(x, axis=0, dtype=np.int64)
    with pytest.raises(InputTypeError, match="^dtype: float32 not supported for float64 input; expected float64$"):
        gpumemlab.sum(x.astype(np.float64), dtype=np.float32)
    with pytest.raises(InputTypeError, match="^out: dtype float64 not supported; expected float32$"):
        gpumemlab.sum(x, axis=0, out=cp.zeros(4, np.float64))
    with pytest.raises(UsageError, match=r"^out: shape \(3,\) != expected \(4,\)$"):
        gpumemlab.sum(x, axis=0, out=cp.zeros(3, np.float32))


@pytest.mark.parametrize("short", [1, 2, 3, 5, 16, 31])
@pytest.mark.parametrize("long", [1, 255, 4097, 70_000])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_thin_kernel_both_ways(cp, short, long, dtype):
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import CTYPES
    from gpumemlab.kernels import transpose as T

    for rows, cols in ((short, long), (long, short)):
        x = host((rows, cols), dtype, seed=short + long)
        for min_blocks in (1, 264):  # full-size blocks, and blocks shrunk to fill the SMs
            out = cp.full((cols, rows), np.nan if dtype != "int32" else -1, dtype)
            t = T.thin_launch(rows, cols, CTYPES[dtype], min_blocks)
            runtime.launch(t.spec, t.grid, T.THIN_BLOCK, out, cp.asarray(x), rows, cols, *t.args, shmem=t.shmem)
            np.testing.assert_array_equal(out.get(), x.T)


@pytest.mark.parametrize("shape", [(3, 1 << 22), (1 << 22, 3), (31, (1 << 18) + 3), (1, 5000), (5000, 1), (3, 70_000),
                                   (70_001, 2), (31, 33)])
def test_library_thin_and_single_row_paths(cp, poisoned_pool, shape):
    import gpumemlab
    from gpumemlab.gpu import runtime
    from gpumemlab.ops import transpose as ops_transpose

    x = host(shape, "float32", seed=7)
    poisoned_pool(cp, shape[::-1], "float32")
    np.testing.assert_array_equal(gpumemlab.transpose(cp.asarray(x)).get(), x.T)
    sms = runtime.device_info()["sm_count"]
    assert ops_transpose.launch_plan(*shape, "float32", True, sms)[0].name.startswith("transpose_thin")  # a side < 32
