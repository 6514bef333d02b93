"""The latency ladder (seed 000): one thread chasing a chain of dependent loads through working sets from L1-sized
to many times L2, then Little's law: the bytes the GPU must keep in flight to reach its copy bandwidth.

The chain is a random cycle with one link per 128-byte line (every load touches a new line), built on the GPU; each
sample continues from where the last one stopped. L2 is not flushed between samples: a chain that fits a level is
resident there once the samples have walked it, and each later sample measures that level, while a chain many times
L2 keeps reaching lines not loaded lately and misses on nearly every load (a flush would make every chain cold,
hiding L2; restarting each sample at the same link would make every chain the first ``steps`` lines). A load waits for the one before it, so time / loads is the load-to-use
latency of the level that holds the chain (address translation included, which the largest sets also pay). Sizes
come from the device's L2 size, never typed in.
"""

from __future__ import annotations

import numpy as np

from ..errors import VerificationError
from ..gpu import runtime
from ..kernels import latency as K
from ..model.dram import bytes_in_flight
from ._cite import field, join, q, sentence
from ._declare import Case, Claim, Experiment, Plot, seed

KIB = 1024


def working_sets(l2_bytes: int, params: dict) -> list[int]:
    """Bytes of each chain: powers of 4 from ``min_kib`` up to ``l2_factor`` x L2 (the last one exactly that)."""
    top = int(params["l2_factor"] * l2_bytes)
    sizes, size = [], params["min_kib"] * KIB
    while size < top:
        sizes.append(size)
        size *= 4
    return sizes + [top]


def chain(nbytes: int, seed_value: int):
    """(next, slots, order): ``next[i]`` holds the index of the next link, one link per line, visiting the lines in
    the random ``order`` (a cycle through all ``slots`` of them)."""
    import cupy

    stride = K.LINE_BYTES // 4
    slots = max(2, nbytes // K.LINE_BYTES)
    order = cupy.random.RandomState(seed_value).permutation(slots).astype(cupy.uint32)
    nxt = cupy.zeros(slots * stride, cupy.uint32)
    nxt[order * stride] = cupy.roll(order, -1) * stride
    return nxt, slots, order


def expected_end(order, steps: int) -> int:
    """Where the chase from index 0 stands after ``steps`` loads."""
    host = order.get()
    start = int(np.flatnonzero(host == 0)[0])
    return int(host[(start + steps) % host.size]) * (K.LINE_BYTES // 4)


def cases(session, params):
    import cupy

    sizes = working_sets(session.l2_bytes, params)
    if session.quick:
        sizes = sizes[:2] + sizes[-1:]
    out = cupy.zeros(1, cupy.uint32)  # where the chase stands: each sample starts there
    origin = cupy.zeros(1, cupy.uint32)  # the check starts at link 0
    for nbytes in sizes:
        nbytes = min(nbytes, session.fit_elements(nbytes // 4, 4, "dram_latency") * 4)
        nxt, slots, order = chain(nbytes, session.seed)
        steps = params["steps"]
        want = expected_end(order, steps)
        for load, spec in K.CHASE.items():
            kernel = runtime.get_kernel(spec)

            def run(kernel=kernel, nxt=nxt):
                runtime.launch(kernel, 1, 1, out, nxt, out, np.int32(steps))

            def check(kernel=kernel, nxt=nxt, want=want, load=load):
                out.fill(0xFFFFFFFF)
                runtime.launch(kernel, 1, 1, out, nxt, origin, np.int32(steps))
                got = int(out.get()[0])
                if got != want:
                    raise VerificationError(f"chase {load}: ended at index {got}, expected {want}")
                out.fill(0)  # the timed samples start from link 0 and go on from there

            def after(rec, steps=steps):
                rec.extra["ns_per_load"] = rec.time_s["median"] / steps * 1e9

            params_ = dict(kib=nbytes // KIB, steps=steps, lines=slots, over_l2=round(nbytes / session.l2_bytes, 3))
            yield Case(load, run, check, params=params_, ceiling=None, after=after, extra=dict(load=load),
                       cold_l2=False)


def derive(records, session):
    """Little's law on the largest chain (DRAM) and this run's copy ceiling, stored on that chain's records."""
    copy = session.ceilings.get("copy_gbps", {}).get("value")
    if not records or not copy:
        return
    top = max(r.params["kib"] for r in records)
    threads = int(session.device["max_threads_per_sm"])
    for r in records:
        if r.params["kib"] == top:
            law = bytes_in_flight(float(copy), float(r.extra["ns_per_load"]), int(session.sm_count), threads)
            r.extra.update(copy_gbps=copy, threads_per_sm=threads,
                           **{f"in_flight_{k}": v for k, v in law.items()})


def findings(records):
    for load in dict.fromkeys(r.variant for r in records):
        rs = sorted((r for r in records if r.variant == load), key=lambda r: r.params["kib"])
        if len(rs) < 2:
            continue
        ladder = [sentence(q(field(r, "params", "kib"), ",.0f"), " KiB ", q(field(r, "extra", "ns_per_load"), ".0f"),
                           " ns") for r in rs]
        yield sentence(f"{load}: ns per dependent load by chain size: ", join(", ", ladder))
        last = rs[-1]
        if "in_flight_bytes" in last.extra:
            yield sentence(f"{load}: at ", q(field(last, "extra", "ns_per_load"), ".0f"), " ns a load and ",
                           q(field(last, "extra", "copy_gbps"), ",.0f"), " GB/s, Little's law asks for ",
                           q(field(last, "extra", "in_flight_bytes") * 1e-6, ".2f"), " MB in flight: ",
                           q(field(last, "extra", "in_flight_bytes_per_sm") * (1 / KIB), ".1f"), " KiB per SM, ",
                           q(field(last, "extra", "in_flight_loads16_per_thread"), ".2f"),
                           " float4 loads per thread with ", q(field(last, "extra", "threads_per_sm"), ".0f"),
                           " threads resident per SM (seed: a DRAM access takes tens of nanoseconds)")


EXPERIMENT = Experiment(
    name="dram_latency",
    title="Latency ladder: dependent loads through L1, L2 and DRAM, and the bytes in flight it asks for",
    claims=(Claim("Global memory is implemented with DRAM: Access latency to a bit in DRAM is relatively slow (tens "
                  "of nanoseconds). Because of this slowness, DRAM is designed to use parallelism to increase the "
                  "memory access throughput.", seed("000", "Memory Coalescing, global memory is DRAM")),),
    cases=cases,
    params=dict(min_kib=16, l2_factor=8.0, steps=1 << 15),
    group_by=("kib",),
    modern_note="The seed's tens of nanoseconds is the DRAM array; a GPU load also crosses the SM's pipeline, L1, "
                "the network to the L2 slice, the L2 and the memory controller, so a load-to-use latency of "
                "several hundred nanoseconds is the norm, and that latency is what Little's law multiplies.",
    plot=Plot(x="kib", y="median_s", series="variant", logx=True, title="dram_latency: time of the chain vs size"),
    findings=findings,
    derive=derive,
    order=12,
)
