"""results.json -> report.csv: one row per record, numbers at full precision (seconds, GB/s, GFLOP/s)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..bench.records import Record, RunResults

COLUMNS = ("experiment", "variant", "params", "samples", "median_s", "min_s", "max_s", "p10_s", "p90_s", "gbps",
           "gflops", "ceiling", "ratio_to_ceiling", "kind", "verified")


def row(r: Record) -> dict:
    t = r.time_s
    return dict(experiment=r.experiment, variant=r.variant,
                params=";".join(f"{k}={v}" for k, v in r.params.items()),
                samples=len(t.get("samples") or ()), median_s=t["median"], min_s=t.get("min"), max_s=t.get("max"),
                p10_s=t.get("p10"), p90_s=t.get("p90"), gbps=r.gbps, gflops=r.gflops, ceiling=r.ceiling,
                ratio_to_ceiling=None if r.pct_of_ceiling is None else r.pct_of_ceiling / 100,
                kind=r.kind, verified=r.verified)


def render(res: RunResults) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(row(r) for r in res.results)  # None -> empty cell
    return buf.getvalue()


def write_csv(res: RunResults, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.csv"
    path.write_text(render(res))
    return path
