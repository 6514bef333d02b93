"""matmul on operands in any layout, read in place: every register-blocked layout variant (A and/or B column-major,
any pitch, vector widths 4 and 1, split-K) and batched stacks with NumPy's broadcasting, checked element by element
against float64 (|C - C64| <= gamma_k |A| |B|) with the output poisoned first."""

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.work_stream()
    return cupy


def rand(cp, shape, seed):
    from gpumemlab.bench.verify import device_random_nonzero

    return device_random_nonzero(shape, np.float32, seed)


def check(cp, a, b, **kw):
    """gpumemlab.matmul(a, b) into a poisoned output, against float64: shape as NumPy's, every element in bound."""
    import gpumemlab
    from gpumemlab.bench.verify import matmul_bound, poison

    a64, b64 = a.astype(cp.float64), b.astype(cp.float64)
    c64 = cp.matmul(a64, b64)
    out = cp.empty(c64.shape, cp.float32)
    poison(out)
    got = gpumemlab.matmul(a, b, out=out, **kw)
    assert got is out and got.shape == np.matmul(np.empty(a.shape), np.empty(b.shape)).shape
    bound = matmul_bound(a64, b64, cp.float32, xp=cp)
    fresh = gpumemlab.matmul(a, b, **kw)  # the call without out
    assert fresh.flags.c_contiguous and fresh.shape == out.shape
    for c in (out, fresh):
        bad = ~(cp.abs(c.astype(cp.float64) - c64) <= bound)  # NaN (unwritten) fails too
        assert int(cp.count_nonzero(bad)) == 0, f"{int(cp.count_nonzero(bad))} of {c.size} beyond gamma_k |A||B|"
    return out


def view(cp, rows, cols, how, seed):
    """A rows x cols float32 operand: "c" C order, "t" a transposed view, "f" Fortran order, "p" a column slice of
    a wider array (pitch > cols), "a4" the same with an aligned pitch (cols + 4), "tp" a transposed view of such a slice, "s" every other row."""
    if how == "c":
        return rand(cp, (rows, cols), seed)
    if how == "t":
        return rand(cp, (cols, rows), seed).T
    if how == "f":
        return cp.asfortranarray(rand(cp, (rows, cols), seed))
    if how == "a4":
        return rand(cp, (rows, cols + 4), seed)[:, :cols]
    if how == "p":
        return rand(cp, (rows, cols + 5), seed)[:, 2:cols + 2]
    if how == "tp":
        return rand(cp, (cols, rows + 3), seed)[:, :rows].T
    if how == "s":
        return rand(cp, (2 * rows, cols), seed)[::2]
    raise ValueError(how)


SHAPES = [(1, 1, 1), (7, 5, 3), (33, 65, 17), (129, 260, 36), (64, 128, 96), (1000, 777, 1023), (513, 3, 33),
          (2, 300, 500), (300, 40, 2000)]
LAYOUTS = [("t", "c"), ("c", "t"), ("t", "t"), ("f", "f"), ("p", "t"), ("tp", "p"), ("s", "tp"), ("c", "p")]


@pytest.mark.parametrize("lay", LAYOUTS, ids=lambda x: "-".join(x))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_views_read_in_place(cp, shape, lay):
    m, n, k = shape
    check(cp, view(cp, m, k, lay[0], m + k), view(cp, k, n, lay[1], n + 7))


def _configs():
    from gpumemlab.kernels.matmul import CANDIDATES

    return CANDIDATES


@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("ta, tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("cfg", _configs(), ids=lambda c: c.name)
def test_every_layout_instantiation(cp, cfg, ta, tb, splits):
    """Each candidate x strided layout x split, on an aligned shape (16-byte copies; row-major operands with a pitch
    of 4 more floats, else the pair would be the dense instantiation) and an odd one with odd pitches (4-byte copies)."""
    from gpumemlab.ops.matmul import Choice, operands as L

    for m, n, k, aligned in ((256, 384, 512, True), (197, 301, 515, False)):
        row, col = ("a4", "t") if aligned else ("p", "tp")
        a = view(cp, m, k, col if ta else row, m)
        b = view(cp, k, n, col if tb else row, n)
        lay = L.layout(a.shape, tuple(s // 4 for s in a.strides), b.shape, tuple(s // 4 for s in b.strides))
        assert (lay.a.trans, lay.b.trans) == (ta, tb) and not L.is_dense(lay)
        assert L.vec4(lay, (a.data.ptr, b.data.ptr, 0)) == aligned
        check(cp, a, b, config=Choice(cfg, splits))


@pytest.mark.parametrize("sa, sb", [
    ((3, 33, 17), (3, 17, 65)),           # one launch of 3 products
    ((4, 1, 20, 30), (3, 30, 10)),        # A broadcast over B's side, B over A's
    ((5, 64, 48), (48, 40)),              # one B: a single taller product
    ((48,), (6, 48, 40)),                 # vector @ stack
    ((6, 40, 48), (48,)),                 # stack @ vector: one taller matrix-vector product
    ((2, 3, 8, 12), (1, 3, 12, 16)),      # B broadcast over the outer side: two launches
    ((48,), (48,)),                       # a dot product: 0-D
])
def test_batched_broadcasts_as_numpy(cp, sa, sb):
    check(cp, rand(cp, sa, 1), rand(cp, sb, 2))


def test_batched_transposed_and_strided_stacks(cp):
    a = rand(cp, (7, 40, 33), 3).transpose(0, 2, 1)       # 7 x 33 x 40, each matrix column-major
    b = rand(cp, (7, 40, 50), 4)[:, :, 5:45]              # pitched rows
    check(cp, a, b)
    check(cp, rand(cp, (9, 12, 16), 5)[::2], rand(cp, (20, 16), 6).T)  # stepped stack, one transposed B


def test_more_products_than_one_launch_holds(cp):
    from gpumemlab.kernels.matmul import MAX_GRID_Z

    count = MAX_GRID_Z + 7
    check(cp, rand(cp, (count, 3, 5), 7), rand(cp, (count, 5, 2), 8))


@pytest.mark.parametrize("m, k", [(4096, 4096), (3000, 1000), (513, 7)])
def test_transposed_matrix_vector_products(cp, m, k):
    check(cp, rand(cp, (k, m), 9).T, rand(cp, (k,), 10))          # A^T x: vector times A's storage
    check(cp, rand(cp, (m,), 11), rand(cp, (k, m), 12).T)         # x B^T
    check(cp, rand(cp, (k, m), 13).T, rand(cp, (2 * k,), 14)[::2])  # a strided vector: the tiles


def test_no_unit_stride_side_is_copied_once(cp):
    check(cp, rand(cp, (64, 96), 15)[:, ::2], rand(cp, (96, 40), 16)[::2, ::2])


def test_empty_and_zero_depth_follow_numpy(cp):
    import gpumemlab

    assert gpumemlab.matmul(rand(cp, (3, 0, 4), 1), rand(cp, (4, 5), 2)).shape == (3, 0, 5)
    z = gpumemlab.matmul(cp.ones((2, 3, 0), cp.float32), cp.ones((2, 0, 4), cp.float32))
    assert z.shape == (2, 3, 4) and not bool(cp.any(z))


def test_layout_errors_are_one_line(cp):
    import gpumemlab
    from gpumemlab.errors import UsageError

    with pytest.raises(UsageError, match=r"^matmul: batch shapes \(2,\) and \(3,\) do not broadcast"):
        gpumemlab.matmul(rand(cp, (2, 4, 4), 1), rand(cp, (3, 4, 4), 2))
    with pytest.raises(UsageError, match=r"^out: expected a 3-D array, got 2-D with shape \(3, 4\)"):
        gpumemlab.matmul(rand(cp, (2, 3, 5), 1), rand(cp, (5, 4), 2), out=cp.empty((3, 4), cp.float32))
    with pytest.raises(UsageError, match=r"^a: expected a 2-D array, got 3-D"):
        gpumemlab.matmul(rand(cp, (2, 4, 4), 1), rand(cp, (4, 4), 2), variant="tiled_16")
