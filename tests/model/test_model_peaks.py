"""Datasheet peaks from device attributes (model/peaks.py), worked by hand: H100 SXM's attributes (132 SMs at
1.98 GHz, 2.619 GHz memory clock on a 5120-bit bus), the FP32 lanes per SM by compute capability."""

from __future__ import annotations

import pytest

from gpumemlab.model.peaks import FP32_LANES_PER_SM, fp32_peak_gflops, theoretical_dram_gbps

H100 = dict(cc=[9, 0], sm_count=132, sm_clock_khz=1_980_000, memory_clock_khz=2_619_000, memory_bus_width_bits=5120)


def test_dram_peak_is_memory_clock_times_bus_bytes_times_two():
    assert theoretical_dram_gbps(H100) == pytest.approx(2.619e9 * 640 * 2 / 1e9, rel=1e-15)  # 3352.32 GB/s
    assert theoretical_dram_gbps(dict(H100, memory_bus_width_bits=384, memory_clock_khz=10_501_000)) == \
        pytest.approx(10.501e9 * 48 * 2 / 1e9, rel=1e-15)


@pytest.mark.parametrize("cc, lanes", [((9, 0), 128), ((8, 0), 64), ((8, 6), 128), ((7, 5), 64), ((12, 0), 128)])
def test_fp32_peak_is_sms_times_clock_times_lanes_times_two(cc, lanes):
    assert FP32_LANES_PER_SM[cc] == lanes
    assert fp32_peak_gflops(dict(H100, cc=list(cc))) == pytest.approx(132 * 1.98e9 * lanes * 2 / 1e9, rel=1e-15)


def test_fp32_peak_of_an_unknown_compute_capability_is_none():
    assert fp32_peak_gflops(dict(H100, cc=[6, 1])) is None
