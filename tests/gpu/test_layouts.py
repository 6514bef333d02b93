"""GPU tests of gpumemlab.transpose(x, axes) and gpumemlab.copy on every dtype of 1-16 bytes, N-D permutations and
strided views, bit for bit against NumPy with poisoned outputs; sum / mean of strided views against a float64 NumPy
reference within gamma_(n-1) sum|x| (tests/gpu/_checks.py) and within the library's own bound."""

from __future__ import annotations

import _checks as C
import numpy as np
import pytest

pytestmark = pytest.mark.gpu

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "float16", "int32", "uint32", "float32", "int64", "uint64",
          "float64", "complex64", "complex128"]
POISON = 0xA5


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.work_stream()
    return cupy


def random_bits(shape, dtype, seed):
    """Random bytes of every bit pattern (NaN payloads too); bool as 0 / 1."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def poison_pool(cp, nbytes):
    """Free a block of POISON bytes into CuPy's pool just before the call allocates its result (best effort)."""
    block = cp.full(max(nbytes, 1), POISON, cp.uint8)
    del block


# (shape, view, axes): views as users make them, applied the same way to the NumPy and the CuPy array
CASES = [
    ((1000, 1001), lambda a: a, None), ((3, 70_000), lambda a: a, None), ((4097, 31), lambda a: a, None),
    ((64, 64), lambda a: a, None), ((1, 1000), lambda a: a, None), ((0, 5), lambda a: a, None),
    ((7,), lambda a: a, None), ((), lambda a: a, None), ((2, 3), lambda a: a, (0, 1)),
    ((30, 41, 53), lambda a: a, (0, 2, 1)), ((30, 41, 53), lambda a: a, (1, 0, 2)), ((30, 41, 53), lambda a: a, (2, 0, 1)),
    ((30, 41, 53), lambda a: a, (1, 2, 0)), ((30, 41, 53), lambda a: a, None), ((5, 6, 7, 8), lambda a: a, (3, 1, 2, 0)),
    ((5, 6, 7, 8), lambda a: a, (0, 2, 3, 1)), ((5, 6, 7, 8), lambda a: a, (1, 0, 3, 2)),
    ((2, 3, 2, 3, 2, 3), lambda a: a, (5, 3, 1, 4, 2, 0)),
    ((300, 200), lambda a: a[:, ::2], None), ((300, 200), lambda a: a[::-1], None), ((300, 200), lambda a: a[:, 5:150], None),
    ((300, 200), lambda a: a[::3, ::-2], (0, 1)), ((300, 200), lambda a: a.T, None), ((300, 200), lambda a: a.T, (0, 1)),
    ((40, 50, 60), lambda a: a[:, ::-1, 1::2], (2, 0, 1)), ((40, 50, 60), lambda a: a[3], (1, 0)),
    ((70, 1), lambda a: a[:, :1].repeat(1, axis=1), None),
    ((40, 50, 64), lambda a: a, (1, 0, 2)), ((40, 50, 64), lambda a: a[:, :, 4:36], (1, 0, 2)),
    ((40, 50, 64), lambda a: a[:, :, 1:], (1, 0, 2)), ((37, 348), lambda a: a, None),
]


def _ids():
    return [f"{'x'.join(map(str, s)) or 'scalar'}-{i}" for i, (s, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(CASES)), ids=_ids())
def test_transpose_and_copy_move_every_byte(cp, dtype, case):
    import gpumemlab

    shape, view, axes = CASES[case]
    host = random_bits(shape, dtype, seed=case)
    want = np.array(np.transpose(view(host), axes), order="C")  # (ascontiguousarray makes a 0-d array 1-D)
    x = view(cp.asarray(host))
    poison_pool(cp, want.nbytes)
    got = gpumemlab.transpose(x, axes)
    assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
    assert got.get().tobytes() == want.tobytes()
    # copy into a caller's out: the bytes around it stay poisoned
    copied = np.array(view(host), order="C")
    buf = cp.full(copied.nbytes + 64, POISON, cp.uint8)
    out = buf[16:16 + copied.nbytes].view(host.dtype).reshape(copied.shape)
    assert gpumemlab.copy(x, out=out) is not None
    back = buf.get()
    assert back[16:16 + copied.nbytes].tobytes() == copied.tobytes()
    assert (back[:16] == POISON).all() and (back[16 + copied.nbytes:] == POISON).all()


@pytest.mark.parametrize("shape,axes", [((70_001, 2, 3), (0, 2, 1)), ((3, 70_000 * 64 + 5), None),
                                        ((2, 3, 70_001), (2, 1, 0))])
@pytest.mark.parametrize("dtype", ["int8", "float16", "complex128"])
def test_transposes_past_the_grid_limits(cp, shape, axes, dtype):
    """A batch of more than 65535 matrices (grid z), more than 65535 tile rows (grid y)."""
    import gpumemlab

    host = random_bits(shape, dtype, seed=3)
    poison_pool(cp, host.nbytes)
    got = gpumemlab.transpose(cp.asarray(host), axes)
    assert got.get().tobytes() == np.array(np.transpose(host, axes), order="C").tobytes()


def test_transpose_takes_torch_views(cp):
    torch = pytest.importorskip("torch")
    import gpumemlab

    t = torch.arange(24, dtype=torch.int16, device="cuda").reshape(2, 3, 4)
    torch.cuda.synchronize()
    got = gpumemlab.transpose(t.permute(2, 0, 1), (1, 0, 2)).get()
    np.testing.assert_array_equal(got, t.permute(2, 0, 1).cpu().numpy().transpose(1, 0, 2))


def test_transpose_bad_input(cp):
    import gpumemlab
    from gpumemlab.errors import UsageError

    x = cp.ones((2, 3), cp.float32)
    with pytest.raises(UsageError, match=r"^axes: \(0,\) don't match an array of dimension 2$"):
        gpumemlab.transpose(x, (0,))
    with pytest.raises(UsageError, match=r"^axes: repeated axis in \(1, 1\)$"):
        gpumemlab.transpose(x, [1, 1])
    with pytest.raises(UsageError, match=r"^out: shape \(3, 2\) != expected \(2, 3\)$"):
        gpumemlab.copy(x, out=cp.empty((3, 2), cp.float32))


# ------------------------------------------------------------------ sum / mean of strided views

SUM_VIEWS = [
    ((300, 200), lambda a: a.T, 0), ((300, 200), lambda a: a.T, 1), ((300, 200), lambda a: a.T, None),
    ((300, 200), lambda a: a[:, ::2], 0), ((300, 200), lambda a: a[:, ::2], 1), ((300, 200), lambda a: a[::-1], 0),
    ((300, 200), lambda a: a[:, 5:150], 1), ((30, 41, 53), lambda a: a.transpose(2, 0, 1), (0, 2)),
    ((30, 41, 53), lambda a: a.transpose(1, 2, 0), 1), ((30, 41, 53), lambda a: a[:, ::-1].transpose(2, 1, 0), (1,)),
    ((30, 41, 53), lambda a: a[::2, :, 7:], (0, 2)), ((4, 1, 5000), lambda a: a.transpose(2, 1, 0), 0),
    ((2000, 3), lambda a: a.T, 1), ((3, 2000), lambda a: a.T, 0),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("case", range(len(SUM_VIEWS)))
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_and_mean_of_strided_views(cp, dtype, case, keepdims):
    import gpumemlab
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.ops import reduce as ops_reduce
    from gpumemlab.ops import reduce_axis

    shape, view, axis = SUM_VIEWS[case]
    host = random_nonzero(shape, dtype, np.random.default_rng(case))
    xv = view(host)
    x = view(cp.asarray(host))
    want = xv.astype(np.float64).sum(axis=axis, keepdims=keepdims)
    got = gpumemlab.sum(x, axis=axis, keepdims=keepdims)
    assert got.shape == want.shape and got.flags.c_contiguous
    C.expect_sum(got, np.ascontiguousarray(xv), axis=axis, keepdims=keepdims, what=f"sum of view {case}")  # independent of ops' bounds
    if dtype == "int32":
        assert got.dtype == np.int64
    else:  # and within the library's own (tighter) bounds
        bound = ops_reduce.error_bound(x, axis).get().reshape(want.shape)
        assert (np.abs(got.get() - want) <= bound).all()
        mean_bound = reduce_axis.strided_error_bound(x, axis, mean=True).get().reshape(want.shape)
        mean = gpumemlab.mean(x, axis=axis, keepdims=keepdims)
        C.expect_sum(mean, np.ascontiguousarray(xv), axis=axis, mean=True, keepdims=keepdims, what=f"mean of view {case}")
        want_mean = xv.astype(np.float64).mean(axis=axis, keepdims=keepdims)
        assert (np.abs(mean.get() - want_mean) <= mean_bound + np.abs(want_mean) * np.finfo(dtype).eps).all()
    out = C.poisoned(cp, want.shape, got.dtype)
    for i in range(2):  # the same out twice, poisoned before each call
        assert C.run_poisoned(out, lambda: gpumemlab.sum(x, axis=axis, keepdims=keepdims, out=out)) is out
        C.expect_equal(out, got, f"sum of view {case} into out, call {i}")


@pytest.mark.parametrize("shape", [(4097, 3001), (257, 129)])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_odd_matrices_on_both_tile_kernels(cp, shape, dtype):
    """Over two waves of 64-wide tile blocks (transpose_strided) and under (the 32 x 8 coarsened kernel)."""
    import gpumemlab

    host = random_bits(shape, dtype, seed=5)
    poison_pool(cp, host.nbytes)
    assert gpumemlab.transpose(cp.asarray(host)).get().tobytes() == np.ascontiguousarray(host.T).tobytes()
