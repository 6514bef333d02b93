"""Seed 000's exercise: for which square BLOCK_SIZE does the tiled matmul avoid uncoalesced global accesses?
tiled<T> (matmul_ladder.cu) at T x T threads for T = 2 ... 32, with the analyzer's sectors per request of its A and B
tile loads next to the measured GFLOP/s, and cuBLAS SGEMM in the same run as the reference."""

from __future__ import annotations

import math

import numpy as np

from ..bench.verify import device_random_nonzero
from ..errors import UsageError
from ..gpu import runtime
from ..kernels import matmul as K
from ._cite import Finding, claim, constant, field, join, q, sentence
from ._declare import Case, Claim, Experiment, Plot, seed
from ._matmul import FEW_SAMPLES, Operands
from ._model import overlap, predict_global

# the tile loads of tiled<TILE> at phase 0, as the analyzer reads them (row-major A: M x K, B: K x N)
SECTOR_BYTES = 32  # the unit a global request is served in (compute capability 6.0 and later): 8 floats
A_LOAD = "A[(blockIdx.y*T + threadIdx.y)*K + threadIdx.x]"
B_LOAD = "B[threadIdx.y*N + blockIdx.x*T + threadIdx.x]"


def tile_model(tile: int, size: int) -> dict:
    lets = [f"T={tile}", f"K={size}", f"N={size}"]
    a = predict_global(A_LOAD, "float A[]", block=(tile, tile, 1), lets=lets)
    b = predict_global(B_LOAD, "float B[]", block=(tile, tile, 1), lets=lets)
    return dict(a_load=a, b_load=b, sectors_per_request=a.get("sectors_per_request"),
                efficiency_pct=a.get("efficiency_pct"), verdict=a.get("verdict"))


def cases(session, params):
    bad = [t for t in params["block_sizes"] if t not in K.BLOCK_SIZES]
    if bad:
        raise UsageError(f"block_size_coalescing: BLOCK_SIZE {bad[0]} is not instantiated; block sizes: "
                         f"{', '.join(map(str, K.BLOCK_SIZES))}")

    import cupy

    size = params["size"]
    a = device_random_nonzero((size, size), np.float32, session.seed)
    b = device_random_nonzero((size, size), np.float32, session.seed + 1)
    out = cupy.empty((size, size), dtype=cupy.float32)
    ops = Operands(session, a, b, out, dict(size=size))
    yield ops.cublas()
    for tile in params["block_sizes"]:
        spec = K.tiled(tile)
        kernel = runtime.get_kernel(spec)
        grid = (math.ceil(size / tile), math.ceil(size / tile))
        run = lambda kernel=kernel, grid=grid, tile=tile: runtime.launch(  # noqa: E731
            kernel, grid, (tile, tile), out, a, b, size, size, size)
        threads = tile * tile
        yield Case(f"BLOCK_SIZE {tile}", run, ops.ref.verifier(run, out, f"tiled<{tile}>"),
                   params=dict(size=size, block_size=tile), flops=ops.flops, cold_l2=False,
                   ceiling="sgemm_cublas_gflops", model=tile_model(tile, size), timer=FEW_SAMPLES,
                   extra=dict(kernel=spec.name, threads=threads,
                              lane_utilization=threads / (32 * math.ceil(threads / 32))))


def derive(records, session):
    base = next((r for r in records if r.kind == "baseline"), None)
    for r in records:
        if base is not None and r.kind == "kernel" and base.gflops:
            r.extra["pct_of_cublas"] = 100.0 * r.gflops / base.gflops


def row(r) -> Finding:
    """One block size: the analyzer's sectors per request and use of fetched bytes, and the GFLOP/s it reached."""
    return sentence(q(field(r, "params", "block_size"), ".0f"), ": ", q(field(r, "model", "sectors_per_request"), "g"),
                    " sectors/request (", q(field(r, "model", "efficiency_pct"), ".0f"),
                    f"% of fetched bytes used, {r.model['verdict']}), ", q(field(r, "gflops"), ",.0f"), " GFLOP/s")


def findings(records):
    rows = sorted((r for r in records if r.kind == "kernel"), key=lambda r: r.params["block_size"])
    yield join("; ", (row(r) for r in rows))
    coalesced = [q(field(r, "params", "block_size"), ".0f") for r in rows if r.model.get("verdict") == "coalesced"]
    if coalesced:
        sector = constant(__name__, "SECTOR_BYTES")
        yield sentence("analyzer: BLOCK_SIZE ", join(", ", coalesced), " read whole ", q(sector, ".0f"),
                       "-byte sectors (a row of ", q(sector * 0.25, ".0f"), " or more floats per warp row); the seed's "
                       "answer was multiples of ", q(claim("32"), ".0f"))
    base = next((r for r in records if r.kind == "baseline"), None)
    if rows and base is not None:
        best = max(rows, key=lambda r: r.gflops)
        side = "a tie with" if overlap(best, base) else ("faster than" if best.median_s < base.median_s else
                                                          "slower than")
        yield sentence("fastest: BLOCK_SIZE ", q(field(best, "params", "block_size"), ".0f"), f", {side} cuBLAS SGEMM "
                       "by p10-p90 ranges (cuBLAS's own p10-p90 spread ",
                       q(field(base, "time_s", "rel_spread") * 100, ".0f"), "% of its median: at this size both are a "
                       "few tens of microseconds)")


EXPERIMENT = Experiment(
    name="block_size_coalescing",
    title="Which square BLOCK_SIZE lets the tiled matmul avoid uncoalesced accesses (seed 000 exercise)",
    claims=(Claim("For tiled matrix multiplication, which values of BLOCK_SIZE completely avoid uncoalesced accesses "
                  "to global memory (square blocks only)? The seed's answer: a multiple of 32, so that a warp reads "
                  "32 consecutive elements.", seed("000", "exercises, BLOCK_SIZE question")),),
    cases=cases,
    params=dict(size=512, block_sizes=list(K.BLOCK_SIZES)),
    group_by=("size",),
    modern_note="On compute capability 6.0 and later a request is served in 32-byte sectors: a warp row of 8 floats "
                "fills a sector, so a tile 8 wide already wastes no fetched byte; tiles of 2 and 4 also leave most "
                "of each warp's 32 lanes empty (4 and 16 threads per block).",
    plot=Plot(x="block_size", y="gflops", series="variant", logx=True, title="tiled<T>: GFLOP/s vs square block size"),
    findings=findings,
    derive=derive,
    order=72,
)
