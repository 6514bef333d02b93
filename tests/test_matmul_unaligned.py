"""N or K not a multiple of 4 without a GPU: the routes and the wave model that checks the nearest winner."""

import pytest

from gpumemlab.kernels import matmul as K
from gpumemlab.ops.matmul import choice as ops

SKINNY = K.RBConfig.from_name("32x128x16_w32x32_i1_t4x4_s3_a0_b4_o2_p1")
MID = K.RBConfig.from_name("64x128x8_w32x64_i2_t4x4_s3_a0_b3_o2_p1")


def test_routes_by_shape_and_alignment():
    # a made-up GPU of 100 SMs without a tuned entry
    assert ops.route(1, 100, 100, True, None, 100).kind == "gemv" and ops.route(100, 1, 7, True, None, 100).kind == "gemv"
    assert ops.route(64, 128, 32, True, None, 100).kind == "float4"
    assert ops.route(64, 128, 32, False, None, 100).kind == "scalar"
    assert ops.route(4095, 4097, 1023, True, None, 100).kind == "scalar"
    assert ops.route(129, 4096, 1025, True, None, 100).kind == "scalar"  # K unaligned alone


def test_only_the_scalar_route_asks_for_the_wave_check(monkeypatch):
    asked = []
    monkeypatch.setattr(ops, "choose", lambda m, n, k, entry, sms, waves=False: asked.append(waves) or "choice")
    monkeypatch.setattr(ops, "fill_choice", lambda m, n, k, batch, base, sms: base)
    assert ops.route(64, 128, 32, True, None, 100).choice == "choice"
    ops.route(4095, 4097, 1023, True, None, 100)
    assert asked == [False, True]


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
    assert ops.pick(1023, 1025, 1027, WINNERS, times, 132, waves=True) == got
    assert ops.pick(1023, 1025, 1027, WINNERS, times, 132, waves=False) == plain
    assert ops.pick(1023, 1025, 1027, WINNERS, {}, 132, waves=True) == plain  # no times


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


def test_wave_choice_keeps_the_nearest_tiles_unsplit_unless_a_split_is_clearly_faster():
    """777 x 1001 x 513 on the H100 (its 2026-11-26 sweep): the nearest winner, 768^3 at 4 splits, rescaled to 3
    splits (38.4 us predicted) against the same tiles unsplit (36.4 us): 5% apart, inside the 10% margin that guards
    a switch of configuration, and of split-K on the same tiles: the sweep measured unsplit 42.1 us, 3 splits 48.5
    us."""
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


def test_a_split_predicted_within_the_margin_of_the_unsplit_launch_is_not_taken():
    """777 x 1001 x 513 on an H200 (its 2026-11-28 tune): the evidence predicts 3 splits 3% faster than the same tiles
    unsplit; the same run measured the library unsplit at 36.3 us and with 3 splits at 41.6 us (the split launch
    also zeroes C and adds its partial tiles atomically, which the model does not count)."""
    winners = {"768x768x768": (SKINNY.name, 6), "999x1001x1003": (SKINNY.name, 1)}
    times = {"768x768x768": 33.312e-6, "999x1001x1003": 64.288e-6}
    got, predicted = ops.wave_choice(777, 1001, 513, winners, times, 132)
    unsplit, split3 = predicted[ops.Choice(SKINNY, 1)], predicted[ops.Choice(SKINNY, 3)]
    assert split3 == pytest.approx(33.312e-6 * (5 * 176) / (7 * 128)) and unsplit * 0.9 < split3 < unsplit
    assert min(predicted, key=predicted.get) == ops.Choice(SKINNY, 3) and got == ops.Choice(SKINNY, 1)
    # a split predicted more than the margin faster is still taken (a quarter of the unsplit evidence's time)
    got, _ = ops.wave_choice(777, 1001, 513, winners, dict(times, **{"768x768x768": 33.312e-6 / 4}), 132)
    assert got.config == SKINNY and got.splits > 1
