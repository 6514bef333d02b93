"""transpose_vec's probe geometries and block orders without a GPU: their catalog entries, the block-order model
(a bijection of the launch rectangle), the wave footprints the probe prints, the probe's command line, and the
register counts that keep the orders at the library's occupancy. (tests/gpu/test_reduce_transpose.py runs them.)"""

from __future__ import annotations


import pytest

from gpumemlab.gpu.compile import compile_specs
from gpumemlab.kernels import all_specs
from gpumemlab.kernels import transpose as K
from gpumemlab.model.occupancy import occupancy


def test_default_geometry_is_the_library_kernel_and_grid():
    g = K.VecGeometry()
    assert g.spec("float") == K.LIBRARY_VECTORIZED.spec("float")
    for shape in ((16384, 16384), (4100, 132), (64 * 65537, 8)):
        assert g.grid(*shape) == K.LIBRARY_VECTORIZED.grid(*shape)
    assert g.shmem() == 0 and K.VecGeometry(128).shmem() == 128 * 128 * 4


def test_spec_names_leave_out_trailing_defaults():
    """The template's defaults (no PIPE, row order, SPAN 8) are left out; the library's span 16 is spelled out."""
    s8 = dict(span=K.KERNEL_SPAN)
    assert K.VecGeometry(64, 4, True, **s8).spec().name == "transpose_vec<float, float4, 64, 4, true>"
    assert K.VecGeometry(minb=6, order=K.ORDER_GROUPED, group=8, **s8).spec().name == \
        "transpose_vec<float, float4, 64, 6, false, 1, 8>"
    assert K.VecGeometry(minb=6, order=K.ORDER_DIAGONAL, **s8).spec().name == \
        "transpose_vec<float, float4, 64, 6, false, 2, 1>"
    assert K.VecGeometry(**s8).spec().name == "transpose_vec<float, float4, 64, 4>"  # the library before session 25
    assert K.VecGeometry().spec().name == K.LIBRARY_VECTORIZED.spec("float").name == \
        "transpose_vec<float, float4, 64, 4, false, 0, 1, 16>"
    assert K.LIBRARY_VECTORIZED.spec("double").name == "transpose_vec<double, double2, 64, 4, false, 0, 1, 16>"
    assert K.VecGeometry(minb=6, order=K.ORDER_DIAGONAL).spec().name == \
        "transpose_vec<float, float4, 64, 6, false, 2, 1, 16>"


@pytest.mark.parametrize("bad", [dict(order=K.ORDER_GROUPED), dict(group=4), dict(order=3), dict(tile=32),
                                 dict(order=K.ORDER_DIAGONAL, group=2), dict(tiles_per_block=0)])
def test_geometry_rejects_what_the_kernel_does_not_take(bad):
    with pytest.raises(ValueError):
        K.VecGeometry(**bad)


def test_every_probe_geometry_is_catalogued():
    """CI compiles the catalog for every arch (and the sanitizer and GPU tests run these), so no probe kernel is
    compiled for the first time on the device."""
    catalog = set(all_specs())
    assert {g.spec("float") for g in K.PROBE_GEOMETRIES} <= catalog
    assert set(K.PROBE_ORDERS) <= set(K.PROBE_GEOMETRIES) and set(K.PROBE_SESSION23) <= set(K.PROBE_GEOMETRIES)
    assert {g.group for g in K.PROBE_ORDERS if g.order == K.ORDER_GROUPED} >= {2, 4, 8, 16}
    assert any(g.order == K.ORDER_DIAGONAL for g in K.PROBE_ORDERS)
    assert any(g.order == K.ORDER_ROWS and g.minb == K.ORDER_MINB for g in K.PROBE_ORDERS)  # the control
    assert any(g.pipe for g in K.PROBE_SESSION23) and any(g.shmem() for g in K.PROBE_SESSION23)


@pytest.mark.parametrize("order,group", [(K.ORDER_ROWS, 1), (K.ORDER_GROUPED, 2), (K.ORDER_GROUPED, 3),
                                         (K.ORDER_GROUPED, 8), (K.ORDER_GROUPED, 32), (K.ORDER_DIAGONAL, 1)])
@pytest.mark.parametrize("w,h", [(1, 1), (1, 37), (37, 1), (5, 7), (16, 16), (10, 17), (3, 65), (256, 256)])
def test_block_order_is_a_bijection_of_the_launch_rectangle(order, group, w, h):
    tiles = [K.block_tile(order, group, w, h, i) for i in range(w * h)]
    assert sorted(tiles) == [(x, y) for x in range(w) for y in range(h)]


def test_grouped_order_walks_down_g_tile_rows_then_across():
    w, h, g = 10, 17, 4
    first = [K.block_tile(K.ORDER_GROUPED, g, w, h, i) for i in range(6)]
    assert first == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)]
    last_band = [K.block_tile(K.ORDER_GROUPED, g, w, h, i) for i in range(16 * w, 17 * w)]  # 17 = 4 * 4 + 1 rows
    assert last_band == [(x, 16) for x in range(w)]
    diag = [K.block_tile(K.ORDER_DIAGONAL, 1, 8, 8, i) for i in range(3)]
    assert diag == [(0, 0), (1, 1), (2, 2)]


def test_wave_footprint_trades_input_runs_for_output_runs():
    """16384^2 float32 with 6 blocks on each of 132 SMs: the row order reads whole rows but writes ~0.8 KiB pieces
    of every output row; grouping by 16 reads 16 row bands in 12 KiB runs and writes 4 KiB runs; the diagonal
    order has short runs on both sides."""
    fp = {g.name: K.wave_footprint(g, 16384, 16384, 792) for g in K.PROBE_ORDERS}
    s8 = dict(span=K.KERNEL_SPAN)  # the order probes' stores (their footprints do not depend on it)
    rows = fp[K.VecGeometry(minb=K.ORDER_MINB, **s8).name]
    g16 = fp[K.VecGeometry(minb=K.ORDER_MINB, order=K.ORDER_GROUPED, group=16, **s8).name]
    diag = fp[K.VecGeometry(minb=K.ORDER_MINB, order=K.ORDER_DIAGONAL, **s8).name]
    assert rows["in_bands"] == 4 and rows["out_bands"] == 256 and rows["in_run_bytes"] > 32 * 1024
    assert 512 < rows["out_run_bytes"] < 1024
    assert (g16["in_bands"], g16["out_bands"]) == (16, 50) and 3900 < g16["out_run_bytes"] <= 4096  # 49.5 columns
    assert 12 * 1024 <= g16["in_run_bytes"] < 13 * 1024
    assert diag["in_run_bytes"] < 1024 and diag["out_run_bytes"] < 1024 and diag["blocks"] == 792


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_orders_keep_the_library_s_blocks_per_sm(arch):
    """The remap costs registers; MINB 6 keeps the orders (and their row-order control) at the library's occupancy,
    so that the probe compares block orders, not occupancies."""
    specs = [K.LIBRARY_VECTORIZED.spec("float")] + [g.spec() for g in K.PROBE_ORDERS]
    compiled = compile_specs(specs, arch)
    cc = (int(arch[3]), int(arch[4]))
    per_sm = {s.name: occupancy(K.VEC_THREADS, compiled[s][1].registers, compiled[s][1].shared_bytes, cc)["blocks_per_sm"]
              for s in specs}
    assert len(set(per_sm.values())) == 1, per_sm
    assert all(compiled[s][1].spill_store_bytes == 0 for s in specs)
