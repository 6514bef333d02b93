"""Persisting L2 accesses: the Best Practices Guide's sliding-window benchmark, scaled to this GPU's set-aside."""

from __future__ import annotations

import numpy as np

from ..errors import GpumemlabError, VerificationError
from ..gpu import l2, runtime
from ..kernels import blocks_for
from ..kernels import l2 as K
from ._declare import Case, Claim, Experiment, Plot, seed

MIB = 2**20
POLICIES = ("no window", "set-aside, no window", "hit_ratio 1.0", "tuned hit_ratio")
AFTER = "no window, after reset"


def window_for(policy: str, base_ptr: int, region: int, set_aside: int, max_window: int) -> l2.AccessWindow:
    """The window each curve sets: none; the region at hitRatio 1.0; the seed's tuning (num_bytes fixed at
    the set-aside, hitRatio = set-aside / region, both capped at the region)."""
    if "no window" in policy:
        return l2.NO_WINDOW
    if policy == "hit_ratio 1.0":
        return l2.persisting_window(base_ptr, min(region, max_window), 1.0)
    return l2.persisting_window(base_ptr, min(region, set_aside, max_window), min(1.0, set_aside / region))


def check_sliding_window(persistent: np.ndarray, streaming: np.ndarray, init_p: np.ndarray, init_s: np.ndarray,
                         freq: int, what: str) -> None:
    """After one launch: streaming doubled exactly; each persistent element is its (odd) start value times 2^k,
    1 <= k <= the threads that updated it (racing updates may be lost, as in the seed); the rest untouched."""
    if not np.array_equal(streaming, init_s * np.uint32(2)):
        raise VerificationError(f"{what}: the streaming region is not exactly doubled")
    if not np.array_equal(persistent[freq:], init_p[freq:]):
        raise VerificationError(f"{what}: elements past the persisting region changed")
    count = -(-streaming.size // freq)
    v = persistent[:freq].astype(np.uint64)
    start = init_p[:freq].astype(np.uint64)
    low = v & (~v + np.uint64(1)) & np.uint64(0xFFFFFFFF)  # lowest set bit = 2^k (start values are odd)
    k = np.where(v == 0, 32, np.log2(np.maximum(low, 1)).astype(np.int64))
    ok = (k >= 1) & (k <= min(count, 32))
    shifted = np.where(k < 32, v >> np.minimum(k, 31).astype(np.uint64), 0)
    mask = np.where(k < 32, (np.uint64(1) << (32 - np.minimum(k, 31)).astype(np.uint64)) - np.uint64(1), 0)
    ok &= (k == 32) | (shifted == (start & mask))
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise VerificationError(f"{what}: persistent[{i}] = {int(v[i])} is not {int(start[i])} * 2^k, "
                                f"1 <= k <= {count}")


def cases(session, params):
    import cupy

    reason = l2.unsupported_reason(session.device)
    if reason:
        raise GpumemlabError(reason)
    lim = l2.limits()
    set_aside = lim["max_set_aside"]
    fractions = params["quick_fractions"] if session.quick else params["fractions"]
    regions = [max(4 * K.BLOCK, int(f * set_aside) // 4 * 4) for f in fractions]
    data_size = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 4, "l2_persist")
    data_size -= data_size % K.BLOCK
    if data_size >= 2**32:
        data_size = 2**32 - K.BLOCK  # the kernel's indices are 32-bit
    gen = np.random.default_rng(session.seed)
    init_p = (gen.integers(0, 2**31, max(regions) // 4, dtype=np.uint32) | 1)  # odd: see check_sliding_window
    init_s = gen.integers(0, 2**32, data_size, dtype=np.uint32)
    persistent, streaming = cupy.asarray(init_p), cupy.asarray(init_s)
    grid = blocks_for(data_size, K.BLOCK)
    stream = session.stream.handle
    prev_limit, prev_window = l2.persisting_limit(), l2.get_window(stream)
    moved = dict(reads=8 * data_size, writes=8 * data_size)  # each thread reads and writes one int of each region

    def runner(window, freq):
        kernel = runtime.get_kernel(K.SLIDING_WINDOW)

        def run():
            if window is not None:  # None: leave the stream's window alone
                l2.set_window(window, stream)  # applies to the launch that follows on this stream
            runtime.launch(kernel, grid, K.BLOCK, persistent, streaming, np.uint32(data_size), np.uint32(freq))
        return run

    def checker(run, freq, what):
        def check():
            persistent.set(init_p)
            streaming.set(init_s)
            run()
            check_sliding_window(persistent.get(), streaming.get(), init_p, init_s, freq, what)
        return check

    def case(policy, region):
        freq = region // 4
        window = None if policy == AFTER else window_for(policy, persistent.data.ptr, region, set_aside,
                                                          lim["max_window"])
        run = runner(window, freq)
        session.stream.sync()
        # "no window" runs as a program without L2 controls would: the limit as found; the others with the
        # whole set-aside reserved (which, measured, also takes it from normal accesses)
        l2.set_persisting_limit(prev_limit if policy in ("no window", AFTER) else set_aside)
        l2.reset_persisting_lines()  # every case starts with no persisting lines left by the one before
        return Case(policy, run, checker(run, freq, f"{policy} at {region / MIB:.1f} MiB"),
                    params=dict(region_mib=round(region / MIB, 3), region_over_set_aside=round(region / set_aside, 3),
                                set_aside_mib=set_aside / MIB, streaming_mib=4 * data_size / MIB),
                    cold_l2=False, ceiling=None,  # served from L2 by design: no DRAM copy ceiling applies
                    extra=dict(window=vars(window) if window else None), **moved)

    try:
        for region in regions:
            for policy in POLICIES:
                yield case(policy, region)
    finally:  # leave the device as found: no window, the previous limit, no persisting lines
        session.stream.sync()
        l2.set_window(prev_window, stream)
        l2.set_persisting_limit(prev_limit)
        l2.reset_persisting_lines()
    # proof that the reset worked: the no-window timing at the set-aside again, after everything was restored
    at = min(regions, key=lambda r: abs(r - set_aside))
    after = case(AFTER, at)
    after.extra.update(limit_after=l2.persisting_limit(), window_after=vars(l2.get_window(stream)),
                       limit_before=prev_limit)
    yield after


def derive(records, session):
    before = {r.params["region_mib"]: r for r in records if r.variant == "no window"}
    for r in records:
        if r.variant == AFTER and r.params["region_mib"] in before:
            r.extra["vs_before_pct"] = 100.0 * before[r.params["region_mib"]].median_s / r.median_s


def findings(records):
    by = {(r.variant, r.params["region_mib"]): r for r in records}
    regions = sorted({r.params["region_over_set_aside"]: r.params["region_mib"] for r in records}.items())

    def gains(policy, baseline):
        return [(f, by[(baseline, mib)].median_s / by[(policy, mib)].median_s) for f, mib in regions
                if (policy, mib) in by and (baseline, mib) in by]

    def span(pairs):
        return ", ".join(f"{f:.2f}x set-aside: {g:.2f}x" for f, g in pairs)

    reserved = gains("set-aside, no window", "no window")
    if reserved:
        yield "reserving the whole set-aside without a window, speed vs the limit as found: " + span(reserved)
    for baseline, what in (("set-aside, no window", "the seed's setting (set-aside reserved, no window)"),
                           ("no window", "the limit as found, no window")):
        for policy in ("hit_ratio 1.0", "tuned hit_ratio"):
            pairs = gains(policy, baseline)
            if pairs:
                inside = [g for f, g in pairs if f <= 1.0]
                yield (f"{policy} vs {what}: " + span(pairs) +
                       (f"; at or below the set-aside {min(inside):.2f}-{max(inside):.2f}x" if inside else ""))
    for r in records:
        if r.variant == AFTER and "vs_before_pct" in r.extra:
            yield (f"after the reset (limit {r.extra['limit_after']} B, window {r.extra['window_after']['num_bytes']} "
                   f"B) the no-window run takes {100 / r.extra['vs_before_pct'] * 100:.1f}% of its earlier time")


EXPERIMENT = Experiment(
    name="l2_persist",
    title="L2 persisting access window: the sliding-window benchmark at this GPU's set-aside",
    claims=(Claim("A100 with a 30 MB set-aside: hitRatio 1.0 gives +50% when the persisting region equals the "
                  "set-aside and about -10% from thrashing once it exceeds it; with num_bytes fixed at the "
                  "set-aside and hitRatio = set-aside / region performance is good at every size.",
                  seed("003", "Best Practices 9.2.2.2, sliding-window benchmark (figures 9 and 10)")),),
    cases=cases,
    params=dict(fractions=[1 / 3, 1 / 2, 2 / 3, 5 / 6, 1.0, 1.25, 1.5, 2.0], quick_fractions=[1 / 2, 1.0, 2.0],
                l2_factor=8.0),
    naive="no window",
    group_by=("region_mib",),
    modern_note="The set-aside and window limits are read from the device (cudaDevAttrMaxPersistingL2CacheSize, "
                "cudaDevAttrMaxAccessPolicyWindowSize); regions run from 1/3 to 2x the set-aside, the streaming "
                "region is l2_factor x L2. Timings are steady state (L2 not flushed between launches); "
                "persisting lines are reset before each case. 'no window' keeps the set-aside limit as found "
                "(what a program without L2 controls gets); the other curves reserve the maximum set-aside, and "
                "'set-aside, no window' shows what that reservation alone costs normal accesses. Why it costs so much "
                "on an H100 (ncu per point with tools/l2_hit_rates.py, docs/notes/l2-hit-rates-h100.md): not "
                "hits - the L2 hit rate with the whole set-aside reserved is the one with limit 0 - but DRAM "
                "rate: the same DRAM bytes move at a far lower rate with the full reserve (the notes' limit "
                "sweep shows where it sets in), plus write-backs of a small re-read region; the windows cut "
                "the DRAM bytes but run at that lower rate, hence below the device as found.",
    plot=Plot(x="region_over_set_aside", y="gbps", series="variant",
              title="l2_persist: GB/s (read+write) vs persisting region / set-aside"),
    findings=findings,
    derive=derive,
    requires=l2.unsupported_reason,
    order=60,
)
