"""``gpumemlab.sum`` and ``gpumemlab.mean``: NumPy-shaped reductions of float32 / float64 / int32 GPU arrays.

``axis=None`` takes the deterministic whole-array sum (:mod:`.full_sum`: plan, accuracy bound); other axes
:mod:`.reduce_axis`. Neither uses floating-point atomics: for a fixed shape, dtype and device the result is bitwise
reproducible.
"""

from __future__ import annotations

import numpy as np

from . import reduce_axis
from ._checks import as_device_array, on_arrays_device
from .full_sum import (DTYPES, SINGLE_PASS_MAX, VECTOR_BYTES, SumPlan, blocks_per_sm, device_plan,  # noqa: F401
                       full_sum_launch, plan, relative_bound, tree_depth, unit_roundoff)


def error_bound(x, axis=None):
    """Absolute error bound of ``sum(x, axis)`` on this device: ``gamma_h * sum(|x|)`` along ``axis`` (0 for int32).

    ``axis=None``: a float; otherwise a float64 CuPy array of the result's shape, one bound per output.
    """
    arr = as_device_array(x, "x", DTYPES, contiguous=False)
    if not arr.flags.c_contiguous and arr.size:  # the bound of the path the view takes (reduce_axis._strided)
        return reduce_axis.strided_error_bound(arr, axis)
    if axis is None:
        if arr.dtype.kind != "f" or arr.size == 0:
            return 0.0
        import cupy

        abs_sum = float(cupy.abs(arr).sum(dtype=np.float64))
        return relative_bound(device_plan(arr.size, arr.dtype), arr.dtype) * abs_sum
    return reduce_axis.error_bound(arr, axis)


@on_arrays_device
def sum(x, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001 - the public name mirrors numpy.sum
    """Sum of a float32/float64/int32 GPU array (any strides) over ``axis`` (None: all; an int or a tuple of ints,
    negative from the end), like ``numpy.sum``: result dtype float32 -> float32, float64 -> float64, int32 ->
    int64 (exact), or ``dtype`` (the accumulation type too: float32 input float32 or float64; float64 input float64;
    int32 input int64, int32 (wraps), float64 or float32; NumPy also allows narrowing ones); ``keepdims`` keeps
    the reduced sides as length 1. Returns a CuPy array (0-d for a full reduction).

    ``out``: optional C-contiguous CuPy array of the result's shape and dtype (NumPy would also cast into
    another dtype; here a different dtype is an error). ``axis=None`` takes the deterministic full reduction
    (module docstring); other axes :mod:`gpumemlab.ops.reduce_axis` (also deterministic; bound in
    :func:`error_bound`).

    NaN and Inf follow IEEE arithmetic, as ``numpy.sum`` does: any NaN gives NaN (its payload is not
    kept), +Inf and -Inf together give NaN, Inf of one sign gives that Inf, and a float32 sum past the
    float32 range gives +-Inf (the accumulation is in float32).
    """
    return reduce_axis.reduce(x, axis, dtype, out, keepdims, mean=False)


@on_arrays_device
def mean(x, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean over ``axis``, as ``numpy.mean``: the sum of :func:`sum`'s path divided by the count.

    Result dtype: float32 -> float32, float64 -> float64, int32 -> float64, or ``dtype`` (float32 or float64; not
    float32 for float64 input).
    An empty reduction gives NaN (NumPy also warns).
    """
    return reduce_axis.reduce(x, axis, dtype, out, keepdims, mean=True)
