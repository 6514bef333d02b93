"""The latency ladder without a GPU: working sets from the L2 size, Little's law exactly, and the findings on
stand-in records (quoted honestly)."""

from __future__ import annotations

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.experiments.dram_latency import working_sets
from gpumemlab.model.dram import bytes_in_flight


def test_working_sets_grow_by_four_up_to_the_l2_factor():
    l2 = 50 * 2**20
    assert working_sets(l2, dict(min_kib=16, l2_factor=8.0)) == [
        16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 400 << 20]
    assert working_sets(l2, dict(min_kib=16, l2_factor=0.01)) == [16 << 10, 64 << 10, 256 << 10, 524288]


def test_littles_law_multiplies_bandwidth_by_latency():
    got = bytes_in_flight(3000.0, 600.0, 132, 2048)  # 3000 GB/s x 600 ns = 1.8 MB
    assert got["bytes"] == 1_800_000
    assert got["bytes_per_sm"] == pytest.approx(1_800_000 / 132, rel=1e-15)
    assert got["bytes_per_thread"] == pytest.approx(1_800_000 / 132 / 2048, rel=1e-15)
    assert got["loads16_per_thread"] == pytest.approx(1_800_000 / 132 / 2048 / 16, rel=1e-15)


@pytest.mark.parametrize("args, text", [
    ((0, 600, 132, 2048), "bandwidth_gbps must be a finite number > 0, got 0"),
    ((float("nan"), 600, 132, 2048), "bandwidth_gbps must be a finite number > 0, got nan"),
    ((3000, float("inf"), 132, 2048), "latency_ns must be a finite number > 0, got inf"),
    ((3000, 600, 0, 2048), "sm_count must be an int > 0, got 0"),
    ((3000, 600, 132, 2048.0), "threads_per_sm must be an int > 0, got 2048.0"),
    ((True, 600, 132, 2048), "bandwidth_gbps must be a finite number > 0, got True"),
])
def test_littles_law_refuses_impossible_inputs(args, text):
    with pytest.raises(UsageError) as e:
        bytes_in_flight(*args)
    assert str(e.value) == text


def stand_in_records():
    from test_findings_cite import _rec

    recs = []
    for kib, ns in ((16, 30.0), (4096, 250.0), (409600, 640.0)):
        steps = 1 << 15
        r = _rec("dram_latency", "ld.global.ca", dict(kib=kib, steps=steps, lines=kib * 8, over_l2=kib / 51200),
                 ns * steps * 1e-9, 0)
        r.gbps = None
        r.extra.update(ns_per_load=r.time_s["median"] / steps * 1e9)
        recs.append(r)
    law = bytes_in_flight(3000.0, recs[-1].extra["ns_per_load"], 132, 2048)
    recs[-1].extra.update(copy_gbps=3000.0, threads_per_sm=2048, **{f"in_flight_{k}": v for k, v in law.items()})
    return recs


def test_findings_give_the_ladder_and_the_bytes_in_flight():
    from gpumemlab.experiments import registry

    found = registry()["dram_latency"].describe(stand_in_records())["findings"]
    assert found[0] == ("ld.global.ca: ns per dependent load by chain size: 16 KiB 30 ns, 4,096 KiB 250 ns, "
                        "409,600 KiB 640 ns")
    assert found[1] == ("ld.global.ca: at 640 ns a load and 3,000 GB/s, Little's law asks for 1.92 MB in flight: "
                        "14.2 KiB per SM, 0.44 float4 loads per thread with 2048 threads resident per SM (seed: a "
                        "DRAM access takes tens of nanoseconds)")


def test_findings_are_honest_on_stand_in_records():
    from test_findings_cite import check_run

    from gpumemlab.bench.records import RunResults

    found = check_run(RunResults(meta={}, device={}, ceilings={}, results=stand_in_records()))
    assert found["dram_latency"] == (True, [])
