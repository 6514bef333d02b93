"""N or K not a multiple of 4 without a GPU: the padded copies' geometry, the pad-or-scalar decision, the routes,
the wave model that checks the nearest winner, and the options that force each (issue 11)."""

import json

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.kernels import matmul as K
from gpumemlab.ops import matmul as ops

# a made-up GPU: 100 SMs of cc 9.0 (no tuned entry borrows for it), 2 GHz, 4 TB/s (2 GHz x 1000 bytes x 2)
GPU = dict(name="test GPU", sm_count=100, cc=[9, 0], sm_clock_khz=2_000_000, memory_clock_khz=2_000_000,
           memory_bus_width_bits=8000)
PEAK = 100 * 2e9 * 128 * 2  # 51.2 TFLOP/s
DRAM = 4e12

SKINNY = K.RBConfig.from_name("32x128x16_w32x32_i1_t4x4_s3_a0_b4_o2_p1")
MID = K.RBConfig.from_name("64x128x8_w32x64_i2_t4x4_s3_a0_b3_o2_p1")


def test_pad_pitch_and_copy_blocks():
    assert [K.pad_pitch(c) for c in (1, 3, 4, 5, 1025, 1028)] == [4, 4, 4, 8, 1028, 1028]
    assert K.pad_blocks(1023, 1027) == 9 * 128  # 257 float4s: 9 blocks of 32 across; 1023 rows: 128 blocks of 8
    assert K.pad_blocks(8, 128) == 1 and K.pad_blocks(9, 129) == 4 and K.pad_blocks(0, 5) == 0


@pytest.mark.parametrize("shape, aligned, want", [
    ((1023, 1025, 1027), True, (1028, 1028, True, True, 4 * (1023 * 2055 + 1027 * 2053))),
    ((64, 128, 30), True, (32, 128, True, False, 4 * 64 * 62)),     # K unaligned: A alone
    ((64, 130, 32), True, (32, 132, False, True, 4 * 32 * 262)),    # N unaligned: B alone
    ((64, 128, 32), True, (32, 128, False, False, 0)),              # nothing to pad
    ((64, 128, 32), False, (32, 128, True, True, 4 * (64 * 64 + 32 * 256))),  # misaligned pointers: both copied
])
def test_pad_geometry(shape, aligned, want):
    g = ops.pad_geometry(*shape, aligned, aligned)
    assert (g.lda, g.ldb, g.copy_a, g.copy_b, g.copy_bytes) == want
    assert g.needed == (want[2] or want[3])
    assert g.rows == ((shape[0] if want[2] else 0), (shape[2] if want[3] else 0))


def test_pad_geometry_copy_blocks_cover_both_operands():
    g = ops.pad_geometry(1023, 1025, 1027)
    assert g.blocks == 9 * 128 + 9 * 129  # A 1023 x 1028, B 1027 x 1028
    assert ops.pad_geometry(64, 128, 30).blocks == 1 * 8  # A alone: 8 float4s across, 64 rows


def test_pad_decision_compares_copy_bytes_with_the_products_flops():
    big = ops.pad_decision(4095, 4097, 1023, GPU)
    copy = 4 * (4095 * (1023 + 1024) + 1023 * (4097 + 4100))
    assert big.copy_bytes == copy and big.flops == 2.0 * 4095 * 4097 * 1023
    assert big.copy_s == pytest.approx(copy / DRAM) and big.gemm_s == pytest.approx(big.flops / PEAK)
    assert big.pad and big.share == pytest.approx(0.0250, abs=1e-4)
    small = ops.pad_decision(777, 1001, 513, GPU)  # 7.3 MB of copies (1.83 us) for 0.80 GFLOP (15.6 us)
    assert small.copy_bytes == 4 * (777 * (513 + 516) + 513 * (1001 + 1004))
    assert not small.pad and small.share == pytest.approx(0.1173, abs=1e-4)
    assert "> 0.1" in small.reason and "<= 0.1" in big.reason
    aligned = ops.pad_decision(1024, 1024, 1024, GPU)
    assert not aligned.pad and aligned.copy_bytes == 0 and aligned.share is None
    assert ops.pad_decision(1024, 1024, 1024, GPU, aligned=False).copy_bytes == 4 * 2 * 1024 * 2048
    nameless = ops.pad_decision(4095, 4097, 1023, dict(name="x", sm_count=10, cc=[9, 0]))
    assert not nameless.pad and "no FP32 peak" in nameless.reason


@pytest.mark.parametrize("cc,lanes", [((7, 5), 64), ((8, 0), 64), ((8, 6), 128), ((9, 0), 128), ((12, 0), 128)])
def test_device_peaks_from_the_attributes(cc, lanes):
    from gpumemlab.suite import ceilings

    dev = dict(GPU, cc=list(cc))
    assert ops._device_peaks(dev) == (pytest.approx(100 * 2e9 * lanes * 2 / 1e9), pytest.approx(DRAM / 1e9))
    assert ceilings.fp32_peak_gflops(dev) == ops._device_peaks(dev)[0]  # one formula for the suite and the library
    assert ops._device_peaks(dict(GPU, cc=[6, 1]))[0] is None  # no lane count: no peak, no padding model
    assert ops._device_peaks(dict(name="x", cc=list(cc))) == (None, None)


def test_pad_decision_threshold_is_the_copy_share(monkeypatch):
    share = ops.pad_decision(1023, 1025, 1027, GPU).share
    monkeypatch.setattr(ops, "PAD_MAX_COPY_SHARE", share * 1.01)
    assert ops.pad_decision(1023, 1025, 1027, GPU).pad
    monkeypatch.setattr(ops, "PAD_MAX_COPY_SHARE", share * 0.99)
    assert not ops.pad_decision(1023, 1025, 1027, GPU).pad


def test_routes_by_shape_and_mode():
    assert ops.route(1, 100, 100, device=GPU).kind == "gemv" and ops.route(100, 1, 7, device=GPU).kind == "gemv"
    for mode in ops.ROUTES:
        assert ops.route(64, 128, 32, device=GPU, mode=mode).kind == "float4"
    assert ops.route(4095, 4097, 1023, device=GPU, mode="auto").kind == "pad"
    assert ops.route(4095, 4097, 1023, device=GPU, mode="direct").kind == "scalar"
    assert ops.route(129, 4097, 1025, device=GPU, mode="auto").kind == "scalar"  # copies: 0.41 of the product
    forced = ops.route(129, 4097, 1025, device=GPU, mode="pad")
    assert forced.kind == "pad" and (forced.geometry.lda, forced.geometry.ldb) == (1028, 4100)
    assert not forced.decision.pad  # the record still says what auto would have done
    odd_ptrs = ops.route(64, 128, 32, aligned=False, device=GPU, mode="pad")
    assert odd_ptrs.kind == "pad" and odd_ptrs.geometry.copy_a and odd_ptrs.geometry.copy_b
    with pytest.raises(UsageError, match="route 'fast'"):
        ops.route(64, 128, 30, device=GPU, mode="fast")


def test_default_route_is_direct_with_the_wave_check():
    assert ops._OPTIONS == dict(route="direct", waves="unaligned")
    assert ops.route(4095, 4097, 1023, device=GPU).kind == "scalar"  # auto would pad (next test)


def test_route_record_is_json():
    rec = ops.route(4095, 4097, 1023, device=GPU, mode="auto").as_dict()
    assert rec["kind"] == "pad" and rec["config"] in {c.name for c in K.CANDIDATES} and rec["splits"] >= 1
    assert rec["pad"]["lda"] == 1024 and rec["pad"]["ldb"] == 4100 and rec["pad"]["copy_bytes"] > 0
    assert rec["decision"]["pad"] is True and 0 < rec["decision"]["share"] < ops.PAD_MAX_COPY_SHARE
    json.dumps(rec)
    with ops.options(route="direct", waves="off"):
        d = ops.describe(4095, 4097, 1023, device=GPU)
    assert d["kind"] == "scalar" and d["options"] == dict(route="direct", waves="off")


def test_options_are_scoped_and_checked():
    before = dict(ops._OPTIONS)
    with ops.options(route="pad", waves="all") as got:
        assert got == dict(route="pad", waves="all") == ops._OPTIONS
        with ops.options(waves="off"):
            assert ops._OPTIONS == dict(route="pad", waves="off")
        assert ops._OPTIONS["waves"] == "all"
    assert ops._OPTIONS == before == dict(route="direct", waves="unaligned")
    with pytest.raises(UsageError, match="route"):
        with ops.options(route="padded"):
            pass
    with pytest.raises(UsageError, match="waves"):
        with ops.options(waves=True):
            pass
    assert ops._OPTIONS == before


def test_pad_kernel_instantiations():
    cfg = K.CANDIDATES[6]  # ORDER 0, PIN 0: the padded name keeps them written out
    assert cfg.spec(4, pad=True).name == "register_blocked<128, 128, 16, 64, 64, 4, 4, 4, 2, 4, 1, 2, false, 1, 0, 0, 1>"
    assert cfg.spec(4).name == "register_blocked<128, 128, 16, 64, 64, 4, 4, 4, 2, 4, 1, 2, false, 1>"
    assert K.DEFAULT.spec(4, True, pad=True).name.endswith("true, 1, 2, 1, 1>")
    with pytest.raises(ValueError, match="vec must be 4"):
        cfg.spec(1, pad=True)
    assert K.PAD_COPY in K.KERNELS
    assert all(c.spec(4, s, pad=True) in K.KERNELS for c in K.CANDIDATES for s in (False, True))


# ---------------------------------------------------------------- the wave model

def test_busiest_sm_work():
    # 64 x 64 tiles of 1000 x 1000: 256 blocks on 100 SMs -> 3 on the busiest, each 64 x 64 x 1000
    assert ops.busiest_sm_work(K.SMALL, 1000, 1000, 1000, 1, 100) == 3 * 64 * 64 * 1000
    # 4 blocks: 1 per SM, counted as the 2 (128-thread) blocks that fill one
    assert ops.busiest_sm_work(K.SMALL, 100, 100, 1000, 1, 100) == 2 * 64 * 64 * 1000
    assert ops.busiest_sm_work(K.DEFAULT, 100, 100, 1000, 1, 100) == 1 * 128 * 256 * 1008  # 256 threads fill it
    # 3 splits of 1027 in 8-deep steps: 43 steps (344) each; 16 x 9 tiles x 3 = 432 blocks -> 5 per SM of 100
    assert ops.busiest_sm_work(MID, 1023, 1025, 1027, 3, 100) == 5 * 64 * 128 * 344


WINNERS = {"1024x1024x1024": (SKINNY.name, 1), "1536x1536x1536": (MID.name, 4)}


def test_wave_choice_leaves_a_winner_whose_tiles_spill_into_another_wave():
    """1023 x 1025 x 1027 takes the 1024^3 winner by distance, but its 128-wide tiles need a ninth column of blocks:
    3 on the busiest of 132 SMs instead of 2. The 64 x 128 winner of 1536^3, at 4 splits, is predicted faster."""
    times = {"1024x1024x1024": 62e-6, "1536x1536x1536": 176e-6}
    got, predicted = ops.wave_choice(1023, 1025, 1027, WINNERS, times, 132)
    plain = ops.Choice(SKINNY, 1)
    assert ops.nearest_measured(1023, 1025, 1027, WINNERS) == plain
    assert predicted[plain] == pytest.approx(62e-6 * (3 * 1040) / (2 * 1024))
    # 1536^3 at 4 splits: 1152 blocks, 9 per SM, 384 deep; 1027 keeps the depth with 3 splits, tried with 2 and 4
    base = 9 * 384
    assert predicted[ops.Choice(MID, 2)] == pytest.approx(176e-6 * 3 * 520 / base)
    assert predicted[ops.Choice(MID, 3)] == pytest.approx(176e-6 * 4 * 344 / base)
    assert predicted[ops.Choice(MID, 4)] == pytest.approx(176e-6 * 5 * 264 / base)
    assert got == ops.Choice(MID, 4)
    # the same through choose, and without the check the nearest winner as before
    assert ops.choose(1023, 1025, 1027, GPU | dict(sm_count=132), winners=WINNERS, times=times, waves=True) == got
    assert ops.choose(1023, 1025, 1027, GPU | dict(sm_count=132), winners=WINNERS, times=times, waves=False) == plain
    assert ops.choose(1023, 1025, 1027, GPU | dict(sm_count=132), winners=WINNERS, waves=True) == plain  # no times


def test_wave_choice_keeps_the_nearest_winner_unless_clearly_beaten():
    plain = ops.Choice(SKINNY, 1)
    slow = {"1024x1024x1024": 62e-6, "1536x1536x1536": 250e-6}  # 95.5 us predicted against 94.5: not 10% faster
    assert ops.wave_choice(1023, 1025, 1027, WINNERS, slow, 132)[0] == plain
    exact, predicted = ops.wave_choice(1024, 1024, 1024, WINNERS, {"1024x1024x1024": 1.0, "1536x1536x1536": 1e-9}, 132)
    assert exact == plain and predicted == {}  # a measured shape keeps its measured winner
    far = {"1024x1024x1024": (SKINNY.name, 1), "8192x8192x8192": (MID.name, 1)}  # beyond the reach: no evidence
    _, predicted = ops.wave_choice(1023, 1025, 1027, far, {"1024x1024x1024": 62e-6, "8192x8192x8192": 1e-9}, 132)
    assert set(predicted) == {plain}
    assert ops.wave_choice(1, 2, 3, {"9x9x9": ("gone", 1)}, {"9x9x9": 1.0}, 132) is None


def test_float4_only_skips_shapes_the_scalar_kernel_was_measured_on():
    winners = {"999x1001x1003": (MID.name, 2), "1024x1024x1024": (SKINNY.name, 1)}
    dev = GPU | dict(sm_count=132)
    assert ops.choose(1023, 1025, 1027, dev, winners=winners, waves=False).config == SKINNY  # 1024^3 is nearer
    assert ops.choose(1001, 1001, 1001, dev, winners=winners, waves=False).config == MID
    assert ops.choose(1001, 1001, 1001, dev, winners=winners, waves=False, float4_only=True).config == SKINNY
    only_odd = {"999x1001x1003": (MID.name, 2)}  # nothing measured by float4: every shape counts
    assert ops.choose(1001, 1001, 1001, dev, winners=only_odd, waves=False, float4_only=True).config == MID


def test_wave_choice_scales_split_and_unsplit_evidence_apart():
    """777 x 1001 x 513 (H200, docs/notes/matmul.md): its nearest winner, 768^3 at 6 splits, scaled by multiply-adds
    alone chose 3 splits (0.83x cuBLAS), while the same tiles unsplit ran 0.97x. An unsplit launch is predicted from
    the nearest shape the configuration won unsplit (999 x 1001 x 1003), a split one from split evidence."""
    winners = {"768x768x768": (SKINNY.name, 6), "999x1001x1003": (SKINNY.name, 1)}
    times = {"768x768x768": 40.08e-6, "999x1001x1003": 70.7e-6}
    got, predicted = ops.wave_choice(777, 1001, 513, winners, times, 132)
    assert ops.nearest_measured(777, 1001, 513, winners) == ops.Choice(SKINNY, 4)  # 768^3's slice depth kept
    # unsplit: 25 x 8 tiles, 2 per SM, 528 deep, against 999 x 1001 x 1003's 2 per SM, 1008 deep
    assert predicted[ops.Choice(SKINNY, 1)] == pytest.approx(70.7e-6 * (2 * 528) / (2 * 1008))
    # split: 768^3 at 6 splits ran 864 blocks, 7 per SM, 128 deep; 777 at 3 splits: 600 blocks, 5 per SM, 176 deep
    assert predicted[ops.Choice(SKINNY, 3)] == pytest.approx(40.08e-6 * (5 * 176) / (7 * 128))
    assert got == ops.Choice(SKINNY, 1)
    # with split evidence alone (the rule before), split 3 is chosen and no unsplit launch is predicted
    alone, predicted = ops.wave_choice(777, 1001, 513, {"768x768x768": (SKINNY.name, 6)}, times, 132)
    assert alone == ops.Choice(SKINNY, 3) and ops.Choice(SKINNY, 1) not in predicted


def test_wave_choice_picks_the_split_factor_of_the_nearest_tiles_without_the_margin():
    """777 x 1001 x 513 on the H100 (its 2026-11-26 sweep): the nearest winner, 768^3 at 4 splits, rescaled to 3
    splits (38.4 us predicted) against the same tiles unsplit (36.4 us): 5% apart, inside the 10% margin that guards
    a switch of configuration. Between split factors of the nearest winner's own tiles the prediction decides: the
    sweep measured unsplit 42.1 us, 3 splits 48.5 us."""
    winners = {"768x768x768": (SKINNY.name, 4), "999x1001x1003": (SKINNY.name, 1)}
    times = {"768x768x768": 41.9e-6, "999x1001x1003": 69.6e-6}
    got, predicted = ops.wave_choice(777, 1001, 513, winners, times, 132)
    assert ops.nearest_measured(777, 1001, 513, winners) == ops.Choice(SKINNY, 3)
    unsplit, split3 = predicted[ops.Choice(SKINNY, 1)], predicted[ops.Choice(SKINNY, 3)]
    assert unsplit == pytest.approx(69.6e-6 * (2 * 528) / (2 * 1008))
    # 768^3 at 4 splits: 576 blocks, 5 per SM, 192 deep; 777 at 3 splits: 600 blocks, 5 per SM, 176 deep
    assert split3 == pytest.approx(41.9e-6 * (5 * 176) / (5 * 192))
    assert split3 * 0.9 < unsplit < split3 and got == ops.Choice(SKINNY, 1)
    # another configuration still needs the margin: MID predicted 5% faster than the best SKINNY factor is not taken
    # (1024 x 1280 x 640, farther than 768^3: 2 blocks of 640 on the busiest SM, against 2 of 520 for 777)
    near = dict(winners, **{"1024x1280x640": (MID.name, 1)})
    times_near = dict(times, **{"1024x1280x640": unsplit * 0.95 * 640 / 520})
    got, predicted = ops.wave_choice(777, 1001, 513, near, times_near, 132)
    assert min(predicted, key=predicted.get).config == MID and got == ops.Choice(SKINNY, 1)
