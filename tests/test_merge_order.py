"""A merge reads like a single run of the suite: experiments, records and errors in the suite's order, and each
experiment's text (title, findings) recomputed from its declaration over its own records."""

from __future__ import annotations

from pathlib import Path

from gpumemlab.bench.records import RunResults
from gpumemlab.experiments import registry
from gpumemlab.suite.merge import merge_runs

H100 = Path(__file__).resolve().parent / "data" / "runs" / "nvidia-h100-80gb-hbm3" / "results.json"  # a real run, cut


def part(res: RunResults, command: str, names: list[str], failed: list[str] = ()) -> RunResults:
    """The records of ``names`` (listed in that order, their text stale) and an error for each of ``failed``."""
    return RunResults(meta=dict(command=command, date="2026-01-01"), device=res.device, ceilings=res.ceilings,
                      results=[r for n in names for r in res.results if r.experiment == n],
                      experiments={n: dict(title="stale", findings=["stale"]) for n in [*names, *failed]},
                      errors=[dict(experiment=n, error=f"RuntimeError: {n} failed") for n in failed])


def test_merge_puts_experiments_records_and_errors_in_the_suite_s_order_and_redescribes_them():
    res = RunResults.load(H100)
    reg = registry()
    # given against the suite's order (vector_copy, offset_copy, stride_copy, ..., reduce, transpose)
    a = part(res, "run a", ["stride_copy", "vector_copy"], failed=["transpose"])
    b = part(res, "run b", ["offset_copy"], failed=["reduce"])
    a.experiments["histogram"] = dict(title="listed, never measured")  # no record, no error, no skip note: dropped
    b.experiments["divergence"] = dict(title="skipped", skipped="needs two GPUs")  # skipped on purpose: kept
    out = merge_runs([a, b])
    assert list(out.experiments) == ["vector_copy", "offset_copy", "stride_copy", "reduce", "transpose", "divergence"]
    assert out.experiments["divergence"] == dict(title="skipped", skipped="needs two GPUs")
    assert [r.experiment for r in out.results] == [r.experiment for r in res.results
                                                   if r.experiment in ("vector_copy", "offset_copy", "stride_copy")]
    assert [e["experiment"] for e in out.errors] == ["reduce", "transpose"]
    for name in ("vector_copy", "offset_copy", "stride_copy"):
        own = reg[name].describe([r for r in out.results if r.experiment == name])
        assert out.experiments[name]["title"] == own["title"] == reg[name].title
        assert out.experiments[name]["findings"] == own["findings"] and own["findings"] != ["stale"]
    # failed everywhere: no records to describe, the entry stays as the run wrote it
    assert out.experiments["reduce"] == dict(title="stale", findings=["stale"])
