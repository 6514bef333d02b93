"""Clocks, temperature and throttle reasons from NVML, when nvidia-ml-py is installed; the rule that marks a
measurement as throttled from snapshots taken before and after it; and the NVLink links between two GPUs.

NVML numbers GPUs its own way (not CUDA's ordinals), so a device is found by its PCI bus id."""

from __future__ import annotations

from functools import cache

# nvmlClocksEventReasons bits that mean the clock was held down (idle, application-clock and sync-boost bits do not)
SLOWDOWN_BITS = {0x4: "sw power cap", 0x8: "hw slowdown", 0x20: "sw thermal slowdown",
                 0x40: "hw thermal slowdown", 0x80: "hw power brake"}
CLOCK_DROP = 0.05  # an SM clock more than 5% lower after the measurement than before it


def _handle(ordinal: int | None = None):
    """(pynvml, handle) of a CUDA device (default: the current one), or None without NVML."""
    from ..gpu import runtime

    try:
        bus = runtime.device_info(ordinal).get("pci_bus_id")
    except Exception:  # no GPU: nothing to ask NVML about
        return None
    return _handle_by_bus(bus)


@cache
def _handle_by_bus(bus: str | None):
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml, (pynvml.nvmlDeviceGetHandleByPciBusId(bus) if bus else pynvml.nvmlDeviceGetHandleByIndex(0))
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


# ---------------------------------------------------------------- NVLink

# nvmlDeviceGetNvLinkVersion answers an nvmlNvlinkVersion_t (1: 1.0, 2: 2.0, 3: 2.2, 4: 3.0, 5: 3.1, 6: 4.0,
# 7: 5.0; two H200s answered 6), not the version itself: its name, and the GB/s per link and direction where NVML
# gives no link speed: P100 20, V100 25.78125, A100 25, H100/H200 26.5625 (what `nvidia-smi nvlink -s` prints),
# B200 53.125
NVLINK_VERSIONS = {1: ("1.0", 20.0), 2: ("2.0", 25.78125), 3: ("2.2", 25.78125), 4: ("3.0", 25.0), 5: ("3.1", 25.0),
                   6: ("4.0", 26.5625), 7: ("5.0", 53.125)}
REMOTE_GPU, REMOTE_SWITCH = 0, 2  # nvmlIntNvLinkDeviceType_t


def _bus(text) -> str:
    """A PCI bus id as CUDA ("0000:1B:00.0") and NVML ("00000000:1B:00.0") print it, in one form."""
    text = (text.decode() if isinstance(text, bytes) else str(text)).strip().lower()
    parts = text.split(":")
    return f"{int(parts[0], 16):04x}:{':'.join(parts[1:])}" if len(parts) == 3 else text


def nvlinks(ordinal: int) -> list[dict] | None:
    """Active NVLink links of a device: [{link, version, gbps, remote ('gpu' bus id or 'switch')}], None
    without NVML; [] when the GPU has no active NVLink."""
    h = _handle(ordinal)
    if h is None:
        return None
    nv, dev = h
    links = []
    for link in range(int(getattr(nv, "NVML_NVLINK_MAX_LINKS", 18))):
        try:
            if not nv.nvmlDeviceGetNvLinkState(dev, link):
                continue
            code = int(nv.nvmlDeviceGetNvLinkVersion(dev, link))
        except Exception:  # a link NVML does not know (past the last one, or NVLink unsupported)
            continue
        try:
            kind = int(nv.nvmlDeviceGetNvLinkRemoteDeviceType(dev, link))
        except Exception:
            kind = REMOTE_GPU
        remote = "switch"
        if kind != REMOTE_SWITCH:
            try:
                remote = _bus(nv.nvmlDeviceGetNvLinkRemotePciInfo_v2(dev, link).busId)
            except Exception:
                remote = "unknown"
        version, rate = NVLINK_VERSIONS.get(code, (f"(NVML code {code})", None))
        links.append(dict(link=link, version=version, gbps=_link_gbps(nv, dev, rate), remote=remote))
    return links


def _link_gbps(nv, dev, version_rate: float | None) -> float | None:
    """The links' common speed per direction from NVML (a field in MB/s), else the version's rate."""
    try:
        value = nv.nvmlDeviceGetFieldValues(dev, [nv.NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON])[0]
        if int(value.nvmlReturn) == 0 and value.value.uiVal:
            return float(value.value.uiVal) / 1e3
    except Exception:  # an older driver or nvidia-ml-py without the field
        pass
    return version_rate


def pair_link(a: int, b: int) -> dict:
    """How GPUs ``a`` and ``b`` connect: {type: 'NVLink' or 'PCIe' or 'unknown', links, version, gbps (per direction,
    links x per-link rate)}. Links to an NVSwitch count for every pair; direct links only for the GPU at their end."""
    from ..gpu import runtime

    la, lb = nvlinks(a), nvlinks(b)
    if la is None or lb is None:
        return dict(type="unknown", links=0, version=None, gbps=None, how="NVML not available")
    bus = {o: _bus(runtime.device_info(o)["pci_bus_id"] or "") for o in (a, b)}
    ours = lambda links, peer: [x for x in links if x["remote"] in ("switch", bus[peer])]  # noqa: E731
    ab, ba = ours(la, b), ours(lb, a)
    if not ab or not ba:
        return dict(type="PCIe", links=0, version=None, gbps=None, how="no NVLink between them (NVML)")
    use = ab if len(ab) <= len(ba) else ba
    rates = [x["gbps"] for x in use if x["gbps"]]
    gbps = sum(rates) if len(rates) == len(use) else None
    via = "NVSwitch" if any(x["remote"] == "switch" for x in use) else "direct"
    return dict(type="NVLink", links=len(use), version=use[0]["version"], gbps=gbps,
                how=f"NVML: {len(use)} active NVLink {use[0]['version']} links ({via}) x "
                    f"{rates[0] if rates else '?'} GB/s per direction")
