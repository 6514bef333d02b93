"""transpose_bulk (issue 11, sm_90+) without a GPU: its catalog entries and arch floor, the persistent grid's launch
logic (stage bytes, blocks per SM, grid size, the tiles each block walks), the bank-conflict degree of its shared
layout, its sm_90 / sm_100 / sm_120 builds, and the probe's `bulk` set. (tests/gpu/test_reduce_transpose.py runs it.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gpumemlab.gpu.compile import ArchError, compile_specs, runs_on
from gpumemlab.kernels import all_specs
from gpumemlab.kernels import transpose as K

ROOT = Path(__file__).resolve().parents[1]


def load_probe():
    spec = importlib.util.spec_from_file_location("transpose_probe", ROOT / "tools" / "transpose_probe.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_specs_are_catalogued_for_sm90_and_newer_only():
    catalog = set(all_specs())
    specs = {g.spec() for g in K.PROBE_BULK}
    assert specs <= catalog
    assert K.BulkGeometry(3, 4, False).spec().name == "transpose_bulk<3, 4, false>"
    assert K.BulkGeometry().spec().name == "transpose_bulk<2, 6, true>"
    for s in specs:
        assert s.min_sm == 90 and runs_on(s, "sm_90") and runs_on(s, "sm_120") and not runs_on(s, "sm_89")
    with pytest.raises(ArchError):
        compile_specs([K.BulkGeometry().spec()], "sm_80")
    assert {g.stages for g in K.PROBE_BULK} == {2, 3, 4}
    assert {g.empty for g in K.PROBE_BULK} == {True, False}
    assert any(g.blocks_per_sm for g in K.PROBE_BULK)


@pytest.mark.parametrize("bad", [dict(stages=0), dict(stages=9), dict(minb=0), dict(blocks_per_sm=-1)])
def test_geometry_rejects_what_the_kernel_does_not_take(bad):
    with pytest.raises(ValueError):
        K.BulkGeometry(**bad)


def test_stage_bytes_and_blocks_per_sm():
    """A stage: 64 rows of 256 bytes + 16 bytes after every 4 rows = 16640 bytes. On sm_90 (228 KiB per SM, 1 KiB
    reserved per block, 128 static bytes of mbarriers) S = 2, 3, 4 fit 6, 4, 3 blocks; S = 1 is held to 8 by the
    2048 threads."""
    assert K.BULK_STAGE_BYTES == 16640
    assert [K.BulkGeometry(s).shmem() for s in (1, 2, 3, 4, 8)] == [16640, 33280, 49920, 66560, 133120]
    assert [K.BulkGeometry(s).resident() for s in (1, 2, 3, 4, 8)] == [8, 6, 4, 3, 1]
    assert K.BulkGeometry(4).resident(shared_per_sm=100 * 1024) == 1  # sm_120's 100 KiB
    # every probe geometry's MINB is what fits: registers never the limit of the blocks asked for
    for g in K.PROBE_BULK:
        assert g.minb == g.resident() and g.blocks_per_sm <= g.resident()


def test_persistent_grid():
    g2, g4 = K.BulkGeometry(2), K.BulkGeometry(4, 3)
    assert K.bulk_tiles(16384, 16384) == 65536 and K.bulk_tiles(1000, 2004) == 16 * 32 and K.bulk_tiles(4, 4) == 1
    assert g2.grid(16384, 16384, 132) == 792 and g4.grid(16384, 16384, 132) == 396
    assert g2.grid(16384, 16384, 132, resident=5) == 660          # the driver's answer, when given
    assert K.BulkGeometry(2, 6, blocks_per_sm=3).grid(16384, 16384, 132, resident=6) == 396  # the geometry's own
    assert g2.grid(128, 192, 132) == 6 and g2.grid(4, 4, 132) == 1  # at most one block per tile
    assert g2.grid(8192, 8192, 132) == 792


@pytest.mark.parametrize("rows,cols,grid", [(1000, 2004, 1), (1000, 2004, 7), (1000, 2004, 5000), (4096, 4100, 792),
                                            (4, 4, 1), (128, 192, 6)])
def test_every_tile_is_moved_by_exactly_one_block(rows, cols, grid):
    walked = [t for b in range(grid) for t in K.bulk_tiles_of_block(rows, cols, grid, b)]
    want = [(r, c) for r in range(0, rows, 64) for c in range(0, cols, 64)]
    assert sorted(walked) == sorted(want) and len(walked) == len(want)
    assert K.bulk_tiles_of_block(1000, 2004, 7, 2)[:3] == [(0, 128), (0, 576), (0, 1024)]
    assert K.bulk_tiles_of_block(1000, 2004, 5000, 600) == []


def test_shared_layout_is_conflict_free():
    """The kernel's rows at r * 64 + 4 * (r // 4) floats: 1-way; a uniform 68-float stride: 4-way; no padding: the
    8 float4 lanes of a column in 1 bank pair: 8-way."""
    assert K.bulk_bank_conflict_degree() == 1
    assert K.bulk_bank_conflict_degree(lambda r: r * 68) == 4
    assert K.bulk_bank_conflict_degree(lambda r: r * 64) == 8
    assert all((r * 64 + 4 * (r // 4)) * 4 % 16 == 0 for r in range(64))  # every row 16-byte aligned (bulk unit)


def test_takes():
    assert K.bulk_takes(16384, 16384) and K.bulk_takes(68, 1028) and K.bulk_takes(4, 4)
    assert not K.bulk_takes(16383, 16385) and not K.bulk_takes(16384, 16386) and not K.bulk_takes(64, 64, "float64")


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_builds_without_spills_at_its_occupancy(arch):
    specs = list(dict.fromkeys(g.spec() for g in K.PROBE_BULK))
    compiled = compile_specs(specs, arch)
    for g in K.PROBE_BULK:
        u = compiled[g.spec()][1]
        assert u.spill_store_bytes == 0 and u.spill_load_bytes == 0, (g.name, arch)
        assert u.registers * K.BULK_THREADS * g.minb <= 65536, (g.name, arch, u.registers)
        assert u.shared_bytes <= K.BULK_STATIC_BYTES


def test_probe_bulk_set(capsys):
    probe = load_probe()
    assert probe.geometries("bulk") == K.PROBE_BULK
    assert probe.default_shapes(probe.geometries("bulk")) == probe.BULK_SHAPES
    assert probe.default_shapes(probe.geometries("orders,bulk")) == probe.DEFAULT_SHAPES
    assert probe.parse_shapes(probe.BULK_SHAPES)[:2] == [(16384, 16384), (8192, 8192)]
    spec, grid, block, shmem, extra = probe.bulk_plan(K.BulkGeometry(3, 4), 16384, 16384, 132, 4)
    assert (spec.name, grid, block, shmem, extra) == ("transpose_bulk<3, 4, true>", (528,), (256,), 49920, ())
    assert probe.main(["--model", "792", "--sets", "bulk"]) == 0
    assert "16384x16384, 792 resident blocks" in capsys.readouterr().out
