"""Number formatting and the rows shared by the markdown report and the terminal summary."""

from __future__ import annotations

from ..experiments._hardware import MEASURED_ON, SIZES

HIDDEN_PARAMS = {"n", "mib"}  # sizes shown in the section header, not in every row


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds:.3f} s"


def fmt_num(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def fmt_params(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items() if k not in HIDDEN_PARAMS) or "-"


def fmt_model(model: dict | None) -> str:
    """The analyzer's prediction in a few characters: sectors/request, wavefronts, OP/B..."""
    if not model:
        return "-"
    if "error" in model:
        return "n/a"
    parts = []
    if model.get("sectors_per_request") is not None:
        parts.append(f"{model['sectors_per_request']:g} sect/req")
    if model.get("efficiency_pct") is not None:
        parts.append(f"{model['efficiency_pct']:.0f}% eff")
    if model.get("wavefronts") is not None:
        parts.append(f"{model['wavefronts']} wavefronts")
    if model.get("ways") is not None and model.get("ways", 1) > 1:
        parts.append(f"{model['ways']}-way")
    if model.get("op_per_byte") is not None:
        parts.append(f"{model['op_per_byte']:g} OP/B")
    if model.get("occupancy_pct") is not None:
        parts.append(f"{model['occupancy_pct']:.0f}% occ")
    return ", ".join(parts) or "-"


def claim_lines(info: dict) -> list[str]:
    """What the sources reported, each with its source: seed text apart from outside references.

    ``info`` is an experiment's entry of results.json; runs written before claims had sources carry only
    ``seed`` and ``seed_claim``."""
    claims = info.get("claims")
    if not claims:
        return [f"Seed: {info.get('seed', '')}", f"The seed reported: {info.get('seed_claim', '')}"]
    return [f"{'The seed reported' if c.get('seed') else 'Outside reference'} ({c['source']}): {c['text']}"
            for c in claims]


def _run_value(size, device: dict, ceilings: dict, records: list) -> str | None:
    """This run's value of ``size`` as "label value unit" (a range when the records vary), None if absent."""
    values = size.read(device, ceilings, records)
    if not values:
        return None
    low, high = format(min(values), size.spec), format(max(values), size.spec)
    return " ".join(filter(None, (size.label, low if low == high else f"{low}-{high}", size.unit)))


def seed_hardware_line(name: str, device: dict, ceilings: dict, records: list) -> str | None:
    """"Seed hardware: <GPU> (<sizes>: <source>; ...) - this run: <device> (<the same sizes>)" for experiment
    ``name``: the GPU its seed claims were measured on, each size with its source (seed section or outside
    fact), next to this run's values read from results.json; None where the seed names no hardware."""
    measured = MEASURED_ON.get(name)
    if measured is None:
        return None
    by_source: dict = {}  # source -> kind -> the texts it states (one label for several figures of a kind)
    for f in measured.figures:
        by_source.setdefault(f.source, {}).setdefault(f.kind, []).append(f.text)
    seed_side = "; ".join(
        ", ".join(f"{SIZES[kind].label} {', '.join(texts)}" for kind, texts in by_kind.items())
        + f": {'' if src.seed else 'outside, '}{src.cite}" for src, by_kind in by_source.items())
    kinds = dict.fromkeys(f.kind for f in measured.figures)
    ours = [v for v in (_run_value(SIZES[k], device, ceilings, records) for k in kinds) if v]
    run_side = f"{device.get('name', '?')} ({', '.join(ours)})" if ours else device.get("name", "?")
    return f"Seed hardware: {measured.hardware.gpu} ({seed_side}) - this run: {run_side}"


SUMMARY_COLUMNS = ("experiment", "variant", "params", "median", "GB/s", "GFLOP/s", "% ceiling",
                   "speedup", "model", "ok", "flags")
FLAGS_NOTE = ("Flags: 'median far from min' - the median stayed more than 5% above the fastest sample after one "
              "re-measure; 'noisy' - the timer hit its time or sample limit before the p10-p90 spread fell to 1% of "
              "the median; 'throttled' - NVML saw the clocks held down (power or thermal) while it was timed.")


def merged_lines(meta: dict, code=lambda text: f"`{text}`", escape=str) -> list[str]:
    """One sentence per run whose records were merged into this document (``gpumemlab merge``): which
    experiments, measured by which command (``code`` marks it up) and when; empty for a single run."""
    return [escape(f"{', '.join(m.get('experiments', []))}: from ") + code(str(m.get("command", "?")))
            + escape(f" ({m.get('date') or 'date not recorded'})") for m in meta.get("merged_runs", [])]


def run_of(experiment: str, meta: dict) -> str:
    """The run that measured ``experiment``'s records: a merged run that lists it, else this document's own."""
    for m in meta.get("merged_runs", []):
        if experiment in m.get("experiments", []):
            return f"{m.get('command', '?')} ({m.get('date') or 'date not recorded'})"
    return f"{meta.get('command', '?')} ({meta.get('date') or 'date not recorded'})"


def ceiling_how(c: dict, meta: dict) -> str:
    """How a ceiling's value was measured: its own measurement, or the record that raised it above that (experiment,
    variant, parameters and run) with what the ceiling measurement itself gave."""
    if not c.get("set_by"):
        return c.get("how", "")
    s = c["set_by"]
    params = fmt_params(s.get("params") or {})
    return (f"raised by {s['experiment']} / {s['variant']}{f' ({params})' if params != '-' else ''}, run "
            f"{run_of(s['experiment'], meta)}; the ceiling's own measurement, {c.get('how', '?')}, "
            f"gave {fmt_num(c.get('measured_as'))} {c.get('unit', '')}")


def flag_text(r) -> str:
    return ", ".join(getattr(r, "flags", None) or []) or "-"


def summary_row(r) -> tuple[str, ...]:
    spread = r.time_s.get("rel_spread")
    median = fmt_time(r.median_s) + (f" ±{100 * spread / 2:.0f}%" if spread else "")
    pct = f"{r.pct_of_ceiling:.0f}% {r.ceiling.replace('_gbps', '').replace('_gflops', '')}" if r.pct_of_ceiling else "-"
    return (r.experiment, r.variant + (" (baseline)" if r.kind == "baseline" else ""), fmt_params(r.params), median,
            fmt_num(r.gbps), fmt_num(r.gflops, 0), pct,
            f"{r.speedup_vs_naive:.2f}x" if r.speedup_vs_naive else "-", fmt_model(r.model),
            "yes" if r.verified else "no", flag_text(r))
