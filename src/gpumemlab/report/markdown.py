"""Render a RunResults into report.md."""

from __future__ import annotations

from ..bench.records import RunResults
from .format import (FLAGS_NOTE, SUMMARY_COLUMNS, ceiling_how, claim_lines, fmt_num, fmt_time, merged_lines,
                     seed_hardware_line, summary_row)


def _table(headers, rows) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(out)


def device_line(dev: dict) -> str:
    cc = ".".join(map(str, dev.get("cc", [])))
    l2 = dev.get("l2_bytes", 0) / 2**20
    mem = dev.get("total_memory_bytes", 0) / 2**30
    return (f"{dev.get('name', '?')} (compute capability {cc}, {dev.get('sm_count', '?')} SMs, "
            f"{l2:.0f} MiB L2, {mem:.0f} GiB)")


def render(res: RunResults, plots: dict[str, str] | None = None) -> str:
    plots = plots or {}
    meta = res.meta
    lines = ["# gpumemlab report", "",
             f"- Device: {device_line(res.device)}",
             f"- Command: `{meta.get('command', '?')}`",
             f"- Date: {meta.get('date', '?')}; gpumemlab {meta.get('version', '?')}; "
             f"wall time {fmt_num(meta.get('wall_s'), 0)} s"]
    lines += [f"- Merged from another run of this GPU model: {m}" for m in merged_lines(meta)] + [""]
    if res.ceilings:
        lines += ["## Ceilings", "",
                  _table(("ceiling", "value", "how"),
                         [(k, f"{fmt_num(v['value'])} {v['unit']}", ceiling_how(v, meta))
                          for k, v in res.ceilings.items()]),
                  ""]
    lines += ["## Summary", "",
              "Median time (± half the p10-p90 spread), effective bandwidth (bytes each algorithm must move, "
              "read + write), percentage of the named ceiling, speedup over the experiment's naive variant, "
              "and the analyzer's prediction for the main access. " + FLAGS_NOTE, "",
              _table(SUMMARY_COLUMNS, [summary_row(r) for r in res.results]), ""]
    for name, info in res.experiments.items():
        recs = [r for r in res.results if r.experiment == name]
        if info.get("skipped"):
            lines += [f"## {name}: {info.get('title', '')}", "", f"- Not run on this GPU: {info['skipped']}", ""]
        if not recs:
            continue
        lines += [f"## {name}: {info.get('title', '')}", ""] + [f"- {line}" for line in claim_lines(info)]
        hardware = seed_hardware_line(name, res.device, res.ceilings, recs)
        if hardware:
            lines.append(f"- {hardware}")
        for finding in info.get("findings") or []:
            lines.append(f"- Measured here: {finding}")
        if info.get("modern_note"):
            lines.append(f"- Why it differs on modern GPUs: {info['modern_note']}")
        if info.get("wall_s") is not None:
            lines.append(f"- Run time of the experiment: {fmt_num(info['wall_s'], 0)} s (checks, warm-up and timing)")
        lines.append("")
        rows = [(r.variant, ", ".join(f"{k}={v}" for k, v in r.params.items()), fmt_time(r.median_s),
                 fmt_time(r.time_s.get("min")), fmt_time(r.time_s.get("max")), r.time_s.get("n"),
                 fmt_num(r.gbps), fmt_num(r.gflops, 0),
                 f"{r.speedup_vs_naive:.2f}x" if r.speedup_vs_naive else "-",
                 "; ".join(f"{b}: " + (f"{v['ratio']:.2f}x" if v.get("ratio") is not None else "-")
                           for b, v in r.baselines.items()) or "-")
                for r in recs]
        lines += [_table(("variant", "params", "median", "min", "max", "samples", "GB/s", "GFLOP/s",
                          "speedup", "vs baseline"), rows), ""]
        if name in plots:
            lines += [f"![{name}]({plots[name]})", ""]
    if res.errors:
        lines += ["## Errors", ""] + [f"- {e['experiment']}: {e['error']}" for e in res.errors] + [""]
    return "\n".join(lines)
