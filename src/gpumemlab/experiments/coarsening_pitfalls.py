"""Seed 000's thread-coarsening pitfalls measured: coarsened<32, C> (matmul_ladder.cu) at sizes where C leaves
fewer blocks than the GPU holds (pitfall 2, under-utilization) and where it does not, with the registers and
occupancy each C costs (pitfall 3) from the ptxas report, the analyzer and the driver."""

from __future__ import annotations

import math

import numpy as np

from ..bench.verify import device_random_nonzero
from ..errors import UsageError
from ..kernels import matmul as K
from ._cite import Finding, field, join, q, sentence
from ._declare import Claim, Experiment, Plot, seed
from ._matmul import FEW_SAMPLES, Operands
from ._model import overlap, predict_occupancy

THREADS = K.COARSE_TILE * K.COARSE_TILE


def cases(session, params):
    bad = [c for c in params["factors"] if c not in K.COARSE_FACTORS]
    if bad:
        raise UsageError(f"coarsening_pitfalls: factor {bad[0]} is not instantiated; factors: "
                         f"{', '.join(map(str, K.COARSE_FACTORS))}")

    import cupy

    for size in params["sizes"]:
        a = device_random_nonzero((size, size), np.float32, session.seed + size)
        b = device_random_nonzero((size, size), np.float32, session.seed + size + 1)
        ops = Operands(session, a, b, cupy.empty((size, size), dtype=cupy.float32), dict(size=size))
        yield ops.cublas()
        for c in params["factors"]:
            case = ops.rung(f"coarsened_{c}", FEW_SAMPLES, naive=c == 1)
            occ = predict_occupancy(K.coarsened(c), THREADS)
            blocks = math.ceil(size / (K.COARSE_TILE * c)) * math.ceil(size / K.COARSE_TILE)
            slots = session.sm_count * occ["driver_blocks_per_sm"]
            case.params = dict(case.params, coarse=c)
            case.model = dict(case.model, **occ)
            case.extra.update(blocks=blocks, resident_slots=slots, blocks_per_slot=blocks / slots if slots else 0.0)
            yield case


def factor(r) -> Finding:
    return sentence("C=", q(field(r, "params", "coarse"), ".0f"))


def findings(records):
    for size in dict.fromkeys(r.params["size"] for r in records):
        rows = [r for r in records if r.params["size"] == size and r.kind == "kernel"]
        base = next(r for r in rows if r.params["coarse"] == 1)
        parts = []
        for r in rows:
            if not r.speedup_vs_naive:
                parts.append(sentence(factor(r), ": -"))
                continue
            tie = " (a tie: p10-p90 overlap)" if r is not base and overlap(r, base) else ""
            parts.append(sentence(factor(r), ": ", q(field(r, "speedup_vs_naive"), ".2f"), f"x{tie}, ",
                                  q(field(r, "extra", "blocks"), ".0f"), " blocks for ",
                                  q(field(r, "extra", "resident_slots"), ".0f"), " slots, ",
                                  q(field(r, "model", "registers"), ".0f"), " regs, ",
                                  q(field(r, "model", "driver_occupancy_pct"), ".0f"), "% occupancy"))
        yield sentence(q(field(base, "params", "size"), ".0f"), "^3, speed vs ", factor(base), ": ", join("; ", parts))


EXPERIMENT = Experiment(
    name="coarsening_pitfalls",
    title="Thread-coarsening pitfalls: too few blocks for the GPU, more registers per thread",
    claims=(Claim("Pitfalls: coarsening when no price is paid for parallelism; too much coarsening leaves hardware "
                  "resources underutilized; the coarsened kernel uses more registers or shared memory, which can "
                  "hurt occupancy.", seed("000", "section 'Thread Coarsening', pitfalls")),),
    cases=cases,
    params=dict(sizes=[512, 2048], factors=list(K.COARSE_FACTORS)),
    naive="coarsened_1",
    group_by=("size",),
    modern_note="coarsened<32, 1> is the plain 32 x 32 tiled kernel; one block is 1,024 threads, so an SM holds at "
                "most two and a grid below the SM count leaves SMs idle.",
    plot=Plot(x="coarse", y="gflops", series="size", logx=True, title="coarsened<32, C>: GFLOP/s vs C"),
    findings=findings,
    order=72,
)
