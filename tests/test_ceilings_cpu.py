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
