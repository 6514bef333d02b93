"""`gpumemlab compare`: ratios and verdicts checked against values computed here from the JSON files."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

RUNS = Path(__file__).resolve().parent / "data" / "runs"  # cut from real runs by tests/data/make_runs.py
H100 = RUNS / "nvidia-h100-80gb-hbm3" / "results.json"
H200 = RUNS / "nvidia-h200" / "results.json"


def _records(path: Path) -> dict[tuple, dict]:
    doc = json.loads(path.read_text())
    return {(r["experiment"], r["variant"], json.dumps(r["params"], sort_keys=True)): r for r in doc["results"]}


def _table_rows(markdown: str, first_header: str) -> list[list[str]]:
    """The body rows of the first Markdown table whose header starts with `first_header`."""
    lines = markdown.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"| {first_header} |"))
    rows = []
    for ln in lines[start + 2:]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", ln)[1:-1]])
    return rows


def _per(a: dict, b: dict) -> tuple[float, float]:
    """What each side's times are divided by: 1, or the bytes moved when the two moved different amounts
    (launch_config's grid sweep sizes its copy from each GPU's L2 without a size parameter)."""
    return (1, 1) if a["bytes"] == b["bytes"] else (a["bytes"], b["bytes"])


def _ratio(a: dict, b: dict, stat="median", stat_b=None) -> float:
    pa, pb = _per(a, b)
    return (a["time_s"][stat] / pa) / (b["time_s"][stat_b or stat] / pb)


def _verdict(a: dict, b: dict, lo="p10", hi="p90") -> str:
    if _ratio(a, b, lo, hi) <= 1 <= _ratio(a, b, hi, lo):  # the two spreads overlap
        return "tie"
    return "faster" if _ratio(a, b) > 1 else "slower"


def _write(tmp_path: Path, name: str, doc: dict) -> str:
    path = tmp_path / name / "results.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc))
    return str(path)


def test_h100_vs_h200_table_ratios_equal_the_medians_ratio(run_cli):
    code, out, err = run_cli("compare", str(H100), str(H200))
    assert code == 0, err
    a, b = _records(H100), _records(H200)
    common = [k for k in a if k in b]
    rows = _table_rows(out, "experiment | variant | params")
    assert len(rows) == len(common) >= 60  # every record both runs have (the fixtures share 69), not a handful
    words = {"faster": "B faster", "slower": "B slower", "tie": "tie (within noise)"}
    for row, key in zip(rows, common):
        ra, rb = a[key], b[key]
        params = ", ".join(f"{k}={v}" for k, v in ra["params"].items())
        assert row[:3] == [key[0], key[1], params]
        assert row[7] == f"{_ratio(ra, rb):.3f}" + ("*" if ra["bytes"] != rb["bytes"] else "")
        assert row[9] == words[_verdict(ra, rb)]
    assert f"## Only in nvidia-h100-80gb-hbm3 ({len(set(a) - set(b))} records, not compared)" in out
    assert f"## Only in nvidia-h200 ({len(set(b) - set(a))} records, not compared)" in out
    ceilings = {r[0]: r for r in _table_rows(out, "ceiling")}
    ca, cb = (json.loads(p.read_text())["ceilings"] for p in (H100, H200))
    assert ceilings["copy_gbps"][3] == f"{cb['copy_gbps']['value'] / ca['copy_gbps']['value']:.3f}"
    assert "NVIDIA H100 80GB HBM3 (compute capability 9.0" in out and "NVIDIA H200 (compute capability 9.0" in out
    merged = {r[0]: r for r in _table_rows(out, "")}.get("merged from")  # the H100 file merges runs (meta.merged_runs)
    runs_a = json.loads(H100.read_text())["meta"].get("merged_runs", [])
    assert (merged is None) == (not runs_a)
    runs_b = json.loads(H200.read_text())["meta"].get("merged_runs", [])
    for runs, cell in ((runs_a, merged and merged[1]), (runs_b, merged and merged[2])):
        if runs:
            assert cell.startswith(f"{', '.join(runs[0]['experiments'])}: from {runs[0]['command']} (")
        else:
            assert merged is None or cell == "-"


def test_h100_vs_h200_json_and_summary(run_cli):
    code, out, _ = run_cli("compare", str(H100), str(H200), "--json", "--spread", "min-max")
    assert code == 0
    doc = json.loads(out)
    a, b = _records(H100), _records(H200)
    for m in doc["matches"]:
        key = (m["experiment"], m["variant"], json.dumps(m["params"], sort_keys=True))
        ra, rb = a[key], b[key]
        assert m["ratio"] == pytest.approx(_ratio(ra, rb), rel=1e-12)
        assert m["ratio_lo"] == pytest.approx(_ratio(ra, rb, "min", "max"), rel=1e-12)
        assert m["per"] == (None if ra["bytes"] == rb["bytes"] else "bytes")
        assert m["verdict"] == _verdict(ra, rb, "min", "max")
    matmul = [m for m in doc["matches"] if m["experiment"] == "matmul"]
    s = doc["summary"]["matmul"]
    assert s["matched"] == len(matmul) and s["min"] == min(m["ratio"] for m in matmul)
    assert s["faster"] + s["slower"] + s["tie"] == s["matched"]
    assert [c["ceiling"] for c in doc["ceilings"]][:2] == ["dram_theoretical_gbps", "fp32_peak_gflops"]
    assert doc["a"]["device"]["name"] == "NVIDIA H100 80GB HBM3" and doc["failed"] == []


def test_ignored_size_params_compare_per_byte(run_cli):
    code, out, _ = run_cli("compare", str(H100), str(H200), "--json", "--ignore-param", "n", "--ignore-param", "mib")
    assert code == 0
    doc = json.loads(out)
    m = next(m for m in doc["matches"] if m["experiment"] == "vector_copy")  # sized from each GPU's L2

    def sized_out(params):
        return {k: v for k, v in params.items() if k not in ("n", "mib")}

    def record(path):
        return next(r for r in json.loads(path.read_text())["results"] if r["experiment"] == "vector_copy"
                    and r["variant"] == m["variant"] and sized_out(r["params"]) == sized_out(m["params"]))

    ra, rb = record(H100), record(H200)
    assert ra["bytes"] != rb["bytes"] and m["per"] == "bytes"
    assert m["ratio"] == pytest.approx((ra["time_s"]["median"] / ra["bytes"]) / (rb["time_s"]["median"] / rb["bytes"]),
                                       rel=1e-12)
    a, b = _records(H100), _records(H200)
    exact = [k for k in a if k in b]
    assert len(doc["matches"]) > len(exact)  # the exact pairs plus the sweeps sized from each GPU's L2


def _perturbed(factor_for) -> tuple[dict, dict]:
    """A (the H200 run) and B: the same records with every time scaled by factor_for(record)."""
    a = json.loads(H200.read_text())
    b = copy.deepcopy(a)
    for rec in b["results"]:
        f = factor_for(rec)
        t = rec["time_s"]
        for k in ("median", "min", "max", "p10", "p90", "mean"):
            t[k] *= f
        t["samples"] = [s * f for s in t["samples"]]
    return a, b


def _factor(rec: dict, i: int) -> float:
    """Within the p10-p90 spread (tie), beyond it slower, beyond it faster, by record index."""
    t = rec["time_s"]
    width = t["p90"] / t["p10"]
    return (1 + (width - 1) / 2, width * 1.01, 1 / (width * 1.01))[i % 3]


def test_same_gpu_perturbed_within_spread_is_a_tie_outside_a_win_or_loss(tmp_path, run_cli):
    index = {}
    a, b = _perturbed(lambda rec: _factor(rec, index.setdefault(id(rec), len(index))))
    pa, pb = _write(tmp_path, "main", a), _write(tmp_path, "change", b)
    code, out, _ = run_cli("compare", pa, pb, "--json")
    assert code == 0
    matches = json.loads(out)["matches"]
    assert len(matches) == len(a["results"])
    for i, (m, ra) in enumerate(zip(matches, a["results"])):
        f = _factor(ra, i)
        assert m["ratio"] == pytest.approx(1 / f, rel=1e-12)
        assert m["verdict"] == ("tie", "slower", "faster")[i % 3], (i, m["variant"])
    code, text, _ = run_cli("compare", pa, pb)
    rows = _table_rows(text, "experiment | variant | params")
    assert [r[9] for r in rows[:3]] == ["tie (within noise)", "B slower", "B faster"]
    summary = {r[0]: r for r in _table_rows(text, "experiment | matched")}
    n_matmul = sum(r["experiment"] == "matmul" for r in a["results"])
    assert summary["matmul"][1] == str(n_matmul)


def _record(median: float, p10: float, p90: float, variant="k") -> dict:
    return dict(experiment="e", variant=variant, params=dict(size=1), bytes=8, flops=None,
                time_s=dict(median=median, min=p10, max=p90, p10=p10, p90=p90, samples=[p10, median, p90], n=3),
                gbps=None, gflops=None, pct_of_ceiling=None, ceiling=None, verified=True, kind="kernel")


def _run(*records) -> dict:
    return dict(schema=1, meta=dict(date="2026-01-01"), device=dict(name="GPU", cc=[9, 0]),
                ceilings={}, experiments={}, results=list(records))


@pytest.mark.parametrize("b_times, code, verdict", [
    ((1.10, 1.00, 1.20), 0, "tie"),      # ratio 0.909 < 0.95 but the spreads overlap: never a failure
    ((1.50, 1.45, 1.55), 1, "slower"),   # ratio 0.667 outside the noise: fails
    ((1.02, 1.019, 1.021), 0, "slower"),  # slower outside the noise, but ratio 0.980 >= 0.95
    ((0.50, 0.49, 0.51), 0, "faster"),
])
def test_fail_below_counts_only_losses_outside_the_noise(tmp_path, run_cli, b_times, code, verdict):
    a = _run(_record(1.0, 0.999 if b_times[0] == 1.02 else 0.9, 1.001 if b_times[0] == 1.02 else 1.1))
    b = _run(_record(*b_times))
    pa, pb = _write(tmp_path, "a", a), _write(tmp_path, "b", b)
    got, out, err = run_cli("compare", pa, pb, "--json", "--fail-below", "0.95")
    assert got == code
    m = json.loads(out)["matches"][0]
    assert m["verdict"] == verdict and m["ratio"] == pytest.approx(1.0 / b_times[0])
    if code:
        assert err.strip() == f"gpumemlab compare: 1 records below 0.95: e/k ({1.0 / b_times[0]:.3f})"
        assert json.loads(out)["failed"] == [f"e/k ({1.0 / b_times[0]:.3f})"]


def test_fleet_flags_the_outlier_and_only_it(tmp_path, run_cli):
    docs = []
    for f in (1.0, 1.01, 0.99, 1.005, 1.0):
        _, doc = _perturbed(lambda rec, f=f: f)
        docs.append(doc)
    slow = docs[4]["results"][7]  # node 5 runs this record 30% slower; another 5% slower
    for rec, f in ((slow, 1.3), (docs[4]["results"][9], 1.05)):
        for k in ("median", "p10", "p90", "min", "max"):
            rec["time_s"][k] *= f
    paths = [_write(tmp_path, f"node{j}", d) for j, d in enumerate(docs)]
    code, out, _ = run_cli("compare", *paths, "--json", "--fail-below", "0.9")
    assert code == 1
    doc = json.loads(out)
    flagged = [(r["variant"], r["params"], r["outliers"]) for r in doc["rows"] if r["outliers"]]
    assert flagged == [(slow["variant"], slow["params"], [4])]
    row = next(r for r in doc["rows"] if r["outliers"])
    times = sorted(r["time_s"]["median"] for r in (d["results"][7] for d in docs))
    assert row["fleet_median"] == times[2] and row["relative"][4] == pytest.approx(times[2] / slow["time_s"]["median"])
    assert doc["failed"] == [f"{slow['experiment']}/{slow['variant']} on node4 ({row['relative'][4]:.3f})"]
    code, out, _ = run_cli("compare", *paths, "--json", "--outlier-rel", "0.02")
    assert code == 0
    assert sum(bool(r["outliers"]) for r in json.loads(out)["rows"]) == 2  # the 5% one too (4.5% from the median)
    code, text, _ = run_cli("compare", *paths)
    assert "| experiment | variant | params | fleet median | node0 | node1 | node2 | node3 | node4 |" in text
    assert text.count("**!**") == 1 + text.count("Flagged **!**")


@pytest.mark.parametrize("argv, message", [
    (["compare", str(H100)], "gpumemlab compare: needs at least two results.json files"),
    (["compare", str(H100), "missing.json"], "gpumemlab compare: no such file: missing.json"),
    (["compare", str(H100), str(H200), str(H200), "--spread", "min-max"],
     "gpumemlab compare: --spread applies to two runs; a fleet compares medians"),
    (["compare", str(H100), str(H200), "--ignore-param", "offset"],
     "gpumemlab compare: offset_copy/seed kernel: several records share the parameters {'n': '104857600'} "
     "once offset are ignored"),
])
def test_bad_input_is_one_line_exit_2(run_cli, argv, message):
    code, out, err = run_cli(*argv)
    assert code == 2 and out == ""
    assert err.strip() == message


def test_not_a_results_file_is_one_line(tmp_path, run_cli):
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2]")
    code, _, err = run_cli("compare", str(H100), str(bad))
    assert code == 2 and err.strip() == f"gpumemlab compare: {bad}: not a gpumemlab results.json (no 'results' and 'device')"


def test_labels_fall_back_to_paths_when_folders_collide(tmp_path):
    from gpumemlab.report.compare import load_runs

    runs = load_runs([str(H200), str(H200)])
    assert [r.label for r in runs] == [f"{H200}#1", f"{H200}#2"]
    assert [r.label for r in load_runs([str(H100), str(H200)])] == ["nvidia-h100-80gb-hbm3", "nvidia-h200"]
