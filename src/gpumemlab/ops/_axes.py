"""Axis arguments of reductions, NumPy's way, and the collapse of a contiguous shape around the reduced axes.

Pure (no GPU): ``normalize_axis`` checks ``axis`` like ``numpy.sum`` (an int or a tuple of ints, negative
counts from the end; out of range or repeated: one-line error); ``collapse`` turns (shape, reduced axes) into
the ``(outer, n, inner)`` view the kernels read, when the reduced axes are one run of the memory order.
"""

from __future__ import annotations

import operator
from math import prod

from ..errors import InputTypeError, UsageError


def normalize_axis(axis, ndim: int) -> tuple[int, ...]:
    """Sorted non-negative axes; ``None`` means all of them."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        try:
            i = operator.index(a)
        except TypeError:
            raise InputTypeError(f"axis: expected an int or a tuple of ints, got {type(a).__name__}") from None
        if not -ndim <= i < ndim:
            raise UsageError(f"axis {i} is out of bounds for array of dimension {ndim}")
        out.append(i % ndim)
    if len(set(out)) != len(out):
        raise UsageError(f"axis: duplicate value in {axis!r}")
    return tuple(sorted(out))


def result_shape(shape: tuple, axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def collapse(shape: tuple, axes: tuple[int, ...]) -> tuple[int, int, int] | None:
    """``(outer, n, inner)`` with ``n`` the product of the reduced sides, or None when the reduced axes (sides of
    length 1 ignored) are not one run: then the kept sides are interleaved with them in memory."""
    marks = [i in axes for i, s in enumerate(shape) if s != 1]
    sides = [s for s in shape if s != 1]
    if True not in marks:
        return prod(sides), 1, 1
    first = marks.index(True)
    last = len(marks) - 1 - marks[::-1].index(True)
    if not all(marks[first:last + 1]):
        return None
    return prod(sides[:first]), prod(sides[first:last + 1]), prod(sides[last + 1:])
