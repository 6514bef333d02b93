"""persist_l2's measured hitRatio table (no GPU): derived from the committed l2_persist runs by tools/l2_table.py,
the decision rule over records, the nearest-ratio choice, device matching, the fallback to the rule, bad inputs."""

import json
import math
import sys
from pathlib import Path

import pytest

from gpumemlab.bench.records import Record, RunResults
from gpumemlab.bench.stats import summarize
from gpumemlab.errors import UsageError
from gpumemlab.experiments.l2_persist import measured_choices
from gpumemlab.ops import l2 as ops
from gpumemlab.tune import table

ROOT = Path(__file__).resolve().parents[1]
RUNS = sorted((ROOT / "docs" / "results").glob("*/results.json.xz"))
MIB = 1 << 20


@pytest.fixture(scope="module")
def tool():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import l2_table
    finally:
        sys.path.pop(0)
    return l2_table


@pytest.fixture(scope="module")
def installed():
    return table.load(ops.TUNED_PATH)


def _entries(tool) -> dict:
    """{device name: entry} re-derived from every committed run that has l2_persist records."""
    out = {}
    for path in RUNS:
        e = tool.entry(RunResults.load(path), tool.source_name(path))
        if e is not None:
            out[e["device"]["name"]] = json.loads(json.dumps(e))  # as the file stores it
    return out


def test_the_installed_table_is_what_the_tool_derives_from_the_committed_runs(tool, installed):
    derived = _entries(tool)
    assert derived, "no committed run has l2_persist records"
    assert installed["family"] == "l2_persist" and table.problems(installed) == []
    assert installed["devices"] == derived


def test_each_decision_follows_the_records_of_its_run(tool, installed):
    """Re-read the records of each installed device: the faster window by median, the tie from the p10-p90
    ranges, and the tuned hitRatio only where it won beyond the noise."""
    for name, e in installed["devices"].items():
        path = ROOT / e["command"].split()[-1]
        recs = [r.to_dict() for r in RunResults.load(path).results if r.experiment == "l2_persist"]
        t = {(r["variant"], r["params"]["region_over_set_aside"]): r for r in recs}
        assert len(e["decisions"]) == len({f for v, f in t if v == ops.TUNED})
        for shape, d in e["decisions"].items():
            hit1, tuned = t[(ops.HIT1, float(shape))], t[(ops.TUNED, float(shape))]
            fast, slow = sorted((hit1, tuned), key=lambda r: r["time_s"]["median"])
            assert d["fastest"] == fast["variant"] and e["chosen"][shape]["name"] == fast["variant"]
            assert d["speedup"] == slow["time_s"]["median"] / fast["time_s"]["median"]
            # fast's p10 over slow's p90 is under 1 (fast has the lower median): a tie when p90 over p10 reaches 1
            tie = fast["time_s"]["p90"] >= slow["time_s"]["p10"]
            assert d["verdict"] == ("tie" if tie else "faster"), (name, shape)
            assert d["policy"] == (ops.TUNED if fast is tuned and not tie else ops.HIT1)
            assert d["hit_ratio"] == t[(d["policy"], float(shape))]["extra"]["window"]["hit_ratio"]


def test_the_h100_run_measured_identical_windows_up_to_the_set_aside(installed):
    # at or below the set-aside both windows are hitRatio 1.0 over the region: the decision there is never tuned
    e = installed["devices"]["NVIDIA H100 80GB HBM3"]
    for shape, d in e["decisions"].items():
        params = {p["name"]: p["params"] for p in e["points"] if p["shape"] == shape}
        if float(shape) <= 1.0:
            assert params[ops.HIT1] == params[ops.TUNED] and d["policy"] == ops.HIT1
        else:
            assert params[ops.TUNED]["hit_ratio"] == pytest.approx(1 / float(shape), rel=1e-3)


def test_the_tool_markdown_is_the_note_table(tool, installed):
    note = (ROOT / "docs" / "notes" / "l2-persist-hit-ratio.md").read_text()
    for e in installed["devices"].values():
        rows = tool.markdown(e).splitlines()
        assert len(rows) == 4 + len(e["decisions"])
        assert all(row in note for row in rows[2:])


def test_the_experiment_records_and_states_the_choice_per_ratio(installed):
    from gpumemlab.experiments import registry

    exp = registry()["l2_persist"]
    recs = [r for r in RunResults.load(ROOT / "docs" / "results" / "nvidia-h100-80gb-hbm3" / "results.json.xz").results
            if r.experiment == "l2_persist"]
    exp.derive(recs, None)
    decisions = installed["devices"]["NVIDIA H100 80GB HBM3"]["decisions"]
    for shape, d in decisions.items():
        windows = [r for r in recs if r.params["region_over_set_aside"] == float(shape) and "persist_l2" in r.extra]
        assert sorted(r.variant for r in windows) == sorted([ops.HIT1, ops.TUNED])
        assert {r.extra["persist_l2"]["policy"] for r in windows} == {d["policy"]}
        assert [r.variant for r in windows if r.extra["persist_l2"]["chosen"]] == [d["policy"]]
    said = next(f for f in exp.describe(recs)["findings"] if f.startswith("persist_l2's hitRatio"))
    ties = sum(d["verdict"] == "tie" for d in decisions.values())
    assert said.count("a tie within the noise") == ties and said.count("beyond the noise") == len(decisions) - ties


# ---------------------------------------------------------------- the decision rule on made-up records

def _rec(variant, ratio, median, spread=0.01, hit_ratio=1.0, verified=True):
    stats = summarize([median * f for f in (1 - spread, 1.0, 1.0, 1 + spread)]).to_dict()
    return Record(experiment="l2_persist", variant=variant, params=dict(region_over_set_aside=ratio), bytes=1000,
                  flops=None, time_s=stats, gbps=1e-6 / median, gflops=None, pct_of_ceiling=None, ceiling=None,
                  verified=verified, extra=dict(window=dict(hit_ratio=hit_ratio)))


def test_tuned_is_chosen_only_when_faster_beyond_the_noise():
    recs = [_rec(ops.HIT1, 2.0, 1.0), _rec(ops.TUNED, 2.0, 0.8, hit_ratio=0.5),     # tuned wins clearly
            _rec(ops.HIT1, 1.5, 1.0), _rec(ops.TUNED, 1.5, 0.995, hit_ratio=0.667),  # faster inside the noise
            _rec(ops.HIT1, 0.5, 0.9), _rec(ops.TUNED, 0.5, 1.0),                    # hitRatio 1.0 wins
            _rec("no window", 2.0, 0.5)]
    got = {c["ratio"]: c for c in measured_choices(recs)}
    assert [c["ratio"] for c in measured_choices(recs)] == [0.5, 1.5, 2.0]
    assert (got[2.0]["policy"], got[2.0]["verdict"], got[2.0]["hit_ratio"]) == (ops.TUNED, "faster", 0.5)
    assert got[2.0]["speedup"] == pytest.approx(1.0 / 0.8)
    assert got[2.0]["vs_no_window"] == pytest.approx(0.5 / 0.8) and got[2.0]["vs_no_window_verdict"] == "slower"
    assert (got[1.5]["fastest"], got[1.5]["verdict"], got[1.5]["policy"]) == (ops.TUNED, "tie", ops.HIT1)
    assert got[1.5]["hit_ratio"] == 1.0 and got[1.5]["vs_no_window"] is None
    assert (got[0.5]["fastest"], got[0.5]["verdict"], got[0.5]["policy"]) == (ops.HIT1, "faster", ops.HIT1)


def test_a_ratio_without_both_verified_windows_is_left_out():
    recs = [_rec(ops.HIT1, 2.0, 1.0), _rec(ops.TUNED, 2.0, 0.5, verified=False), _rec(ops.HIT1, 1.0, 1.0)]
    assert measured_choices(recs) == []


# ---------------------------------------------------------------- choosing from a table

def test_nearest_measured_ratio_in_log_space_on_the_installed_table(installed):
    name = "NVIDIA H100 80GB HBM3"
    e = installed["devices"][name]
    set_aside = e["device"]["persisting_l2_max_bytes"]
    measured = {float(s): d["policy"] for s, d in e["decisions"].items()}
    for ratio in (0.1, 0.4, 0.9, 1.1, 1.4, 1.8, 3.0, 10.0):
        nearest = min(measured, key=lambda f: abs(math.log(ratio / f)))
        window = round(ratio * set_aside)
        want = 1.0 if measured[nearest] == ops.HIT1 else min(1.0, set_aside / window)
        assert ops.choose_hit_ratio(window, set_aside, dict(e["device"])) == (want, f"measured:{name}"), ratio


def test_nearest_ratio_and_the_tuned_rule_on_a_made_up_table():
    t = {"GPU A": dict(device=dict(name="GPU A", cc=[9, 0], sm_count=132),
                       decisions=[(0.5, ops.HIT1), (2.0, ops.TUNED)])}
    a = dict(name="GPU A", cc=[9, 0], sm_count=132)
    assert ops.choose_hit_ratio(30 * MIB, 30 * MIB, a, t) == (1.0, "measured:GPU A")  # 1.0: as near to both: smaller
    assert ops.choose_hit_ratio(31 * MIB, 30 * MIB, a, t) == (30 / 31, "measured:GPU A")
    assert ops.choose_hit_ratio(300 * MIB, 30 * MIB, a, t) == (0.1, "measured:GPU A")  # beyond the last: its rule
    assert ops.choose_hit_ratio(1 * MIB, 30 * MIB, a, t) == (1.0, "measured:GPU A")
    assert ops.nearest_policy(0.99, t["GPU A"]["decisions"]) == ops.HIT1
    assert ops.nearest_policy(1.01, t["GPU A"]["decisions"]) == ops.TUNED


def test_device_matching_borrows_only_from_the_same_chip():
    t = {"GPU A": dict(device=dict(name="GPU A", cc=[9, 0], sm_count=132), decisions=[(1.0, ops.HIT1)])}
    assert ops.measured_entry(dict(name="GPU A", cc=[8, 0], sm_count=1), t) is t["GPU A"]  # the name decides
    assert ops.measured_entry(dict(name="GPU B", cc=[9, 0], sm_count=132), t)["borrowed_from"] == "GPU A"
    assert ops.measured_entry(dict(name="GPU C", cc=[9, 0], sm_count=114), t) is None
    assert ops.measured_entry(dict(name="GPU D", cc=[8, 0], sm_count=132), t) is None


def test_without_an_entry_the_rule_decides():
    t = {"GPU A": dict(device=dict(name="GPU A", cc=[9, 0], sm_count=132), decisions=[(1.0, ops.HIT1)])}
    other = dict(name="GPU C", cc=[8, 6], sm_count=84)
    for window in (10 * MIB, 60 * MIB, 120 * MIB):
        want = (ops.rule_hit_ratio(window, 30 * MIB), "rule")
        assert ops.choose_hit_ratio(window, 30 * MIB, other, t) == want
        assert ops.choose_hit_ratio(window, 30 * MIB, None, t) == want
        assert ops.choose_hit_ratio(window, 30 * MIB, other, {}) == want
    assert ops.choose_hit_ratio(120 * MIB, 30 * MIB, other, t) == (0.25, "rule")


def test_an_unreadable_or_foreign_table_or_a_damaged_entry_means_no_entries(tmp_path, monkeypatch, installed):
    damaged = json.loads(json.dumps(installed))
    name = next(iter(damaged["devices"]))
    for bad in ([], {"1": "hit_ratio 1.0"}, {"one": {"policy": ops.HIT1}}, {"1": {"policy": "half"}}):
        damaged["devices"][name]["decisions"] = bad
        for text in ("not json", json.dumps(dict(installed, family="matmul")), json.dumps(damaged)):
            path = tmp_path / "l2_persist.json"
            path.write_text(text)
            monkeypatch.setattr(ops, "TUNED_PATH", path)
            ops.measured_table.cache_clear()
            assert name not in ops.measured_table()
    ops.measured_table.cache_clear()


def test_the_installed_table_reads_back_in_ratio_order(installed):
    ops.measured_table.cache_clear()
    got = ops.measured_table()
    assert set(got) == set(installed["devices"])
    for name, e in got.items():
        ratios = [f for f, _ in e["decisions"]]
        assert ratios == sorted(float(s) for s in installed["devices"][name]["decisions"])
        assert [p for _, p in e["decisions"]] == [installed["devices"][name]["decisions"][format(f, "g")]["policy"]
                                                  for f in ratios]


@pytest.mark.parametrize("window,set_aside", [(0, 30 * MIB), (30 * MIB, 0), (-1, 30 * MIB)])
def test_sizes_must_be_positive(window, set_aside):
    with pytest.raises(UsageError, match="positive byte counts"):
        ops.choose_hit_ratio(window, set_aside, None)


@pytest.mark.parametrize("bad", [0, 0.0, -0.5, 1.5, True, "0.5", float("nan")])
def test_persist_l2_rejects_a_bad_hit_ratio_before_touching_the_gpu(bad):
    import numpy as np

    with pytest.raises(UsageError, match="hit_ratio must be a number in"):
        ops.persist_l2(np.ones(8), hit_ratio=bad)


def test_the_tool_skips_a_run_without_l2_persist_records(tool, tmp_path, capsys):
    doc = json.loads((ROOT / "tests" / "data" / "runs" / "nvidia-h200" / "results.json").read_text())
    doc["results"] = [r for r in doc["results"] if r["experiment"] != "l2_persist"]
    run = tmp_path / "results.json"
    run.write_text(json.dumps(doc))
    assert tool.main([str(run)]) == 0
    assert "no l2_persist records, skipped" in capsys.readouterr().err


def test_the_tool_refuses_a_file_that_is_not_a_run_and_writes_nothing(tool, tmp_path, capsys, monkeypatch):
    import gpumemlab.ops.l2

    target = tmp_path / "l2_persist.json"
    monkeypatch.setattr(gpumemlab.ops.l2, "TUNED_PATH", target)
    bad = tmp_path / "results.json"
    bad.write_text("{}")
    assert tool.main(["--install", str(RUNS[0]), str(bad)]) == 2
    assert str(bad) in capsys.readouterr().err and not target.exists()
    assert tool.main([]) == 2 and "usage:" in capsys.readouterr().err
