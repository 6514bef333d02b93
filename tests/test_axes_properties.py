"""sum/mean's axis handling on the CPU side (ops/_axes.py) against NumPy, for generated shapes and axis arguments:
the axes NumPy reduces (or its refusal), the result shape with and without keepdims, and the (outer, n, inner)
view the kernels read, checked by reducing an arange through it."""

from __future__ import annotations

import os
from math import prod

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpumemlab.errors import InputTypeError, UsageError
from gpumemlab.ops import _axes


def examples(n: int) -> int:
    return max(10, int(n * float(os.environ.get("HYPOTHESIS_SCALE", "1"))))


shapes = st.lists(st.integers(1, 4), min_size=0, max_size=5).map(tuple)
axis_args = st.one_of(
    st.none(), st.integers(-6, 6),
    st.lists(st.integers(-6, 6), min_size=0, max_size=4).map(tuple),  # duplicates and out-of-range included
    st.sampled_from([1.0, "0", (0, 1.5), [0]]),                        # not an int or a tuple of ints
)


def numpy_sum(shape, axis, keepdims):
    return np.sum(np.zeros(shape), axis=axis, keepdims=keepdims)


@settings(max_examples=examples(300), deadline=None)
@given(shapes, axis_args, st.booleans())
def test_axes_and_result_shape_match_numpy_or_both_refuse(shape, axis, keepdims):
    if shape == () and isinstance(axis, int) and axis in (0, -1):
        return  # NumPy's legacy exception (an int axis 0 or -1 on a 0-d array); a tuple (0,) is refused by both
    try:
        want = np.shape(numpy_sum(shape, axis, keepdims))
    except (ValueError, TypeError):  # numpy.exceptions.AxisError is a ValueError
        with pytest.raises((UsageError, InputTypeError)) as info:
            _axes.normalize_axis(axis, len(shape))
        assert "\n" not in str(info.value)
        return
    axes = _axes.normalize_axis(axis, len(shape))
    assert list(axes) == sorted(set(axes)) and all(0 <= a < len(shape) for a in axes)
    assert _axes.result_shape(shape, axes, keepdims) == want


@settings(max_examples=examples(200), deadline=None)
@given(shapes, st.data())
def test_the_collapsed_view_reduces_like_numpy(shape, data):
    axes = tuple(sorted(data.draw(st.sets(st.sampled_from(range(len(shape))) if shape else st.nothing()))))
    x = np.arange(prod(shape), dtype=np.int64).reshape(shape)
    want = x.sum(axis=axes) if axes else x
    view = _axes.collapse(shape, axes)
    kept = [i for i, s in enumerate(shape) if s != 1 and i not in axes]
    reduced = [i for i, s in enumerate(shape) if s != 1 and i in axes]
    if view is None:  # refused only when a kept side lies between two reduced ones
        assert any(reduced[0] < k < reduced[-1] for k in kept)
        return
    outer, n, inner = view
    assert outer * n * inner == x.size and n == prod(shape[i] for i in axes)
    got = x.reshape(outer, n, inner).sum(axis=1)
    np.testing.assert_array_equal(got.reshape(np.shape(want)), want)
