"""`gpumemlab compare`'s reports read whole: a pair and a fleet of hand-built runs whose every ratio, spread, verdict
and outlier is worked out by hand, rendered as markdown and as JSON."""

from __future__ import annotations

import math

import pytest

from gpumemlab.bench.records import Record, RunResults
from gpumemlab.errors import UsageError
from gpumemlab.report import compare


def rec(experiment: str, variant: str, median: float, lo: float | None = None, hi: float | None = None,
        verified: bool = True, nbytes: int | None = 8, flops: int | None = None, **params) -> Record:
    """A record timed at `median`, its p10-p90 spread lo-hi and its min-max spread 10% wider on each side."""
    times = dict(median=median)
    if lo is not None:
        times.update(p10=lo, p90=hi, min=lo * 0.9, max=hi * 1.1)
    return Record(experiment=experiment, variant=variant, params=params, bytes=nbytes, flops=flops, time_s=times,
                  gbps=None, gflops=None, pct_of_ceiling=None, ceiling=None, verified=verified)


def pair_runs() -> tuple[compare.Run, compare.Run]:
    dev_a = dict(name="H100", cc=[9, 0], sm_count=132, l2_bytes=50 * 2**20, total_memory_bytes=80 * 2**30,
                 sm_clock_khz=1980000, memory_clock_khz=2619000, memory_bus_width_bits=5120, driver_version="550.54")
    dev_b = dict(name="H200", cc=[9, 0], sm_count=132, l2_bytes=60 * 2**20, total_memory_bytes=141 * 2**30)
    meta_a = dict(date="2026-01-01", version="0.9", command="gpumemlab run", quick=False, versions={"numpy": "2.1"},
                  merged_runs=[dict(experiments=["copy", "scan"], command="gpumemlab run --only copy",
                                    date="2026-01-02"), dict(experiments=["hist"], command="gpumemlab run")])
    meta_b = dict(date="2026-02-01", version="1.0", command="gpumemlab run --quick", quick=True,
                  versions={"cupy": "13.3", "numpy": "2.2"})
    a = compare.Run("h100", "a/results.json", RunResults(
        meta=meta_a, device=dev_a,
        ceilings={"copy_gbps": dict(value=3000.0, unit="GB/s"), "read_gbps": dict(value=3200.0, unit="GB/s")},
        results=[rec("copy", "vec4", 2e-3, 1.9e-3, 2.1e-3, n=4), rec("copy", "naive", 4e-3, 3.9e-3, 4.1e-3, n=4),
                 rec("scan", "warp", 1e-3, 0.99e-3, 1.01e-3, n=2), rec("scan", "block", 5e-3, 4.5e-3, 5.5e-3, n=2)]))
    b = compare.Run("h200", "b/results.json", RunResults(
        meta=meta_b, device=dev_b,
        ceilings={"copy_gbps": dict(value=4500.0, unit="GB/s"), "sgemm": dict(value=50.0)},  # sgemm: no unit given
        results=[rec("copy", "vec4", 1e-3, 0.95e-3, 1.05e-3, n=4),
                 rec("copy", "naive", 4.1e-3, 3.9e-3, 4.3e-3, verified=False, n=4),
                 rec("scan", "warp", 2e-3, 1.98e-3, 2.02e-3, n=2), rec("hist", "atomic", 3e-6, 2.9e-6, 3.1e-6)]))
    return a, b


# vec4: 2.0/1.0 = 2, range 1.9/1.05 = 1.810 to 2.1/0.95 = 2.211; naive: 4.0/4.1 = 0.976 with 3.9/4.3 = 0.907 to
# 4.1/3.9 = 1.051, a tie; warp: 1.0/2.0 = 0.5 within 0.99/2.02 = 0.490 and 1.01/1.98 = 0.510; the copy geomean is
# sqrt(2 x 0.976) = 1.397.
PAIR_REPORT = """\
# gpumemlab compare

A = h100, B = h200.

## Runs

|  | h100 | h200 |
|---|---|---|
| device | H100 (compute capability 9.0, 132 SMs, 50 MiB L2, 80 GiB) | H200 (compute capability 9.0, 132 SMs, 60 MiB \
L2, 141 GiB) |
| file | a/results.json | b/results.json |
| date | 2026-01-01 | 2026-02-01 |
| version | 0.9 | 1.0 |
| command | gpumemlab run | gpumemlab run --quick |
| quick | False | True |
| merged from | copy, scan: from gpumemlab run --only copy (2026-01-02); hist: from gpumemlab run (date not \
recorded) | - |
| sm_clock_khz | 1980000 | - |
| memory_clock_khz | 2619000 | - |
| memory_bus_width_bits | 5120 | - |
| driver_version | 550.54 | - |
| numpy | 2.1 | 2.2 |
| cupy | - | 13.3 |

## Ceilings

| ceiling | h100 | h200 | B/A |
|---|---|---|---|
| copy_gbps | 3,000.0 GB/s | 4,500.0 GB/s | 1.500 |
| read_gbps | 3,200.0 GB/s | - | - |
| sgemm | - | 50.0  | - |

## Summary per experiment

Speed ratio = time_A / time_B of the medians (> 1: B is faster). A record is a tie when the range from A's p10-p90 \
and B's p10-p90 spreads contains 1.

| experiment | matched | B faster | B slower | tie | geomean B/A | min | max |
|---|---|---|---|---|---|---|---|
| copy | 2 | 1 | 0 | 1 | 1.397 | 0.976 | 2.000 |
| scan | 1 | 0 | 1 | 0 | 0.500 | 0.500 | 0.500 |

## Records

Spreads are p10-p90 relative to each median; unverified records are marked (unverified).

| experiment | variant | params | h100 median | spread | h200 median | spread | speed B/A | range | verdict |
|---|---|---|---|---|---|---|---|---|---|
| copy | vec4 | n=4 | 2.000 ms | -5.0/+5.0% | 1.000 ms | -5.0/+5.0% | 2.000 | 1.810-2.211 | B faster |
| copy | naive (unverified) | n=4 | 4.000 ms | -2.5/+2.5% | 4.100 ms | -4.9/+4.9% | 0.976 | 0.907-1.051 | tie \
(within noise) |
| scan | warp | n=2 | 1.000 ms | -1.0/+1.0% | 2.000 ms | -1.0/+1.0% | 0.500 | 0.490-0.510 | B slower |

## Only in h100 (1 records, not compared)

- scan / block / n=2

## Only in h200 (1 records, not compared)

- hist / atomic / -
"""


def test_pair_report_names_both_runs_their_ceilings_and_each_verdict():
    a, b = pair_runs()
    assert compare.render_pair(compare.compare_pair(a, b)) == PAIR_REPORT


def test_pair_json_carries_each_match_with_its_spread_ends_and_verification():
    a, b = pair_runs()
    doc = compare.compare_pair(a, b).to_dict()
    assert doc["ceilings"] == [dict(ceiling="copy_gbps", unit="GB/s", values=[3000.0, 4500.0]),
                               dict(ceiling="read_gbps", unit="GB/s", values=[3200.0, None]),
                               dict(ceiling="sgemm", unit="", values=[None, 50.0])]
    vec4, naive, warp = doc["matches"]
    assert vec4 == dict(experiment="copy", variant="vec4", params={"n": 4}, kind="kernel", a_median_s=2e-3,
                        a_lo_s=1.9e-3, a_hi_s=2.1e-3, b_median_s=1e-3, b_lo_s=0.95e-3, b_hi_s=1.05e-3, ratio=2.0,
                        ratio_lo=pytest.approx(1.9 / 1.05), ratio_hi=pytest.approx(2.1 / 0.95), verdict="faster",
                        per=None, verified=(True, True))
    assert (naive["verdict"], naive["verified"]) == ("tie", (True, False))
    assert (warp["verdict"], warp["ratio"]) == ("slower", 0.5)
    assert doc["summary"]["copy"] == dict(matched=2, faster=1, slower=0, tie=1,
                                          geomean=pytest.approx(math.sqrt(2 * 4 / 4.1)), min=pytest.approx(4 / 4.1),
                                          max=2.0)
    assert doc["only_b"] == [dict(experiment="hist", variant="atomic", params={})]


def test_pair_of_runs_that_moved_different_bytes_compares_per_byte_over_min_max():
    a = compare.Run("a", "a.json", RunResults(meta={}, device={}, ceilings={}, results=[
        rec("copy", "vec4", 2e-3, 1.9e-3, 2.1e-3, n=4), rec("scan", "warp", 1e-3, 0.99e-3, 1.01e-3, n=2)]))
    b = compare.Run("b", "b.json", RunResults(meta={}, device={}, ceilings={}, results=[
        rec("copy", "vec4", 2e-3, 1.9e-3, 2.1e-3, nbytes=16, n=8), rec("scan", "warp", 1e-3, 0.99e-3, 1.01e-3, n=2)]))
    text = compare.render_pair(compare.compare_pair(a, b, spread="min-max", ignore=("n",)))
    # B moved twice the bytes in the same time: twice as fast per byte; min-max is 1.71-2.31 ms on both sides
    assert ("Spreads are min-max relative to each median; unverified records are marked (unverified). Ratios marked * "
            "are per byte (or flop): the runs moved different amounts of work.") in text
    assert ("| copy | vec4 | n=4 | 2.000 ms | -14.5/+15.5% | 2.000 ms | -14.5/+15.5% | 2.000* | 1.481-2.702 "
            "| B faster |") in text
    assert ("| scan | warp | n=2 | 1.000 ms | -10.9/+11.1% | 1.000 ms | -10.9/+11.1% | 1.000 | 0.802-1.247 "
            "| tie (within noise) |") in text


def test_records_that_did_different_work_compare_per_flop_when_bytes_are_not_declared():
    m = compare.compare_records(rec("gemm", "tiled", 2e-3, 1.8e-3, 2.2e-3, nbytes=None, flops=10),
                                rec("gemm", "tiled", 2e-3, 1.8e-3, 2.2e-3, nbytes=None, flops=30))
    assert (m.per, m.ratio, m.verdict) == ("flops", pytest.approx(3.0), "faster")
    with pytest.raises(UsageError, match=r"^gemm/tiled: the matched records did different work and do not all declare "
                                         r"bytes or flops to compare per unit of$"):
        compare.compare_records(rec("gemm", "tiled", 2e-3, 1.8e-3, 2.2e-3, nbytes=None, flops=10),
                                rec("gemm", "tiled", 2e-3, 1.8e-3, 2.2e-3, nbytes=None, flops=None))


@pytest.mark.parametrize("times, message", [
    (dict(median=1.0, p10=0.5), "e/k time_s: no 'p90' for the p10-p90 spread (try --spread min-max)"),
    (dict(median=-1.0, p10=0.5, p90=2.0), "e/k time_s: 'median' is -1.0: expected a number > 0"),
    (dict(median=1.0, p10=0.0, p90=2.0), "e/k time_s: 'p10' is 0.0: expected a number > 0"),
    (dict(median=1.0, p10=True, p90=2.0), "e/k time_s: 'p10' is not a number"),
    (dict(median=1.0, p10="0.5", p90=2.0), "e/k time_s: 'p10' is not a number"),
])
def test_times_built_in_python_are_checked_before_comparing(times, message):
    bad = rec("e", "k", 1.0, 0.5, 2.0)
    bad.time_s = times
    with pytest.raises(UsageError) as err:
        compare.compare_records(rec("e", "k", 1.0, 0.5, 2.0), bad)
    assert str(err.value) == message


def test_unknown_spread_and_an_ambiguous_match_are_usage_errors():
    a, b = pair_runs()
    with pytest.raises(UsageError, match=r"^unknown spread 'p5-p95': expected one of p10-p90, min-max$"):
        compare.compare_pair(a, b, spread="p5-p95")
    twins = compare.Run("t", "t.json", RunResults(meta={}, device={}, ceilings={}, results=[
        rec("e", "k", 1.0, seed=1, n=2), rec("e", "k", 1.0, seed=2, n=2)]))
    with pytest.raises(UsageError, match=r"^e/k: several records share the parameters \{\} once seed, n are ignored$"):
        compare.compare_pair(twins, twins, ignore=("seed", "n"))


def node(i: int, *records: Record) -> compare.Run:
    return compare.Run(f"node{i}", f"node{i}/results.json", RunResults(
        meta=dict(date=f"2026-03-0{i + 1}"), device=dict(name="H100", cc=[9, 0]), results=list(records),
        ceilings={"copy_gbps": dict(value=3000.0 + 100 * i, unit="GB/s")}))


def fleet_runs() -> list[compare.Run]:
    """vec4: node3 is 1.5 ms against a fleet median of 1.01 ms, 0.6745 x 0.49 / 0.02 = 16.5 > 3.5 modified z-scores
    away: the outlier (node2's 0.98 ms is 1.0 z-score away). hist is held by two nodes only; big and tiled did
    different work on some nodes: their fleet medians are per byte (800 GB/s) and per flop (1,000 GFLOP/s)."""
    big = dict(nbytes=800_000_000, n=100_000_000)
    tiled = dict(nbytes=None, flops=2_000_000_000, n=1000)
    return [node(0, rec("hist", "atomic", 1e-6), rec("copy", "vec4", 1.00e-3, n=4), rec("scan", "warp", 2.0e-3, n=2),
                 rec("copy", "big", 1.0e-3, **big), rec("gemm", "tiled", 2.0e-3, **tiled)),
            node(1, rec("hist", "atomic", 1e-6), rec("copy", "vec4", 1.02e-3, n=4), rec("scan", "warp", 2.1e-3, n=2),
                 rec("copy", "big", 2.0e-3, nbytes=1_600_000_000, n=200_000_000),
                 rec("gemm", "tiled", 2.0e-3, **tiled)),
            node(2, rec("copy", "vec4", 0.98e-3, n=4), rec("copy", "big", 1.0e-3, **big),
                 rec("gemm", "tiled", 16.0e-3, nbytes=None, flops=16_000_000_000, n=2000)),
            node(3, rec("copy", "vec4", 1.50e-3, n=4), rec("scan", "warp", 1.9e-3, n=2),
                 rec("copy", "big", 1.0e-3, **big))]


FLEET_RECORDS = """\
## Records across the fleet

Each cell: the run's median time and, in parentheses, the fleet median over its own time (> 1: faster than the \
fleet). Flagged **!** when an outlier: modified z-score above 3.5 (0.6745 x distance to the fleet median / median \
absolute deviation) and more than 5% from the fleet median. Records held by fewer than three runs are left out.

| experiment | variant | params | fleet median | node0 | node1 | node2 | node3 |
|---|---|---|---|---|---|---|---|
| copy | vec4 | n=4 | 1.010 ms | 1.000 ms (1.010) | 1.020 ms (0.990) | 980.0 us (1.031) | 1.500 ms (0.673) **!** |
| scan | warp | n=2 | 2.000 ms | 2.000 ms (1.000) | 2.100 ms (0.952) | - | 1.900 ms (1.053) |
| copy | big | n=100000000 | 800.0 GB/s | 1.000 ms (1.000) | 2.000 ms (1.000) | 1.000 ms (1.000) | 1.000 ms (1.000) |
| gemm | tiled | n=1000 | 1,000.0 GFLOP/s | 2.000 ms (1.000) | 2.000 ms (1.000) | 16.000 ms (1.000) | - |

4 records compared, 1 outliers flagged.
"""


def test_fleet_report_flags_the_outlier_and_rates_records_of_different_work():
    text = compare.render_fleet(compare.compare_fleet(fleet_runs(), ignore=("n",)))
    head, records = text.split("## Records across the fleet")
    assert "## Records across the fleet" + records == FLEET_RECORDS
    assert head.startswith("# gpumemlab compare (fleet)\n\n## Runs\n\n|  | node0 | node1 | node2 | node3 |\n")
    assert ("\n| date | 2026-03-01 | 2026-03-02 | 2026-03-03 | 2026-03-04 |\n| version | - | - | - | - |\n"
            "| command | - | - | - | - |\n") in head
    assert head.endswith("## Ceilings\n\n| ceiling | node0 | node1 | node2 | node3 |\n|---|---|---|---|---|\n"
                         "| copy_gbps | 3,000.0 GB/s | 3,100.0 GB/s | 3,200.0 GB/s | 3,300.0 GB/s |\n\n")
    assert "B/A" not in head


def test_fleet_json_lists_runs_rule_ceilings_and_rows():
    runs = fleet_runs()
    cmp = compare.compare_fleet(runs, ignore=("n",), rel=0.1)
    doc = cmp.to_dict()
    assert list(doc) == ["runs", "ignore", "outlier_rule", "ceilings", "rows"]
    assert doc["runs"] == [compare._run_info(r) for r in runs]
    assert doc["ignore"] == ["n"] and doc["outlier_rule"] == dict(modified_z_above=3.5, relative_above=0.1)
    assert doc["ceilings"] == [dict(ceiling="copy_gbps", unit="GB/s", values=[3000.0, 3100.0, 3200.0, 3300.0])]
    vec4, warp, big, tiled = doc["rows"]
    assert vec4 == dict(experiment="copy", variant="vec4", params={"n": 4}, medians_s=[1e-3, 1.02e-3, 0.98e-3, 1.5e-3],
                        fleet_median=pytest.approx(1.01e-3),
                        relative=pytest.approx([1.01, 1.01 / 1.02, 1.01 / 0.98, 1.01 / 1.5]), outliers=[3], per=None)
    assert (warp["medians_s"], warp["relative"][2], warp["outliers"]) == ([2e-3, 2.1e-3, None, 1.9e-3], None, [])
    assert (big["per"], big["fleet_median"], big["relative"]) == ("bytes", pytest.approx(1.25e-12), [1.0] * 4)
    assert (tiled["per"], tiled["fleet_median"], tiled["medians_s"]) == ("flops", pytest.approx(1e-12),
                                                                         [2e-3, 2e-3, 16e-3, None])
    row = cmp.rows[0]
    assert cmp.failures(0.9) == [(row, 3)]
    assert cmp.failures(row.relative[3]) == []  # a run exactly at the threshold does not fail


def test_outliers_need_both_a_z_score_and_a_distance_strictly_above_their_limits():
    m = 0.6745
    # deviations m, 0, m, 3.5, 0: MAD m, so the last run is exactly 3.5 modified z-scores away: not an outlier
    at_z = {0: 0.0, 1: m, 2: 2 * m, 3: m + 3.5, 4: m}
    assert compare._outliers(at_z, m, 0.05) == []
    assert compare._outliers({**at_z, 3: m + 3.6}, m, 0.05) == [3]
    # MAD 0 (most runs agree exactly): any run far enough away is an outlier; exactly `rel` away is not
    assert compare._outliers({0: 2.0, 1: 2.0, 2: 2.0, 3: 3.0}, 2.0, 0.5) == []
    assert compare._outliers({0: 2.0, 1: 2.0, 2: 2.0, 3: 3.0}, 2.0, 0.4) == [3]
    # 1.2 is 9% from the median 1.1 but only 0.6745 x 0.1 / 0.1 = 0.67 z-scores: noise of a loose fleet
    assert compare._outliers({0: 1.0, 1: 1.1, 2: 1.2}, 1.1, 0.05) == []
    # MAD 0.1 around the median 1.3: 1.6 is 0.6745 x 0.3 / 0.1 = 2.0 z-scores away (kept), 2.0 is 4.7 (flagged)
    assert compare._outliers({0: 1.2, 1: 1.3, 2: 1.3, 3: 1.4, 4: 1.6}, 1.3, 0.05) == []
    assert compare._outliers({0: 1.2, 1: 1.3, 2: 1.3, 3: 1.4, 4: 2.0}, 1.3, 0.05) == [4]
