"""``gpumemlab.sum`` / ``gpumemlab.mean`` along axes: the plan per (shape, axes, dtypes, alignment), cached.

The reduced axes of a contiguous array collapse to ``n`` and the kept ones around them to ``outer`` x ``inner``
(``_axes.collapse``). Whole array: the full reduction of ``ops.reduce`` (reduce7). ``inner == 1`` (row sums:
each result is a contiguous run): ``sum_rows``, a thread per row up to 128 bytes, a warp per row up to
``WARP_ROW_MAX`` elements, else a block.
``inner > 1`` (column sums): a few columns (``inner`` in ``K.NARROW``) over long runs take ``sum_cols_narrow``
(each run read as one contiguous stream, a thread keeping a sum per column; its splits added by the last of the
run's blocks, one launch); columns enough to fill the GPU take
``sum_cols_thread`` (a thread per 16 bytes of columns, walking down the rows); otherwise ``sum_cols``, threads own
adjacent columns so each warp reads a contiguous piece of a row (coalesced) and the warps of a block share the rows;
when the columns alone give too few blocks for the GPU, the rows are split across blocks and ``sum_splits`` adds
the splits' partials in order. Reduced axes interleaved with kept ones in memory: a
transposed copy first (CuPy), then row sums. No floating-point atomics anywhere: results are reproducible.

Accuracy: every result is a tree of additions of depth ``h`` (:func:`tree_depth`), so
``|s^ - s| <= gamma_h * sum(|x|)`` over the reduced elements, ``gamma_h = h*u/(1-h*u)`` (Higham, Accuracy and
Stability of Numerical Algorithms, sec. 4.2); a mean adds one rounding (the division).
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from ..errors import InputTypeError
from ..kernels import CTYPES as CT
from ..kernels import reduce as K
from . import _checks, _layout
from . import _workspace as W
from . import full_sum as R
from ._axes import collapse, normalize_axis, result_shape
from ._checks import as_device_array, check_out, dtype_error

_INPUT_DTYPES = tuple(np.dtype(d) for d in R.DTYPES)
SUM_DEFAULT = {"float32": "float32", "float64": "float64", "int32": "int64"}
MEAN_DEFAULT = {"float32": "float32", "float64": "float64", "int32": "float64"}
# dtype= choices per input dtype: the default and the widening ones (NumPy also allows narrowing casts; not here)
SUM_DTYPES = {"float32": ("float32", "float64"), "float64": ("float64",),
              "int32": ("int64", "int32", "float64", "float32")}
MEAN_DTYPES = {"float32": ("float32", "float64"), "float64": ("float64",), "int32": ("float64", "float32")}
# row sums of few long rows and column sums (sum_rows, sum_cols) split the rows until the grid is this many waves of
# resident blocks (measured on an H200 and an H100: docs/notes/reduce_transpose.md)
WAVES = 4
NARROW_WAVES = 2     # sum_cols_narrow's splits (measured at 2)
THREAD_WAVES = 2     # sum_cols_thread when the columns alone give this many waves of threads
MIN_SPLIT_ROWS = 128  # ... but never below this many rows per split (16 per thread)
MIN_SPLIT_VECTORS = 4 * K.ROW_BLOCK * 4  # row sums of few long rows: splits of at least 16 loads per thread
# column sums: the column blocks alone, from a quarter wave of resident blocks (1.5 a SM at sum_cols' 6), keep DRAM
# busy; splitting them then costs a second launch and loses (docs/notes/reduce_transpose.md, "column sums stop splitting")
NO_SPLIT_WAVE = 0.25


@dataclass(frozen=True)
class AxisPlan:
    """One pass: reduce the middle side ``n`` of an ``outer x n x inner`` contiguous array."""

    kind: str                  # "rows" (inner == 1), "cols", "thread", "narrow", "full" (outer == inner == 1),
    #                            "cast" (n <= 1)
    outer: int
    n: int
    inner: int
    vec: bool = False
    tpr: int = 0               # rows: threads per row (1, 32 or K.ROW_BLOCK)
    splits: int = 1            # rows (block per row): splits of each row; cols, narrow: splits of the rows
    per_split: int = 0         # rows: vectors per split; cols: rows per split; narrow: elements per period
    width: int = 1             # elements per load

    @property
    def grid(self):
        if self.kind == "rows":
            if self.tpr < K.ROW_BLOCK:  # several rows per block
                return (math.ceil(self.outer * self.tpr / K.ROW_BLOCK), 1)
            return (self.outer, self.splits)
        if self.kind == "thread":
            return (math.ceil(self.outer * (self.inner // self.width) / K.COL_THREADS), 1)
        if self.kind == "narrow":
            return (self.outer, self.splits)
        col_blocks = math.ceil(self.inner / (32 * self.width))
        return (col_blocks * self.outer, self.splits)


def splits_depth(splits: int) -> int:
    """Roundings the addition of ``splits`` partials adds: a chain in sum_splits, a thread's share and a block sum
    (two warp sums) in sum_splits_wide."""
    if splits > K.WIDE_SPLITS:
        return math.ceil(splits / K.COL_THREADS) + 10
    return splits - 1


def tree_depth(p: AxisPlan) -> int:
    """Longest chain of roundings a reduced element goes through in one pass ``p`` (an upper bound)."""
    if p.kind == "rows":
        return (math.ceil(p.per_split / p.tpr) + 3 + int(math.log2(p.width)) + int(math.log2(p.tpr))
                + splits_depth(p.splits))
    if p.kind == "cols":
        return math.ceil(p.per_split / K.COL_ROWS) + 2 + K.COL_ROWS - 1 + splits_depth(p.splits)
    if p.kind == "thread":  # 4 rows a step ((a + b) + (c + d) onto the sum), the last step padded with zeros
        return math.ceil(p.n / 4) + 2
    if p.kind == "narrow":  # P / inner elements of a column per period, two warp sums, the tail, the splits (added
        # by the last block: one partial per thread, then a block sum, which adds no more roundings than a chain)
        periods = p.n * p.inner // p.per_split
        steps = math.ceil(periods / (p.splits * K.COL_THREADS)) * (p.per_split // p.inner)
        return steps + 5 + 5 + p.per_split // p.inner + splits_depth(p.splits)
    return 0


def relative_bound(passes, acc_dtype, mean: bool = False, full_plan=None) -> float:
    """Bound on |s^ - s| / sum(|x|) over the reduced elements: the depths of the passes add up."""
    if np.dtype(acc_dtype).kind != "f":
        return 0.0
    h = builtins.sum(tree_depth(p) for p in passes) + int(mean)
    if full_plan is not None:
        h += R.tree_depth(full_plan)
    hu = h * R.unit_roundoff(acc_dtype)
    return hu / (1.0 - hu)


def split(parts: int, n: int, least: int) -> tuple[int, int]:
    """(splits, per split) for up to ``parts`` splits of ``n`` items, each at least ``least`` long."""
    parts = max(1, min(parts, n // least, 65535))
    per = math.ceil(n / parts)
    return math.ceil(n / per), per


def rows_plan(rows: int, n: int, width: int, aligned: bool, resident_blocks: int) -> AxisPlan:
    vec = aligned and n % width == 0
    w = width if vec else 1
    nv = n // w
    if n <= K.WARP_ROW_MAX:
        tpr = 1 if n <= K.THREAD_ROW_VECTORS * width else 32
        return AxisPlan("rows", rows, n, 1, vec, tpr, per_split=nv, width=w)
    splits, per = split(math.ceil(WAVES * resident_blocks / rows), nv, MIN_SPLIT_VECTORS)
    return AxisPlan("rows", rows, n, 1, vec, K.ROW_BLOCK, splits, per, width=w)


def cols_plan(outer: int, n: int, inner: int, width: int, aligned: bool, resident_blocks: int) -> AxisPlan:
    vec = aligned and inner % width == 0
    w = width if vec else 1
    if outer * (inner // w) >= THREAD_WAVES * resident_blocks * K.COL_THREADS:  # a thread per column vector fills it
        return AxisPlan("thread", outer, n, inner, vec, width=w)
    base = math.ceil(inner / (32 * w)) * outer
    parts = 1 if base >= NO_SPLIT_WAVE * resident_blocks else math.ceil(WAVES * resident_blocks / base)
    splits, per = split(parts, n, MIN_SPLIT_ROWS)
    return AxisPlan("cols", outer, n, inner, vec, splits=splits, per_split=per, width=w)


def narrow_plan(outer: int, n: int, inner: int, width: int, aligned: bool, resident_blocks: int) -> AxisPlan | None:
    """sum_cols_narrow where each run (n rows of ``inner`` columns) gives every thread of a block a period at least;
    vector loads where every run starts on 16 bytes. None where it does not apply."""
    vec = aligned and (outer == 1 or n * inner % width == 0)
    w = width if vec else 1
    period = w // math.gcd(w, inner) * inner
    periods = n * inner // period
    if inner not in K.NARROW or periods < K.COL_THREADS:
        return None
    splits = max(1, min(math.ceil(NARROW_WAVES * resident_blocks / outer), math.ceil(periods / K.COL_THREADS), 65535))
    return AxisPlan("narrow", outer, n, inner, vec, splits=splits, per_split=period, width=w)


def one_pass(outer: int, n: int, inner: int, itemsize: int, aligned: bool, resident_blocks: int,
             full_ok: bool = True) -> AxisPlan:
    """``full_ok``: the whole array may take reduce7 (its instantiations are the default accumulators': a float64
    accumulator for float32 or int32 input spills there on sm_100, so those take one split row instead)."""
    width = R.VECTOR_BYTES // itemsize
    if outer * n * inner == 0 or n == 1:
        return AxisPlan("cast", outer, n, inner)
    if outer == 1 and inner == 1 and full_ok:
        return AxisPlan("full", 1, n, 1)
    if inner == 1:
        return rows_plan(outer, n, width, aligned, resident_blocks)
    return (narrow_plan(outer, n, inner, width, aligned, resident_blocks)
            or cols_plan(outer, n, inner, width, aligned, resident_blocks))


def plan(shape: tuple, axes: tuple, itemsize: int, acc_itemsize: int, aligned: bool,
         resident_blocks: int, full_ok: bool = True) -> tuple[AxisPlan, ...]:
    """Pure: the passes for this shape and reduced axes (normalized). Reduced axes that are not one run in memory
    take one pass per run, the last run first; later passes read the accumulator-typed result of the one before."""
    shape, axes = list(shape), [a for a in axes if shape[a] != 1]  # reducing a side of 1 moves no data
    passes = []
    while True:
        c = collapse(tuple(shape), tuple(axes))
        if c is not None or math.prod(shape) == 0:
            c = c or (0, 0, 0)
            passes.append(one_pass(*c, itemsize if not passes else acc_itemsize, aligned or bool(passes),
                                   resident_blocks, full_ok))
            return tuple(passes)
        run = [axes[-1]]  # the last run of reduced sides longer than 1 (sides of 1 anywhere in it)
        i = axes[-1] - 1
        while i >= 0 and (i in axes or shape[i] == 1):
            run.insert(0, i)
            i -= 1
        c = collapse(tuple(shape), tuple(a for a in run if a in axes))
        passes.append(one_pass(*c, itemsize if not passes else acc_itemsize, aligned or bool(passes),
                               resident_blocks))
        shape = [s for k, s in enumerate(shape) if k not in run]
        axes = [a for a in axes if a < run[0]]  # the sides removed all come after them


@cache
def _resident_blocks(spec) -> int:
    from ..gpu import runtime

    return runtime.device_info()["sm_count"] * max(1, runtime.max_active_blocks(spec, 32 * K.COL_ROWS))


def _specs(p: AxisPlan, ctype: str, acc: str) -> tuple:
    if p.kind == "rows":
        return K.rows_spec(ctype, acc, p.vec, p.tpr), K.splits_spec(acc, p.splits)
    if p.kind == "cols":
        return K.cols_spec(ctype, acc, p.vec), K.splits_spec(acc, p.splits)
    if p.kind == "thread":
        return K.cols_thread_spec(ctype, acc, p.vec), None
    if p.kind == "narrow":
        return K.narrow_spec(ctype, acc, p.vec, p.inner), None
    return ()


@lru_cache(maxsize=1024)
def _call_plan(shape: tuple, axis, ndim: int, dtype_name: str, acc_name: str, aligned: bool, keepdims: bool):
    """(passes, kernel specs per pass, intermediate shapes, result shape): the per-call work done once per key."""
    axes = normalize_axis(axis, ndim)
    ctype, acc = CT[dtype_name], CT[acc_name]
    passes = plan(shape, axes, np.dtype(dtype_name).itemsize, np.dtype(acc_name).itemsize, aligned,
                  _resident_blocks(K.cols_spec(ctype, acc, True)), acc_name == SUM_DEFAULT[dtype_name])
    specs = tuple(_specs(p, ctype if i == 0 else acc, acc) for i, p in enumerate(passes))
    return passes, specs, result_shape(shape, axes, keepdims)


def _result_dtype(dtype_name: str, dtype, mean: bool) -> str:
    if dtype is None:
        return (MEAN_DEFAULT if mean else SUM_DEFAULT)[dtype_name]
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise InputTypeError(f"dtype: {dtype!r} is not a dtype") from None
    allowed = (MEAN_DTYPES if mean else SUM_DTYPES)[dtype_name]
    if name not in allowed:
        raise InputTypeError(f"dtype: {name} not supported for {dtype_name} input; expected {', '.join(allowed)}")
    return name


def _pass_launch(p: AxisPlan, specs: tuple, src_name: str, acc, divisor):
    """``launch(src, dst)`` of one pass from ``src`` (contiguous) into ``dst`` (``outer x inner`` results), its
    geometry and scalars prepared once (``runtime.Launcher``)."""
    from ..gpu import runtime

    if p.kind == "cast":  # only sides of length 1 reduced: a converting copy (the count is 1)
        def cast(src, dst):
            dst[...] = src.reshape(dst.shape)
        return cast
    if p.kind == "full":
        full = R.full_sum_launch(p.n, src_name, acc.name)
        if divisor == 1:
            return full

        def full_mean(src, dst):
            full(src, dst)
            _cupy().divide(dst, divisor, out=dst)
        return full_mean
    kernel, splits_kernel = specs
    m = p.outer * p.inner
    scale = divisor if p.splits == 1 else acc.type(1)
    if p.kind == "thread":
        only = runtime.Launcher(kernel, p.grid, K.COL_THREADS, 2, np.int64(p.outer), np.int64(p.n), np.int64(p.inner),
                                divisor)
        return lambda src, dst: only(dst, src)
    if p.kind == "rows":
        first = runtime.Launcher(kernel, p.grid, K.ROW_BLOCK, 3, np.int64(p.outer), np.int64(p.n),
                                 np.int64(p.per_split), scale)
    elif p.kind == "narrow":  # its splits are added by its own last block (a ticket per run): one launch
        narrow = runtime.Launcher(kernel, p.grid, K.COL_THREADS, 4, np.int64(p.n), divisor)
        if p.splits == 1:
            return lambda src, dst: narrow(dst, dst, dst, src)  # ``partial`` and ``ticket`` unused: valid pointers

        sizes = (p.splits * m, p.outer, acc.name)  # numpy's dtype.name costs microseconds: never per call

        def narrow_launch(src, dst):
            narrow(dst, *W.ticket_workspace(*sizes), src)
        return narrow_launch
    else:
        first = runtime.Launcher(kernel, p.grid, (32, K.COL_ROWS), 3, np.int64(p.n), np.int64(p.inner),
                                 np.int64(p.per_split), scale)
    if p.splits == 1:
        return lambda src, dst: first(dst, dst, src)  # ``partial`` unused: any valid pointer
    wide = p.splits > K.WIDE_SPLITS  # a block per result (sum_splits_wide), else a thread per result
    add = runtime.Launcher(splits_kernel, min(m if wide else math.ceil(m / 256), 65535), K.COL_THREADS if wide else 256,
                           2, np.int64(m), np.int32(p.splits), divisor)

    def split_launch(src, dst):
        partial = _cupy().empty(p.splits * m, acc)
        first(dst, partial, src)
        add(dst, partial)
    return split_launch


@dataclass(frozen=True)
class Prepared:
    """One (shape, dtype, axis, dtype=, keepdims, alignment, mean) call: the result's shape and dtype and the
    prepared launch of each pass; calling it only allocates the intermediates and binds the pointers."""

    shape: tuple
    acc: np.dtype
    passes: tuple
    steps: tuple

    def run(self, arr, res) -> None:
        if len(self.steps) == 1:  # the common case: one pass straight into the result
            self.steps[0](arr, res)
            return
        src = arr
        for i, (p, step) in enumerate(zip(self.passes, self.steps)):
            dst = res if i == len(self.steps) - 1 else _cupy().empty(p.outer * p.inner, self.acc)
            step(src, dst)
            src = dst


@lru_cache(maxsize=1024)
def _prepared(shape: tuple, axis, x_dtype: np.dtype, dtype, keepdims: bool, mean: bool, aligned: bool) -> Prepared:
    """Keyed by the input's dtype object: ``dtype.name`` is computed in Python by NumPy, microseconds per call."""
    if x_dtype not in _INPUT_DTYPES:  # checked here, once per key, not per call
        dtype_error("x", x_dtype, R.DTYPES)
    dtype_name = x_dtype.name
    acc_name = _result_dtype(dtype_name, dtype, mean)
    passes, specs, res_shape = _call_plan(shape, axis, len(shape), dtype_name, acc_name, aligned, keepdims)
    acc = np.dtype(acc_name)
    count = math.prod(p.n for p in passes)
    steps = []
    for i, p in enumerate(passes):
        last = i == len(passes) - 1
        # a mean divides once, in the last pass; integer sums never divide
        divisor = acc.type(count) if mean and last else acc.type(1)
        steps.append(_pass_launch(p, specs[i], dtype_name if i == 0 else acc_name, acc, divisor))
    return Prepared(res_shape, acc, passes, tuple(steps))


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _cupy():
    import cupy

    return cupy


@dataclass(frozen=True)
class DenseView:
    """A strided view read as the dense block under it (``_layout.dense_form``): the block's shape (C order) and
    byte offset from the view, the reduced axes in the block's order, and how the block's result maps back: the
    permutation of its kept axes into the view's order, the kept axes to reverse and the shape with keepdims."""

    shape: tuple
    offset: int
    axis: tuple
    perm: tuple
    flip: tuple
    result_shape: tuple


@lru_cache(maxsize=1024)
def dense_view(shape: tuple, strides: tuple, itemsize: int, axis, keepdims: bool) -> DenseView | None:
    """The :class:`DenseView` of a view with these byte strides, None for views with gaps (pure)."""
    form = _layout.dense_form(shape, strides, itemsize)
    if form is None:
        return None
    order, flipped, offset = form
    axes = normalize_axis(axis, len(shape))
    kept_block = [a for a in order if a not in axes]
    kept = [a for a in range(len(shape)) if a not in axes]
    return DenseView(tuple(shape[a] for a in order), offset, tuple(i for i, a in enumerate(order) if a in axes),
                     tuple(kept_block.index(a) for a in kept), tuple(i for i, a in enumerate(kept) if a in flipped),
                     result_shape(shape, axes, keepdims))


def _strided(arr, axis, dtype, out, keepdims: bool, mean: bool):
    """A reduction of a non-contiguous view: of the dense block under it where there is one (read in place, the
    small result permuted into the view's axis order), else of a C-contiguous copy (``gpumemlab.copy``)."""
    from .transpose import moved

    cupy = _cupy()
    _check_keys(axis, dtype, arr.ndim)
    dense = dense_view(arr.shape, arr.strides, arr.itemsize, axis, bool(keepdims))
    if dense is None:
        return reduce(moved(arr, "copy"), axis, dtype, out, keepdims, mean)
    block = cupy.ndarray(dense.shape, arr.dtype, arr.data + dense.offset)
    res = reduce(block, dense.axis, dtype, None, False, mean).transpose(dense.perm)
    if dense.flip:
        res = res[tuple(slice(None, None, -1) if i in dense.flip else slice(None) for i in range(res.ndim))]
    res = res.reshape(dense.result_shape) if res.flags.c_contiguous else moved(res, "copy").reshape(dense.result_shape)
    if out is None:
        return res
    moved(res, "copy", check_out(out, res.shape, res.dtype))
    return out


def _check_keys(axis, dtype, ndim: int) -> None:
    """The one-line error for an ``axis`` or ``dtype=`` that cannot be a cache key."""
    if not _hashable(axis):
        if isinstance(axis, tuple):
            normalize_axis(axis, ndim)
        raise InputTypeError(f"axis: expected an int or a tuple of ints, got {type(axis).__name__}")
    if not _hashable(dtype):
        raise InputTypeError(f"dtype: {dtype!r} is not a dtype")


def reduce(x, axis, dtype, out, keepdims: bool, mean: bool):
    """The body of :func:`gpumemlab.sum` (``mean=False``) and :func:`gpumemlab.mean`."""
    arr = x if type(x) is _checks._NDARRAY else as_device_array(x, "x", None, contiguous=False)
    key_axis = tuple(axis) if type(axis) is list else axis
    if not arr._c_contiguous and arr.size:
        as_device_array(arr, "x", R.DTYPES, contiguous=False)
        return _strided(arr, key_axis, dtype, out, keepdims, mean)
    try:
        prep = _prepared(arr.shape, key_axis, arr.dtype, dtype, bool(keepdims), mean,
                         arr.data.ptr % R.VECTOR_BYTES == 0)
    except TypeError:  # an unhashable axis or dtype= (an array, a list inside a tuple): the one-line errors
        _check_keys(key_axis, dtype, arr.ndim)
        raise
    res = check_out(out, prep.shape, prep.acc) if out is not None else _checks._NDARRAY(prep.shape, prep.acc)
    if arr.size == 0:  # nothing to read: NumPy's sum of nothing is 0, its mean NaN
        res.fill(np.nan if mean else 0)
        return res
    prep.run(arr, res)
    return res


def error_bound(arr, axis, mean: bool = False):
    """Per-output absolute bound of ``sum(arr, axis)`` (or the mean's, ``mean=True``, relative to its value): a
    float64 CuPy array of the result's shape, ``gamma_h * sum(|x|)`` (zeros for integer results)."""
    acc_name = (MEAN_DEFAULT if mean else SUM_DEFAULT)[arr.dtype.name]
    aligned = arr.data.ptr % R.VECTOR_BYTES == 0
    passes, _, shape = _call_plan(arr.shape, axis, arr.ndim, arr.dtype.name, acc_name, aligned, False)
    full = R.device_plan(passes[0].n, arr.dtype) if passes[0].kind == "full" else None  # only ever the first pass
    rel = relative_bound(passes, acc_name, mean, full)
    abs_sum = abs(arr).sum(axis=normalize_axis(axis, arr.ndim), dtype=np.float64)
    return rel * (abs_sum / math.prod(p.n for p in passes) if mean else abs_sum).reshape(shape)


def strided_error_bound(arr, axis, mean: bool = False):
    """:func:`error_bound` of a non-contiguous view, for the path :func:`_strided` takes (a 0-d array for a full
    reduction)."""
    from .transpose import moved

    key_axis = tuple(axis) if isinstance(axis, list) else axis
    dense = dense_view(arr.shape, arr.strides, arr.itemsize, key_axis, False)
    if dense is None:
        return error_bound(moved(arr, "copy"), key_axis, mean)
    block = _cupy().ndarray(dense.shape, arr.dtype, arr.data + dense.offset)
    res = error_bound(block, dense.axis, mean).transpose(dense.perm)
    return res[tuple(slice(None, None, -1) if i in dense.flip else slice(None) for i in range(res.ndim))]
