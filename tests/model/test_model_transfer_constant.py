"""Constant-memory serialization, the staged copy/compute overlap, the PCIe rate and block-reuse intensity.

Every expected number is worked out by hand in its comment.
"""

from __future__ import annotations

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model.constant import constant_requests
from gpumemlab.model.intensity import DEVICES, device, find_device, reuse_intensity
from gpumemlab.model.overlap import _positive, pcie_gbps, sequential_time, staged_time


def message(fn, *args, **kw) -> str:
    with pytest.raises(UsageError) as info:
        fn(*args, **kw)
    return str(info.value)


BROADCAST = "broadcast: one request per warp"


def serialized(n: int) -> str:
    return f"serialized: up to {n} distinct addresses per warp, {n} requests where a broadcast needs 1"


# ---------------------------------------------------------------- constant memory

@pytest.mark.parametrize("access, decl, kw, want", [
    # every lane of both warps reads taps[0]: one word, one request per warp
    ("taps[0]", "__constant__ float taps[64]", dict(block=64), (1, 1.0, 2, 1, BROADCAST)),
    # lanes read 4 distinct floats: 4 serialized requests
    ("taps[threadIdx.x % 4]", "__constant__ float taps[64]", dict(block=32), (4, 4.0, 1, 1, serialized(4))),
    # warp 0 broadcasts (1), warp 1 reads 8 distinct words (8): worst 8, mean (1 + 8) / 2 = 4.5
    ("taps[threadIdx.x < 32 ? 0 : threadIdx.x % 8]", "float taps[64]", dict(block=64),
     (8, 4.5, 2, 1, serialized(8))),
    # only warp 0 executes
    ("taps[threadIdx.x]", "float taps[64]", dict(block=64, active="threadIdx.x < 32"),
     (32, 32.0, 1, 1, serialized(32))),
    # chars 0..31 are the 4-byte words 0..7: 8 distinct addresses
    ("c[threadIdx.x]", "__constant__ char c[32]", dict(block=32), (8, 8.0, 1, 1, serialized(8))),
    # float3 = 3 loads of 4 bytes; one element: 3 requests = one per load, a broadcast
    ("v[0]", "__constant__ float3 v[4]", dict(block=32), (3, 3.0, 1, 3, BROADCAST)),
    # two elements: each of the 3 loads sees 2 words: 6 requests, 2 per load
    ("v[threadIdx.x % 2]", "__constant__ float3 v[4]", dict(block=32), (6, 6.0, 1, 3, serialized(2))),
])
def test_constant_requests(access, decl, kw, want):
    r = constant_requests(access, decl, **kw)
    assert (r["requests_per_warp"], r["mean_requests_per_warp"], r["warps"], r["loads_per_element"],
            r["verdict"]) == want


# ---------------------------------------------------------------- overlap (seed 003, 9.1.2)

def test_sequential_time_adds_the_copy_and_the_kernel():
    assert sequential_time(3, 2) == 5.0
    assert sequential_time(0, 0) == 0.0
    assert message(sequential_time, -1, 2) == "t_exec must be >= 0, not -1"
    assert message(sequential_time, 1, -0.5) == "t_transfer must be >= 0, not -0.5"


@pytest.mark.parametrize("stages, n, want", [
    ([4, 2], 4, 4.5),        # tE >= tT: tE + tT/n = 4 + 2/4
    ([2, 4], 4, 4.5),        # tT > tE: tT + tE/n, the same
    ([1, 2, 3], 2, 4.5),     # longest 3 + (1 + 2)/2
    ([5], 3, 5.0),           # one stage: nothing to overlap
    ([3, 3], 1, 6.0),        # one stream: sequential
    ([0, 8], 2.0, 8.0),      # an integral float count is accepted
])
def test_staged_time(stages, n, want):
    assert staged_time(stages, n) == want


@pytest.mark.parametrize("stages, n, want", [
    ([], 2, "staged_time needs at least one stage"),
    ([1, -2], 2, "stage time must be >= 0, not -2"),
    ([1, 2], 0, "n_streams must be an integer >= 1, not 0"),
    ([1, 2], -1, "n_streams must be an integer >= 1, not -1"),
    ([1, 2], 2.5, "n_streams must be an integer >= 1, not 2.5"),
    ([1, 2], True, "n_streams must be an integer >= 1, not True"),
])
def test_staged_time_refusals(stages, n, want):
    assert message(staged_time, stages, n) == want


def test_positive_without_zero():
    assert _positive("x", 2, allow_zero=False) == 2.0
    assert _positive("x", 0) == 0.0
    assert message(_positive, "x", 0, allow_zero=False) == "x must be > 0, not 0"
    assert message(_positive, "x", float("nan")) == "x must be >= 0, not nan"  # NaN compares false


@pytest.mark.parametrize("gen, width, want", [
    (1, 1, 0.25),                   # 2.5 GT/s * 8/10 / 8 bits
    (2, 8, 4.0),                    # 5 * 0.8 * 8 / 8
    (3, 16, 8 * 128 / 130 * 2),     # 8 GT/s * 128/130 * 16 lanes / 8 = 15.75...
    (4, 16, 16 * 128 / 130 * 2),    # 31.5...
    (5, 4, 32 * 128 / 130 / 2),     # 32 * 128/130 * 4 / 8
    (6, 16, 121.0),                 # 64 * 242/256 * 16 / 8
    (4, 12, 16 * 128 / 130 * 1.5),
    (3, 32, 8 * 128 / 130 * 4),
])
def test_pcie_rate(gen, width, want):
    assert pcie_gbps(gen, width) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("gen, width, want", [
    (7, 16, "unknown PCIe generation 7; known: 1, 2, 3, 4, 5, 6"),
    (0, 16, "unknown PCIe generation 0; known: 1, 2, 3, 4, 5, 6"),
    (4, 3, "PCIe link width must be x1, x2, x4, x8, x12, x16 or x32, not 3"),
    (4, 64, "PCIe link width must be x1, x2, x4, x8, x12, x16 or x32, not 64"),
    (4, True, "PCIe link width must be x1, x2, x4, x8, x12, x16 or x32, not True"),
])
def test_pcie_refusals(gen, width, want):
    assert message(pcie_gbps, gen, width) == want


# ---------------------------------------------------------------- block reuse and device names

@pytest.mark.parametrize("m, n, want", [
    (1, 1, 0.25),      # 2 / (4 * 2)
    (32, 32, 8.0),     # 2 / (4 * 2/32)
    (32, 128, 12.8),   # 2 / (4 * (4 + 1)/128) = 256/20
    (64, 16, 6.4),     # 2 / (4 * (1 + 4)/64) = 128/20
])
def test_reuse_intensity(m, n, want):
    assert reuse_intensity(m, n) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("m, n, want", [
    (0, 4, "reuse factors must be >= 1, got 0 x 4"), (4, 0, "reuse factors must be >= 1, got 4 x 0"),
])
def test_reuse_refusals(m, n, want):
    assert message(reuse_intensity, m, n) == want


@pytest.mark.parametrize("name, want", [
    ("NVIDIA", None), ("", None), ("nvidia tesla geforce", None),   # nothing left once the vendor words go
    ("GEFORCE RTX-5090", "RTX 5090"), ("nvidia a 10", "A10"), ("NVIDIA A10G", None), ("l4", "L4"),
    ("Tesla V100-PCIE-32GB", "V100 PCIe"), ("NVIDIA GeForce RTX 3090 Ti", "RTX 3090"),
])
def test_device_name_normalization(name, want):
    dev = find_device(name)
    assert (dev.name if dev else None) == want


def test_unknown_device_message_lists_the_table():
    known = ", ".join(d.name for _, d in DEVICES)
    assert known.startswith("H100 NVL, H100 PCIe, H100 SXM, H200 SXM, A100 40GB") and known.endswith("L4, T4")
    assert message(device, "fx5800") == (f"unknown device 'fx5800' (known: {known}); or give "
                                                    "--peak-gflops and --bandwidth-gbs")
