"""Copies between two GPUs: the copy engine (cudaMemcpyPeerAsync) with peer access on and off, SM kernels that pull
or push the peer's memory through UVA, one direction and both at once, sizes 4 KiB .. 1 GiB; the latency of a
small dependent read of the peer's memory; pinned H2D of the same sizes as the reference. Device 0 is the
experiment's device (its work stream's events time every case); device 1 is the peer."""

from __future__ import annotations

from contextlib import ExitStack

import numpy as np

from ..bench import nvml
from ..bench.verify import check_equal_device, poison
from ..errors import VerificationError
from ..gpu import host, peer, runtime
from ..gpu.compile import runs_on
from ..kernels import blocks_for
from ..kernels import peer as K
from ._cite import Finding, constant, field, q, sentence
from ._declare import Case, Claim, Experiment, Plot, outside, seed
from ._transfers import KIB, MIB, fraction_size, host_buffer, log_sizes, quoted_size, reference, size_label

A, B = 0, 1                  # the experiment's device and its peer
CEILING = "p2p_link_gbps"    # the link's rate per direction (NVML: links x per-link rate)
BOTH_CEILING = "p2p_link_both_gbps"
REACH = 0.9
ONE, BOTH = "0->1", "both"
BACK = "1->0"                # the other direction alone
WORDS = {ONE: "forward", BACK: "backward"}  # in findings (numbers there must come from records)


def requires(info: dict) -> str | None:
    count = info.get("device_count", 1)
    return None if count >= 2 else f"needs two GPUs: this machine has {count}"


def register_link_ceiling(session, link: dict) -> None:
    if link.get("gbps"):
        session.ceilings[CEILING] = dict(value=link["gbps"], unit="GB/s", how=f"{link['how']}, one direction")
        session.ceilings[BOTH_CEILING] = dict(value=2 * link["gbps"], unit="GB/s", how=f"{link['how']}, both "
                                                                                      "directions together")


def sync(devices=(A, B)) -> None:
    """Finish every device's work (the peers' streams do not order with the legacy stream the checks use)."""
    for d in devices:
        host.synchronize_device(d)


def copies_check(run, pairs, what: str):
    """verify(): poison each (device, out) destination, run, compare it on its device with the source's copy there."""
    def verify():
        for d, out, _ in pairs:
            with peer.on_device(d):
                poison(out)
        sync()
        run()
        sync()
        for d, out, want in pairs:
            with peer.on_device(d):
                check_equal_device(out, want, what=f"{what} (device {d})")
    return verify


def across(streams: peer.DeviceStreams, work):
    """run(): the work stream forks to one stream per device, each (device, fn) runs there, then it joins them."""
    def run():
        streams.fork()
        for d, fn in work:
            streams.run(d, fn)
        streams.join()
    return run


def sm_copy(copier: str, device: int, dst, src, nbytes: int):
    """The SM copy ``copier`` on ``device`` (its stream current) over ``nbytes``, a full grid of resident blocks:
    ``x<u>`` is peer_copy<u> (u 16-byte loads in flight per thread), ``bulk`` peer_bulk (the bulk-copy unit, sm_90+)."""
    if copier == "bulk":
        spec, block, per_block, count = K.PEER_BULK, K.BULK_BLOCK, K.BULK_CHUNK, nbytes
    else:
        unroll = int(copier[1:])
        spec, block, per_block, count = K.peer_copy(unroll), K.BLOCK, K.BLOCK * unroll * 16, nbytes // 16
    with peer.on_device(device):
        grid = runtime.device_info(device)["sm_count"] * runtime.max_active_blocks(spec, block)
    grid = min(grid, blocks_for(nbytes, per_block))
    return lambda: runtime.launch(spec, grid, block, dst, src, np.int64(count))


def copiers(params, arch: str) -> list[str]:
    """The SM copies this device runs: peer_copy per unroll, and peer_bulk where the bulk-copy unit exists."""
    return [f"x{u}" for u in params["unrolls"]] + (["bulk"] if params["bulk"] and runs_on(K.PEER_BULK, arch) else [])


def cases(session, params):
    import cupy

    link = nvml.pair_link(A, B)
    register_link_ceiling(session, link)
    hi = min(params["max_mib"], 64 if session.quick else params["max_mib"]) * MIB
    sizes = log_sizes(params["min_kib"] * KIB, hi, 16 if session.quick else 4)
    n = session.fit_elements(hi // 4, 8, "p2p")  # int32: source and destination on each device
    sizes = [s for s in sizes if s <= 4 * n]
    with ExitStack() as stack:
        src = {A: reference(n, session.seed)}
        dst = {A: cupy.empty_like(src[A])}
        data = src[A].get()
        with peer.on_device(B):
            src[B], dst[B] = cupy.asarray(data), cupy.empty(n, np.int32)
        pinned = host_buffer(stack, "pinned", n)
        pinned[:] = data
        del data
        streams = peer.DeviceStreams((A, B))
        extra = dict(link={k: link[k] for k in ("type", "links", "version", "gbps")})
        common = dict(cold_l2=False, extra=extra)

        def case(variant, run, nbytes, direction, access, mechanism, **more):
            k = nbytes // 4
            pairs = ([(B, dst[B][:k], src[B][:k])] if direction != BACK else []) + (
                [(A, dst[A][:k], src[A][:k])] if direction in (BOTH, BACK) else [])
            return Case(variant, run, copies_check(run, pairs, variant), reads=nbytes,
                        writes=nbytes if direction == BOTH else 0,
                        ceiling=BOTH_CEILING if direction == BOTH else CEILING,
                        params=dict(bytes=nbytes, size=size_label(nbytes), direction=direction, access=access,
                                    mechanism=mechanism, **more), **common)

        for access in ("off", "on"):
            with peer.peer_access((A, B), access == "on"):
                for nbytes in sizes:
                    ce = {d: (lambda d=d, s=(A if d == B else B): peer.copy_peer_async(dst[d], d, src[s], s, nbytes))
                          for d in (A, B)}
                    yield case(f"CE peer {access}", across(streams, [(A, ce[B])]), nbytes, ONE, access, "CE")
                    yield case(f"CE peer {access}", across(streams, [(B, ce[A])]), nbytes, BACK, access, "CE")
                    yield case(f"CE peer {access}", across(streams, [(A, ce[B]), (B, ce[A])]), nbytes, BOTH, access,
                               "CE")
                    if access == "off":
                        continue  # a kernel cannot address the peer's memory: it would fault (the findings say so)
                    for copier in copiers(params, session.device["arch"]):
                        more = (dict(unroll=int(copier[1:])) if copier != "bulk" else
                                dict(stages=K.BULK_STAGES, chunk_bytes=K.BULK_CHUNK))
                        for mode in ("pull", "push"):
                            # pull: the destination's device runs the kernel; push: the source's
                            runner = lambda to, frm: to if mode == "pull" else frm  # noqa: E731
                            to_b = (runner(B, A), sm_copy(copier, runner(B, A), dst[B], src[A], nbytes))
                            to_a = (runner(A, B), sm_copy(copier, runner(A, B), dst[A], src[B], nbytes))
                            name = f"SM {mode} {copier}"
                            yield case(name, across(streams, [to_b]), nbytes, ONE, access, "SM", **more)
                            yield case(name, across(streams, [to_a]), nbytes, BACK, access, "SM", **more)
                            yield case(name, across(streams, [to_b, to_a]), nbytes, BOTH, access, "SM", **more)
                if access == "on":
                    yield from latency_cases(params, extra)
        for nbytes in sizes:
            k = nbytes // 4
            h2d = lambda nbytes=nbytes: host.copy_async(dst[A], pinned, nbytes)  # noqa: E731
            yield Case("pinned H2D", h2d, copies_check(h2d, [(A, dst[A][:k], src[A][:k])], "pinned H2D"),
                       reads=nbytes, kind="baseline", ceiling=None, cold_l2=False,
                       params=dict(bytes=nbytes, size=size_label(nbytes), direction="H2D", access="host",
                                   mechanism="CE"), extra=dict(mechanism="CE", memory="pinned"))


def latency_cases(params, extra):
    """One thread on device 0 chasing a cycle of dependent reads through the peer's memory, then its own."""
    import cupy

    m = params["chase_kib"] * KIB // 4
    stride = 4099  # odd: the cycle visits every element, 16 KiB apart
    steps = params["chase_steps"]
    cycle = ((np.arange(m, dtype=np.int64) + stride) % m).astype(np.uint32)
    want = np.uint32(steps * stride % m)
    out = cupy.zeros(1, np.uint32)
    for where in ("peer", "local"):
        with peer.on_device(B if where == "peer" else A):
            nxt = cupy.asarray(cycle)
        run = lambda nxt=nxt: runtime.launch(K.PEER_CHASE, 1, 1, out, nxt, steps)  # noqa: E731

        def check(run=run):
            out.fill(0)
            run()
            got = out.get()[0]
            if got != want:
                raise VerificationError(f"dependent read chain: ended at {got}, expected {want}")
        yield Case(f"dependent read, {where}", run, check, ceiling=None, cold_l2=False,
                   params=dict(where=where, steps=steps, chase_kib=params["chase_kib"]), extra=dict(extra),
                   after=lambda rec, steps=steps: rec.extra.update(latency_ns=rec.median_s / steps * 1e9))


# ---------------------------------------------------------------- findings

def _at(records, variant, direction, nbytes, access=None):
    return next(r for r in records if r.variant == variant and r.params.get("direction") == direction
                and r.params["bytes"] == nbytes and (access is None or r.params.get("access") == access))


def _of_link(rec, both: bool = False) -> Finding:
    if not rec.extra.get("link", {}).get("gbps"):
        return sentence(" (link rate unknown: NVML gave none)")
    rate = field(rec, "extra", "link", "gbps") * (2 if both else 1)
    return sentence(" = ", q(field(rec, "gbps") / rate * 100, ".0f"), "% of the link's ",
                    "rate in both directions" if both else "per-direction rate", " (", q(rate, ".0f"), " GB/s)")


def _back(records, variant: str, nbytes: int, link: bool = True) -> tuple:
    """The backward (1->0) copy's rate as a clause, when the run measured that direction alone (earlier runs did
    not)."""
    rec = next((r for r in records if r.variant == variant and r.params.get("direction") == BACK
                and r.params["bytes"] == nbytes), None)
    return () if rec is None else ("; ", q(field(rec, "gbps"), ".1f"), f" GB/s {WORDS[BACK]}",
                                   _of_link(rec) if link else "")


def findings(records):
    copies = [r for r in records if r.params.get("direction") in (ONE, BACK, BOTH)]
    top = max(r.params["bytes"] for r in copies)
    ce, ce_both = _at(records, "CE peer on", ONE, top), _at(records, "CE peer on", BOTH, top)
    link = ce.extra.get("link", {})
    if link.get("gbps"):
        yield sentence(f"link: {link['type']}, ", q(field(ce, "extra", "link", "links"), ".0f"), " links, ",
                       q(field(ce, "extra", "link", "gbps"), ".0f"), " GB/s per direction (NVML)")
    else:
        yield sentence(f"link: {link.get('type', 'unknown')} (no NVLink rate from NVML: no ceiling)")
    mine = [r for r in records if r.variant == "CE peer on" and r.params["direction"] == ONE]
    best = max(mine, key=lambda r: r.gbps)
    reach = fraction_size(mine, best.gbps, REACH)
    where = sentence("from ", quoted_size(next(r for r in mine if r.params["bytes"] == reach))) if reach else "nowhere"
    yield sentence("copy engine (cudaMemcpyPeerAsync), peer access on, ", quoted_size(ce), ": ",
                   q(field(ce, "gbps"), ".1f"), f" GB/s {WORDS[ONE]} (the first GPU's memory into the second's)",
                   _of_link(ce), *_back(records, "CE peer on", top),
                   "; both at once ",
                   q(field(ce_both, "gbps"), ".1f"), " GB/s in total", _of_link(ce_both, both=True), f"; {WORDS[ONE]} "
                   "reaches ", q(constant(__name__, "REACH") * 100, ".0f"), "% of its best (",
                   q(field(best, "gbps"), ".1f"), " GB/s) ", where)
    ce_back = next((r for r in records if r.variant == "CE peer on" and r.params.get("direction") == BACK
                    and r.params["bytes"] == top), None)
    for direction, against in ((ONE, ce), (BACK, ce_back), (BOTH, ce_both)):
        sm = [r for r in records if r.params.get("mechanism") == "SM" and r.params["direction"] == direction
              and r.params["bytes"] == top]
        if sm and against is not None:
            top_sm = max(sm, key=lambda r: r.gbps)
            yield sentence(f"best SM copy, {WORDS.get(direction, 'both at once')}, ",
                           quoted_size(top_sm), f": {top_sm.variant} ", q(field(top_sm, "gbps"), ".1f"), " GB/s = ",
                           q(field(top_sm, "gbps") / field(against, "gbps"), ".2f"), "x the copy engine")
    bulk = {r.variant: r for r in records if r.variant.endswith(" bulk") and r.params["direction"] == ONE
            and r.params["bytes"] == top}
    if bulk:
        yield sentence(f"the bulk-copy unit (cp.async.bulk through shared memory, one thread per block), {WORDS[ONE]}, ",
                       quoted_size(ce), ": ", *[part for i, (name, r) in enumerate(sorted(bulk.items())) for part in (
                           "; " if i else "", f"{name.split()[1]} ", q(field(r, "gbps"), ".1f"), " GB/s = ",
                           q(field(r, "gbps") / field(ce, "gbps"), ".2f"), "x the copy engine")])
    off, off_both = _at(records, "CE peer off", ONE, top), _at(records, "CE peer off", BOTH, top)
    h2d = next((r for r in records if r.variant == "pinned H2D" and r.params["bytes"] == top), None)
    yield sentence("peer access off (the driver stages the copy through host memory), ", quoted_size(off), ": ",
                   q(field(off, "gbps"), ".1f"), f" GB/s {WORDS[ONE]} = ",
                   q(field(off, "gbps") / field(ce, "gbps") * 100, ".0f"), "% of peer access on",
                   *_back(records, "CE peer off", top, link=False), "; both at once ", q(field(off_both, "gbps"), ".1f"), " GB/s in total",
                   sentence("; pinned H2D of the same size: ", q(field(h2d, "gbps"), ".1f"), " GB/s")
                   if h2d is not None else "")
    yield sentence("SM copies with peer access off: not run (a kernel cannot address the peer's memory until "
                   "cudaDeviceEnablePeerAccess; it would fault)")
    lat = {r.params["where"]: r for r in records if r.variant.startswith("dependent read")}
    if len(lat) == 2:
        yield sentence("a dependent small read takes ", q(field(lat["peer"], "extra", "latency_ns"), ".0f"),
                       " ns from the peer's memory vs ", q(field(lat["local"], "extra", "latency_ns"), ".0f"),
                       " ns from its own: a ", q(field(lat["local"], "params", "chase_kib"), ".0f"),
                       " KiB chase, warm, so the local read is an L2 hit (dram_latency's L2 level, not DRAM), "
                       "while each peer read crosses the link (", q(field(lat["peer"], "extra", "latency_ns")
                                               / field(lat["local"], "extra", "latency_ns"), ".1f"), "x)")


EXPERIMENT = Experiment(
    name="p2p",
    title="Peer-to-peer: copies between two GPUs by copy engine and by SM, peer access on and off",
    claims=(
        Claim("UVA is a prerequisite for peer-to-peer (P2P) transfers, which move data directly between supported "
              "GPUs over PCIe or NVLink without going through host memory.",
              seed("003", "9.1.4, unified virtual addressing")),
        Claim("cudaDeviceCanAccessPeer tells whether one device can address another's memory; after "
              "cudaDeviceEnablePeerAccess kernels dereference the peer's pointers; cudaMemcpyPeerAsync copies between "
              "devices, through host memory when peer access is not enabled.",
              outside("NVIDIA, CUDA C++ Programming Guide, peer-to-peer memory access and memory copy")),
        Claim("Copies are named by the engine that moves them: copy engine (CE, cudaMemcpyPeerAsync) or SM (kernel "
              "loads and stores of the peer's memory); one direction and both at once measured separately.",
              outside("NVIDIA, nvbandwidth (README: CE and SM copy tests)")),
        Claim("From sm_90, cp.async.bulk moves a contiguous block between global and shared memory through the Tensor "
              "Memory Accelerator, completing on an mbarrier: one instruction per block of bytes instead of one per "
              "16 bytes.", outside("NVIDIA, PTX ISA, cp.async.bulk; NVIDIA Hopper Tuning Guide, Tensor Memory "
                                   "Accelerator")),
    ),
    cases=cases,
    params=dict(min_kib=4, max_mib=1024, unrolls=list(K.UNROLLS), bulk=True, chase_steps=4096, chase_kib=4096),
    modern_note="H100/H200 SXM: 18 NVLink 4 links of 26.5625 GB/s per direction, about 478 GB/s per direction "
                "between two GPUs of an NVSwitch board; PCIe-only pairs peer at PCIe rates or not at all. Why the SM "
                "copies stay just below the copy engine on two H200s (NVLink counters, ncu): docs/notes/p2p-sm-copy.md.",
    plot=Plot(x="bytes", y="gbps", series="variant", logx=True, title="p2p: GB/s between two GPUs vs size"),
    findings=findings,
    requires=requires,
    order=205,
)
