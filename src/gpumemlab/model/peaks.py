"""Datasheet peaks from device attributes (never typed in): the ceilings of the suite and the library's models.

``info`` is a device-info dict (``gpu.runtime.device_info``): ``cc``, ``sm_count``, ``sm_clock_khz``,
``memory_clock_khz``, ``memory_bus_width_bits``.
"""

from __future__ import annotations

# FP32 lanes per SM by compute capability (CUDA Programming Guide, arithmetic instruction throughput).
FP32_LANES_PER_SM = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
                     (9, 0): 128, (10, 0): 128, (10, 3): 128, (12, 0): 128, (12, 1): 128}


def theoretical_dram_gbps(info: dict) -> float:
    """memory clock x bus width x 2 (double data rate)."""
    return info["memory_clock_khz"] * 1e3 * (info["memory_bus_width_bits"] / 8) * 2 / 1e9


def fp32_peak_gflops(info: dict) -> float | None:
    """SMs x clock x FP32 lanes x 2 (one FMA = 2 flops); None for a compute capability without a lane count."""
    lanes = FP32_LANES_PER_SM.get(tuple(info["cc"]))
    if lanes is None:
        return None
    return info["sm_count"] * info["sm_clock_khz"] * 1e3 * lanes * 2 / 1e9
