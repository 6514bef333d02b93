"""`gpumemlab merge` (the command) and what the merged run's reports and README table say about its provenance."""

import json

import pytest

from gpumemlab.cli import main
from gpumemlab.errors import UsageError
from gpumemlab.report import readme as generated
from gpumemlab.suite.merge import merge_runs



def _run(command, experiments, device="GPU A", merged=(), gbps=50.0):
    from gpumemlab.bench.records import Record, RunResults

    recs = [Record(e, "v", {}, 1000, None, dict(median=1e-6), gbps, None, None, "copy_gbps", True) for e in experiments]
    return RunResults(meta=dict(command=command, date=f"date of {command}", merged_runs=list(merged)),
                      device=dict(name=device), ceilings=dict(copy_gbps=dict(value=100.0, unit="GB/s")),
                      results=recs, experiments={e: dict(title=e) for e in experiments})


def test_merge_runs_takes_each_experiment_from_the_first_run_that_has_it_and_keeps_provenance():
    from gpumemlab.report.format import merged_lines

    base = _run("cmd-a", ["x1", "x2"])
    other = _run("cmd-b", ["x2", "x3", "x4"], merged=[dict(experiments=["x4"], command="cmd-c", date="d-c")],
                 gbps=150.0)
    out = merge_runs([base, other])
    assert [(r.experiment, r.gbps) for r in out.results] == [("x1", 50.0), ("x2", 50.0), ("x3", 150.0), ("x4", 150.0)]
    assert [(m["experiments"], m["command"]) for m in out.meta["merged_runs"]] == [(["x4"], "cmd-c"), (["x3"], "cmd-b")]
    assert out.meta["command"] == "cmd-a" and out.meta["complete"] is False  # the registry's experiments are missing
    assert out.ceilings["copy_gbps"]["value"] == 150.0 and out.ceilings["copy_gbps"]["measured_as"] == 100.0
    assert [r.pct_of_ceiling for r in out.results] == [pytest.approx(100 / 3)] * 2 + [100.0] * 2
    assert merged_lines(out.meta) == ["x4: from `cmd-c` (d-c)", "x3: from `cmd-b` (date of cmd-b)"]
    assert merged_lines(dict(merged_runs=[dict(experiments=["a", "b"], command="c<d")]), code=lambda c: f"[{c}]",
                        escape=str.upper) == ["A, B: FROM [c<d] (DATE NOT RECORDED)"]
    assert merged_lines({}) == []
    with pytest.raises(UsageError, match="different GPUs"):
        merge_runs([base, _run("cmd-d", ["x5"], device="GPU B")])


def test_merge_runs_takes_a_ceiling_the_base_lacks_from_the_run_that_measured_it():
    """A base that ran only matmul_shapes has no host-link ceilings; the merged run keeps the older run's."""
    base = _run("cmd-a", ["x1"])
    older = _run("cmd-b", ["x1", "x2"])
    older.ceilings["h2d_best_gbps"] = dict(value=55.0, unit="GB/s")
    older.ceilings["copy_gbps"] = dict(value=90.0, unit="GB/s")
    out = merge_runs([base, older])
    assert out.ceilings["h2d_best_gbps"]["value"] == 55.0
    assert out.ceilings["copy_gbps"]["value"] == 100.0  # the base's own stays
    assert "h2d_best_gbps" not in base.ceilings  # the inputs are not changed
    idle = _run("cmd-c", ["x1"])  # its only experiment comes from the base: it contributes nothing, not even ceilings
    idle.ceilings["h2d_best_gbps"] = dict(value=55.0, unit="GB/s")
    assert merge_runs([base, idle]).ceilings.keys() == {"copy_gbps"}
    # a ceiling only an earlier merge recorded (in its merged_runs entry) comes back too
    folded = _run("cmd-d", ["x2"], merged=[dict(experiments=["x2"], command="cmd-e", date="d-e",
                                                 ceilings=dict(d2h_best_gbps=dict(value=54.0, unit="GB/s")))])
    assert merge_runs([base, folded]).ceilings["d2h_best_gbps"]["value"] == 54.0


def test_merge_runs_keeps_what_a_run_skipped_on_purpose_and_the_readme_says_why():
    base = _run("cmd-a", ["x1"])
    base.experiments["p2p"] = dict(title="p2p", skipped="needs two GPUs: this machine has 1")
    out = merge_runs([_run("cmd-b", ["x2"]), base])
    assert out.experiments["p2p"]["skipped"] == "needs two GPUs: this machine has 1"
    readme = generated.table(out, "docs/results/x/results.json")
    assert "Skipped by this run: `p2p` (needs two GPUs: this machine has 1)." in readme
    assert "`p2p`" not in readme.split("Not in this run")[-1]


def test_reports_name_the_merged_runs():
    from gpumemlab.report import html, markdown

    res = merge_runs([_run("cmd-a", ["x1"]), _run("cmd <b>", ["x2"])])
    line = "Merged from another run of this GPU model: x2: from "
    assert f"- {line}`cmd <b>` (date of cmd <b>)" in markdown.render(res).splitlines()
    assert f"<li>{line}<code>cmd &lt;b&gt;</code> (date of cmd &lt;b&gt;)</li>" in html.render(res)
    readme = generated.table(res, "docs/results/x/results.json")
    assert "Records of x2: from `cmd <b>` (date of cmd <b>)." in readme
    from gpumemlab.experiments import registry

    # x1 and x2 are no experiments of the suite: every registered one is named as not in this run
    assert readme.endswith("Not in this run (added to the suite after it): "
                           + ", ".join(f"`{n}`" for n in registry()) + ".")


def test_the_merge_command_writes_the_merged_run_and_its_report(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    _run("cmd-a", ["x1"]).save(a)
    _run("cmd-b", ["x1", "x2"]).save(b)
    assert main(["merge", str(tmp_path / "out"), str(a), str(b)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{tmp_path / 'out'}: 2 records, 1 merged run(s), complete=False\n"
    assert err.startswith("gpumemlab merge: no records of ")  # x1 and x2 are no experiments of the suite
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [m["experiments"] for m in doc["meta"]["merged_runs"]] == [["x2"]]
    assert (tmp_path / "out" / "report.md").is_file()


def test_the_merge_command_refuses_runs_of_different_gpus_in_one_line(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    _run("cmd-a", ["x1"]).save(a)
    _run("cmd-b", ["x2"], device="GPU B").save(b)
    assert main(["merge", str(tmp_path / "out"), str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err == "gpumemlab merge: the runs come from different GPUs: ['GPU A', 'GPU B']\n"
    assert main(["merge", str(tmp_path / "out"), str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.startswith("gpumemlab merge: ")
