"""CPU tests of transpose's and copy's layouts (ops/_layout.py): NumPy's axes checks, the fold, the kernel each
folded layout takes, and a NumPy model of each kernel's index arithmetic run on the plan against numpy.transpose."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gpumemlab.errors import InputTypeError, UsageError
from gpumemlab.ops import _layout as L


@pytest.mark.parametrize("axes,ndim,want", [(None, 3, (2, 1, 0)), (None, 0, ()), ((1, 0), 2, (1, 0)),
                                            ((-1, 0, 1), 3, (2, 0, 1)), ([0], 1, (0,)), ((np.int64(1), 0), 2, (1, 0))])
def test_normalize_axes(axes, ndim, want):
    assert L.normalize_axes(axes, ndim) == want


@pytest.mark.parametrize("axes,ndim,exc,msg", [
    ((0,), 2, UsageError, "axes: (0,) don't match an array of dimension 2"),
    ((0, 0), 2, UsageError, "axes: repeated axis in (0, 0)"),
    ((0, 2), 2, UsageError, "axes: axis 2 is out of bounds for array of dimension 2"),
    ((0, -3), 2, UsageError, "axes: axis -3 is out of bounds for array of dimension 2"),
    ((0, 1.0), 2, InputTypeError, "axes: expected None or a sequence of ints, got (0, 1.0)"),
    (3, 1, InputTypeError, "axes: expected None or a sequence of ints, got 3"),
])
def test_normalize_axes_errors(axes, ndim, exc, msg):
    with pytest.raises(exc) as e:
        L.normalize_axes(axes, ndim)
    assert str(e.value) == msg


@pytest.mark.parametrize("shape,strides,axes,want", [
    ((4, 5), (5, 1), (0, 1), ((20, 1),)),                    # identity of a contiguous array: one run
    ((4, 5), (5, 1), (1, 0), ((5, 1), (4, 5))),              # a matrix transposed
    ((2, 3, 4), (12, 4, 1), (0, 2, 1), ((2, 12), (4, 1), (3, 4))),
    ((2, 3, 4), (12, 4, 1), (2, 0, 1), ((4, 1), (6, 4))),    # the two outer sides stay adjacent: folded
    ((4, 1, 5), (5, 5, 1), (2, 1, 0), ((5, 1), (4, 5))),     # a side of 1 drops out
    ((4, 5), (10, 2), (0, 1), ((20, 2),)),                   # x[:, ::2] of a 4 x 10: every other element
    ((4, 5), (12, 2), (0, 1), ((4, 12), (5, 2))),            # x[:, :10:2] of a 4 x 12: no fold
    ((4, 5), (-5, 1), (0, 1), ((4, -5), (5, 1))),            # reversed rows
    ((3, 4), (0, 1), (0, 1), ((3, 0), (4, 1))),              # broadcast rows
    ((1, 1), (8, 8), (1, 0), ()),                            # one element
])
def test_fold(shape, strides, axes, want):
    assert L.fold(shape, strides, axes) == want


def test_plan_kinds():
    assert L.plan(()).kind == "copy" and L.plan(((7, 1),)).kind == "copy"
    m = L.plan(((5, 1), (4, 5)))
    assert (m.kind, m.rows, m.cols, m.tile) == ("matrix", 4, 5, (4, 5, 5, 1, 4))
    assert L.plan(((5, 1), (4, 5)), size=2).kind == "gather"  # no 2-D kernel for 2-byte words; tiles mostly empty
    assert L.plan(((50, 1), (40, 50)), size=2).kind == "tile"
    t = L.plan(((2, 1200), (40, 1), (30, 40)))  # (2, 30, 40) -> axes (0, 2, 1): a batch of 2 matrices
    assert (t.kind, t.tile, t.batch) == ("tile", (30, 40, 40, 1, 30), ((2, 1200, 1200),))
    assert L.plan(((2, 12), (4, 1), (3, 4))).kind == "gather"  # 3 x 4 matrices fill 1% of a tile
    assert L.plan(((40, 12), (50, 2))).kind == "gather"   # the last side has the smallest stride: rows gathered
    assert L.plan(((7, 3),)).kind == "gather"
    assert L.plan(((50, 2), (40, 120))).kind == "tile"     # x[:, :100:2].T: read along the stride-2 side
    with pytest.raises(UsageError, match=r"^x: the layout folds to 7 dimensions; at most 6 are supported"):
        L.plan(tuple((2, 3 ** k) for k in range(7, 0, -1)))


@pytest.mark.parametrize("sides,size,align,want", [
    (((8, 64), (16, 1)), 4, 0, (((8, 16), (4, 1)), 16)),     # rows of 16 floats: 4 words of 16 bytes
    (((8, 64), (16, 1)), 4, 8, (((8, 32), (8, 1)), 8)),      # 8 bytes past 16: 8-byte words
    (((8, 66), (16, 1)), 4, 0, (((8, 33), (8, 1)), 8)),      # a row stride of 66 floats: 8-byte words
    (((8, 64), (3, 1)), 4, 0, (((8, 64), (3, 1)), 4)),       # a run of 3 floats: no wider word divides it
    (((8, 64), (16, 2)), 4, 0, (((8, 64), (16, 2)), 4)),     # not contiguous inside: no change
    (((9, 8), (6, 1)), 1, 2, (((9, 4), (3, 1)), 2)),         # bytes, 2 past 16: pairs
    (((9, 6), (6, 1)), 1, 2, (((27, 1),), 2)),               # ... that fold into one run
])
def test_widen(sides, size, align, want):
    assert L.widen(sides, size, align) == want


def test_layout_rejects_strides_off_the_element_size():
    with pytest.raises(UsageError, match=r"^x: strides \(6, 2\) are not multiples of the element size 4$"):
        L.layout((2, 3), (6, 2), 4, (0, 1))


def run_model(x: np.ndarray, axes) -> np.ndarray:
    """What the planned kernel writes, computed from the view's bytes with the kernel's own index arithmetic, in the
    planned word size (the buffer starts 16-byte aligned, as device allocations do)."""
    order = L.normalize_axes(axes, x.ndim)
    out_shape = tuple(x.shape[a] for a in order)
    item = x.itemsize
    strides = tuple(s // item for s in x.strides)
    lo = sum(min(0, (n - 1) * s) for n, s in zip(x.shape, strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(x.shape, strides))
    flat = np.zeros(-(-(hi - lo + 1) * item // 16) * 16, np.uint8)
    elems = flat[:(hi - lo + 1) * item].view(x.dtype)
    for idx in itertools.product(*map(range, x.shape)):
        elems[sum(i * s for i, s in zip(idx, strides)) - lo] = x[idx]
    start_b = -lo * item
    move = L.layout(x.shape, x.strides, item, order, align=start_b & 15)
    w = move.size
    words = flat.view(np.dtype((np.void, w)))
    start = start_b // w
    count_b = int(np.prod(out_shape)) * item
    out = np.zeros(count_b // w, np.dtype((np.void, w)))
    if move.kind == "copy":
        out[:] = words[start:start + out.size]
    elif move.kind in ("matrix", "tile"):
        na, nb, sa, sb, ob = move.tile
        batch = list(move.batch) or [(1, 0, 0)]
        for z in itertools.product(*[range(n) for n, _, _ in batch]):
            iz = sum(k * i for k, (_, i, _) in zip(z, batch))
            oz = sum(k * o for k, (_, _, o) in zip(z, batch))
            for a in range(na):
                for b in range(nb):
                    out[oz + b * ob + a] = words[start + iz + a * sa + b * sb]
    else:
        assert np.prod([n for n, _ in move.sides]) == out.size
        for i in range(out.size):
            r, at = i, 0
            for d, (n, s) in enumerate(move.sides):
                if d + 1 == len(move.sides):
                    at += r * s
                else:
                    at += (r % n) * s
                    r //= n
            out[i] = words[start + at]
    return out.view(np.uint8).view(x.dtype).reshape(out_shape)


def views():
    rng = np.random.default_rng(0)
    a = rng.integers(1, 1000, size=(4, 6, 5)).astype(np.int32)
    yield a, None
    yield a, (0, 2, 1)
    yield a, (1, 0, 2)
    yield a, (2, 0, 1)
    yield a, (0, 1, 2)
    yield a[:, ::2], (2, 1, 0)
    yield a[::-1, :, 1:4], (1, 2, 0)
    yield a[:, :, ::-2], None
    yield a[:, 0], None
    yield np.broadcast_to(a[0, 0], (3, 5)), None
    yield np.broadcast_to(a[0, 0], (3, 5)), (0, 1)
    yield a[1:3].transpose(2, 0, 1), (1, 2, 0)
    yield np.asfortranarray(a), (0, 1, 2)
    yield a[..., 2], (1, 0)
    b = rng.integers(1, 1000, size=(2, 3, 2, 3, 2, 2, 3)).astype(np.int16)
    yield b, (6, 4, 2, 0, 1, 3, 5)
    yield a.reshape(-1)[::3], None
    c = rng.integers(1, 1000, size=(4, 6, 8)).astype(np.int16)  # rows of 16 bytes: read as 16-byte words
    yield c, (1, 0, 2)
    yield c[:, :, 2:6], (1, 0, 2)                               # 8-byte runs, 4 bytes past alignment
    yield c[1:, ::-1], (1, 0, 2)
    yield rng.integers(1, 1000, size=(40, 50)).astype(np.uint8), None  # a byte matrix: the tile kernel


@pytest.mark.parametrize("x,axes", list(views()))
def test_the_planned_kernel_moves_what_numpy_transpose_gives(x, axes):
    np.testing.assert_array_equal(run_model(x, axes), np.ascontiguousarray(np.transpose(x, axes)))


DENSE_VIEWS = [lambda a: a.T, lambda a: a.transpose(1, 0, 2), lambda a: a.transpose(2, 1, 0).copy().transpose(2, 1, 0),
               lambda a: a[::-1], lambda a: a[:, ::-1].T, lambda a: a[:1].transpose(2, 0, 1), lambda a: a[:, :, ::-1],
               lambda a: a[1:2, ::-1]]


@pytest.mark.parametrize("k", range(len(DENSE_VIEWS)))
def test_dense_form_rebuilds_the_view(k):
    """The block the form names, laid out C-contiguously in its order, transposed back and its reversed axes
    flipped, is the view."""
    a = np.arange(40, dtype=np.float64).reshape(2, 4, 5)
    v = DENSE_VIEWS[k](a)
    base_of = v.base  # numpy's views name the array that owns the memory
    order, flipped, offset = L.dense_form(v.shape, v.strides, v.itemsize)
    start = (v.__array_interface__["data"][0] - base_of.__array_interface__["data"][0] + offset) // 8
    block = base_of.reshape(-1)[start:start + v.size].reshape([v.shape[i] for i in order])
    back = block.transpose(np.argsort(order))[tuple(slice(None, None, -1) if i in flipped else slice(None)
                                                    for i in range(v.ndim))]
    np.testing.assert_array_equal(back, v)


@pytest.mark.parametrize("make", [lambda a: a[:, ::2], lambda a: a[:, :3], lambda a: a.reshape(-1)[::2],
                                  lambda a: np.broadcast_to(a[:1], (2, 4, 5)).transpose(1, 2, 0)])
def test_dense_form_is_none_for_gaps_and_broadcasts(make):
    v = make(np.zeros((2, 4, 5), np.float64))
    assert L.dense_form(v.shape, v.strides, v.itemsize) is None


def test_transpose_rejects_a_dtype_it_cannot_move_before_any_gpu_call():
    from gpumemlab.ops.transpose import prepared

    with pytest.raises(InputTypeError, match=r"^x: dtype datetime64\[s\] not supported; expected one of bool, int8, "):
        prepared((2,), (8,), np.dtype("datetime64[s]"), None, True)
    with pytest.raises(UsageError, match=r"^axes: \(0,\) don't match an array of dimension 2$"):
        prepared((2, 3), (12, 4), np.dtype("float32"), (0,), True)


def test_empty_results_need_no_launch():
    from gpumemlab.ops.transpose import prepared

    assert prepared((0, 5), (20, 4), np.dtype("int8"), None, True) == ((5, 0), None)


@pytest.mark.parametrize("shape,wide", [((257, 129), False), ((1000, 1001), False), ((1537, 2049), False),
                                        ((4097, 3001), True), ((12345, 6789), True)])
def test_odd_matrices_take_wide_tiles_from_two_waves(shape, wide):
    """On a GPU of 132 SMs with 5 resident 64 x 64 tile blocks each (an H200's occupancy of the 4-byte kernel)."""
    from gpumemlab.ops.transpose import WIDE_TILE_WAVES, tile_waves

    move = L.layout(shape, (4 * shape[1], 4), 4, (1, 0))
    assert move.kind == "matrix"
    assert (tile_waves(move, 132 * 5) >= WIDE_TILE_WAVES) == wide


@pytest.mark.parametrize("k", range(len(DENSE_VIEWS)))
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_a_view_s_sum_is_its_dense_block_s_sum_permuted_back(k, axis, keepdims):
    """reduce_axis.dense_view's plan, run on NumPy: the block's sum over the mapped axes, permuted into the view's
    order and its reversed sides flipped, is the view's sum."""
    from gpumemlab.ops.reduce_axis import dense_view

    a = np.arange(40, dtype=np.float64).reshape(2, 4, 5)
    v = DENSE_VIEWS[k](a)
    d = dense_view(v.shape, v.strides, v.itemsize, axis, keepdims)
    start = (v.__array_interface__["data"][0] - v.base.__array_interface__["data"][0] + d.offset) // 8
    block = v.base.reshape(-1)[start:start + v.size].reshape(d.shape)
    res = block.sum(axis=d.axis).transpose(d.perm)
    res = res[tuple(slice(None, None, -1) if i in d.flip else slice(None) for i in range(res.ndim))]
    np.testing.assert_array_equal(res.reshape(d.result_shape), v.sum(axis=axis, keepdims=keepdims))


def test_a_view_with_gaps_has_no_dense_block():
    from gpumemlab.ops.reduce_axis import dense_view

    v = np.zeros((4, 6), np.float32)[:, ::2]
    assert dense_view(v.shape, v.strides, 4, 0, False) is None
