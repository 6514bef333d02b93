"""Occupancy at fixed code: the same grid-stride copy (copy_vec of copy.cu) with its resident blocks per SM
limited by dynamic shared memory the kernel never touches, crossed with the loads each thread keeps in
flight (4-byte or 16-byte elements, 1 or 4 per thread: exactly that many loads in flight, held by a SASS test). The grid is exactly the resident blocks (persistent),
so achieved occupancy equals the theoretical one apart from the tail. Theoretical occupancy comes from the
analyzer (``model.occupancy``) and from the driver, side by side."""

from __future__ import annotations

import numpy as np

from ..bench.verify import device_random_nonzero
from ..gpu import runtime
from ..kernels import copy as copy_kernels
from ._cite import constant, field, join, q, sentence
from ._declare import Case, Check, Claim, Experiment, Plot, outside, seed
from ._model import predict_occupancy

BLOCK = 256
RESERVED_SMEM = 1024  # shared memory the driver reserves per block (sm_80 and later)
REACH = 0.9  # the findings report the lowest occupancy that reaches this share of the best bandwidth


def ilp_label(vtype: str, unroll: int) -> str:
    return f"{vtype} x{unroll}"


def parse_ilp(text: str) -> tuple[str, int]:
    """"float4x4" -> ("float4", 4): a copy_vec instantiation of copy.cu."""
    from ..errors import UsageError

    vtype, _, unroll = text.partition("x")
    try:
        copy_kernels.copy_vec(vtype, int(unroll))
    except ValueError:
        raise UsageError(f"occupancy_sweep: bad ilp {text!r}: expected TYPExUNROLL with TYPE in "
                         f"{', '.join(copy_kernels.VECTOR_TYPES)} and UNROLL in "
                         f"{', '.join(map(str, copy_kernels.UNROLLS))}, e.g. float4x4") from None
    return vtype, int(unroll)


def padding_for(kernel, blocks: int, info: dict) -> int:
    """Dynamic shared memory per block that leaves at most ``blocks`` resident per SM (0 if threads already do)."""
    if runtime.max_active_blocks(kernel, BLOCK, 0) <= blocks:
        return 0
    smem = min(info["shared_per_block_optin_bytes"], info["shared_per_sm_bytes"] // blocks - RESERVED_SMEM)
    smem -= smem % 256
    while smem > 0 and runtime.max_active_blocks(kernel, BLOCK, smem) < blocks:  # allocation granularity
        smem -= 256
    return smem


def cases(session, params):
    import cupy

    ilps = [parse_ilp(t) for t in params["ilp"]]  # bad input before any allocation
    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 8, "occupancy_sweep")
    n -= n % 4
    src = device_random_nonzero(n, np.float32, session.seed)
    dst = cupy.empty_like(src)
    info = session.device
    for vtype, unroll in ilps:
        spec = copy_kernels.copy_vec(vtype, unroll)
        kernel = runtime.get_kernel(spec)
        runtime.set_max_dynamic_shared(kernel, info["shared_per_block_optin_bytes"])
        count = n * 4 // copy_kernels.VECTOR_TYPES[vtype]
        seen = set()
        for target in params["blocks_per_sm"]:
            smem = padding_for(kernel, target, info)
            occ = predict_occupancy(spec, BLOCK, smem)
            blocks = occ["driver_blocks_per_sm"]
            if blocks in seen or blocks == 0:  # this GPU cannot hold that many (or any) blocks: measured once
                continue
            seen.add(blocks)
            grid = blocks * session.sm_count
            yield Case(ilp_label(vtype, unroll),
                       lambda kernel=kernel, grid=grid, smem=smem: runtime.launch(kernel, grid, BLOCK, dst, src,
                                                                                  np.int64(count), shmem=smem),
                       Check(dst, src),
                       params=dict(ilp=ilp_label(vtype, unroll), blocks_per_sm=blocks,
                                   occupancy_pct=round(occ["driver_occupancy_pct"], 1)),
                       reads=src.nbytes, writes=src.nbytes, model=occ,
                       extra=dict(kernel=spec.name, padding_smem_bytes=smem, grid=grid,
                                  bytes_in_flight_per_thread=copy_kernels.VECTOR_TYPES[vtype] * unroll,
                                  bytes_in_flight_per_sm=copy_kernels.VECTOR_TYPES[vtype] * unroll * BLOCK * blocks))


def saturation(records, share: float):
    """Per ILP: the lowest occupancy whose median reaches ``share`` of the best median of the whole sweep."""
    best = max(r.gbps for r in records)
    out = {}
    for r in sorted(records, key=lambda r: r.params["occupancy_pct"]):
        if r.gbps >= share * best:
            out.setdefault(r.params["ilp"], r)
    return best, out


def findings(records):
    reach_share = constant(__name__, "REACH")
    _, first = saturation(records, reach_share.value)
    best_record = max(records, key=lambda r: r.gbps)
    top = field(best_record, "gbps")

    def occupancy(r):
        return q(field(r, "params", "occupancy_pct"), "g")
    ceiling = ((", ", q(field(best_record, "pct_of_ceiling"), ".0f"), "% of the copy ceiling")
               if best_record.pct_of_ceiling is not None else ())
    yield sentence("best ", q(top, ",.0f"), f" GB/s ({best_record.variant} at ", occupancy(best_record), "% occupancy",
                   *ceiling, ")")
    for ilp in dict.fromkeys(r.params["ilp"] for r in records):
        rows = sorted((r for r in records if r.params["ilp"] == ilp), key=lambda r: r.params["occupancy_pct"])
        curve = join(", ", (sentence(occupancy(r), "%: ", q(100 * (field(r, "gbps") / top), ".0f")) for r in rows))
        reach = first.get(ilp)
        share = q(reach_share * 100, ".0f")
        where = (("reaches ", share, "% of the best at ", occupancy(reach), "% occupancy (",
                  q(field(reach, "extra", "bytes_in_flight_per_sm") * (1 / 1024), ".0f"), " KiB in flight per SM)")
                 if reach else ("never reaches ", share, "% of the best"))
        yield sentence(f"{ilp} (", q(field(rows[0], "extra", "bytes_in_flight_per_thread"), ".0f"),
                       " B in flight per thread): ", *where, "; % of best by occupancy: ", curve)
    # the same 16 B in flight per thread as four 4-byte loads or one 16-byte load: per byte or per request?
    four = {r.params["occupancy_pct"]: r for r in records if r.params["ilp"] == ilp_label("float", 4)}
    one = {r.params["occupancy_pct"]: r for r in records if r.params["ilp"] == ilp_label("float4", 1)}
    both = sorted(set(four) & set(one))
    if both:
        yield sentence("the same ", q(field(four[both[0]], "extra", "bytes_in_flight_per_thread"), ".0f"),
                       " B in flight per thread, float x4 (four requests) over float4 x1 (one), by occupancy: ",
                       join(", ", (sentence(q(field(four[o], "params", "occupancy_pct"), "g"), "%: ",
                                            q(field(four[o], "gbps") / field(one[o], "gbps"), ".2f"), "x")
                                   for o in both)))


EXPERIMENT = Experiment(
    name="occupancy_sweep",
    title="Occupancy vs DRAM throughput at fixed code, with loads in flight per thread as the second axis",
    claims=(Claim("Strive for 50% or higher occupancy.", seed("001", "slide 'Global memory optimization'")),
            Claim("Maximizing occupancy hides memory latency and, with many threads accessing different locations, "
                  "fully utilizes the DRAM buses.", seed("000", "section 'Hiding Memory Latency'")),
            Claim("Enough independent memory operations per thread (ILP) reach full bandwidth at low occupancy.",
                  outside("V. Volkov, 'Better Performance at Lower Occupancy', GTC 2010"))),
    cases=cases,
    params=dict(blocks_per_sm=[1, 2, 3, 4, 6, 8], ilp=["floatx1", "floatx4", "float4x1", "float4x4"],
                l2_factor=4.0),
    group_by=("ilp",),
    modern_note="Occupancy is one way to keep bytes in flight: Little's law asks for latency x bandwidth in flight "
                "per GPU, which loads per thread can supply as well as threads per SM can. 'T xU' has exactly U "
                "loads of T in flight per thread (the SASS of copy_vec: U loads issued before the first store, the "
                "stride loop not unrolled further; docs/notes/occupancy-sass.md), so float x4 and float4 x1 both "
                "keep 16 B in flight per thread, as four requests or one.",
    plot=Plot(x="occupancy_pct", y="gbps", series="ilp", title="copy GB/s vs occupancy (persistent grid)"),
    findings=findings,
    order=71,
)
