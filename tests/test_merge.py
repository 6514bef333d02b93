"""Merging runs of one GPU model (gpumemlab.suite.merge): failed experiments keep their errors, each experiment
comes whole from one run, and the inputs are not changed; examples, then properties over generated runs."""

from __future__ import annotations

import copy
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpumemlab.bench.records import Record, RunResults
from gpumemlab.errors import UsageError
from gpumemlab.report import markdown
from gpumemlab.suite.merge import merge_runs

POOL = ("x1", "x2", "x3", "x4")


def _record(experiment: str, run: str, i: int = 0) -> Record:
    return Record(experiment, f"v{i}", dict(run=run), 1000, None, dict(median=1e-6 * (i + 1)), 10.0 * (i + 1), None,
                  None, "copy_gbps", True)


def _run(command: str, measured=(), failed=(), partial=(), device="GPU A") -> RunResults:
    """A run of ``command``: ``measured`` experiments with two records each, ``failed`` ones with an error and no
    record, ``partial`` ones with one record and an error (a variant failed after another finished)."""
    results = [_record(e, command, i) for e in measured for i in range(2)] + [_record(e, command) for e in partial]
    errors = [dict(experiment=e, error=f"VerificationError: {e} wrong in {command}") for e in (*failed, *partial)]
    return RunResults(meta=dict(command=command, date=f"date of {command}"), device=dict(name=device),
                      ceilings=dict(copy_gbps=dict(value=100.0, unit="GB/s")), results=results,
                      experiments={e: dict(title=e) for e in (*measured, *failed, *partial)}, errors=errors)


def test_an_experiment_that_failed_everywhere_keeps_its_error_and_entry():
    out = merge_runs([_run("cmd-a", ["x1"], failed=["x2"]), _run("cmd-b", ["x3"], failed=["x2"])])
    assert out.errors == [dict(experiment="x2", error="VerificationError: x2 wrong in cmd-a")]  # the first failure
    assert "x2" in out.experiments and not [r for r in out.results if r.experiment == "x2"]
    assert [(m["experiments"], m["command"]) for m in out.meta["merged_runs"]] == [(["x3"], "cmd-b")]


def test_a_failure_only_a_later_run_had_is_merged_with_its_provenance():
    out = merge_runs([_run("cmd-a", ["x1"]), _run("cmd-b", ["x3"], failed=["x2"])])
    assert out.errors == [dict(experiment="x2", error="VerificationError: x2 wrong in cmd-b")]
    assert [(m["experiments"], m["command"]) for m in out.meta["merged_runs"]] == [(["x2", "x3"], "cmd-b")]
    assert "- x2: VerificationError: x2 wrong in cmd-b" in markdown.render(out).splitlines()


def test_a_failure_measured_in_another_run_takes_that_run_s_records_and_drops_the_error():
    out = merge_runs([_run("cmd-a", ["x1"], failed=["x2"]), _run("cmd-b", ["x2"])])
    assert out.errors == []
    assert [(r.experiment, r.params["run"]) for r in out.results] == [("x1", "cmd-a")] * 2 + [("x2", "cmd-b")] * 2


def test_a_partly_failed_experiment_keeps_its_finished_records_and_its_error_together():
    out = merge_runs([_run("cmd-a", ["x1"], partial=["x2"]), _run("cmd-b", ["x2"])])
    assert [(r.experiment, r.variant, r.params["run"]) for r in out.results if r.experiment == "x2"] == \
        [("x2", "v0", "cmd-a")]
    assert out.errors == [dict(experiment="x2", error="VerificationError: x2 wrong in cmd-a")]


def test_errors_survive_save_and_load(tmp_path):
    out = merge_runs([_run("cmd-a", ["x1"], failed=["x2"]), _run("cmd-b", ["x3"], partial=["x4"])])
    out.save(tmp_path / "results.json")
    back = RunResults.load(tmp_path / "results.json")
    assert back.errors == out.errors and [e["experiment"] for e in back.errors] == ["x2", "x4"]
    assert back.meta["merged_runs"] == out.meta["merged_runs"]


def test_runs_of_different_gpus_or_none_are_refused():
    with pytest.raises(UsageError, match=r"the runs come from different GPUs: \['GPU A', 'GPU B'\]"):
        merge_runs([_run("a", ["x1"]), _run("b", ["x2"], device="GPU B")])
    with pytest.raises(UsageError, match="no runs given"):
        merge_runs([])


# ---------------------------------------------------------------- properties

def examples(n: int) -> int:
    return max(10, int(n * float(os.environ.get("HYPOTHESIS_SCALE", "1"))))


@st.composite
def runs(draw):
    """2 to 4 runs, each experiment of POOL measured, failed, partly failed or absent in each."""
    out = []
    for j in range(draw(st.integers(1, 4))):
        fate = {e: draw(st.sampled_from(["measured", "failed", "partial", "absent"])) for e in POOL}
        out.append(_run(f"cmd-{j}", *([e for e in POOL if fate[e] == f] for f in ("measured", "failed", "partial"))))
    return out


@settings(max_examples=examples(200), deadline=None)
@given(runs())
def test_each_experiment_comes_whole_from_one_run_with_its_errors(given_runs):
    before = copy.deepcopy(given_runs)
    out = merge_runs(given_runs)
    for e in POOL:
        with_records = [r for r in given_runs if any(x.experiment == e for x in r.results)]
        failed = [r for r in given_runs if any(x["experiment"] == e for x in r.errors)]
        source = (with_records or failed or [None])[0]
        got = [(x.variant, x.params) for x in out.results if x.experiment == e]
        errors = [x for x in out.errors if x["experiment"] == e]
        if source is None:
            assert not got and not errors and e not in out.experiments
            continue
        assert got == [(x.variant, x.params) for x in source.results if x.experiment == e]
        assert errors == [x for x in source.errors if x["experiment"] == e]
        assert e in out.experiments
        listed = [m["command"] for m in out.meta["merged_runs"] if e in m["experiments"]]
        assert listed == ([] if source is given_runs[0] else [source.meta["command"]])
    assert [(r.to_dict(), r.errors, r.meta, r.experiments, r.ceilings) for r in given_runs] == \
        [(r.to_dict(), r.errors, r.meta, r.experiments, r.ceilings) for r in before]  # inputs unchanged


@settings(max_examples=examples(100), deadline=None)
@given(runs())
def test_merging_a_merge_with_nothing_new_changes_no_record_or_error(given_runs):
    once = merge_runs(given_runs)
    twice = merge_runs([once])
    assert [r.to_dict() for r in twice.results] == [r.to_dict() for r in once.results]
    assert twice.errors == once.errors and twice.experiments == once.experiments
