"""Clocks, temperature and throttle reasons from NVML, when nvidia-ml-py is installed."""

from __future__ import annotations

from functools import cache


@cache
def _handle():
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
    except Exception:  # no library, no driver, or no permission: NVML is optional
        return None


def snapshot() -> dict | None:
    """SM/memory clocks (MHz), temperature (C), power (W) and throttle-reason bits, or None."""
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
    ):
        try:
            out[key] = fn()
        except Exception:
            out[key] = None
    return out
