"""OP/B of the matmul kernels (seed 000 exercise 3) and the roofline."""

from __future__ import annotations

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model import find_device, intensity, matmul_intensity, roofline


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
