"""The cost of one library call at tiny sizes, where the GPU work is shorter than the host work of the call.

Each public function (matmul, sum, transpose, copy, sample2d) is called as users call it, on an input so small that its
kernel takes a few microseconds, ``calls`` times back to back; the same for its CuPy equivalent. The host clock
around the burst (plus one synchronize) gives microseconds per call of each side alone; the interleaved head-to-head
(CUDA events around each burst, ours and CuPy's alternating) gives the comparison and its verdict: a ratio whose
spread contains 1 is a tie. Only the interleaved numbers are compared: the two sides timed alone run at different
moments, and a slow phase of a shared host then lands on one of them.
When the host is slower than the GPU, both clocks see the host's cost per call: that is what this measures.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

from ..bench.timer import TimerConfig
from ..bench.verify import device_random_nonzero
from ..ops._checks import cupy_module
from ._cite import field, join, q, sentence
from ._declare import Case, Check, Claim, Experiment, Plot, outside, seed

BURST_TIMER = TimerConfig(warmup=2, min_samples=15, max_samples=200, min_time_s=0.05, max_time_s=1.0,
                          target_sample_s=0.0, batch=5)


@dataclass(frozen=True)
class Pair:
    """One public function and its CuPy equivalent on the same input (``shape`` from the params)."""

    name: str
    ours: Callable
    cupy_name: str
    cupy_op: Callable
    rtol: float = 0.0  # 0 (and atol_per_term 0): the results must be equal bit for bit
    atol_per_term: float = 0.0  # absolute tolerance per added term (results near 0 have no relative accuracy)
    terms: int = 0  # added terms per result (0: the first input's size, or its row length for matmul)


def pairs() -> list[Pair]:
    import cupy
    from cupyx.scipy.ndimage import map_coordinates

    import gpumemlab

    return [
        Pair("matmul", gpumemlab.matmul, "cupy.matmul", cupy.matmul, rtol=1e-5, atol_per_term=1e-6),
        Pair("sum", gpumemlab.sum, "cupy.sum", cupy.sum, rtol=1e-5, atol_per_term=1e-6),
        Pair("transpose", gpumemlab.transpose, "cupy.ascontiguousarray(x.T)", lambda x: cupy.ascontiguousarray(x.T)),
        Pair("copy", gpumemlab.copy, "x.copy()", lambda x: x.copy()),
        # exact=True against map_coordinates(order=1), each given the points in its own layout: (n, 2) and (2, n)
        Pair("sample2d", lambda img, pts, pts_t: gpumemlab.sample2d(img, pts, exact=True),
             "cupyx.scipy.ndimage.map_coordinates", lambda img, pts, pts_t: map_coordinates(
                 img, pts_t, order=1, mode="nearest"), rtol=1e-6, atol_per_term=1e-6, terms=4),
    ]


def _inputs(name: str, params: dict, seed: int) -> tuple:
    if name == "matmul":
        n = params["matmul_n"]
        return (device_random_nonzero((n, n), np.float32, seed), device_random_nonzero((n, n), np.float32, seed + 1))
    if name == "sample2d":  # uniformly random (row, col) points over a small image
        cupy, side = cupy_module(), params["sample_side"]
        img = device_random_nonzero((side, side), np.float32, seed)
        pts = cupy.random.default_rng(seed).random((params["sample_points"], 2), dtype=cupy.float32) * (side - 1)
        return img, pts, cupy.ascontiguousarray(pts.T)
    shape = (params["n"],) if name in ("sum", "copy") else (params["rows"], params["cols"])
    return (device_random_nonzero(shape, np.float32, seed),)


def _burst(fn: Callable, args: tuple, calls: int, box: dict) -> Callable[[], None]:
    def run():
        for _ in range(calls):
            out = fn(*args)
        box["out"] = out
    return run


def cases(session, params):
    calls = params["calls"]
    for pair in pairs():
        if pair.name not in params["functions"]:
            continue
        args = _inputs(pair.name, params, session.seed)
        p = dict(function=pair.name, calls=calls, shapes=" ".join("x".join(map(str, a.shape)) for a in args),
                 dims=[list(a.shape) for a in args])
        base_box: dict = {}
        base_run = _burst(pair.cupy_op, args, calls, base_box)
        reference = pair.cupy_op(*args)
        terms = pair.terms or (args[0].shape[-1] if pair.name == "matmul" else args[0].size)  # per result
        for variant, fn, kind, box, run, versus in (
                (f"gpumemlab.{pair.name}", pair.ours, "kernel", {}, None, (pair.cupy_name,)),
                (pair.cupy_name, pair.cupy_op, "baseline", base_box, base_run, ())):
            run = run or _burst(fn, args, calls, box)
            check = Check(lambda box=box: box["out"], reference, rtol=pair.rtol, atol=pair.atol_per_term * terms,
                          reset=box.clear)
            yield Case(variant, run, check, params=p, kind=kind, ceiling=None, cold_l2=False, clock="host",
                       timer=BURST_TIMER, versus=versus)


def derive(records, session):
    for r in records:
        calls = r.params["calls"]
        r.extra["us_per_call"] = r.median_s / calls * 1e6
        r.extra["us_per_call_min_max"] = [r.time_s["min"] / calls * 1e6, r.time_s["max"] / calls * 1e6]
        r.extra["side"] = "gpumemlab" if r.kind == "kernel" else "CuPy's equivalent"
    # the interleaved bursts' medians (the comparison) on both records of a function, for the plot
    for ours in (r for r in records if r.kind == "kernel"):
        for name, h in (ours.extra.get("head_to_head") or {}).items():
            base = next((r for r in records if r.variant == name and r.params == ours.params), None)
            if base is not None and "ours_median_s" in h:
                ours.extra["interleaved_us_per_call"] = h["ours_median_s"] / ours.params["calls"] * 1e6
                base.extra["interleaved_us_per_call"] = h["baseline_median_s"] / ours.params["calls"] * 1e6


def _inputs_text(rec):
    """' (64x64 64x64)': the input shapes, each side quoted from the record's params (older records: nothing)."""
    dims = rec.params.get("dims")
    if not dims:
        return ""
    shapes = [join("x", (q(field(rec, "params", "dims", i, j), ".0f") for j in range(len(d)))) for i, d in enumerate(dims)]
    return sentence(" (", join(" ", shapes), ")")


def findings(records):
    """Per function: the interleaved bursts' us per call and their verdict (the comparison), then each side timed
    alone on the host clock (taken at different moments: a slow phase of a shared host lands on one side only, so
    those two are not compared)."""
    from ._model import head_to_head_findings

    for fn in dict.fromkeys(r.params["function"] for r in records):
        group = [r for r in records if r.params["function"] == fn]
        ours = next(r for r in group if r.kind == "kernel")
        base = next(r for r in group if r.kind == "baseline")
        calls = field(ours, "params", "calls")
        h2h = (ours.extra.get("head_to_head") or {}).get(base.variant) or {}
        if "ours_median_s" in h2h:
            def per_call(key):
                return q(field(ours, "extra", "head_to_head", base.variant, key) * 1e6 / calls, ".1f")
            yield sentence(fn, _inputs_text(ours), f": gpumemlab.{fn} ", per_call("ours_median_s"), f" us/call, "
                           f"{base.variant} ", per_call("baseline_median_s"), " us/call (medians of bursts of ",
                           q(calls, ".0f"), " calls, the two alternating, CUDA events)")
        yield from head_to_head_findings(f"gpumemlab.{fn}", ours)
        if "ours_median_s" in h2h:  # the seed's overlap: a synchronous call would cost host + GPU time per call
            yield sentence(f"gpumemlab.{fn}'s burst costs ", q(field(ours, "extra", "us_per_call"), ".1f"),
                           " us/call on the host clock against ", per_call("ours_median_s"),
                           " us/call between CUDA events: calls return before their GPU work runs, so a burst does "
                           "not pay host work + GPU time + a synchronization per call")
        yield sentence(f"{fn}, each timed alone (host clock, bursts back to back, not interleaved): gpumemlab.{fn} ",
                       q(field(ours, "extra", "us_per_call"), ".1f"), " us/call (min ",
                       q(field(ours, "extra", "us_per_call_min_max", 0), ".1f"), f"), {base.variant} ",
                       q(field(base, "extra", "us_per_call"), ".1f"), " us/call (min ",
                       q(field(base, "extra", "us_per_call_min_max", 0), ".1f"), ")")


EXPERIMENT = Experiment(
    name="library_overhead",
    title="Library calls at tiny sizes: the host cost of one call, against CuPy's equivalent",
    claims=(Claim("After an asynchronous call control returns to the host thread at once, so the host's next work "
                  "(cpuFunction() in the example) overlaps the GPU's.",
                  seed("003", "9.1.2, asynchronous and overlapping transfers with computation")),
            Claim("For a small reduction (cp.arange(1000).sum()) the host time of the call, about 49 us, is about "
                  "its GPU time, about 53 us: at small sizes what a call costs is its host-side work.",
                  outside("CuPy developers, 'Performance Best Practices', CuPy user guide (docs.cupy.dev), "
                          "section 'Benchmarking'")),),
    cases=cases,
    params=dict(calls=200, matmul_n=64, n=4096, rows=64, cols=64, sample_side=512, sample_points=4096,
                functions=["matmul", "sum", "transpose", "copy", "sample2d"]),
    group_by=("function",),
    derive=derive,
    plot=Plot(x="function", y="interleaved_us_per_call", series="side",
              title="us per call as users call them (interleaved bursts of 200 calls, CUDA events; lower is better)"),
    findings=findings,
    order=95,
)
