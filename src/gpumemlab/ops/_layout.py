"""Layouts of ``transpose`` and ``copy``, pure (no GPU): NumPy's ``axes`` checks, the fold of a strided view and a
permutation to the fewest dimensions, and the kernel that moves the folded problem.

The result is always C-contiguous, so a problem is the output's sides (outermost first) with the input's stride of
each (in elements, any sign, zero for broadcast sides). Two output sides fold into one where the outer steps over a
whole run of the inner in the input too (``stride_outer == stride_inner * size_inner``); sides of length 1 drop out.
A contiguous innermost run is then read in wider words where its length, the other strides and the alignment allow.
What is left picks the kernel: one side of stride 1 is a plain copy; a 2-D swap of a C-contiguous matrix takes the
tuned 2-D kernels; an output side whose input stride is smaller than the last side's takes the tiled transpose (that
side read coalesced, the last one written coalesced, the others a batch) unless the tiles would be mostly empty;
anything else is a strided gather.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from math import prod

from ..errors import InputTypeError, UsageError

MAX_DIMS = 6        # sides of a folded layout the kernels take (gather_strided's axes)
MAX_BATCH = 4       # batch sides of transpose_strided
WORD_SIZES = (1, 2, 4, 8, 16)
INT32_MAX = 2**31 - 1


def normalize_axes(axes, ndim: int) -> tuple[int, ...]:
    """``axes`` of ``numpy.transpose``: None reverses; else a permutation of range(ndim), negative counting from
    the end. One-line errors as NumPy's."""
    if axes is None:
        return tuple(range(ndim - 1, -1, -1))
    try:
        items = [operator.index(a) for a in axes]
    except TypeError:
        raise InputTypeError(f"axes: expected None or a sequence of ints, got {axes!r}") from None
    if len(items) != ndim:
        raise UsageError(f"axes: {tuple(items)} don't match an array of dimension {ndim}")
    out = []
    for a in items:
        if not -ndim <= a < ndim:
            raise UsageError(f"axes: axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != ndim:
        raise UsageError(f"axes: repeated axis in {tuple(items)}")
    return tuple(out)


def merged(sides) -> tuple[tuple[int, int], ...]:
    """(size, stride) sides, outermost first, with sides of 1 dropped and an outer side merged into the next where
    it steps over that side's whole run."""
    out: list[tuple[int, int]] = []
    for n, s in sides:
        if n == 1:
            continue
        if out and out[-1][1] == s * n:
            out[-1] = (out[-1][0] * n, s)
        else:
            out.append((n, s))
    return tuple(out)


def fold(shape: tuple, strides: tuple, axes: tuple) -> tuple[tuple[int, int], ...]:
    """(size, input stride) of each output side, outermost first, folded (:func:`merged`). Empty for a single
    element."""
    return merged((shape[a], strides[a]) for a in axes)


@dataclass(frozen=True)
class Move:
    """How a folded layout is moved, in words of ``size`` bytes. ``kind``: "copy" (one contiguous run), "matrix" (a
    C-contiguous rows x cols matrix of 4- or 8-byte words transposed: ``rows``, ``cols``, and its ``tile``), "tile"
    (transpose_strided), "gather" (gather_strided)."""

    kind: str
    size: int
    rows: int = 0
    cols: int = 0
    tile: tuple = ()    # tile: (na, nb, in_sa, in_sb, out_sb)
    batch: tuple = ()   # tile: (size, input stride, output stride) per batch side, innermost first
    sides: tuple = ()   # gather: (size, input stride) per side, innermost first


MATRIX_SIZES = (4, 8)  # word sizes of the tuned 2-D kernels
MIN_TILE_USE = 0.25    # below this share of a 32 x 32 tile's elements in use, a gather moves the layout instead


def out_strides(sides: tuple) -> list[int]:
    """C-contiguous output strides of the folded sides (outermost first)."""
    strides, run = [], 1
    for n, _ in reversed(sides):
        strides.append(run)
        run *= n
    return strides[::-1]


def tile_use(na: int, nb: int) -> float:
    """The share of the 32 x 32 tiles covering na x nb that holds elements."""
    return na / (32 * -(-na // 32)) * nb / (32 * -(-nb // 32))


def widen(sides: tuple, size: int, align: int) -> tuple[tuple, int]:
    """Sides whose innermost run is contiguous, re-read in the widest word (up to 16 bytes) that divides that run,
    every other stride and the addresses' alignment ``align`` (address % 16 of input and output together): a
    batch of 256-byte rows then moves in 16-byte words. Returns (sides, word size)."""
    if not sides or sides[-1][1] != 1:
        return sides, size
    for w in (16, 8, 4, 2):
        k = w // size
        if w <= size or w % size or align % w or sides[-1][0] % k or any(s % k for _, s in sides[:-1]):
            continue
        return merged([(n, s // k) for n, s in sides[:-1]] + [(sides[-1][0] // k, 1)]), w
    return sides, size


def plan(sides: tuple, size: int = 4) -> Move:
    """The kernel for a folded layout (:func:`fold`) of ``size``-byte words; UsageError for more than ``MAX_DIMS``
    sides."""
    if len(sides) > MAX_DIMS:
        raise UsageError(f"x: the layout folds to {len(sides)} dimensions; at most {MAX_DIMS} are supported "
                         "(cupy.ascontiguousarray first)")
    if not sides or (len(sides) == 1 and sides[0][1] == 1):
        return Move("copy", size)
    (na, sa) = sides[-1]
    rest = range(len(sides) - 1)
    p = min(rest, key=lambda j: abs(sides[j][1]), default=None)
    if p is None or abs(sides[p][1]) >= abs(sa) or na > INT32_MAX or sides[p][0] > INT32_MAX:
        return Move("gather", size, sides=tuple(reversed(sides)))
    ostr = out_strides(sides)
    tile = (na, sides[p][0], sa, sides[p][1], ostr[p])
    if len(sides) == 2 and sides[0][1] == 1 and sa == sides[0][0] and size in MATRIX_SIZES:
        return Move("matrix", size, rows=na, cols=sides[0][0], tile=tile)  # a C-contiguous matrix, transposed
    if tile_use(na, sides[p][0]) < MIN_TILE_USE:
        return Move("gather", size, sides=tuple(reversed(sides)))
    batch = tuple((sides[j][0], sides[j][1], ostr[j]) for j in reversed(rest) if j != p)
    return Move("tile", size, tile=tile, batch=batch)


def layout(shape: tuple, strides_bytes: tuple, itemsize: int, axes: tuple, align: int = 0) -> Move:
    """:func:`plan` of :func:`fold` (and :func:`widen`) for an array's shape and byte strides; UsageError for
    strides that are not a whole number of elements."""
    if any(s % itemsize for s in strides_bytes):
        raise UsageError(f"x: strides {strides_bytes} are not multiples of the element size {itemsize}")
    sides, size = widen(fold(shape, tuple(s // itemsize for s in strides_bytes), axes), itemsize, align)
    return plan(sides, size)


def batch_count(move: Move) -> int:
    return prod(n for n, _, _ in move.batch)


def dense_form(shape: tuple, strides: tuple, itemsize: int) -> tuple[tuple[int, ...], tuple[int, ...], int] | None:
    """A view that is a permutation of a dense block, its sides perhaps reversed (``x.T``, F order, a transposed
    N-D array, ``x[::-1]``): (the axes ordered so that their byte strides fall, as a C-contiguous array of that
    order would lie, sides of length 1 last; the axes read in reverse; the byte offset of the block's first
    element from the view's). None for views with gaps, overlaps or broadcast sides."""
    order = sorted((a for a, n in enumerate(shape) if n != 1), key=lambda a: -abs(strides[a]))
    run = itemsize
    for a in reversed(order):
        if abs(strides[a]) != run:
            return None
        run *= shape[a]
    flipped = tuple(a for a in order if strides[a] < 0)
    offset = sum((shape[a] - 1) * strides[a] for a in flipped)
    return tuple(order) + tuple(a for a, n in enumerate(shape) if n == 1), flipped, offset
