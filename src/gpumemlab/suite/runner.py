"""The one runner every experiment declaration goes through.

For each :class:`~gpumemlab.experiments.Case` an experiment yields, in order: verify (poisoned output, NaN never
passes), time (bench harness: CUDA events or the host clock, warm-up excluded), write a record. When a group of
cases ends (the ``group_by`` params change, or the cases run out) the group's baselines are attached to its own
records and the interleaved head-to-heads its cases asked for are timed, then the group's cases are released so
their arrays can be freed. At the end: speedups over the experiment's naive variant, then ``derive``.
"""

from __future__ import annotations

import numpy as np

from ..bench.records import Record
from ..bench.session import Session
from ..bench.verify import check_close, check_equal_device, poison
from ..errors import VerificationError
from ..experiments._declare import Case, Check, Experiment


def group_key(exp: Experiment, params: dict) -> tuple:
    return tuple((k, repr(params.get(k))) for k in exp.group_by)


def verifier(case: Case):
    """The ``verify()`` callable of a case: its own callable, or poison -> run -> compare for a Check."""
    check = case.check
    if check is None or not isinstance(check, Check):
        return check

    def verify():
        if check.reset is not None:
            check.reset()
        if hasattr(check.out, "dtype"):
            poison(check.out)
        case.run()
        got = check.out() if callable(check.out) else check.out
        if check.all_finite and not _all_finite(got):
            raise VerificationError(f"{case.variant}: non-finite outputs (unwritten elements)")
        got = check.view(got) if check.view is not None else got
        want = check.expected() if callable(check.expected) else check.expected
        exact = np.all(np.asarray(check.rtol) == 0) and np.all(_host(check.atol) == 0)
        if exact and _on_device(got) and _on_device(want):
            check_equal_device(got, want, what=case.variant)
        else:
            check_close(got, _host(want), what=case.variant, rtol=check.rtol, atol=_host(check.atol))
    return verify


def _all_finite(a) -> bool:
    import cupy

    return bool(cupy.isfinite(a).all()) if _on_device(a) else bool(np.isfinite(a).all())


def _on_device(a) -> bool:
    return hasattr(a, "__cuda_array_interface__")


def _host(a):
    get = getattr(a, "get", None)
    return get() if callable(get) else np.asarray(a)


def measure_case(session: Session, exp: Experiment, case: Case) -> Record:
    rec = session.measure(experiment=exp.name, variant=case.variant, params=case.params, run=case.run,
                          bytes=case.bytes, flops=case.flops, verify=verifier(case), cold_l2=case.cold_l2,
                          ceiling=case.ceiling, kind=case.kind, model=case.model, notes=case.notes,
                          extra=case.extra, timer=case.timer, clock=case.clock)
    if case.after is not None:
        case.after(rec)
    return rec


def attach_baseline(records: list[Record], baseline: Record) -> None:
    """Put a library baseline measured in the same run next to each of our records."""
    for r in records:
        entry = dict(median_s=baseline.median_s, gbps=baseline.gbps, gflops=baseline.gflops)
        if baseline.gflops and r.gflops:
            entry["ratio"] = r.gflops / baseline.gflops
        elif r.median_s > 0:
            entry["ratio"] = baseline.median_s / r.median_s  # > 1: ours is faster
        r.baselines[baseline.variant] = entry


def speedups(records: list[Record], naive, keys: tuple[str, ...] = ()) -> None:
    """Fill ``speedup_vs_naive`` for records that share the naive record's ``keys`` params.

    ``naive``: the naive variant's name, or a predicate on records (a group's reference varies by group).
    """
    is_naive = naive if callable(naive) else (lambda r: r.variant == naive)

    def group(r):
        return tuple((k, repr(r.params.get(k))) for k in keys)

    base = {}
    for r in records:
        if is_naive(r):
            if group(r) in base:
                raise ValueError(f"speedups: several {r.variant!r} records share the group {group(r)}; name the keys")
            base[group(r)] = r.median_s
    for r in records:
        t = base.get(group(r))
        if t and r.median_s > 0:
            r.speedup_vs_naive = t / r.median_s


def _finish_group(session: Session, group: list[tuple[Case, Record]]) -> None:
    ours = [rec for case, rec in group if case.kind == "kernel"]
    by_variant = {case.variant: (case, rec) for case, rec in group}
    for case, rec in group:
        if case.kind == "baseline":
            attach_baseline(ours, rec)
    for case, rec in group:
        for name in case.versus:
            if name not in by_variant:
                raise ValueError(f"{rec.experiment}: {case.variant} asks for a head-to-head with {name!r}, "
                                 f"which is not a case of its group")
            base = by_variant[name][0]
            rec.extra.setdefault("head_to_head", {})[name] = session.head_to_head(
                case.run, base.run, cold_l2=case.cold_l2 and base.cold_l2, timer=case.timer)


def run_experiment(session: Session, exp: Experiment, params: dict) -> list[Record]:
    """Measure every case of ``exp`` at ``params``; return its records (also appended to the session)."""
    records: list[Record] = []
    marked: set[int] = set()  # ids of the records whose case is marked naive
    group: list[tuple[Case, Record]] = []
    current = None
    with session.stream:  # every CuPy call of the experiment on the stream its kernels and events use
        for case in exp.cases(session, params):
            key = group_key(exp, case.params)
            if group and key != current:
                _finish_group(session, group)
                group = []
            current = key
            rec = measure_case(session, exp, case)
            group.append((case, rec))
            records.append(rec)
            if case.naive:
                marked.add(id(rec))
        if group:
            _finish_group(session, group)
        group = []
    if exp.naive or marked:
        speedups(records, naive=lambda r: id(r) in marked or r.variant == exp.naive, keys=exp.group_by)
    if exp.derive is not None:
        exp.derive(records, session)
    return records
