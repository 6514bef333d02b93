"""Launch configuration (seed 001: occupancy, register pressure, grid-size and block-size heuristics).

1. Block size 32..1024 for a memory-bound copy (16-byte copy_vec of copy.cu, one vector per thread).
2. Grid size as a multiple of the SM count for the same copy written grid-stride.
3. Register pressure: a kernel that needs ~78 registers (64 live accumulators) compiled with
   ``--maxrregcount`` limits: registers and spill bytes from the ptxas report, occupancy, time.
Occupancy comes from the analyzer (``gpumemlab.model.occupancy``) and from the driver
(cuOccupancyMaxActiveBlocksPerMultiprocessor), side by side.
"""

from __future__ import annotations

import math
import numpy as np

from ..bench.verify import device_random_nonzero
from ..gpu import runtime
from ..kernels import copy as copy_kernels
from ..kernels import register_pressure as K
from ._cite import field, q, sentence
from ._declare import Case, Check, Claim, Experiment, Plot, seed
from ._model import predict_occupancy as occupancy

COPY_SPEC = copy_kernels.copy_vec("float4", 1)
GRID_BLOCK = 256
NAIVE = next(iter(K.VARIANTS))  # natural registers


def accumulators_reference(x, threads: int, nacc: int):
    """float64 model of accumulators<NACC> on the GPU (CuPy): one output per thread."""
    import cupy

    n = x.size
    acc = cupy.zeros((nacc, threads), np.float64)
    c = ((np.arange(nacc, dtype=np.float32) + 1) * np.float32(1.0 / nacc)).astype(np.float64)[:, None]
    for start in range(0, n, threads):
        chunk = 0.5 * x[start:start + threads].astype(np.float64)
        m = chunk.size
        acc[:, :m] = acc[:, :m] * chunk[None, :] + cupy.asarray(c)
    return acc.sum(axis=0)


def copy_cases(session, params):
    """1 + 2: the memory-bound copy at each block size, then at each grid size (grid-stride)."""
    import cupy

    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 8, "launch_config")
    n -= n % 4
    src = device_random_nonzero(n, np.float32, session.seed)
    dst = cupy.empty_like(src)
    n_vec = n // 4
    kernel = runtime.get_kernel(COPY_SPEC)
    shapes = ([(f"block {b}", b, math.ceil(n_vec / b), "block_size") for b in params["blocks"]]
              + [(f"grid {m:g} x SMs", GRID_BLOCK, max(1, round(m * session.sm_count)), "grid_size")
                 for m in params["grid_per_sm"]])
    for variant, block, grid, sweep in shapes:
        yield Case(variant, lambda block=block, grid=grid: runtime.launch(kernel, grid, block, dst, src, np.int64(n_vec)),
                   Check(dst, src),
                   params=dict(sweep=sweep, block=block, grid=grid, grid_per_sm=round(grid / session.sm_count, 2)),
                   reads=src.nbytes, writes=src.nbytes, model=occupancy(COPY_SPEC, block),
                   extra=dict(kernel=COPY_SPEC.name, warps_per_block=math.ceil(block / 32),
                              lane_utilization=block / (32 * math.ceil(block / 32))))


def register_cases(session, params):
    """3: register pressure, each limit on a persistent grid at the occupancy it allows."""
    import cupy

    m = session.fit_elements(1 << (20 if session.quick else params["log2_n_registers"]), 4, "launch_config")
    x = device_random_nonzero(m, np.float32, session.seed + 1)
    for name, spec in K.VARIANTS.items():
        occ = occupancy(spec, GRID_BLOCK)
        grid = session.sm_count * max(1, occ["driver_blocks_per_sm"])
        threads = grid * GRID_BLOCK
        out = cupy.empty(threads, np.float32)
        kernel = runtime.get_kernel(spec)
        ref = accumulators_reference(x, threads, K.NACC)
        # float32 recurrences contract (|x/2| < 0.75) but an output near 0 keeps the rounding of its O(100) terms:
        # the absolute tolerance scales with the largest output (a missing or doubled update is off by O(1))
        yield Case(name, lambda kernel=kernel, grid=grid, out=out: runtime.launch(kernel, grid, GRID_BLOCK, out, x,
                                                                                   np.int64(m)),
                   Check(out, ref, rtol=1e-4, atol=1e-5 * float(cupy.abs(ref).max())),
                   params=dict(sweep="registers", block=GRID_BLOCK, grid=grid,
                               max_registers=dict(spec.options).get("max_register_count", 0), n=m),
                   flops=K.FLOPS_PER_ELEMENT * m, reads=K.READS_PER_ELEMENT * m, cold_l2=False,
                   ceiling="fp32_peak_gflops", model=occ,
                   extra=dict(kernel=spec.label, spills=bool(occ["spill_store_bytes"] or occ["local_bytes"])))


def cases(session, params):
    yield from copy_cases(session, params)
    yield from register_cases(session, params)


def findings(records):
    blocks = [r for r in records if r.params["sweep"] == "block_size"]
    if blocks:
        best = max(blocks, key=lambda r: r.gbps)
        for r in blocks:
            if r.params["block"] in (32, 100, 256):
                yield sentence("block ", q(field(r, "params", "block"), ".0f"), ": ",
                               q(100 * (field(r, "gbps") / field(best, "gbps")), ".0f"),
                               f"% of the best ({best.variant})")
    grids = [r for r in records if r.params["sweep"] == "grid_size"]
    if grids:
        best = max(grids, key=lambda r: r.gbps)
        for r in grids:
            yield sentence(f"{r.variant}: ", q(100 * (field(r, "gbps") / field(best, "gbps")), ".0f"),
                           "% of the best grid")
    regs = {r.variant: r for r in records if r.params["sweep"] == "registers"}
    for r in regs.values():
        def model(key, spec=".0f"):
            return q(field(r, "model", key), spec)
        analyzer = ("(model ", model("occupancy_pct"), "%), ") if "occupancy_pct" in r.model else ("",)
        yield sentence(f"{r.variant}: ", model("registers"), " registers, ", model("spill_store_bytes"),
                       " B spill stores, ", model("driver_occupancy_pct"), "% occupancy ", *analyzer,
                       q(field(r, "time_s", "median") / field(regs[NAIVE], "time_s", "median"), ".2f"), "x the time")


EXPERIMENT = Experiment(
    name="launch_config",
    title="Launch configuration: block size, grid size per SM, and register pressure (--maxrregcount)",
    claims=(Claim("Blocks should be a multiple of 32 threads, 128, 192 or 256 a better choice (64 minimum).",
                  seed("001", "slide 'Optimizing threads per block'")),
            Claim("More than 2 blocks per SM, and 1000s of blocks per grid to scale across generations.",
                  seed("001", "slide 'Grid Size Heuristics'")),
            Claim("--maxrregcount trades registers for occupancy until spilling to (slow, DRAM-backed) local memory "
                  "costs more.", seed("001", "slide 'Occupancy and Register Pressure'"))),
    cases=cases,
    params=dict(blocks=[32, 64, 96, 100, 128, 192, 256, 512, 1024], grid_per_sm=[0.5, 1, 2, 4, 8, 32],
                l2_factor=4.0, log2_n_registers=24),
    naive=NAIVE,
    group_by=("sweep",),
    modern_note="A block-size-32 launch is capped by the 32 (Hopper) resident blocks per SM at 50% occupancy; "
                "local memory spills first hit L1, so a small spill costs less than on the slide's GPUs.",
    plot=Plot(x="block", y="gbps", series="sweep", logx=True),
    findings=findings,
    order=70,
)
