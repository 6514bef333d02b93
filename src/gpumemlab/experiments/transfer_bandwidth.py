"""Host <-> device copy bandwidth by host memory kind (pageable, pinned, registered, write-combined), sizes
4 KiB .. 1 GiB, both directions and both at once, and what pinning itself costs."""

from __future__ import annotations

from contextlib import ExitStack

import numpy as np

from ..gpu import host
from ._declare import Case, Check, Claim, Experiment, Plot, outside, seed
from . import _transfers
from ._cite import Finding, constant, field, q, sentence
from ._transfers import GIB, KIB, MEMORIES, MIB, copier, d2h_check, fraction_size, host_buffer, log_sizes, \
    quoted_size, reference, require_equal, size_label

CEILING = "pcie_theoretical_gbps"
DIRECTIONS = ("H2D", "D2H")


def register_link_ceiling(session) -> None:
    link = host.pcie_link()
    if link is not None:
        session.ceilings[CEILING] = dict(value=link.gbps, unit="GB/s",
                                         how=f"PCIe Gen{link.max_generation} x{link.max_width} (NVML), one direction, "
                                             f"line coding only (running at Gen{link.generation} x{link.width} when read)")


def _transfer(session, variant, run, check, nbytes, memory, direction, clock):
    return Case(variant, run, check, params=dict(bytes=nbytes, size=size_label(nbytes), memory=memory,
                                                 direction=direction),
                reads=nbytes, ceiling=CEILING, cold_l2=False, clock=clock,
                extra=dict(mechanism="CE", memory=memory, direction=direction, copy_engines=host.copy_engines()))


def _pin_cost(memory: str, nbytes: int, keep: np.ndarray):
    """cudaHostAlloc + cudaFreeHost, or cudaHostRegister + cudaHostUnregister of an existing array."""
    def run():
        with (host.register(keep) if memory == "registered" else host.host_array(nbytes, np.uint8)):
            pass

    def check():
        with (host.register(keep) if memory == "registered" else host.host_array(nbytes, np.uint8)) as buf:
            require_equal(host.pointer_attributes(buf.ptr)["memory"], "host", f"{memory} pointer type")
        if memory == "registered":
            require_equal(host.pointer_attributes(keep)["memory"], "unregistered", "unregistered array's type")
    return run, check


def cases(session, params):
    import cupy

    register_link_ceiling(session)
    hi = min(params["max_mib"], 64 if session.quick else params["max_mib"]) * MIB
    sizes = log_sizes(params["min_kib"] * KIB, hi, 16 if session.quick else 4)
    n = session.fit_elements(hi // 4, 12, "transfer_bandwidth")  # int32: out, reference, scratch
    sizes = [s for s in sizes if s <= 4 * n]
    with ExitStack() as stack:
        want = reference(n, session.seed)
        out, scratch = cupy.empty_like(want), cupy.empty_like(want)
        bufs = {m: host_buffer(stack, m, n) for m in MEMORIES}
        back = host_buffer(stack, "pinned", n)  # the D2H side of the bidirectional copy
        for m in MEMORIES:
            host.copy_async(bufs[m], want)
        session.stream.sync()
        for nbytes in sizes:
            k = nbytes // 4
            for m in MEMORIES:
                clock = "host" if m == "pageable" else "events"  # pageable copies are staged by the driver
                h2d = copier(out, bufs[m], nbytes)
                yield _transfer(session, f"{m} H2D", h2d, Check(out[:k], want[:k]), nbytes, m, "H2D", clock)
                d2h = copier(bufs[m], want, nbytes)
                yield _transfer(session, f"{m} D2H", d2h, d2h_check(d2h, bufs[m][:k], want[:k], scratch[:k],
                                                                    f"{m} D2H"), nbytes, m, "D2H", clock)
            yield _bidirectional(session, out, bufs["pinned"], back, want, scratch, nbytes)
        pin = min(params["pin_mib"] * MIB, 4 * n)
        keep = bufs["pageable"][: pin // 4]
        for m in ("pinned", "registered"):
            run, check = _pin_cost(m, pin, keep)
            yield Case(f"{m}: pin + unpin", run, check, params=dict(bytes=pin, size=size_label(pin), memory=m,
                                                                     direction="pinning"),
                       ceiling=None, cold_l2=False, clock="host", extra=dict(memory=m))


def _bidirectional(session, out, src, back, want, scratch, nbytes):
    """H2D and D2H of ``nbytes`` each at once, on two streams (two copy engines run them together)."""
    k = nbytes // 4
    streams = host.side_streams(2)

    def run():
        host.fork(streams)
        host.copy_async(out, src, nbytes, stream=streams[0])
        host.copy_async(back, want, nbytes, stream=streams[1])
        host.join(streams)

    d2h = d2h_check(run, back[:k], want[:k], scratch[:k], "bidirectional D2H")

    def check():
        out[:k].fill(0)
        d2h()
        from ..bench.verify import check_equal_device

        check_equal_device(out[:k], want[:k], what="bidirectional H2D")

    case = _transfer(session, "pinned bidirectional", run, check, nbytes, "pinned", "both", "events")
    case.writes = nbytes  # both directions cross the link: 2 x nbytes in total
    case.ceiling = None   # the link's rate is per direction
    return case


def derive(records, session):
    best = {}
    for d in DIRECTIONS:
        recs = [r for r in records if r.params["direction"] == d and r.gbps]
        if recs:
            top = max(recs, key=lambda r: r.gbps)
            best[d] = top.gbps
            session.ceilings[f"{d.lower()}_best_gbps"] = dict(
                value=top.gbps, unit="GB/s", how=f"best measured {d} copy ({top.variant}, {top.params['size']})")
    for r in records:
        if r.params["direction"] in best and r.gbps:
            r.extra["pct_of_best"] = 100.0 * r.gbps / best[r.params["direction"]]
        if r.params["direction"] == "pinning":
            r.extra["s_per_gib"] = r.median_s * GIB / r.params["bytes"]


def reaching(recs, best) -> Finding:
    """'reaches 90% of it from <size>': the smallest size whose copy reaches REACH of the best one."""
    reach = fraction_size(recs, best.gbps)
    where = (sentence("from ", quoted_size(next(r for r in recs if r.params["bytes"] == reach))) if reach
             else "at no size measured")
    return sentence("reaches ", q(constant(_transfers.__name__, "REACH") * 100, ".0f"), "% of it ", where)


def findings(records):
    link = next((r.pct_of_ceiling for r in records if r.pct_of_ceiling), None)
    yield sentence("PCIe link rate unknown (nvidia-ml-py not installed or NVML silent): no theoretical ceiling"
                   if link is None else "percentages of the theoretical PCIe rate are in each record (pct_of_ceiling)")
    for d in DIRECTIONS:
        recs = [r for r in records if r.params["direction"] == d]
        best = max(recs, key=lambda r: r.gbps)
        top = max(r.params["bytes"] for r in recs)
        for m in MEMORIES:
            mine = [r for r in recs if r.params["memory"] == m]
            at_top = next(r for r in mine if r.params["bytes"] == top)
            yield sentence(f"{d} {m}: ", q(field(at_top, "gbps"), ".1f"), " GB/s at ", quoted_size(at_top), " = ",
                           q(100 * (field(at_top, "gbps") / field(best, "gbps")), ".0f"), f"% of the best {d} copy (",
                           q(field(best, "gbps"), ".1f"), " GB/s); ", reaching(mine, best))
    both = max((r for r in records if r.params["direction"] == "both"), key=lambda r: r.params["bytes"])
    one = {d: next(r for r in records if r.variant == f"pinned {d}" and r.params["bytes"] == both.params["bytes"])
           for d in DIRECTIONS}
    yield sentence("bidirectional at ", quoted_size(both), ": ", q(field(both, "gbps"), ".1f"), " GB/s in total vs ",
                   q(field(one["H2D"], "gbps"), ".1f"), " H2D and ", q(field(one["D2H"], "gbps"), ".1f"),
                   " D2H alone (", q(field(both, "extra", "copy_engines"), ".0f"), " copy engines)")
    for r in records:
        if r.params["direction"] == "pinning":
            per_gib = field(r, "extra", "s_per_gib")
            yield sentence(f"{r.variant}: ", q(per_gib, ".3f"), " s per GiB (", q(field(r, "time_s", "median") * 1e3,
                                                                                   ".1f"),
                           " ms for ", quoted_size(r), "), the time to copy ", q(per_gib * field(one["H2D"], "gbps"),
                                                                                 ".1f"), " GB pinned")


EXPERIMENT = Experiment(
    name="transfer_bandwidth",
    title="Host-device copies: pageable, pinned, registered and write-combined memory",
    claims=(
        Claim("Page-locked memory enables the highest cudaMemcpy performance: 3.2 GB/s on PCIe x16 Gen1, 5.2 GB/s on "
              "Gen2 (cudaMallocHost / cudaFreeHost). Use with caution: it reduces the RAM available to the virtual "
              "memory system.", seed("001", "slide 'Page-Locked System Memory'")),
        Claim("Host-device bandwidth (PCIe x16 Gen3: 16 GB/s) is far below device memory bandwidth (V100: 898 GB/s). "
              "Pinned memory (cudaHostAlloc) reaches the highest host-device bandwidth; cudaHostRegister pins an "
              "existing allocation in place; pinning is expensive next to ordinary allocation and should not be "
              "overused.", seed("003", "9.1 and 9.1.1, pinned memory")),
        Claim("Maximize the use of page-locked (pinned) memory, allocated with cudaHostAlloc or cudaHostRegister.",
              seed("004", "'Maximize the use of page-locked (pinned) memory'")),
        Claim("Copies are named by the engine that moves them: copy engine (CE, cudaMemcpyAsync) or SM (kernel "
              "loads and stores); H2D, D2H and bidirectional measured separately.",
              outside("NVIDIA, nvbandwidth (README: CE and SM copy tests)")),
    ),
    cases=cases,
    params=dict(min_kib=4, max_mib=1024, pin_mib=256),
    modern_note="PCIe Gen4/Gen5 x16 links carry about 25/50 GB/s per direction; pageable copies go through a "
                "driver staging buffer and the CPU's memcpy, so their rate depends on the host far more than the GPU.",
    plot=Plot(x="bytes", y="gbps", series="variant", logx=True,
              title="transfer_bandwidth: GB/s (bytes crossing the link) vs size"),
    findings=findings,
    derive=derive,
    order=200,
)
