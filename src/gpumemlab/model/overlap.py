"""Host-device transfer models: the staged copy/compute overlap of seed 003 and the PCIe link's rate.

Pure functions (no GPU): the experiments print them next to what they measure.
"""

from __future__ import annotations

from ..errors import UsageError

# PCIe per-lane signalling rate (GT/s) and line-code efficiency by generation (PCI-SIG base specifications:
# 8b/10b for Gen1-2, 128b/130b for Gen3-5; Gen6 is FLIT mode, 242 of every 256 bytes carry data).
PCIE_LANE = {1: (2.5, 8 / 10), 2: (5.0, 8 / 10), 3: (8.0, 128 / 130), 4: (16.0, 128 / 130),
             5: (32.0, 128 / 130), 6: (64.0, 242 / 256)}


def _positive(name: str, value: float, allow_zero: bool = True) -> float:
    v = float(value)
    if not (v >= 0 if allow_zero else v > 0):
        raise UsageError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, not {value!r}")
    return v


def sequential_time(t_exec: float, t_transfer: float) -> float:
    """Copy everything, then run the kernel on everything: tE + tT (seed 003, 9.1.2)."""
    return _positive("t_exec", t_exec) + _positive("t_transfer", t_transfer)


def staged_time(stages, n_streams: int) -> float:
    """A pipeline of stages split into ``n_streams`` equal chunks, each stage on its own engine.

    The longest stage runs back to back; every other stage shows only its first (or last) chunk:
    max + (sum - max) / nStreams. For the seed's two stages (copy, kernel) this is tE + tT/nStreams when
    tE >= tT and tT + tE/nStreams otherwise (seed 003, 9.1.2).
    """
    times = [_positive("stage time", t) for t in stages]
    if not times:
        raise UsageError("staged_time needs at least one stage")
    if isinstance(n_streams, bool) or int(n_streams) != n_streams or n_streams < 1:
        raise UsageError(f"n_streams must be an integer >= 1, not {n_streams!r}")
    longest = max(times)
    return longest + (sum(times) - longest) / int(n_streams)


def pcie_gbps(generation: int, width: int) -> float:
    """Theoretical data rate of one direction of a PCIe link in GB/s (1e9 bytes/s), before packet overhead."""
    if generation not in PCIE_LANE:
        raise UsageError(f"unknown PCIe generation {generation!r}; known: {', '.join(map(str, PCIE_LANE))}")
    if isinstance(width, bool) or width not in (1, 2, 4, 8, 12, 16, 32):
        raise UsageError(f"PCIe link width must be x1, x2, x4, x8, x12, x16 or x32, not {width!r}")
    gts, efficiency = PCIE_LANE[generation]
    return gts * efficiency * width / 8
