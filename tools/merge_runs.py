"""Merge bench runs of one GPU model into one results.json, each experiment's records from one run.

    python tools/merge_runs.py OUT_DIR BASE.json [MORE.json ...]

The merge is gpumemlab.suite.merge.merge_runs (each experiment whole from the first run that has records of it,
a failed experiment with its error, BASE's meta, device and ceilings, provenance in ``meta.merged_runs``); the
report is then rendered into OUT_DIR. With one run it re-renders that run with the current findings and texts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpumemlab.bench.records import RunResults
from gpumemlab.errors import UsageError
from gpumemlab.report.write import write_report
from gpumemlab.suite.merge import merge_runs, missing_experiments


def merge(runs: list[RunResults]) -> RunResults:
    try:
        out = merge_runs(runs)
    except UsageError as exc:
        raise SystemExit(f"merge_runs: {exc}") from None
    missing = missing_experiments(out)
    if missing:
        print(f"merge_runs: no records of {', '.join(missing)}", file=sys.stderr)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder for results.json, report.md, report.html and plots")
    ap.add_argument("runs", type=Path, nargs="+", help="results.json files, the base first")
    args = ap.parse_args(argv)
    res = merge([RunResults.load(p) for p in args.runs])
    write_report(res, args.out)
    print(f"{args.out}: {len(res.results)} records, "
          f"{len(res.meta['merged_runs'])} merged run(s), complete={res.meta['complete']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
