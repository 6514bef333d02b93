#!/usr/bin/env python3
"""persist_l2's measured hitRatio table: from the l2_persist records of committed runs, per device.

    python3 tools/l2_table.py docs/results/DEVICE/results.json.xz ...            # markdown, one table per run
    python3 tools/l2_table.py --install docs/results/DEVICE/results.json.xz ...  # also into the package's
                                                                              # kernels/tuned/l2_persist.json

Per persisting-region / set-aside ratio the run measured (the table's "shape"): both windows of the experiment
(hitRatio 1.0 and the seed's tuned hitRatio) as points against no window with the set-aside as found (the
baseline), the faster of the two as "chosen", and under "decisions" what persist_l2 takes there
(``experiments.l2_persist.measured_choices``: the tuned hitRatio only when it is faster beyond the p10-p90 noise).
A run without l2_persist records is skipped with a note on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILY, METRIC = "l2_persist", "gbps"
ABOUT = ("persist_l2's hitRatio per persisting region / set-aside ratio (the shape), from the l2_persist "
         "experiment of a committed run: points are its two windows (hitRatio 1.0, the seed's tuned hitRatio), the "
         "baseline is no window with the set-aside limit as found, chosen is the faster window, decisions is what "
         "persist_l2 uses (the tuned hitRatio only when faster beyond the p10-p90 noise). Written by "
         "`python3 tools/l2_table.py --install RESULTS.json` (measured: never edit by hand).")
DEVICE_KEYS = ("name", "cc", "sm_count", "l2_bytes", "persisting_l2_max_bytes", "access_policy_max_window_bytes")


def shape(ratio: float) -> str:
    return format(ratio, "g")


def source_name(path) -> str:
    """The results file as the command names it: relative to the repository when it lies inside it."""
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def run_date(run, experiment: str) -> str | None:
    """When ``experiment`` was measured: its merged run's date, else the run's own."""
    for merged in run.meta.get("merged_runs", []):
        if experiment in merged.get("experiments", []):
            return merged.get("date")
    return run.meta.get("date")


def _times(rec) -> dict:
    t = rec.time_s
    return dict(shape=shape(rec.params["region_over_set_aside"]), round="screen", median_s=t["median"],
                p10_s=t["p10"], p90_s=t["p90"], samples_n=t["n"])


def point(rec, base) -> dict:
    w = rec.extra["window"]
    return dict(name=rec.variant, label=rec.variant, params=dict(hit_ratio=w["hit_ratio"], num_bytes=w["num_bytes"]),
                **_times(rec), gbps=rec.gbps if rec.verified else None,
                ratio_to_baseline=base.median_s / rec.median_s if base and rec.verified else None,
                verified=rec.verified)


def entry(run, source: str) -> dict | None:
    """The tuned-table entry of ``run``'s device (None without l2_persist records)."""
    from gpumemlab.experiments.l2_persist import HIT1, TUNED, measured_choices

    recs = [r for r in run.results if r.experiment == FAMILY]
    choices = measured_choices(recs)
    if not choices:
        return None
    ratios = {c["ratio"] for c in choices}
    base = {r.params["region_over_set_aside"]: r for r in recs if r.variant == "no window" and r.verified}
    points = [point(r, base.get(r.params["region_over_set_aside"])) for r in recs
              if r.variant in (HIT1, TUNED) and r.params["region_over_set_aside"] in ratios]
    chosen = {}
    for c in choices:
        pool = [p for p in points if p["shape"] == shape(c["ratio"]) and p["verified"]]
        best = max(pool, key=lambda p: p[METRIC])
        chosen[best["shape"]] = {k: best[k] for k in ("name", "label", "params", METRIC, "ratio_to_baseline", "round")}
    return dict(
        device={k: run.device[k] for k in DEVICE_KEYS if k in run.device}, date=run_date(run, FAMILY),
        command=f"python3 tools/l2_table.py --install {source}",
        space=dict(params=dict(policy=[HIT1, TUNED]), restrictions=[],
                   derive=dict(hit_ratio="1.0 | min(1, set-aside / region), window min(region, set-aside)")),
        baseline=dict(name="no window", points=[dict(_times(r), gbps=r.gbps) for r in base.values()
                                                if r.params["region_over_set_aside"] in ratios]),
        points=points, chosen=chosen,
        decisions={shape(c["ratio"]): {k: v for k, v in c.items() if k != "ratio"} for c in choices})


def markdown(e: dict) -> str:
    """One row per measured ratio: the faster window, by how much and whether it is a tie, what persist_l2 uses."""
    rows = [f"{e['device']['name']} ({e['date']}, {e['command']}):", "",
            "| region / set-aside | faster window | its speed-up over the other | verdict | persist_l2 uses | "
            "hitRatio | speed vs no window |", "|---|---|---|---|---|---|---|"]
    for s, d in e["decisions"].items():
        vs = f"{d['vs_no_window']:.2f}x ({d['vs_no_window_verdict']})" if d["vs_no_window"] else "-"
        rows.append(f"| {s} | {d['fastest']} | {d['speedup']:.3f}x | {d['verdict']} | {d['policy']} | "
                    f"{d['hit_ratio']:.3f} | {vs} |")
    return "\n".join(rows) + "\n"


def main(argv) -> int:
    from gpumemlab.bench.records import RunResults
    from gpumemlab.errors import ResultsError
    from gpumemlab.ops.l2 import TUNED_PATH
    from gpumemlab.tune import table

    install = argv[:1] == ["--install"]
    paths = argv[1:] if install else argv
    if not paths:
        print("usage: python3 tools/l2_table.py [--install] RESULTS.json ...", file=sys.stderr)
        return 2
    try:
        runs = [(path, RunResults.load(Path(path))) for path in paths]  # every file read before anything is written
    except ResultsError as exc:
        print(exc, file=sys.stderr)
        return 2
    for path, run in runs:
        e = entry(run, source_name(path))
        if e is None:
            print(f"{path}: no l2_persist records, skipped", file=sys.stderr)
            continue
        print(markdown(e))
        if install:
            table.install(TUNED_PATH, FAMILY, ABOUT, METRIC, e)
            print(f"installed {e['device']['name']} into {TUNED_PATH.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
