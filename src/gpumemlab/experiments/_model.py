"""Helpers for experiment records: the analyzer's prediction for the main access, and the
sentences of interleaved head-to-head comparisons."""

from __future__ import annotations

KEYS_GLOBAL = ("requests", "sectors", "sectors_per_request", "efficiency_pct", "verdict")
KEYS_SHARED = ("wavefronts", "ideal_wavefronts", "conflicts", "ways", "verdict")


def predict_global(access: str, decl: str, **kw) -> dict | None:
    try:
        from ..model import analyze_global

        res = analyze_global(access, decl, **kw)
    except Exception as exc:  # the model is advisory here: never fail a measurement for it
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"access": access, "decl": decl, **{k: res.get(k) for k in KEYS_GLOBAL}}


def predict_shared(access: str, decl: str, **kw) -> dict | None:
    try:
        from ..model import analyze_shared

        res = analyze_shared(access, decl, **kw)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"access": access, "decl": decl, **{k: res.get(k) for k in KEYS_SHARED}}


def head_to_head_findings(label, rec) -> list:
    """Sentences for the interleaved comparisons stored in ``rec.extra["head_to_head"]`` (``label``: a str or a
    Finding)."""
    from ._cite import field, q, sentence

    out = []
    for name, h in (rec.extra.get("head_to_head") or {}).items():
        def pct(key, name=name):
            return q(100 * field(rec, "extra", "head_to_head", name, key), ".1f")
        out.append(sentence(label, f" vs {name}, interleaved samples: ", pct("speedup"), "% of its speed (p10-p90 ",
                            pct("p10"), "-", pct("p90"), "%, ", q(field(rec, "extra", "head_to_head", name, "rounds"),
                                                                  ".0f"), f" rounds): {verdict(h)}"))
    return out


def verdict(h: dict) -> str:
    """A ratio whose p10-p90 range of per-round ratios contains 1 is a tie, never a win or a loss."""
    if h["p10"] <= 1.0 <= h["p90"]:
        return "a tie within the noise"
    return "faster" if h["p10"] > 1.0 else "slower"


VERDICTS = ("faster", "a tie within the noise", "slower")


def store_ratios(records, key: str, baseline_of) -> None:
    """On each of our records timed interleaved against ``baseline_of(record)``: ``extra[key]`` = that speed-up
    (t_baseline / t_ours, the median of the rounds) and ``extra["verdict"]`` its verdict."""
    for r in records:
        h = (r.extra.get("head_to_head") or {}).get(baseline_of(r))
        if r.kind == "kernel" and h:
            r.extra[key] = h["speedup"]
            r.extra["verdict"] = verdict(h)


def shape_set_summary(records, key: str, baseline: str, name_of):
    """'N shapes: geometric mean Rx BASELINE, worst NAME Rx; faster a, a tie within the noise b, slower c' over
    records that :func:`store_ratios` filled (``name_of(record)``: the worst one's name, a str or a Finding)."""
    from ._cite import count, field, geomean, q, sentence

    worst = min(records, key=lambda r: r.extra[key])
    tally = []
    for v in VERDICTS:
        tally += [", " if tally else "", f"{v} ", q(count(r for r in records if r.extra["verdict"] == v), ".0f")]
    return sentence(q(count(records), ".0f"), " shapes: geometric mean ",
                    q(geomean([field(r, "extra", key) for r in records]), ".2f"), f"x {baseline}, worst ",
                    name_of(worst), " ", q(field(worst, "extra", key), ".2f"), "x; ", *tally)


def record_verdict(rec, base) -> str:
    """"faster", "slower" or "tie" for ``rec`` against ``base`` (separately timed records): the time ratio's range
    runs from rec's p10 over base's p90 to rec's p90 over base's p10; a range that contains 1 is a tie."""
    lo = rec.time_s["p10"] / base.time_s["p90"]
    hi = rec.time_s["p90"] / base.time_s["p10"]
    if lo <= 1.0 <= hi:
        return "tie"
    return "faster" if hi < 1.0 else "slower"


def overlap(a, b) -> bool:
    """Two records' p10-p90 time ranges overlap: their difference is inside the noise (a tie)."""
    return record_verdict(a, b) == "tie"


def predict_occupancy(spec, threads: int, dyn_smem: int = 0) -> dict:
    """The analyzer's occupancy for a catalog kernel (registers and shared memory from its ptxas
    report or cubin) next to the driver's answer (cuOccupancyMaxActiveBlocksPerMultiprocessor)."""
    from ..gpu import runtime
    from ..gpu.compile import resource_usage
    from ..model import occupancy

    info = runtime.device_info()
    usage = resource_usage(spec, info["arch"])
    blocks = runtime.max_active_blocks(spec, threads, dyn_smem)
    smem = usage.shared_bytes + dyn_smem
    # above 48 KiB a launch only works once the kernel opted in (runtime.set_max_dynamic_shared)
    m = occupancy(threads, usage.registers, smem, cc=tuple(info["cc"]), opt_in=smem > 48 * 1024)
    return dict(registers=usage.registers, shared_bytes=usage.shared_bytes, local_bytes=usage.local_bytes,
                spill_store_bytes=usage.spill_store_bytes, spill_load_bytes=usage.spill_load_bytes,
                occupancy_pct=m["occupancy_pct"], blocks_per_sm=m["blocks_per_sm"], limiters=m["limiters"],
                driver_blocks_per_sm=blocks,
                driver_occupancy_pct=100.0 * blocks * threads / info["max_threads_per_sm"])
