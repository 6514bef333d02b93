"""How ``gpumemlab.matmul`` reads its operands where they lie: pure (shapes and element strides in, a layout out).

A matrix operand is read in place when one of its two sides has unit stride: row-major (C order, or a row-sliced
view) or column-major (a transposed view, Fortran order) with any pitch; the register-blocked kernel takes each
operand's order as a template flag and its pitch as an argument (``kernels.matmul.Operands``). A matrix with no
unit-stride side (``x[::2, ::2]``) is copied once. Stacks follow NumPy's ``matmul``: a 1-D ``a`` is a row (1 x K)
and a 1-D ``b`` a column (K x 1), each dropped from the result; the leading sides broadcast. The broadcast batch is
folded to as few sides as its strides allow; the innermost runs in one launch (grid z), the outer ones, if any, loop.
A batch that only steps ``a`` by whole row-major matrices against one ``b`` is a single taller product.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...errors import UsageError

MAX_PITCH = 2**31 - 1  # pitches are int arguments of the kernel


@dataclass(frozen=True)
class Side:
    """One matrix operand in place: ``trans`` 1 column-major, ``ld`` elements between its rows (columns when
    column-major)."""

    trans: int
    ld: int


def matrix_side(rows: int, cols: int, row_stride: int, col_stride: int) -> Side | None:
    """The in-place reading of a rows x cols matrix with these element strides, row-major where both fit; None
    where neither side has unit stride (or a pitch is negative or too large): the operand must be copied."""
    def ok(ld):
        return 0 <= ld <= MAX_PITCH
    if rows == 0 or cols == 0:  # nothing to read (CuPy gives empty arrays arbitrary strides)
        return Side(0, cols)
    if cols == 1 or col_stride == 1:
        ld = row_stride if rows > 1 else cols
        if ok(ld):
            return Side(0, ld)
    if rows == 1 or row_stride == 1:
        ld = col_stride if cols > 1 else rows
        if ok(ld):
            return Side(1, ld)
    return None


@dataclass(frozen=True)
class Layout:
    """A (stacked) product C = A B read in place: M x N x K per product, the operands' :class:`Side`, ``batch``
    the folded batch sides outermost first as (count, A step, B step, C step) in elements (A or B step 0:
    broadcast), ``shape`` the result's NumPy shape."""

    m: int
    n: int
    k: int
    a: Side
    b: Side
    batch: tuple[tuple[int, int, int, int], ...]
    shape: tuple[int, ...]

    @property
    def products(self) -> int:
        return math.prod(c for c, *_ in self.batch)


def _broadcast(sa: tuple, sb: tuple) -> tuple:
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    out = []
    for x, y in zip(pa, pb):
        if x != y and 1 not in (x, y):
            raise ValueError
        out.append(y if x == 1 else x)
    return tuple(out)


def fold_batch(sides: list[tuple[int, int, int]], mn: int) -> tuple[tuple[int, int, int, int], ...]:
    """(count, A step, B step, C step) of the batch ``sides`` ((count, A step, B step), outermost first) of a dense
    C of ``mn`` elements per product: sides of 1 dropped, a side merged into the next where it steps over that
    side's whole run in A and in B (C is dense: always)."""
    out: list[list[int]] = []
    c_step = mn
    full = []
    for count, sa, sb in reversed(sides):
        full.append((count, sa, sb, c_step))
        c_step *= count
    for count, sa, sb, sc in reversed(full):
        if count == 1:
            continue
        out.append([count, sa, sb, sc])
    merged: list[list[int]] = []
    for side in reversed(out):  # innermost first
        if merged:
            inner = merged[-1]
            if side[1] == inner[1] * inner[0] and side[2] == inner[2] * inner[0]:
                inner[0] *= side[0]
                continue
        merged.append(side)
    return tuple(tuple(s) for s in reversed(merged))


def layout(a_shape: tuple, a_strides: tuple, b_shape: tuple, b_strides: tuple) -> Layout | tuple[bool, bool]:
    """The in-place :class:`Layout` of ``a @ b`` (shapes and element strides, NumPy's matmul rules), or (copy A,
    copy B): which operands have no unit-stride side and must be made contiguous first. UsageError for shapes that
    do not align or broadcast, or a 0-D operand."""
    if not a_shape or not b_shape:
        raise UsageError("matmul: operands must have at least one dimension (0-D arrays are scalars; use *)")
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    ash, ast = ((1,) + tuple(a_shape), (0,) + tuple(a_strides)) if a_vec else (tuple(a_shape), tuple(a_strides))
    bsh, bst = ((tuple(b_shape) + (1,)), tuple(b_strides) + (0,)) if b_vec else (tuple(b_shape), tuple(b_strides))
    m, k = ash[-2:]
    k2, n = bsh[-2:]
    if k != k2:
        raise UsageError(f"matmul: shapes {tuple(a_shape)} and {tuple(b_shape)} do not align "
                         f"(a.shape[-1] = {k} != b.shape[{-1 if b_vec else -2}] = {k2})")
    try:
        batch = _broadcast(ash[:-2], bsh[:-2])
    except ValueError:
        raise UsageError(f"matmul: batch shapes {ash[:-2]} and {bsh[:-2]} do not broadcast "
                         f"(a {tuple(a_shape)}, b {tuple(b_shape)})") from None
    shape = batch + ((m,) if not a_vec else ()) + ((n,) if not b_vec else ())
    sa, sb = matrix_side(m, k, *ast[-2:]), matrix_side(k, n, *bst[-2:])
    if sa is None or sb is None:
        return sa is None, sb is None

    def steps(sh, st):  # per broadcast batch side: the operand's step, 0 where it broadcasts
        pad = len(batch) - (len(sh) - 2)
        return [0] * pad + [s if c != 1 else 0 for c, s in zip(sh[:-2], st[:-2])]

    sides = list(zip(batch, steps(ash, ast), steps(bsh, bst)))
    folded = fold_batch(sides, m * n)
    if folded and folded[-1][2] == 0 and sa.trans == 0 and folded[-1][1] == m * sa.ld and m > 0:
        count = folded[-1][0]  # rows of A equally spaced across the products, one B: one taller product
        m *= count
        folded = folded[:-1]
    return Layout(m, n, k, sa, sb, folded, shape)


def vec4(lay: Layout, addresses: tuple[int, ...]) -> bool:
    """Whether the kernel may move 16 bytes per copy: every pitch and batch step and N, K (and M for a
    column-major A) multiples of 4 floats, every address 16-byte aligned."""
    steps = [lay.a.ld, lay.b.ld, lay.n, lay.k] + [x for _, sa, sb, _ in lay.batch for x in (sa, sb)]
    if lay.a.trans:
        steps.append(lay.m)
    return all(s % 4 == 0 for s in steps) and all(p % 16 == 0 for p in addresses)


def is_dense(lay: Layout) -> bool:
    """One row-major product with dense operands: the tuned path (the GEMV kernels included)."""
    return (not lay.batch and lay.a.trans == 0 and lay.b.trans == 0 and (lay.a.ld == lay.k or lay.m == 1)
            and (lay.b.ld == lay.n or lay.k == 1))


def gemv_swap(lay: Layout) -> bool:
    """A matrix-vector product whose matrix is a dense column-major block: the same product as vector x the
    matrix's row-major storage, which the GEMV kernels read (N = 1 with A^T dense; M = 1 with B^T dense). The
    vector must have unit stride."""
    if lay.batch:
        return False
    if lay.n == 1 and lay.a.trans and lay.a.ld == lay.m and lay.b.trans == 0 and (lay.b.ld == 1 or lay.k == 1):
        return True
    return lay.m == 1 and lay.b.trans and lay.b.ld == lay.k and lay.a.trans == 0
