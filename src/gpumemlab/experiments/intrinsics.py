"""Fast intrinsics vs accurate math functions (seed 001, 'Runtime Math Library and Intrinsics').

Throughput: each thread evaluates the function ``reps`` times on nearby arguments (independent calls),
counted as Gop/s (function evaluations per second). Accuracy: one evaluation per point on ``points``
uniformly spaced random arguments of a realistic range, compared with float64 NumPy: max error in ulp of
the float32 result, max absolute and max relative error.
"""

from __future__ import annotations

import numpy as np

from ..bench.verify import poison, to_host
from ..errors import VerificationError
from ..gpu import runtime
from ..kernels import blocks_for
from ..kernels import intrinsics as K
from ._cite import claim, field, q, sentence
from ._declare import Case, Check, Claim, Experiment, Plot, seed
from ._model import predict_occupancy

STEP = 2.0 ** -12  # argument step between repetitions: r * STEP is exact in float32
_NUMPY = {"sinf": lambda x, y: np.sin(x), "cosf": lambda x, y: np.cos(x), "expf": lambda x, y: np.exp(x),
          "powf": lambda x, y: np.power(x, y), "sincosf": lambda x, y: np.sin(x) + np.cos(x),
          "rcpf": lambda x, y: 1.0 / x}


def reference(f: K.MathFunction, x, y, xp=np):
    """float64 value of the function on float32 arguments (NumPy or CuPy arrays)."""
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    if xp is np:
        return _NUMPY[f.name](x64, y64)
    return {"sinf": lambda: xp.sin(x64), "cosf": lambda: xp.cos(x64), "expf": lambda: xp.exp(x64),
            "powf": lambda: xp.power(x64, y64), "sincosf": lambda: xp.sin(x64) + xp.cos(x64),
            "rcpf": lambda: 1.0 / x64}[f.name]()


def ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in units of the float32 spacing at ref (ref in float64)."""
    spacing = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / spacing


def inputs(f: K.MathFunction, n: int, seed: int, xp=np):
    rng = np.random.default_rng(seed)
    x = rng.uniform(f.lo, f.hi, n).astype(np.float32)
    y = (rng.uniform(f.y_lo, f.y_hi, n) if f.y_hi > f.y_lo else np.zeros(n)).astype(np.float32)
    return (xp.asarray(x), xp.asarray(y)) if xp is not np else (x, y)


def accuracy(f: K.MathFunction, fast: bool, points: int, seed: int) -> dict:
    import cupy

    x, y = inputs(f, points, seed + 7)
    out = cupy.empty(points, np.float32)
    poison(out)
    runtime.launch(f.spec(fast), blocks_for(points, K.BLOCK), K.BLOCK, out, cupy.asarray(x), cupy.asarray(y),
                   0.0, 1, np.int64(points))
    got = to_host(out).astype(np.float64)
    unwritten = int(np.count_nonzero(~np.isfinite(got)))
    if unwritten:  # NaN (the poison) would also make every error statistic below NaN, never a number to compare
        raise VerificationError(f"{f.label(fast)}: {unwritten} of {points} outputs not finite (unwritten or wrong)")
    ref = reference(f, x, y)
    ulp = ulp_error(got, ref)
    absolute = np.abs(got - ref)
    worst = int(np.argmax(ulp))
    return dict(max_ulp=float(ulp.max()), mean_ulp=float(ulp.mean()), max_abs_error=float(absolute.max()),
                max_rel_error=float((absolute / np.maximum(np.abs(ref), np.finfo(np.float32).tiny)).max()),
                worst_x=float(x[worst]), worst_y=float(y[worst]), range=[f.lo, f.hi], points=points)


def cases(session, params):
    import cupy

    reps = params["reps"]
    n = session.sm_count * 2048 * (1 if session.quick else params["waves"])
    points = 1 << (16 if session.quick else params["log2_points"])
    out = cupy.empty(n, np.float32)
    grid = blocks_for(n, K.BLOCK)
    for f in K.FUNCTIONS:
        x, y = inputs(f, n, session.seed, xp=cupy)
        ref = cupy.zeros(n, np.float64)
        ref_abs = cupy.zeros(n, np.float64)
        for r in range(reps):  # the kernel's arguments, rounded exactly as it rounds them
            v = reference(f, x + np.float32(r * STEP), y, xp=cupy)
            ref += v
            ref_abs += cupy.abs(v)
        check = Check(out, ref, atol=2e-5 * ref_abs + 1e-6 * reps)  # one tolerance per sum of `reps` values
        for fast in (False, True):
            kernel = runtime.get_kernel(f.spec(fast))
            acc = accuracy(f, fast, points, session.seed)
            yield Case(f.label(fast), lambda kernel=kernel, x=x, y=y:
                       runtime.launch(kernel, grid, K.BLOCK, out, x, y, STEP, reps, np.int64(n)), check,
                       params=dict(function=f.name, fast=fast, n=n, reps=reps), flops=n * reps, cold_l2=False,
                       ceiling=None, naive=not fast,
                       notes=f"max {acc['max_ulp']:.3g} ulp, max abs {acc['max_abs_error']:.2e} on [{f.lo:g}, {f.hi:g}]"
                             + (f", y in [{f.y_lo:g}, {f.y_hi:g}]" if f.y_hi > f.y_lo else ""),
                       extra=dict(accuracy=acc, guide=f.fast_guide if fast else f"<= {f.guide_ulp:g} ulp",
                                  unit="Gop/s (evaluations)"),
                       model=predict_occupancy(f.spec(fast), K.BLOCK))  # compute-bound: occupancy is the answer


def findings(records):
    for f in K.FUNCTIONS:
        rs = {r.params["fast"]: r for r in records if r.params["function"] == f.name}
        if True in rs and False in rs:
            fast, slow = rs[True], rs[False]
            yield sentence(f"{f.label(True)} ", q(field(slow, "time_s", "median") / field(fast, "time_s", "median"),
                                                  ".1f"),
                           f"x the throughput of {f.label(False)}; max error ",
                           q(field(fast, "extra", "accuracy", "max_ulp"), ".3g"), " vs ",
                           q(field(slow, "extra", "accuracy", "max_ulp"), ".3g"),
                           " ulp (slide: fast but lower accuracy; func() <= ", q(claim("5"), ".0f"), " ulp)")


EXPERIMENT = Experiment(
    name="intrinsics",
    title="Intrinsics (__sinf, __cosf, __expf, __powf, __sincosf, __fdividef) vs sinf, cosf, expf, powf, sincosf, "
          "__frcp_rn: throughput and ulp error",
    claims=(Claim("__func() maps directly to the hardware ISA: fast but lower accuracy; func() compiles to multiple "
                  "instructions: slower but higher accuracy (5 ulp or less).",
                  seed("001", "slide 'Runtime Math Library and Intrinsics'")),
            Claim("A number of additional intrinsics: __sincos(), __rcp(), ...",
                  seed("001", "slide 'Runtime Math Library and Intrinsics'"))),
    cases=cases,
    params=dict(reps=64, waves=8, log2_points=20),
    naive=None,
    group_by=("function",),
    modern_note="The CUDA Programming Guide now bounds sinf/cosf/expf at 2 ulp and powf at 4 ulp (tighter than the "
                "slide's 5); __sinf/__cosf have an absolute (not relative) error bound on [-pi, pi], so their ulp "
                "error explodes near the zeros of the function; __expf's error grows with |x|.",
    plot=Plot(x="function", y="gflops", series="variant"),
    findings=findings,
    order=65,
)
