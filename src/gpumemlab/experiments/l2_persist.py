"""Persisting L2 accesses: the Best Practices Guide's sliding-window benchmark, scaled to this GPU's set-aside."""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from ..errors import GpumemlabError, VerificationError
from ..gpu import l2, runtime
from ..kernels import blocks_for
from ..kernels import l2 as K
from ..ops.l2 import HIT1, TUNED
from ._cite import Finding, Num, Quoted, field, q, sentence
from ._declare import Case, Claim, Experiment, Plot, seed
from ._model import record_verdict

MIB = 2**20
POLICIES = ("no window", "set-aside, no window", HIT1, TUNED)  # the last two: the windows persist_l2 chooses from
AFTER = "no window, after reset"
VALUE = attrgetter("value")  # orders quoted Nums by what they quote


def window_for(policy: str, base_ptr: int, region: int, set_aside: int, max_window: int) -> l2.AccessWindow:
    """The window each curve sets: none; the region at hitRatio 1.0; the seed's tuning (num_bytes fixed at
    the set-aside, hitRatio = set-aside / region, both capped at the region)."""
    if "no window" in policy:
        return l2.NO_WINDOW
    if policy == HIT1:
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


def measured_choices(records) -> list[dict]:
    """Per persisting region / set-aside ratio, ascending: which of the two windows was faster (median), the
    other's time over its time (``speedup``), the verdict of the faster against the other from their p10-p90
    spreads, and the ``policy`` persist_l2 takes there: the tuned hitRatio only when it is faster beyond the
    noise, else hitRatio 1.0 (the simpler one); ``hit_ratio`` is that window's measured value and
    ``vs_no_window`` the speed of that window against the device as found (no window's time over its time)."""
    by = {(r.variant, r.params["region_over_set_aside"]): r for r in records if r.verified}
    out = []
    for ratio in sorted({f for v, f in by if v == HIT1} & {f for v, f in by if v == TUNED}):
        hit1, tuned = by[(HIT1, ratio)], by[(TUNED, ratio)]
        fast, slow = (tuned, hit1) if tuned.median_s < hit1.median_s else (hit1, tuned)
        verdict = record_verdict(fast, slow)
        policy = TUNED if fast is tuned and verdict == "faster" else HIT1
        chosen = by[(policy, ratio)]
        base = by.get(("no window", ratio))
        out.append(dict(ratio=ratio, fastest=fast.variant, speedup=slow.median_s / fast.median_s, verdict=verdict,
                        policy=policy, hit_ratio=chosen.extra["window"]["hit_ratio"],
                        vs_no_window=base.median_s / chosen.median_s if base else None,
                        vs_no_window_verdict=record_verdict(chosen, base) if base else None))
    return out


def derive(records, session):
    before = {r.params["region_mib"]: r for r in records if r.variant == "no window"}
    for r in records:
        if r.variant == AFTER and r.params["region_mib"] in before:
            r.extra["vs_before_pct"] = 100.0 * before[r.params["region_mib"]].median_s / r.median_s
    choice = {c["ratio"]: c for c in measured_choices(records)}
    for r in records:  # what persist_l2 would take at this ratio if this run were its table
        c = choice.get(r.params["region_over_set_aside"])
        if c and r.variant in (HIT1, TUNED):
            r.extra["persist_l2"] = dict(policy=c["policy"], hit_ratio=c["hit_ratio"], verdict=c["verdict"],
                                         chosen=r.variant == c["policy"])


def _joined(parts) -> Finding:
    """Findings joined with ", " into one (their quoted numbers kept)."""
    out = []
    for i, p in enumerate(parts):
        out += [", ", p] if i else [p]
    return sentence(*out)


def _median(rec) -> Num:
    return field(rec, "time_s", "median")


def _at(rec) -> Quoted:
    return q(field(rec, "params", "region_over_set_aside"), ".2f")


def findings(records):
    by = {(r.variant, r.params["region_mib"]): r for r in records}
    regions = sorted({r.params["region_over_set_aside"]: r.params["region_mib"] for r in records}.items())

    def gains(policy, baseline):
        """[(record of policy, its speed over baseline's as a Num)] in region order."""
        return [(by[(policy, mib)], _median(by[(baseline, mib)]) / _median(by[(policy, mib)])) for _, mib in regions
                if (policy, mib) in by and (baseline, mib) in by]

    def span(pairs):
        return _joined(sentence(_at(r), "x set-aside: ", q(g, ".2f"), "x") for r, g in pairs)

    reserved = gains("set-aside, no window", "no window")
    if reserved:
        yield sentence("reserving the whole set-aside without a window, speed vs the limit as found: ", span(reserved))
    for baseline, what in (("set-aside, no window", "the seed's setting (set-aside reserved, no window)"),
                           ("no window", "the limit as found, no window")):
        for policy in (HIT1, TUNED):
            pairs = gains(policy, baseline)
            if pairs:
                inside = [g for r, g in pairs if r.params["region_over_set_aside"] <= 1.0]
                tail = (("; at or below the set-aside ", q(min(inside, key=VALUE), ".2f"), "-",
                         q(max(inside, key=VALUE), ".2f"), "x") if inside else ())
                yield sentence(f"{policy} vs {what}: ", span(pairs), *tail)
    chosen = list(_choice_sentences(records))
    if chosen:
        yield sentence("persist_l2's hitRatio if this run were its table (tools/l2_table.py), per region / set-aside: ",
                       _joined(chosen))
    for r in records:
        if r.variant == AFTER and ("no window", r.params["region_mib"]) in by and "limit_after" in r.extra:
            before = by[("no window", r.params["region_mib"])]
            yield sentence("after the reset (limit ", q(field(r, "extra", "limit_after"), ".0f"), " B, window ",
                           q(field(r, "extra", "window_after", "num_bytes"), ".0f"),
                           " B) the no-window run takes ", q(_median(r) / _median(before) * 100, ".1f"),
                           "% of its earlier time")


def _choice_sentences(records):
    """Per measured ratio: the window persist_l2 takes, the faster window and by how much, tie or not."""
    by = {(r.variant, r.params["region_over_set_aside"]): r for r in records if r.verified}
    for c in measured_choices(records):
        fast = by[(c["fastest"], c["ratio"])]
        slow = by[(TUNED if c["fastest"] == HIT1 else HIT1, c["ratio"])]
        yield sentence(_at(fast), "x: ", c["policy"], " (", c["fastest"], " faster by ",
                       q(_median(slow) / _median(fast), ".3f"), "x, ",
                       "a tie within the noise" if c["verdict"] == "tie" else "beyond the noise", ")")


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
                "on an H100 (ncu per point, docs/notes/l2-hit-rates-h100.md): not "
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
