"""Merge bench runs of one GPU model into one RunResults, each experiment whole from one run.

An experiment comes from the first run (in the order given) that has records of it, with that run's errors of it
(a failed experiment keeps the variants it finished); one that no run measured comes from the first run where it
failed, its error included. The first run gives meta, device and ceilings (a ceiling it lacks comes from the first
contributing run that has it); every other run that contributed is listed in ``meta.merged_runs`` with its
command, date, ceilings and experiments. Ceilings are then raised to the best record and each experiment's text
recomputed from its current declaration, as a single run does after each experiment.
"""

from __future__ import annotations

import copy

from ..bench.records import RunResults
from ..errors import UsageError
from .ceilings import raise_ceilings


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


def sources(runs: list[RunResults]) -> dict[str, RunResults]:
    """experiment -> the run it is taken from: the first with records of it, else the first where it failed."""
    source: dict[str, RunResults] = {}
    for run in runs:
        for r in run.results:
            source.setdefault(r.experiment, run)
    for run in runs:
        for e in run.errors:
            source.setdefault(e["experiment"], run)
    return source


def merge_runs(runs: list[RunResults]) -> RunResults:
    """One RunResults from ``runs`` of one GPU model (UsageError if they come from different GPUs); the inputs are
    not changed. ``meta.complete`` says whether every registered experiment is in it."""
    from ..experiments import registry

    if not runs:
        raise UsageError("merge: no runs given")
    base = runs[0]
    names = {run.device.get("name") for run in runs}
    if len(names) != 1:
        raise UsageError(f"the runs come from different GPUs: {sorted(map(str, names))}")
    out = RunResults(meta=copy.deepcopy(base.meta), device=base.device, ceilings={k: dict(v) for k, v in base.ceilings.items()},
                     results=[], experiments={}, errors=[])
    source, merged = sources(runs), []
    for run in runs:
        mine = sorted(n for n, r in source.items() if r is run)
        if not mine:
            continue
        out.results += [copy.deepcopy(r) for r in run.results if r.experiment in mine]  # percentages change below
        out.experiments.update({n: dict(run.experiments[n]) for n in mine if n in run.experiments})
        out.errors += [dict(e) for e in run.errors if e["experiment"] in mine]
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
    out.meta["complete"] = not missing_experiments(out)
    order = {n: i for i, n in enumerate(reg)}  # the suite's order, as a single run writes them
    out.results.sort(key=lambda r: order.get(r.experiment, len(order)))
    out.experiments = dict(sorted(out.experiments.items(), key=lambda kv: order.get(kv[0], len(order))))
    out.errors.sort(key=lambda e: order.get(e["experiment"], len(order)))
    raise_ceilings(out.ceilings, out.results)
    describe_again(out, reg)  # after the ceilings: findings quote percentages of them
    return out


def missing_experiments(res: RunResults) -> list[str]:
    """Registered experiments with neither records nor an entry in ``res``."""
    from ..experiments import registry

    return sorted(set(registry()) - {r.experiment for r in res.results} - set(res.experiments))


def describe_again(res: RunResults, reg: dict) -> None:
    """Each measured experiment's text (title, claims, notes, findings) from its current declaration; the records,
    and what the run itself added to the entry (wall_s, skipped), stay as they were."""
    for name, info in res.experiments.items():
        recs = [r for r in res.results if r.experiment == name]
        if recs and name in reg:
            info.update(reg[name].describe(recs))
