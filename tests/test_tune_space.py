"""tune.space (restrictions, derived values, iteration, names) and the families' spaces against the library."""

import math

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.kernels import matmul as KM
from gpumemlab.kernels import reduce as KR
from gpumemlab.tune import families
from gpumemlab.tune import matmul as M
from gpumemlab.tune import reduce as R
from gpumemlab.tune.space import Space, evaluate


def test_iteration_applies_every_restriction_and_keeps_declaration_order():
    s = Space(params=dict(a=(1, 2, 3, 4), b=(10, 20, 30)),
              restrictions=("a * b <= 60", lambda c: c["b"] != 20))
    got = [(p.params["a"], p.params["b"]) for p in s.points()]
    assert got == [(1, 10), (1, 30), (2, 10), (2, 30), (3, 10), (4, 10)]
    assert s.product_size() == 12


def test_derived_values_see_the_context_and_earlier_derived_values():
    s = Space(params=dict(block=(128, 256), unroll=(1, 4)),
              derive=dict(tile="block * unroll", tiles="ceil(n / tile)", grid=lambda c: min(c["tiles"], c["cap"])),
              restrictions=("grid >= 2",))
    pts = list(s.points(dict(n=1000, cap=5)))
    assert [(p.params["block"], p.params["unroll"], p.derived) for p in pts] == [
        (128, 1, dict(tile=128, tiles=8, grid=5)),
        (128, 4, dict(tile=512, tiles=2, grid=2)),
        (256, 1, dict(tile=256, tiles=4, grid=4))]   # 256 x 4 = 1024: one tile, restricted away


def test_named_points_round_trip_and_unknown_names_are_refused():
    s = Space(params=dict(x=(1, 2), y=("p", "q")))
    assert [p.name for p in s.points()] == ["x=1,y=p", "x=1,y=q", "x=2,y=p", "x=2,y=q"]
    assert s.point("x=2,y=p").params == dict(x=2, y="p")
    with pytest.raises(UsageError, match="no valid point named 'x=3,y=p'"):
        s.point("x=3,y=p")


@pytest.mark.parametrize("expr, value", [("1 + 2 * 3", 7), ("7 // 2 + 7 % 2", 4), ("2 ** 10", 1024),
                                         ("1 < 2 < 3", True), ("1 < 3 < 2", False), ("not (1 == 1) or 0", False),
                                         ("max(3, 9, 4) if 1 else 0", 9), ("-floor(2.5) + abs(-1)", -1)])
def test_expressions(expr, value):
    assert evaluate(expr, {}) == value


@pytest.mark.parametrize("expr, message", [("__import__('os')", "not allowed"), ("x.real", "not allowed"),
                                           ("q + 1", "unknown name 'q'"), ("1 +", "space expression '1 \\+'"),
                                           ("[1][0]", "not allowed")])
def test_expressions_outside_the_whitelist_are_refused(expr, message):
    with pytest.raises(UsageError, match=message):
        evaluate(expr, dict(x=1))


def test_a_parameter_without_values_or_a_shadowing_derived_value_is_refused():
    with pytest.raises(UsageError, match="'a' has no values"):
        Space(params=dict(a=()))
    with pytest.raises(UsageError, match="shadow parameters: a"):
        Space(params=dict(a=(1,)), derive=dict(a="2"))


# ---------------------------------------------------------------- the families' spaces

def test_matmul_split_k_factors_fill_at_most_four_waves_with_slices_at_least_128_deep():
    for occ in (1, 2, 5):
        for shape in ("1024x1024x1024", "512x512x4096", "1024x1024x512", "256x256x256", "8192x8192x8192",
                      "4096x1000x8192", "100x3000x2000", "64x64x65536"):
            ctx = M.MATMUL.context(shape, dict(sm_count=132, occupancy=lambda name: occ))
            m, n, k = (int(x) for x in shape.split("x"))
            got = {}
            for p in M.MATMUL.space.points(ctx):
                got.setdefault(p.params["config"], []).append(p.params["splits"])
                assert p.derived["blocks_per_sm"] == occ
            want = {c.name: [s for s in KM.SPLIT_FACTORS if s == 1 or (
                k // s >= 128 and math.ceil(m / c.bm) * math.ceil(n / c.bn) * s <= 4 * occ * 132
                and KM.split_chunk(k, c.bk, s)[1] == s)] for c in KM.CANDIDATES}
            assert got == want, (occ, shape)


def test_the_matmul_shape_set_is_the_zoo_less_the_held_out_gemv_and_largest_shapes():
    assert len(M.SHAPES) == 34 and "1000x1000x1000" not in M.SHAPES and "4096x1x4096" not in M.SHAPES
    assert "4096x4096x4096" in M.SHAPES and "6144x6144x6144" not in M.SHAPES and "8x8192x8192" in M.SHAPES


def test_every_installed_matmul_winner_is_a_point_of_the_space_a_retune_screens():
    from gpumemlab.tune import table

    for dev, e in table.read_devices(KM.__file__.replace("matmul.py", "tuned/matmul.json"), "matmul").items():
        for shape, c in e["chosen"].items():
            if shape not in M.SHAPES:
                continue
            occ = {p["params"]["config"]: p["derived"]["blocks_per_sm"] for p in e["points"]
                   if p["derived"].get("blocks_per_sm")}
            # a re-tune over some configurations measured only theirs; the others' occupancy decides only their points
            ctx = M.MATMUL.context(shape, dict(sm_count=e["device"]["sm_count"], occupancy=lambda n: occ.get(n, 1)))
            assert c["name"] in {p.name for p in M.MATMUL.space.points(ctx)}, (dev, shape)


def test_reduce_space_is_tuning_times_waves_with_the_librarys_grid():
    from gpumemlab.ops import reduce as ops_reduce

    n = 1 << 26
    pts = list(R.REDUCE.space.points(R.REDUCE.context("2^26", dict(sm_count=132, occupancy=lambda c: 3))))
    assert len(pts) == len(KR.TUNING) * len(KR.TUNING_WAVES) == 96
    configs = [R._vec_config(p.params) for p in pts]
    assert set(configs) == {c.with_waves(w) for c in KR.TUNING for w in KR.TUNING_WAVES}
    for p, cfg in zip(pts, configs):
        assert p.derived["grid"] == ops_reduce.plan(n, 4, 132, 3, cfg).grid
        assert p.derived["tiles"] == math.ceil(n / (4 * cfg.block * cfg.unroll))
    assert len({R.REDUCE.label(p.params) for p in pts}) == 96  # table rows: one label per point
    assert R.REDUCE.reference in [p.params for p in pts]


@pytest.mark.parametrize("family, text, canonical", [(M.MATMUL, " 4096X1000x8192", "4096x1000x8192"),
                                                     (R.REDUCE, "2^28", "2^28"), (R.REDUCE, "1048576", "2^20"),
                                                     (R.REDUCE, "1000003", "1000003")])
def test_shapes_are_canonical(family, text, canonical):
    assert family.parse_shape(text) == canonical


@pytest.mark.parametrize("family, text", [(M.MATMUL, "4x4"), (M.MATMUL, "0x4x4"), (M.MATMUL, "axbxc"),
                                          (R.REDUCE, "0"), (R.REDUCE, "2^x"), (R.REDUCE, "-5")])
def test_bad_shapes_are_refused(family, text):
    with pytest.raises(UsageError, match=f"{family.name}"):
        family.parse_shape(text)


def test_the_registry_names_each_family_once_and_refuses_others():
    assert {n: families.get(n).name for n in families.MODULES} == {
        "matmul": "matmul", "reduce": "reduce", "l2_persist": "l2_persist", "host_route": "host_route"}
    assert families.get("matmul") is M.FAMILY and not R.FAMILY.installs
    with pytest.raises(UsageError, match="unknown tuning family 'gemm'; expected one of matmul, reduce, l2_persist, host_route"):
        families.get("gemm")
