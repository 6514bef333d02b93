"""Clocks, temperature and throttle reasons from NVML, when nvidia-ml-py is installed; and the rule that
marks a measurement as throttled from snapshots taken before and after it."""

from __future__ import annotations

from functools import cache

# nvmlClocksEventReasons bits that mean the clock was held down (idle, application-clock and sync-boost bits do not)
SLOWDOWN_BITS = {0x4: "sw power cap", 0x8: "hw slowdown", 0x20: "sw thermal slowdown",
                 0x40: "hw thermal slowdown", 0x80: "hw power brake"}
CLOCK_DROP = 0.05  # an SM clock more than 5% lower after the measurement than before it


@cache
def _handle():
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
    except Exception:  # no library, no driver, or no permission: NVML is optional
        return None


def snapshot() -> dict | None:
    """SM/memory clocks (MHz), temperature (C), power (W), throttle-reason bits and the cumulative time (ns) the
    driver held clocks down for power and for temperature, or None without NVML."""
    h = _handle()
    if h is None:
        return None
    nv, dev = h
    out = {}
    for key, fn in (
        ("sm_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(dev, nv.NVML_CLOCK_SM)),
        ("mem_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(dev, nv.NVML_CLOCK_MEM)),
        ("temperature_c", lambda: nv.nvmlDeviceGetTemperature(dev, nv.NVML_TEMPERATURE_GPU)),
        ("power_w", lambda: nv.nvmlDeviceGetPowerUsage(dev) / 1000.0),
        ("throttle_reasons", lambda: int(nv.nvmlDeviceGetCurrentClocksEventReasons(dev))),
        ("power_violation_ns", lambda: int(nv.nvmlDeviceGetViolationStatus(dev, nv.NVML_PERF_POLICY_POWER).violationTime)),
        ("thermal_violation_ns",
         lambda: int(nv.nvmlDeviceGetViolationStatus(dev, nv.NVML_PERF_POLICY_THERMAL).violationTime)),
    ):
        try:
            out[key] = fn()
        except Exception:
            out[key] = None
    return out


def throttling(before: dict | None, after: dict | None) -> list[str]:
    """Why the clocks were held down between two snapshots (empty: not throttled, or no NVML).

    Three signs, each read only where NVML gave it: a slowdown bit set in either snapshot, a violation counter
    (power or thermal) that grew, and an SM clock that fell by more than ``CLOCK_DROP``."""
    if not before or not after:
        return []
    reasons = []
    bits = (before.get("throttle_reasons") or 0) | (after.get("throttle_reasons") or 0)
    reasons += [name for bit, name in SLOWDOWN_BITS.items() if bits & bit]
    for key, name in (("power_violation_ns", "power"), ("thermal_violation_ns", "thermal")):
        a, b = before.get(key), after.get(key)
        if a is not None and b is not None and b > a:
            reasons.append(f"{name} violation {(b - a) / 1e6:.1f} ms")
    a, b = before.get("sm_clock_mhz"), after.get("sm_clock_mhz")
    if a and b and b < (1 - CLOCK_DROP) * a:
        reasons.append(f"SM clock {a} -> {b} MHz")
    return reasons
