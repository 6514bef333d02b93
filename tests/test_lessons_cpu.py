"""The seeds' partial items without a GPU: the analyzer's predictions the experiments record, bad input, and the
findings' arithmetic on synthetic records."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from gpumemlab.errors import UsageError
from gpumemlab.experiments import registry
from gpumemlab.experiments import bank_conflicts_global_bound as BC
from gpumemlab.experiments import block_size_coalescing as BS
from gpumemlab.experiments import coarsening_pitfalls as CP
from gpumemlab.experiments import occupancy_sweep as OS
from gpumemlab.experiments._model import overlap

NEW = ("occupancy_sweep", "bank_conflicts_global_bound", "block_size_coalescing", "coarsening_pitfalls")


def rec(median, p10=None, p90=None, **kw):
    t = dict(median=median, p10=median if p10 is None else p10, p90=median if p90 is None else p90)
    return SimpleNamespace(time_s=t, median_s=median, **kw)


@pytest.mark.parametrize("name", NEW)
def test_registered_with_seed_sources(name):
    exp = registry()[name]
    assert exp.claims[0].from_seed and exp.seed != "-"


def test_occupancy_sweep_keeps_volkov_outside_the_seeds():
    claims = registry()["occupancy_sweep"].claims
    assert [c.source.seed for c in claims] == ["001", "000", None]
    assert claims[2].source.cite == "V. Volkov, 'Better Performance at Lower Occupancy', GTC 2010"


@pytest.mark.parametrize("tile, sectors, eff, verdict", [(2, 2, 25, "uncoalesced"), (4, 4, 50, "uncoalesced"),
                                                         (8, 4, 100, "coalesced"), (16, 4, 100, "coalesced"),
                                                         (32, 4, 100, "coalesced")])
def test_block_size_model(tile, sectors, eff, verdict):
    m = BS.tile_model(tile, 512)
    assert (m["sectors_per_request"], m["efficiency_pct"], m["verdict"]) == (sectors, eff, verdict)
    assert m["b_load"]["sectors_per_request"] == sectors  # B's row load has the same shape as A's


@pytest.mark.parametrize("stride", [1, 2, 4, 8, 16, 32])
def test_bank_model_ways_equal_stride(stride):
    m = BC.shared_model(stride)
    assert m["ways"] == stride and m["wavefronts_per_request"] == stride
    assert m["verdict"] == ("conflict-free" if stride == 1 else f"{stride}-way bank conflict")


def test_bank_expected_adds_in_float32_order():
    x = np.array([1.5, 2.0 ** 24, -3.25], np.float32)
    got = BC.expected(x, 3)
    assert got.dtype == np.float32
    assert got.tolist() == [4.5, 2.0 ** 24, -0.25]  # 2^24 + 1 rounds back to 2^24 at every step


def test_bank_derive_names_the_longer_bound():
    session = SimpleNamespace(ceilings={"copy_gbps": {"value": 1000.0}},
                              device=dict(sm_clock_khz=1_000_000, sm_count=10))
    r = rec(2e-3, bytes=8e5, model={"wavefronts_per_request": 32},
            extra=dict(n=100_000, shared_ops_per_float=2))
    BC.derive([r], session)
    # shared: 100000/32 warps x 2 ops x 32 wavefronts / (10 SMs x 1e9/s) = 20 us; DRAM: 8e5 B / 1e12 B/s = 0.8 us
    assert r.extra["model_bound"] == "shared"
    assert r.extra["model_shared_s"] == pytest.approx(20e-6)
    assert r.extra["model_dram_s"] == pytest.approx(0.8e-6)
    assert r.extra["time_over_model_bound"] == pytest.approx(100.0)


def test_bank_findings_call_overlapping_ranges_a_tie():
    base = rec(1.0, 0.99, 1.01, params=dict(reps=1, stride=1, ways=1), extra={"model_bound": "global"},
               pct_of_ceiling=70.0)
    near = rec(1.005, 1.0, 1.02, params=dict(reps=1, stride=2, ways=2), extra={"model_bound": "global"})
    far = rec(2.0, 1.9, 2.1, params=dict(reps=1, stride=32, ways=32), extra={"model_bound": "shared"})
    (line,) = BC.findings([base, near, far])
    assert "2-way 1.00x (global-bound by the model, a tie (p10-p90 overlap))" in line
    assert "32-way 2.00x (shared-bound by the model)" in line
    assert line.endswith("conflict-free at 70% of the copy ceiling")


def test_overlap_is_symmetric_and_strict():
    a, b, c = rec(1.0, 0.9, 1.1), rec(1.2, 1.1, 1.3), rec(1.3, 1.11, 1.4)
    assert overlap(a, b) and overlap(b, a)
    assert not overlap(a, c) and not overlap(c, a)


def test_occupancy_saturation_is_the_lowest_occupancy_reaching_the_share():
    def r(ilp, occ, gbps):
        return SimpleNamespace(params=dict(ilp=ilp, occupancy_pct=occ), gbps=gbps)
    rows = [r("a", 12.5, 50.0), r("a", 50.0, 95.0), r("a", 100.0, 100.0), r("b", 12.5, 91.0), r("b", 25.0, 99.0)]
    best, first = OS.saturation(rows, 0.9)
    assert best == 100.0
    assert first["a"].params["occupancy_pct"] == 50.0 and first["b"].params["occupancy_pct"] == 12.5


def test_occupancy_ilp_parsing():
    assert OS.parse_ilp("float4x4") == ("float4", 4)
    with pytest.raises(UsageError, match=r"^occupancy_sweep: bad ilp 'double2x3': expected TYPExUNROLL with TYPE in "
                                         r"float, float2, float4 and UNROLL in 1, 2, 4, e.g. float4x4$"):
        OS.parse_ilp("double2x3")


@pytest.mark.parametrize("name, key, value, message", [
    ("bank_conflicts_global_bound", "strides", [3],
     "bank_conflicts_global_bound: stride 3 is not instantiated; strides: 1, 2, 4, 8, 16, 32"),
    ("block_size_coalescing", "block_sizes", [12],
     "block_size_coalescing: BLOCK_SIZE 12 is not instantiated; block sizes: 2, 4, 8, 16, 32"),
    ("coarsening_pitfalls", "factors", [3], "coarsening_pitfalls: factor 3 is not instantiated; factors: 1, 2, 4, 8"),
])
def test_bad_parameters_refused_before_any_gpu_work(name, key, value, message):
    exp = registry()[name]
    with pytest.raises(UsageError) as err:
        next(iter(exp.cases(None, dict(exp.params, **{key: value}))))
    assert str(err.value) == message


def test_coarsening_findings_show_blocks_registers_and_ties():
    def r(c, median, p10, p90, regs, occ, blocks):
        return rec(median, p10, p90, params=dict(size=512, coarse=c), kind="kernel", speedup_vs_naive=1.0 / median,
                   extra=dict(blocks=blocks, resident_slots=264), model=dict(registers=regs, driver_occupancy_pct=occ))
    rows = [r(1, 1.0, 0.98, 1.02, 31, 100.0, 256), r(2, 1.01, 0.99, 1.03, 32, 100.0, 128),
            r(8, 4.0, 3.9, 4.1, 40, 50.0, 32)]
    (line,) = CP.findings(rows)
    assert line == ("512^3, speed vs C=1: C=1: 1.00x, 256 blocks for 264 slots, 31 regs, 100% occupancy; "
                    "C=2: 0.99x (a tie: p10-p90 overlap), 128 blocks for 264 slots, 32 regs, 100% occupancy; "
                    "C=8: 0.25x, 32 blocks for 264 slots, 40 regs, 50% occupancy")


def test_committed_occupancy_sweep_analyzer_matches_driver():
    """The analyzer, given the padding above 48 KiB (opt-in), predicts the driver's resident blocks at every point."""
    from committed_runs import H100, committed_run
    from gpumemlab.model import occupancy

    res = committed_run(H100)
    recs = [r for r in res.results if r.experiment == "occupancy_sweep"]
    assert {r.model["driver_blocks_per_sm"] for r in recs} == {1, 2, 3, 4, 6, 8}
    for r in recs:
        smem = r.model["shared_bytes"] + r.extra["padding_smem_bytes"]
        m = occupancy(OS.BLOCK, r.model["registers"], smem, cc=tuple(res.device["cc"]), opt_in=smem > 48 * 1024)
        assert m["blocks_per_sm"] == r.model["driver_blocks_per_sm"] == r.params["blocks_per_sm"]
