"""OP/B of the matmul kernels (seed 000 exercise 3) and the roofline."""

from __future__ import annotations

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model import find_device, intensity, matmul_intensity, occupancy, roofline


def test_seed000_answers():
    assert matmul_intensity("naive") == 0.25
    assert matmul_intensity("tiled", tile=32) == 8.0
    assert matmul_intensity("coarsened", tile=32, coarsen=4) == pytest.approx(12.8, rel=1e-12)


@pytest.mark.parametrize("kernel, tile, coarsen, want", [
    ("tiled", 16, None, 4.0), ("tiled", 8, 1, 2.0), ("matmul_tiled", 32, None, 8.0),
    ("corner_turning", 16, None, 4.0), ("coarsened", 32, 1, 8.0), ("coarsened", 16, 2, 16 / 3),
    ("coarsened", 32, None, 12.8), ("naive", 128, None, 0.25),
])
def test_formula(kernel, tile, coarsen, want):
    assert matmul_intensity(kernel, tile, coarsen) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("args, fragment", [
    (("tiled", 32, 4), "tiled has no coarsening"),
    (("gemm", 32, None), "unknown kernel 'gemm'"),
    (("tiled", 0, None), "must be >= 1"),
])
def test_bad_input(args, fragment):
    with pytest.raises(UsageError, match=fragment):
        matmul_intensity(*args)


def test_roofline_on_a_named_device():
    r = intensity("tiled", device_name="h100")
    assert r["device"]["name"] == "H100 SXM"
    assert r["ridge_op_per_byte"] == pytest.approx(67000 / 3350, abs=1e-3)
    assert (r["bound_gflops"], r["bound"]) == (8.0 * 3350, "memory")


def test_roofline_compute_bound_beyond_the_ridge():
    r = roofline(12.8, peak_gflops=1000, bandwidth_gbs=50)
    assert (r["ridge_op_per_byte"], r["bound_gflops"], r["bound"], r["pct_of_peak"]) == (20.0, 640.0, "memory", 64.0)
    r = roofline(25.0, peak_gflops=1000, bandwidth_gbs=50)
    assert (r["bound_gflops"], r["bound"]) == (1000, "compute")


def test_custom_ceilings_need_both_values():
    assert intensity("naive", peak_gflops=100, bandwidth_gbs=10)["bound_gflops"] == 2.5
    with pytest.raises(UsageError, match="give both"):
        intensity("naive", peak_gflops=100)


@pytest.mark.parametrize("driver_name, table_name", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM"), ("NVIDIA H100 PCIe", "H100 PCIe"), ("NVIDIA H100 NVL", "H100 NVL"),
    ("NVIDIA H200", "H200 SXM"), ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"), ("NVIDIA A100-SXM4-40GB", "A100 40GB"),
    ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"), ("Tesla V100-SXM2-16GB", "V100 SXM2"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"), ("NVIDIA A10", "A10"), ("Tesla T4", "T4"), ("NVIDIA L4", "L4"),
    ("NVIDIA L40S", "L40S"),
])
def test_device_names_from_the_driver(driver_name, table_name):
    assert find_device(driver_name).name == table_name


def test_unknown_device():
    assert find_device("Quadro FX 5800") is None
    with pytest.raises(UsageError, match="unknown device 'fx5800'"):
        intensity("naive", device_name="fx5800")


# Every device of the table: vendor datasheet FP32 (non-tensor) GFLOP/s and DRAM GB/s, the compute
# capability from NVIDIA's CUDA GPUs list; ridge = peak / bandwidth, worked out by hand.
@pytest.mark.parametrize("query, name, peak, bandwidth, cc, ridge", [
    ("h100 nvl", "H100 NVL", 60_000, 3_900, "9.0", 15.385),
    ("h100 pcie", "H100 PCIe", 51_000, 2_000, "9.0", 25.5),
    ("h100", "H100 SXM", 67_000, 3_350, "9.0", 20.0),
    ("h200", "H200 SXM", 67_000, 4_800, "9.0", 13.958),
    ("a100 40gb", "A100 40GB", 19_500, 1_555, "8.0", 12.54),
    ("a100 pcie", "A100 80GB PCIe", 19_500, 1_935, "8.0", 10.078),
    ("a100", "A100 SXM 80GB", 19_500, 2_039, "8.0", 9.564),
    ("v100 pcie", "V100 PCIe", 14_000, 900, "7.0", 15.556),
    ("v100", "V100 SXM2", 15_700, 900, "7.0", 17.444),
    ("rtx5090", "RTX 5090", 104_800, 1_792, "12.0", 58.482),
    ("rtx4090", "RTX 4090", 82_600, 1_008, "8.9", 81.944),
    ("rtx3090", "RTX 3090", 35_600, 936, "8.6", 38.034),
    ("l40s", "L40S", 91_600, 864, "8.9", 106.019),
    ("a10", "A10", 31_200, 600, "8.6", 52.0),
    ("l4", "L4", 30_300, 300, "8.9", 101.0),
    ("t4", "T4", 8_100, 320, "7.5", 25.312),
])
def test_every_device_entry(query, name, peak, bandwidth, cc, ridge):
    d = find_device(query)
    assert (d.name, d.peak_gflops, d.bandwidth_gbs, d.cc) == (name, peak, bandwidth, cc)
    r = intensity("tiled", tile=32, device_name=query)  # 8 FLOP/B: below every ridge -> memory-bound
    assert (r["ridge_op_per_byte"], r["bound"], r["bound_gflops"]) == (ridge, "memory", 8.0 * bandwidth)
    assert r["device"]["cc"] == cc
    assert occupancy(256, 32, 0, cc)["cc"] == cc  # every device's cc is one the occupancy model has


def test_devices_cover_the_table():
    from gpumemlab.model.intensity import DEVICES
    assert len(DEVICES) == 16


@pytest.mark.parametrize("opb, bound, gflops, pct", [
    # peak 1000 GFLOP/s, 50 GB/s: ridge 20 FLOP/B
    (19.99, "memory", 999.5, 99.95), (20.0, "compute", 1000.0, 100.0), (20.01, "compute", 1000.0, 100.0),
    (0.25, "memory", 12.5, 1.25),
])
def test_ridge_classification(opb, bound, gflops, pct):
    r = roofline(opb, 1000, 50)
    assert (r["ridge_op_per_byte"], r["bound"], r["bound_gflops"], r["pct_of_peak"]) == (20.0, bound, gflops, pct)


@pytest.mark.parametrize("peak, bw", [(0, 10), (10, 0), (-1, 10), (10, -1)])
def test_ceilings_must_be_positive(peak, bw):
    with pytest.raises(UsageError, match="must be positive"):
        roofline(1.0, peak, bw)


def test_device_cc_must_be_supported():
    from gpumemlab.model.intensity import Device
    with pytest.raises(UsageError, match="unknown compute capability 6.4"):
        Device("X", 1, 1, "6.4")


@pytest.mark.parametrize("name, key", [("Matmul-Tiled", "tiled"), (" corner-turning ", "corner_turning"),
                                       ("naive_matmul", "naive")])
def test_kernel_names(name, key):
    assert intensity(name)["kernel"] == key


def test_the_smallest_tile_and_coarsening():
    assert matmul_intensity("tiled", tile=1) == 0.25  # a 1x1 tile reuses nothing: the naive kernel
    assert matmul_intensity("coarsened", tile=1, coarsen=1) == 0.25
    with pytest.raises(UsageError, match="must be >= 1, got tile=32, coarsen=0"):
        matmul_intensity("coarsened", 32, 0)


def test_intensity_fields():
    r = intensity("coarsened", tile=16, coarsen=2, peak_gflops=1000, bandwidth_gbs=100)
    # 2 / (4 * (1/32 + 1/16)) = 16/3 = 5.3333; ridge 10; 533.3 GFLOP/s
    assert (r["kernel"], r["tile"], r["coarsen"], r["op_per_byte"]) == ("coarsened", 16, 2, 5.3333)
    assert r["device"] == {"name": "custom", "peak_gflops": 1000, "bandwidth_gbs": 100}
    assert (r["ridge_op_per_byte"], r["bound_gflops"], r["bound"], r["pct_of_peak"]) == (10.0, 533.3, "memory", 53.33)
    r = intensity("naive", tile=16)
    assert (r["tile"], r["coarsen"], r["device"]) == (None, None, None) and "bound" not in r
    assert intensity("coarsened")["coarsen"] == 4
    assert intensity("naive", device_name="My GPU", peak_gflops=10, bandwidth_gbs=1)["device"]["name"] == "My GPU"
