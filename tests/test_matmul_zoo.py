"""The shape zoo, the nearest-measured-shape chooser and the matrix-vector split rule (no GPU needed)."""

import pytest

from gpumemlab.kernels import matmul as K
from gpumemlab.ops.matmul import choice as C
from gpumemlab.ops.matmul import gemv as G


def test_zoo_covers_every_family_of_shapes():
    from gpumemlab.tune.matmul import GROUPS, ZOO

    assert len(ZOO) >= 40
    assert len({(m, n, k) for _, m, n, k in ZOO}) == len(ZOO)  # no shape twice
    square = [m for m, n, k in GROUPS["square"]]
    assert min(square) == 128 and max(square) == 16384
    assert all(m == 1 for m, _, _ in GROUPS["m1"]) and all(n == 1 for _, n, _ in GROUPS["n1"])
    assert all(k >= 8 * max(m, n) for m, n, k in GROUPS["large_k"])
    assert all(k <= 128 for _, _, k in GROUPS["small_k"])
    assert any(m % 2 and n % 2 for m, n, _ in GROUPS["odd"])


def test_gemv_splits_fill_the_resident_slots_once_with_slices_at_least_64_deep():
    slots = 132 * 8  # an H100 with 8 resident blocks per SM (the one-row kernel)
    # 32 float4 column blocks of 1 x 4096 x 4096: 1056 // 32 -> 33 wanted, chunk rounded to 128 rows -> 32 splits
    assert G.gemv_splits(4096, 4096, 4, slots) == (128, 32)
    assert G.gemv_splits(16384, 16384, 4, slots) == (2048, 8)     # 128 x 8 = 1024 blocks; 9 would need 1152
    assert G.gemv_splits(200_000, 4096, 4, slots) == (4096, 1)  # 1563 column blocks already fill the GPU
    assert G.gemv_splits(100_000, 4096, 4, slots) == (4096, 1)  # 782: a second k range would start a second wave
    assert G.gemv_splits(8, 100, 1, slots) == (104, 1)          # 100 rows: no slice of 64 to spare
    assert G.gemv_splits(8192, 8192, 4, 132 * 2) == (2048, 4)   # eight rows: 2 blocks per SM, 64 x 4 = 256 of 264
    chunk, splits = G.gemv_splits(1001, 3000, 1, slots)
    assert chunk % 8 == 0 and (splits - 1) * chunk < 3000 <= splits * chunk


def test_nearest_measured_shape_gives_its_winner_and_keeps_the_slice_depth():
    big, small = K.CANDIDATES[0].name, K.SMALL.name
    winners = {"1024x1024x1024": (small, 1), "256x256x8192": (big, 8), "8192x8192x8192": (big, 1)}

    def pick(m, n, k):
        return C.pick(m, n, k, winners, {}, 132)

    assert pick(1000, 1000, 1000) == C.Choice(K.SMALL, 1)
    assert pick(8000, 8200, 8100) == C.Choice(K.CANDIDATES[0], 1)
    # 256 x 256 x 16384: the winner's 1024-deep slices -> 16 splits; half the depth -> 4
    assert pick(256, 256, 16384) == C.Choice(K.CANDIDATES[0], 16)
    assert pick(256, 256, 4096) == C.Choice(K.CANDIDATES[0], 4)
    # 128 slices of 1024 at K = 131072; 512 at K = 524288, capped at the largest factor the sweep measures
    assert pick(256, 256, 131072) == C.Choice(K.CANDIDATES[0], 128)
    assert pick(256, 256, 1 << 19) == C.Choice(K.CANDIDATES[0], 256)
    assert K.SPLIT_FACTORS[-1] == 256
    assert C.nearest_measured(64, 64, 64, {"1x1x1": ("gone", 1)}) is None
    # size alone decides, whether the shape loads by float4 or scalar
    both = dict(winners, **{"999x1001x1003": (big, 2)})
    assert C.nearest_measured(1023, 1025, 1027, both) == C.Choice(K.SMALL, 1)
    assert C.nearest_measured(1001, 999, 1002, both) == C.Choice(K.CANDIDATES[0], 2)


def test_without_an_entry_the_default_tiles_or_the_small_ones_when_they_leave_sms_idle():
    assert C.choose(4096, 4096, 4096, None, 132) == C.Choice(K.DEFAULT)
    assert C.choose(512, 512, 512, None, 132) == C.Choice(K.SMALL)  # 8 tiles of 128x256 for 132 SMs
    assert C.choose(512, 512, 512, {"chosen": {}}, 132) == C.Choice(K.SMALL)
    stale = {"chosen": {"64x64x64": dict(name="x", params=dict(config="gone", splits=1), round="screen")}}
    assert C.choose(4096, 4096, 4096, stale, 132) == C.Choice(K.DEFAULT)  # a config that is no candidate any more


def test_gemv_kernels_are_in_the_catalog():
    assert set(K.GEMV_KERNELS) <= set(K.KERNELS)
    assert K.gemv_cols(4, True).name == "gemv_cols<4, true, 1>"
    assert [K.skinny_rows(m) for m in range(1, 9)] == [1, 2, 4, 4, 8, 8, 8, 8]
    with pytest.raises(ValueError, match="gemv vec is 4 or 1"):
        K.gemv_rows(2)
    with pytest.raises(ValueError, match="gemv_cols takes M <= 8, got 9"):
        K.skinny_rows(9)


def test_gemv_launch_sends_few_rows_to_gemv_cols_and_one_column_to_gemv_rows():
    g = G.gemv_launch(8, 8192, 8192, True, 132, blocks_per_sm=2)
    assert g.spec == K.gemv_cols(4, True, 8) and g.scalars == (8, 8192, 8192, 2048)
    assert g.grid == (64, 4) and g.splits == 4  # 64 column blocks x 4 k ranges fill 256 of the 264 slots
    g = G.gemv_launch(2, 8192, 8192, True, 132, blocks_per_sm=8)
    assert g.spec == K.gemv_cols(4, True, 2) and g.grid == (64, 16)  # 1024 of 1056 slots
    g = G.gemv_launch(3, 1001, 37, True, 132, blocks_per_sm=4)
    assert g.spec == K.gemv_cols(1, False, 4) and g.vec == 1  # N not a multiple of 4; K too short to split
    g = G.gemv_launch(4096, 1, 4096, True, 132, blocks_per_sm=8)
    assert g.spec == K.gemv_rows(4) and g.grid == (512, 1) and g.scalars == (4096, 4096, 4096)  # ~4 blocks per SM
    g = G.gemv_launch(1024, 1, 8192, True, 132, blocks_per_sm=8)  # 128 row blocks: K split 8 ways, 1024-deep
    assert g.spec == K.gemv_rows(4, True) and g.grid == (128, 8) and g.scalars == (1024, 8192, 1024)
    g = G.gemv_launch(100, 1, 5003, True, 132, blocks_per_sm=8)  # scalar loads; at most 4 ranges of >= 1024
    assert g.spec == K.gemv_rows(1, True) and g.grid == (13, 4) and g.scalars == (100, 5003, 1280)
    assert G.gemv_launch(333, 1, 1000, True, 132, blocks_per_sm=8).splits == 1  # too short to split
    assert C.is_gemv(8, 4096) and C.is_gemv(4096, 1) and not C.is_gemv(9, 4096)
    with pytest.raises(Exception, match="gemv path needs M <= 8 or N == 1; got M=9, N=3"):
        G.gemv_launch(9, 3, 4, True, 132, blocks_per_sm=8)


def test_matmul_shapes_experiment_is_registered():
    from gpumemlab.experiments import registry

    exp = registry()["matmul_shapes"]
    assert exp.group_by == ("shape",) and exp.plot.y == "ratio_to_cublas"


def test_the_experiment_zoo_holds_out_what_the_tuner_never_sees():
    from gpumemlab.experiments.matmul_shapes import HELD_OUT, SHAPES
    from gpumemlab.tune.matmul import SHAPES as TUNED
    from gpumemlab.tune.table import mnk_name

    assert len(SHAPES) >= 80 and len({s.name for s in SHAPES}) == len(SHAPES)
    assert not {mnk_name(s.m, s.n, s.k) for s in HELD_OUT if s.layout == "nn" and not s.batch_a} & set(TUNED)
    groups = {s.group for s in HELD_OUT}
    assert {"transformer", "vocab", "thin", "odd", "batched", "layout", "matvec"} <= groups
    assert any(32000 <= s.n <= 128256 for s in HELD_OUT if s.group == "vocab")
    assert all(2 <= min(s.m, s.n) <= 64 for s in HELD_OUT if s.group == "thin")
    assert {s.layout for s in HELD_OUT} == {"nn", "tn", "nt", "tt", "ff"}
    big = max(HELD_OUT, key=lambda s: s.products)
    assert big.products == 500 and big.name == "[500|500] 7x9x11"


def test_a_batch_takes_smaller_tiles_only_where_the_big_ones_waste_most_of_their_work():
    big, small = C.Choice(K.CANDIDATES[0]), C.Choice(K.SMALL)
    # 96 products of 197 x 64: a 128 x 256 tile computes 4x the columns there are; 64 x 64 tiles a quarter of the work
    assert C.fill_choice(197, 64, 197, 96, big, 132) == small
    assert C.busiest_sm_work(K.SMALL, 197, 64, 197, 1, 132, 96) <= 0.25 * C.busiest_sm_work(
        K.CANDIDATES[0], 197, 64, 197, 1, 132, 96)
    # 8 products of 512^3 on 32 x 128 tiles split in two: nothing does a quarter of that work, the choice stays
    mid = C.Choice(K.CANDIDATES[8], 2)
    assert C.fill_choice(512, 512, 512, 8, mid, 132) == mid
    assert C.fill_choice(128, 128, 64, 32, C.Choice(K.CANDIDATES[7]), 132) == C.Choice(K.CANDIDATES[7])


def test_the_route_leaves_no_sms_idle_behind_big_tiles():
    entry = {"chosen": {"2048x2048x2048": {"name": "register_blocked", "round": 1, "gflops": 1.0,
                                           "params": {"config": K.CANDIDATES[0].name, "splits": 1}}}}
    # the nearest tuned shape's 128 x 256 tiles make 32 blocks of 512 x 2048 for 132 SMs
    r = C.route(512, 2048, 2048, True, entry, 132)
    assert r == C.Route("float4", C.Choice(K.CANDIDATES[8]))
    assert C.route(2048, 2048, 2048, True, entry, 132) == C.Route("float4", C.Choice(K.CANDIDATES[0]))
