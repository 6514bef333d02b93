"""Seed 002's figure redone: GFLOP/s against matrix size (128 ... 8192) for the ladder's main rungs
and cuBLAS SGEMM (FP32, TF32 off) measured at each size in the same run."""

from __future__ import annotations

import numpy as np

from ..bench.verify import device_random_nonzero
from ..kernels import matmul as K
from ._cite import claim, field, join, q, sentence
from ._declare import Claim, Experiment, Plot, seed
from ._matmul import CUBLAS, FEW_SAMPLES, Operands, vs_cublas


def cases(session, params):
    import cupy

    for size in [s for s in params["sizes"] if not session.quick or s <= params["quick_max_size"]]:
        a = device_random_nonzero((size, size), np.float32, session.seed + size)
        b = device_random_nonzero((size, size), np.float32, session.seed + size + 1)
        ops = Operands(session, a, b, cupy.empty((size, size), dtype=cupy.float32), dict(size=size))
        yield ops.cublas()
        for variant in params["variants"]:
            slow = variant in params["slow_variants"]
            if slow and size > params["slow_max_size"]:
                continue  # one call of these takes seconds at 8192
            yield ops.rung(variant, FEW_SAMPLES if slow and size >= 2048 else None)


def findings(records):
    for variant in ("naive", "tiled_32", "register_blocked"):
        pts = [sentence(q(field(r, "params", "size"), ".0f"), ": ", q(field(r, "extra", "pct_of_cublas"), ".0f"), "%")
               for r in records if r.variant == variant and r.extra.get("pct_of_cublas") is not None]
        if pts:
            yield sentence(f"{variant}: ", join(", ", pts), " of cuBLAS")
    yield from _launch_bound(records)
    if records:
        ends = (min(records, key=lambda r: r.params["size"]), max(records, key=lambda r: r.params["size"]))
        size = [q(field(r, "params", "size"), ".0f") for r in ends]
        yield sentence("sizes ", size[0], " ... ", size[1], "; seed 002: coalesced ~", q(claim("9"), ".0f"),
                       "% and tiled ~", q(claim("12"), ".0f"), "% of cuBLAS at large sizes, near parity at ",
                       q(claim("128"), ".0f"))


def _launch_bound(records):
    """Between the two smallest sizes the work grows (s1/s0)^3 times: a time that barely grows is the host's cost
    per launch, not the kernel's, and a percentage of cuBLAS there compares launch paths (ours, CuPy's cuBLAS call)."""
    sizes = sorted({r.params["size"] for r in records})[:2]
    pairs = {}
    for r in records:
        if r.params["size"] in sizes:
            pairs.setdefault(r.variant, {})[r.params["size"]] = r
    growth = [(v, p[sizes[1]], p[sizes[0]]) for v, p in pairs.items() if len(p) == 2 and v in ("naive", CUBLAS)]
    if len(sizes) < 2 or not growth:
        return
    small, big = (q(field(growth[0][i], "params", "size"), ".0f") for i in (2, 1))
    work = q(field(growth[0][1], "params", "size") / field(growth[0][2], "params", "size"), ".0f")
    times = [field(b, "time_s", "median") / field(a, "time_s", "median") for _, b, a in growth]
    bound = all(t.value < 2 for t in times)  # 8x the flops in under 2x the time
    verdict = (": launch-bound, so the smallest sizes' percentages of cuBLAS compare the launch paths (ours, cuBLAS "
               "through CuPy), not the kernels") if bound else ": the time grows with the work"
    yield sentence(small, " -> ", big, " (", work, "^3 the flops): ",
                   join(", ", (sentence(f"{v} ", q(t, ".2f"), "x the time") for (v, _, _), t in zip(growth, times))),
                   verdict)

EXPERIMENT = Experiment(
    name="matmul_sizes",
    title="GFLOP/s vs matrix size: naive, tiled, coarsened, register-blocked and cuBLAS",
    claims=(Claim("Near cuBLAS at 128 x 128; at large sizes the coalesced kernel reaches ~9% and the tiled kernel "
                  "~12% of cuBLAS SGEMM.", seed("002", "blog 'GPU shared memory', Figures 1 and 7")),),
    cases=cases,
    params=dict(sizes=[128, 256, 512, 1024, 2048, 4096, 8192],
                variants=["naive", "tiled_32", "coarsened_4", "register_blocked"],
                slow_variants=list(K.TEACHING), slow_max_size=4096, quick_max_size=1024),
    naive="naive",
    group_by=("size",),
    plot=Plot(x="size", y="gflops", series="variant", logx=True,
              title="matmul: GFLOP/s vs size (square, FP32); cuBLAS measured in the same run"),
    modern_note="At 128^3 and 256^3 a kernel runs for a few microseconds, less than the host spends on one launch: "
                "the findings check whether the time grows with the work, and where it does not, the percentages of "
                "cuBLAS there compare launch paths, not kernels. The gap between the rungs opens once the grid fills "
                "the GPU.",
    findings=findings,
    derive=vs_cublas(("size",)),
    order=71,
)
