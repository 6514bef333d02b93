"""sum, mean and transpose over a set of shapes, timed as users call them: CUDA events
on the work stream around the Python call (host dispatch included), interleaved with CuPy's equivalent (and
PyTorch's where it imports) in the same run.

All three are memory-bound: each is judged by the bytes it must move (the input read once, the output written
once), the transpose against the copy ceiling and the reductions against the read ceiling, L2 flushed between
samples. The set holds the cases users report (a 16384^2 matrix summed along each axis, a 3-D case, a 16384^2
transpose, thin transposes), the thin shapes where a coalescing mistake shows (a sum along a 3-element axis, column
sums of 3 rows, transposes with one side < 32), a transpose whose rows start off a 32-byte sector, and two column
sums and a row sum added after the others (so the earlier records keep their index): an RGB image's per-channel
sums, column sums of 8 rows and the sums of 3 rows of 2^24; then transposes as users meet them (odd sides, N-D
permutations, 1-, 2- and 8-byte elements).
"""

from __future__ import annotations

import math

import numpy as np

from ..bench.verify import device_random_nonzero
from ._cite import field, join, q, sentence
from ._claims import COALESCED_WORDS, SHARED_MEMORY_TRANSPOSE
from ._declare import Case, Check, Experiment, Plot
from ._library import library_vs_baselines
from ._model import shape_set_summary, store_ratios

BIG = (16384, 16384)
SUMS = [(BIG, 0), (BIG, 1), (BIG, None), ((512, 512, 256), 1), ((256, 512, 512), (0, 2)), ((4096, 64, 256), 0),
        ((3, 1 << 24), 0), ((1 << 24, 3), 1), ((1 << 24, 3), 0)]
MEANS = [(BIG, 0), (BIG, 1)]
# 16380 x 16388: rows of 65552 bytes in and 65520 out, 16 bytes off a 32-byte sector (partially written sectors)
TRANSPOSES = [BIG, (8192, 8192), (1000, 1001), (3, 70000), (70000, 3), (31, 1 << 20), (1 << 20, 31), (16380, 16388)]
# (function, shape, axis) in a fixed order: the records' index
# per-channel sums of a 4096^2 RGB image (3 columns, 2^24 rows: sum_cols_narrow), column sums of 8 rows of 2^23
# (sum_cols_thread), sums of 3 rows of 2^24 (sum_rows split hundreds of ways, added by sum_splits_wide)
LATER_SUMS = [((4096, 4096, 3), (0, 1)), ((8, 1 << 23), 0), ((3, 1 << 24), 1)]
# transposes as users meet them, added after the others: odd sides of >= 1M elements, N-D permutations (NCHW <->
# NHWC, attention heads, odd 4-D), and every size of element (1, 2 and 8 bytes) on odd and N-D shapes
LATER_TRANSPOSES = [((4097, 3001), None, "float32"), ((12345, 6789), None, "float32"), ((1537, 2049), None, "float32"),
                    ((64, 128, 256), (0, 2, 1), "float32"), ((64, 128, 256), (1, 0, 2), "float32"),
                    ((32, 64, 56, 56), (0, 2, 3, 1), "float32"), ((32, 56, 56, 64), (0, 3, 1, 2), "float32"),
                    ((8, 512, 16, 64), (0, 2, 1, 3), "float32"), ((33, 65, 17, 9), (3, 1, 0, 2), "float32"),
                    ((4097, 3001), None, "int8"), ((4097, 3001), None, "float16"), ((4097, 3001), None, "float64"),
                    ((32, 64, 56, 56), (0, 2, 3, 1), "float16"), ((32, 64, 56, 56), (0, 2, 3, 1), "uint8"),
                    ((64, 128, 256), (2, 1, 0), "int64"), ((100, 100), None, "int16"), ((8, 8), None, "float32")]
SHAPES = ([("sum", s, a, "float32") for s, a in SUMS] + [("mean", s, a, "float32") for s, a in MEANS]
          + [("transpose", s, None, "float32") for s in TRANSPOSES] + [("sum", s, a, "float32") for s, a in LATER_SUMS]
          + [("transpose", s, a, d) for s, a, d in LATER_TRANSPOSES])
RTOL, ATOL_PER_TERM = 1e-5, 1e-6  # float32 sums against a float64 answer (as library_overhead)
CUPY = {"sum": "cupy.sum", "mean": "cupy.mean", "transpose": "cupy.ascontiguousarray(x.T)"}


def cupy_name(function: str, axes) -> str:
    """The CuPy baseline's variant name (a transpose with ``axes`` names them)."""
    if function == "transpose" and axes is not None:
        return "cupy.ascontiguousarray(x.transpose(axes))"  # the axes are the record's params
    return CUPY[function]


def reduced(shape: tuple, axis) -> tuple:
    """The shape of a reduction of ``shape`` over ``axis`` (None: all; an int or a tuple of ints)."""
    axes = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    gone = {a % len(shape) for a in axes}
    return tuple(s for i, s in enumerate(shape) if i not in gone)


def fitted(shape: tuple, elements: int) -> tuple:
    """``shape`` with its longest side cut so that it holds at most ``elements`` elements (other sides kept)."""
    total = math.prod(shape)
    if total <= elements:
        return tuple(shape)
    longest = max(range(len(shape)), key=lambda i: shape[i])
    rest = total // shape[longest]
    return tuple(max(1, elements // rest) if i == longest else s for i, s in enumerate(shape))


def _ops(function: str, axis):
    """(ours, CuPy's, PyTorch's) as (name, callable) pairs; ``axis`` of a transpose: its axes (None: reversed)."""
    import cupy

    import gpumemlab

    if function == "transpose" and axis is None:
        return (("gpumemlab.transpose", gpumemlab.transpose),
                (CUPY[function], lambda x: cupy.ascontiguousarray(x.T)),
                ("torch.t().contiguous()", lambda t: t.t().contiguous()))
    if function == "transpose":
        return (("gpumemlab.transpose(x, axes)", lambda x: gpumemlab.transpose(x, axis)),
                (cupy_name(function, axis), lambda x: cupy.ascontiguousarray(x.transpose(axis))),
                ("torch.permute(axes).contiguous()", lambda t: t.permute(*axis).contiguous()))
    ours, theirs = getattr(gpumemlab, function), getattr(cupy, function)
    dim = {} if axis is None else dict(dim=axis)
    return ((f"gpumemlab.{function}", lambda x: ours(x, axis=axis)), (CUPY[function], lambda x: theirs(x, axis=axis)),
            (f"torch.{function}", lambda t: getattr(t, function)(**dim)))


def _expected(function: str, x, axis):
    """The answer the check compares with (computed after the run, on the GPU) and its absolute tolerance."""
    if function == "transpose":
        return x.transpose(axis), 0.0
    terms = x.size // math.prod(reduced(x.shape, axis))  # addends per output
    f64 = lambda: getattr(x.astype(np.float64), function)(axis=axis)  # noqa: E731
    return f64, ATOL_PER_TERM * (terms if function == "sum" else 1)


def cases(session, params):
    cap = session.dram_bytes() // 4 if session.quick else None  # quick: about twice L2 per input
    for i, (function, shape, axis, dtype) in enumerate(SHAPES):
        if function not in params["functions"]:
            continue
        # room for x, the float64 copy the check makes and the outputs
        fit = session.fit_elements(math.prod(shape), 4 + 8 + 8, "library_shapes")
        dims = fitted(shape, min(fit, cap) if cap else fit)
        x = device_random_nonzero(dims, dtype, session.seed + i)
        expected, atol = _expected(function, x, axis)
        out_elements = x.size if function == "transpose" else math.prod(reduced(dims, axis))
        p = dict(index=i, function=function, shape="x".join(map(str, dims)), dims=list(dims),
                 axes=None if axis is None else list(axis) if isinstance(axis, tuple) else [axis])
        if dtype != "float32":
            p["dtype"] = dtype
        # a transpose is judged against the device copy, a reduction (it reads, and writes almost nothing) against
        # the read ceiling: a sum's bytes per second must not raise the copy ceiling the transpose is measured by
        moved = dict(params=p, reads=x.nbytes, writes=(x.itemsize if function == "transpose" else 4) * out_elements,
                     ceiling="copy_gbps" if function == "transpose" else "read_gbps")

        def make(variant, run, result, reset, kind="kernel", extra=None, expected=expected, atol=atol, **kw):
            check = Check(result, expected, rtol=0.0 if function == "transpose" else RTOL, atol=atol, reset=reset)
            return Case(variant, run, check, kind=kind, extra=extra or {}, **moved, **kw)

        yield from library_vs_baselines(session, x, make, *_ops(function, axis))


def derive(records, session):
    """ratio_to_cupy on our records: the interleaved median of t_cupy / t_ours, with its verdict."""
    store_ratios(records, "ratio_to_cupy", lambda r: cupy_name(r.params["function"], r.params.get("axes")))


CEILING_WORD = {"copy_gbps": "copy", "read_gbps": "read"}


def _case(r):
    """'sum 16384x16384 axis 0' ('axes (0, 2)', 'all axes'; 'transpose 64x128x256 axes (0, 2, 1) int8'), the numbers
    quoted from the record's params."""
    shape = join("x", (q(field(r, "params", "dims", i), ".0f") for i in range(len(r.params["dims"]))))
    axes = r.params.get("axes")
    if r.params["function"] == "transpose":
        listed = join(", ", (q(field(r, "params", "axes", i), ".0f") for i in range(len(axes or ()))))
        over = sentence("" if axes is None else sentence(" axes (", listed, ")"),
                        f" {r.params['dtype']}" if "dtype" in r.params else "")
    elif axes is None:
        over = " over all axes"
    else:
        listed = join(", ", (q(field(r, "params", "axes", i), ".0f") for i in range(len(axes))))
        over = sentence(" axis ", listed) if len(axes) == 1 else sentence(" axes (", listed, ")")
    return sentence(f"{r.params['function']} ", shape, over)


def findings(records):
    ours = [r for r in records if r.kind == "kernel" and r.extra.get("ratio_to_cupy")]
    for function in dict.fromkeys(r.params["function"] for r in ours):
        group = [r for r in ours if r.params["function"] == function]
        yield sentence(f"{function}, ", shape_set_summary(group, "ratio_to_cupy", "CuPy", _case))
    for r in ours:
        yield sentence(_case(r), ": ", q(field(r, "extra", "ratio_to_cupy"), ".2f"), "x ",
                       cupy_name(r.params["function"], r.params.get("axes")), f" ({r.extra['verdict']}), ", q(field(r, "gbps"), ".0f"), " GB/s = ",
                       q(field(r, "pct_of_ceiling"), ".0f"), f"% of the {CEILING_WORD[r.ceiling]} ceiling")


EXPERIMENT = Experiment(
    name="library_shapes",
    title="sum and mean along axes, and transpose, over a set of shapes: the library as users call it, against CuPy",
    claims=(COALESCED_WORDS, SHARED_MEMORY_TRANSPOSE),
    cases=cases,
    params=dict(functions=["sum", "mean", "transpose"]),
    group_by=("index",),
    plot=Plot(x="index", y="ratio_to_cupy", series="function",
              title="gpumemlab / CuPy per shape (interleaved, library calls as users time them)"),
    modern_note="A sum along the contiguous axis reads whole rows per warp; along a strided axis each thread keeps "
                "one column's partial sum so that a warp still reads consecutive addresses (the coalescing rule).",
    derive=derive,
    findings=findings,
    order=74,
)
