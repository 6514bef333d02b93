"""Branch granularity (seed 001, 'Control Flow'): `if (threadIdx.x > 2)` vs `if (threadIdx.x / WARP_SIZE > 2)`,
and a sweep of the granularity at which the two paths alternate.

Both paths are dependent FMA chains of equal length, so a warp whose lanes disagree runs both: twice the time
for the same useful work. The host reproduces every float32 operation exactly (FMA via float64), so outputs
are checked bit for bit on a sample of threads (and for NaN everywhere).
"""

from __future__ import annotations

import numpy as np

from ..gpu import runtime
from ..kernels import blocks_for
from ..kernels import divergence as K
from ._cite import field, q, sentence
from ._declare import Case, Check, Claim, Experiment, Plot, seed

UNIFORM = K.SLIDE[1].name


def path_a(x: np.ndarray, iters: int) -> np.ndarray:
    x = x.astype(np.float32)
    for _ in range(iters):
        x = (x.astype(np.float64) * 0.75 + 0.125).astype(np.float32)  # fmaf: one rounding
        x = x * np.float32(1.0001)
    return x


def path_b(x: np.ndarray, iters: int) -> np.ndarray:
    x = x.astype(np.float32)
    for _ in range(iters):
        sq = x * x
        x = (sq.astype(np.float64) * 0.5 + 0.25).astype(np.float32)
    return x


def sample_indices(n: int, block: int, count: int, seed: int) -> np.ndarray:
    """The first two blocks (every lane pattern) plus a random sample of the rest."""
    head = np.arange(min(n, 2 * block))
    rest = np.random.default_rng(seed).integers(0, n, size=count)
    return np.unique(np.concatenate([head, rest]))


def cases(session, params):
    import cupy

    iters = params["iters"]
    n = session.sm_count * 2048 * (2 if session.quick else params["waves"])  # full-occupancy waves
    host_x = np.random.default_rng(session.seed).random(n, dtype=np.float32)
    x = cupy.asarray(host_x)
    out = cupy.empty_like(x)
    idx = sample_indices(n, K.BLOCK, 4096, session.seed)
    ref_a, ref_b = path_a(host_x[idx], iters), path_b(host_x[idx], iters)
    tid = idx % K.BLOCK
    grid = blocks_for(n, K.BLOCK)
    warps = K.BLOCK // 32
    for v in K.VARIANTS:
        kernel = runtime.get_kernel(v.spec)
        yield Case(v.name, lambda kernel=kernel: runtime.launch(kernel, grid, K.BLOCK, out, x, iters, np.int64(n)),
                   Check(out, np.where(v.takes_a(tid), ref_a, ref_b), rtol=1e-6, view=lambda o: o[idx],
                         all_finite=True),
                   params=dict(n=n, iters=iters, granularity=v.granularity), flops=n * iters * K.FLOPS_PER_ITER,
                   cold_l2=False, ceiling="fp32_peak_gflops",
                   model=dict(divergent_warps_per_block=v.divergent_warps, warps_per_block=warps,
                              predicted_slowdown=1.0 + v.divergent_warps / warps),
                   extra=dict(alternate=v.alternate, divergent=v.divergent))


def derive(records, session):
    for r in records:  # time relative to the warp-uniform branch (> 1: slower)
        if r.speedup_vs_naive:
            r.extra["slowdown_vs_uniform"] = 1.0 / r.speedup_vs_naive


def findings(records):
    rs = {r.variant: r for r in records}
    base = field(rs[UNIFORM], "time_s", "median")

    def warps(r):
        return (q(field(r, "model", "divergent_warps_per_block"), ".0f"), " of ",
                q(field(r, "model", "warps_per_block"), ".0f"))

    def slowdown(r):
        return q(field(r, "time_s", "median") / base, ".2f"), "x"

    def model(r):
        return "model ", q(field(r, "model", "predicted_slowdown"), "g"), "x)"

    slide = rs[K.SLIDE[0].name]
    yield sentence("`if (threadIdx.x > 2)`: ", *slowdown(slide), " the time of `if (threadIdx.x / WARP_SIZE > 2)` (",
                   *warps(slide), " warps per block diverge; ", *model(slide))
    worst = max((r for r in records if r.extra.get("divergent")), key=lambda r: r.median_s)
    yield sentence(f"{worst.variant}: ", *slowdown(worst), " (both paths serialized in ", *warps(worst), " warps; ",
                   *model(worst))


EXPERIMENT = Experiment(
    name="divergence",
    title="Branch divergence: branch granularity below vs at warp size",
    claims=(Claim("Threads of one warp that take different paths are serialized (`if (threadIdx.x > 2)` diverges); "
                  "a branch whose granularity is a whole multiple of the warp size "
                  "(`if (threadIdx.x / WARP_SIZE > 2)`) has no divergence.", seed("001", "slide 'Control Flow'")),),
    cases=cases,
    params=dict(iters=1024, waves=4),
    naive=UNIFORM,
    group_by=("n",),
    modern_note="Since Volta, diverged lanes of a warp can interleave (independent thread scheduling), but a warp "
                "still issues one path at a time, so serialization remains. `threadIdx.x > 2` diverges in only "
                "the first warp of each block (1 of 8 here), so its cost is ~1/8 of full serialization.",
    plot=Plot(x="granularity", y="gflops", series="variant", logx=True),
    findings=findings,
    derive=derive,
    order=60,
)
