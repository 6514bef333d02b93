"""Ceilings are the best a run measured: a record above one raises it, and the report says which (no GPU)."""

from __future__ import annotations

import pytest

from gpumemlab.bench.records import Record
from gpumemlab.suite.ceilings import raise_ceilings


def rec(variant: str, gbps=None, gflops=None, ceiling="read_gbps") -> Record:
    return Record(experiment="reduce", variant=variant, params=dict(n=8), bytes=8, flops=None,
                  time_s=dict(median=1.0, samples=[1.0]), gbps=gbps, gflops=gflops, pct_of_ceiling=None,
                  ceiling=ceiling, verified=True)


def ceilings():
    return {"read_gbps": dict(value=1000.0, unit="GB/s", how="read_sum"),
            "sgemm_cublas_gflops": dict(value=50.0, unit="GFLOP/s", how="cuBLAS")}


def test_a_record_above_its_ceiling_raises_it_and_is_named():
    c = ceilings()
    records = [rec("a", 900.0), rec("gpumemlab.sum", 1060.0), rec("b", 1050.0), rec("mm", gflops=40.0,
                                                                                  ceiling="sgemm_cublas_gflops")]
    assert raise_ceilings(c, records) is True
    assert c["read_gbps"]["value"] == 1060.0 and c["read_gbps"]["measured_as"] == 1000.0
    assert c["read_gbps"]["set_by"] == dict(experiment="reduce", variant="gpumemlab.sum", params=dict(n=8))
    assert [r.pct_of_ceiling for r in records] == pytest.approx([900 / 10.6, 100.0, 1050 / 10.6, 80.0])
    assert "set_by" not in c["sgemm_cublas_gflops"] and c["sgemm_cublas_gflops"]["value"] == 50.0


def test_raising_twice_changes_nothing_and_keeps_the_first_measurement():
    c = ceilings()
    records = [rec("x", 1200.0)]
    assert raise_ceilings(c, records) is True
    assert raise_ceilings(c, records) is False  # already the best
    assert (c["read_gbps"]["value"], c["read_gbps"]["measured_as"]) == (1200.0, 1000.0)
    assert records[0].pct_of_ceiling == 100.0


def test_no_record_above_keeps_the_ceiling_and_fills_percentages():
    c = ceilings()
    records = [rec("x", 250.0), rec("untied", 5000.0, ceiling=None)]
    assert raise_ceilings(c, records) is False
    assert c == ceilings()
    assert records[0].pct_of_ceiling == 25.0 and records[1].pct_of_ceiling is None


@pytest.mark.parametrize("doubt", [dict(flags=["noisy"]), dict(flags=["throttled", "noisy"]), dict(verified=False)])
def test_a_doubtful_record_never_raises_a_ceiling(doubt):
    c = ceilings()
    high = rec("fast but doubtful", 5000.0)
    for k, v in doubt.items():
        setattr(high, k, v)
    records = [high, rec("clean", 1100.0)]
    assert raise_ceilings(c, records) is True
    assert c["read_gbps"]["value"] == 1100.0 and c["read_gbps"]["set_by"]["variant"] == "clean"
    assert records[0].pct_of_ceiling == pytest.approx(500 / 1.1)  # still stated against the clean ceiling


def test_the_report_names_the_record_and_the_run_that_raised_a_ceiling():
    from gpumemlab.report.format import ceiling_how

    c = dict(value=4435.8, unit="GB/s", how="read_sum<8> (float4 loads), 528 blocks, cold L2", measured_as=4113.1,
             set_by=dict(experiment="library_shapes", variant="cupy.sum", params=dict(shape="16384x16384")))
    meta = dict(command="gpumemlab bench --out a", date="D0",
                merged_runs=[dict(command="gpumemlab bench --only library_shapes", date="D1",
                                  experiments=["library_shapes"])])
    assert ceiling_how(c, meta) == ("raised by library_shapes / cupy.sum (shape=16384x16384), run gpumemlab bench "
                                    "--only library_shapes (D1); the ceiling's own measurement, read_sum<8> (float4 "
                                    "loads), 528 blocks, cold L2, gave 4,113.1 GB/s")
    assert ceiling_how(c, dict(command="gpumemlab bench", date="D0")).split("; ")[0].endswith(
        "run gpumemlab bench (D0)")
    assert ceiling_how(dict(value=1.0, unit="GB/s", how="memcpy"), meta) == "memcpy"


def test_a_ceiling_raised_by_a_record_that_no_longer_qualifies_comes_back_down():
    c = ceilings()
    noisy = rec("noisy", 5000.0)
    assert raise_ceilings(c, [noisy]) is True and c["read_gbps"]["value"] == 5000.0
    noisy.flags = ["noisy"]  # an older file raised by a flagged record, read again
    assert raise_ceilings(c, [noisy]) is True
    assert c == ceilings() and noisy.pct_of_ceiling == 500.0


# ---------------------------------------------------------------- plausible from both sides

def measured(copy=900.0, read=950.0, sgemm=40000.0) -> dict:
    """Ceilings as measure_ceilings writes them, against a 1000 GB/s, 50 TFLOP/s datasheet."""
    return {"dram_theoretical_gbps": dict(value=1000.0, unit="GB/s"), "fp32_peak_gflops": dict(value=50000.0,
                                                                                                unit="GFLOP/s"),
            "copy_gbps": dict(value=copy, unit="GB/s"), "read_gbps": dict(value=read, unit="GB/s"),
            "sgemm_cublas_gflops": dict(value=sgemm, unit="GFLOP/s")}


@pytest.mark.parametrize("values, problems", [
    (dict(), []),
    (dict(copy=500.0, read=1050.0, sgemm=15000.0), []),                              # every bound itself passes
    (dict(copy=499.0), ["copy_gbps measured 499 GB/s is 0.499x dram_theoretical_gbps (1000), outside 0.5-1.05x"]),
    (dict(copy=1051.0), ["copy_gbps measured 1051 GB/s is 1.051x dram_theoretical_gbps (1000), outside 0.5-1.05x"]),
    (dict(copy=1800.0), ["copy_gbps measured 1800 GB/s is 1.800x dram_theoretical_gbps (1000), outside 0.5-1.05x"]),
    (dict(read=450.0), ["read_gbps measured 450 GB/s is 0.450x dram_theoretical_gbps (1000), outside 0.5-1.05x"]),
    (dict(sgemm=14000.0),
     ["sgemm_cublas_gflops measured 1.4e+04 GFLOP/s is 0.280x fp32_peak_gflops (5e+04), outside 0.3-1.05x"]),
    (dict(sgemm=60000.0),
     ["sgemm_cublas_gflops measured 6e+04 GFLOP/s is 1.200x fp32_peak_gflops (5e+04), outside 0.3-1.05x"]),
])
def test_measured_ceilings_are_checked_from_both_sides(values, problems):
    from gpumemlab.suite.ceilings import implausible_ceilings

    assert implausible_ceilings(measured(**values)) == problems


def test_a_halved_copy_ceiling_raised_by_a_record_is_still_caught():
    """A copy ceiling measured at half its value is raised to a plausible record's; the measured value is kept
    (measured_as) and checked, so the raise does not hide it."""
    from gpumemlab.suite.ceilings import implausible_ceilings

    c = measured(copy=450.0)
    assert raise_ceilings(c, [rec("copy", 900.0, ceiling="copy_gbps")]) is True
    assert (c["copy_gbps"]["value"], c["copy_gbps"]["measured_as"]) == (900.0, 450.0)
    assert implausible_ceilings(c) == [
        "copy_gbps measured 450 GB/s is 0.450x dram_theoretical_gbps (1000), outside 0.5-1.05x"]
    c = measured(copy=900.0)  # a plausible ceiling raised too far
    raise_ceilings(c, [rec("copy", 1100.0, ceiling="copy_gbps")])
    assert implausible_ceilings(c) == [
        "copy_gbps raised 1100 GB/s is 1.100x dram_theoretical_gbps (1000), outside 0.5-1.05x"]


def test_a_run_without_a_datasheet_figure_is_not_judged():
    from gpumemlab.suite.ceilings import implausible_ceilings

    c = measured(copy=1.0, sgemm=1.0)
    del c["dram_theoretical_gbps"], c["fp32_peak_gflops"]
    assert implausible_ceilings(c) == []


@pytest.mark.parametrize("run", ["nvidia-h100-80gb-hbm3", "nvidia-h200"])
def test_the_fixture_runs_ceilings_are_plausible(run):
    """Real ceilings (cut from committed runs, tests/data/runs), raised ones included."""
    import json
    from pathlib import Path

    from gpumemlab.suite.ceilings import implausible_ceilings

    doc = json.loads((Path(__file__).parent / "data" / "runs" / run / "results.json").read_text())
    assert any("measured_as" in c for c in doc["ceilings"].values())
    assert implausible_ceilings(doc["ceilings"]) == []


def test_a_gflops_ceiling_is_raised_by_gflops_only_and_a_tie_raises_nothing():
    c = ceilings()
    fast_bytes = rec("mm", gbps=5000.0, gflops=50.0, ceiling="sgemm_cublas_gflops")  # equal: not above
    assert raise_ceilings(c, [fast_bytes]) is False
    assert c == ceilings() and fast_bytes.pct_of_ceiling == 100.0
    faster = rec("mm2", gbps=1.0, gflops=60.0, ceiling="sgemm_cublas_gflops")
    assert raise_ceilings(c, [fast_bytes, faster]) is True
    assert c["sgemm_cublas_gflops"]["value"] == 60.0 and c["sgemm_cublas_gflops"]["set_by"]["variant"] == "mm2"
    assert fast_bytes.pct_of_ceiling == pytest.approx(50 / 0.6)


def test_a_record_without_a_rate_never_raises_even_a_ceiling_below_one():
    c = {"pcie_gbps": dict(value=0.5, unit="GB/s", how="pageable")}
    untimed = rec("x", ceiling="pcie_gbps")
    assert raise_ceilings(c, [untimed]) is False
    assert c == {"pcie_gbps": dict(value=0.5, unit="GB/s", how="pageable")} and untimed.pct_of_ceiling is None
