"""Merge bench runs of one GPU model into one results.json, each experiment's records from one run.

    python tools/merge_runs.py OUT_DIR BASE.json [MORE.json ...]

Each experiment is taken whole from the first run (in the order given) that has records of it; BASE gives meta,
device and ceilings (a ceiling BASE lacks comes from the first contributing run that has it), and every other run that contributed is listed in ``meta.merged_runs`` with its command,
date, ceilings and experiments. Ceilings are then raised to the best record, the findings recomputed (as a single
run does after each experiment) and each experiment's text taken from its current declaration, and the report is
rendered into OUT_DIR. With one run it re-renders that run with the current findings and texts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpumemlab.bench.records import RunResults
from gpumemlab.experiments import registry
from gpumemlab.report.write import write_report
from gpumemlab.suite.ceilings import raise_ceilings


def provenance(run: RunResults, names: list[str], own: bool) -> list[dict]:
    """Where ``names`` were measured: entries of the run's own ``merged_runs`` keep theirs; the rest are the run's
    own measurements (listed only when ``own``: the base's are described by meta itself)."""
    entries, left = [], set(names)
    for m in run.meta.get("merged_runs", []):
        taken = sorted(left & set(m.get("experiments", [])))
        if taken:
            entries.append(dict(m, experiments=taken))
            left -= set(taken)
    if left and own:
        entries.append(dict(experiments=sorted(left), command=run.meta.get("command"), date=run.meta.get("date"),
                            ceilings=run.ceilings))
    return entries


def merge(runs: list[RunResults]) -> RunResults:
    base = runs[0]
    names = {n.get("name") for n in (r.device for r in runs)}
    if len(names) != 1:
        raise SystemExit(f"merge_runs: the runs come from different GPUs: {sorted(map(str, names))}")
    out = RunResults(meta=dict(base.meta), device=base.device, ceilings={k: dict(v) for k, v in base.ceilings.items()},
                     results=[], experiments={}, errors=[])
    merged = []
    for run in runs:
        mine = sorted({r.experiment for r in run.results} - {r.experiment for r in out.results})
        if not mine:
            continue
        out.results += [r for r in run.results if r.experiment in mine]
        out.experiments.update({n: dict(run.experiments[n]) for n in mine if n in run.experiments})
        out.errors += [e for e in run.errors if e["experiment"] in mine]
        entries = provenance(run, mine, own=run is not base)
        merged += entries
        # a ceiling the base did not measure (e.g. host links): the first contributing run's, or one that run had
        # merged in earlier
        for ceilings in [run.ceilings] + [e.get("ceilings") or {} for e in entries]:
            for name, c in ceilings.items():
                out.ceilings.setdefault(name, dict(c))
    for run in runs:  # experiments a run skipped on purpose (``requires``: e.g. two GPUs needed) keep their note
        for name, info in run.experiments.items():
            if info.get("skipped") and name not in out.experiments:
                out.experiments[name] = dict(info)
    out.meta["merged_runs"] = merged
    reg = registry()
    missing = sorted(set(reg) - {r.experiment for r in out.results} - set(out.experiments))
    out.meta["complete"] = not missing
    if missing:
        print(f"merge_runs: no records of {', '.join(missing)}", file=sys.stderr)
    order = {n: i for i, n in enumerate(reg)}  # the suite's order, as a single run writes them
    out.results.sort(key=lambda r: order.get(r.experiment, len(order)))
    out.experiments = dict(sorted(out.experiments.items(), key=lambda kv: order.get(kv[0], len(order))))
    raise_ceilings(out.ceilings, out.results)
    describe_again(out, reg)  # after the ceilings: findings quote percentages of them
    return out


def describe_again(res: RunResults, reg: dict) -> None:
    """Each measured experiment's text (title, claims, notes, findings) from its current declaration; the records,
    and what the run itself added to the entry (wall_s, skipped), stay as they were."""
    for name, info in res.experiments.items():
        recs = [r for r in res.results if r.experiment == name]
        if recs and name in reg:
            info.update(reg[name].describe(recs))


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
