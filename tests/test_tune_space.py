"""tune.space (restrictions, derived values, iteration, names) and the families' spaces against the library."""

import math

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.kernels import matmul as KM
from gpumemlab.kernels import reduce as KR
from gpumemlab.tune import families as F
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

def test_matmul_split_k_restriction_is_the_choosers():
    from gpumemlab.ops import matmul as ops

    for occ in (1, 2, 5):
        for shape in ("1024x1024x1024", "512x512x4096", "1024x1024x512", "256x256x256", "8192x8192x8192",
                      "4096x1000x8192", "100x3000x2000"):
            ctx = F.MATMUL.context(shape, dict(sm_count=132, occupancy=lambda name: occ))
            m, n, k = (int(x) for x in shape.split("x"))
            got = {}
            for p in F.MATMUL.space.points(ctx):
                got.setdefault(p.params["config"], []).append(p.params["splits"])
                assert p.derived["blocks_per_sm"] == occ
            assert got == {c.name: ops._split_options(c, m, n, k, occ * 132) for c in KM.CANDIDATES}, (occ, shape)


def test_matmul_split_chunk_is_the_librarys():
    from gpumemlab.ops.matmul import split_chunk

    for k in (1, 7, 8, 9, 64, 1000, 1023, 4096):
        for bk in (8, 16):
            for s in (1, 2, 3, 4, 6, 8):
                assert F.split_chunk(k, bk, s) == split_chunk(k, bk, s)


def test_reduce_space_is_tuning_times_waves_with_the_librarys_grid():
    from gpumemlab.ops import reduce as ops_reduce

    n = 1 << 26
    pts = list(F.REDUCE.space.points(F.REDUCE.context("2^26", dict(sm_count=132, occupancy=lambda c: 3))))
    assert len(pts) == len(KR.TUNING) * len(KR.TUNING_WAVES) == 96
    configs = [F._vec_config(p.params) for p in pts]
    assert set(configs) == {c.with_waves(w) for c in KR.TUNING for w in KR.TUNING_WAVES}
    for p, cfg in zip(pts, configs):
        assert p.derived["grid"] == ops_reduce.plan(n, 4, 132, 3, cfg).grid
        assert p.derived["tiles"] == math.ceil(n / (4 * cfg.block * cfg.unroll))
    assert len({F.REDUCE.label(p.params) for p in pts}) == 96  # table rows: one label per point
    assert F.REDUCE.reference in [p.params for p in pts]


@pytest.mark.parametrize("family, text, canonical", [(F.MATMUL, " 4096X1000x8192", "4096x1000x8192"),
                                                     (F.REDUCE, "2^28", "2^28"), (F.REDUCE, "1048576", "2^20"),
                                                     (F.REDUCE, "1000003", "1000003")])
def test_shapes_are_canonical(family, text, canonical):
    assert family.parse_shape(text) == canonical


@pytest.mark.parametrize("family, text", [(F.MATMUL, "4x4"), (F.MATMUL, "0x4x4"), (F.MATMUL, "axbxc"),
                                          (F.REDUCE, "0"), (F.REDUCE, "2^x"), (F.REDUCE, "-5")])
def test_bad_shapes_are_refused(family, text):
    with pytest.raises(UsageError, match=f"{family.name}"):
        family.parse_shape(text)


def test_families_are_the_clis():
    from gpumemlab.cli.tune import FAMILIES

    assert FAMILIES == tuple(F.FAMILIES)
