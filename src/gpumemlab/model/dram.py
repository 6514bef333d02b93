"""Interleaved DRAM data distribution across channels and banks (seed 000).

Consecutive bursts go to bank 0 of channel 0, 1, 2, ... then to bank 1 of every channel, and so
on, wrapping around: burst b lives in channel b % C, bank (b // C) % B. With the seed's toy
system (4 channels, 2 banks per channel, bursts of 2 floats) M[0..1] is channel 0 bank 0,
M[2..3] channel 1 bank 0, ..., M[8..9] channel 0 bank 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from . import args


MAX_WIDTH = 1024


@dataclass(frozen=True)
class DramLayout:
    channels: int = 4
    banks_per_channel: int = 2
    burst_bytes: int = 8  # the seed's "each bank stores 2 consecutive floats"

    def __post_init__(self):
        for name in ("channels", "banks_per_channel", "burst_bytes"):
            args.integer(getattr(self, name), name)
        if min(self.channels, self.banks_per_channel, self.burst_bytes) <= 0:
            raise UsageError("channels, banks per channel and burst bytes must be positive")

    def locate(self, byte_addresses) -> tuple[np.ndarray, np.ndarray]:
        """(channel, bank) of each byte address."""
        burst = np.asarray(byte_addresses, dtype=np.int64) // self.burst_bytes
        return burst % self.channels, (burst // self.channels) % self.banks_per_channel

    def touched(self, byte_addresses) -> dict:
        """Which channels and (channel, bank) pairs a set of accesses uses, and the channel share."""
        ch, bank = self.locate(byte_addresses)
        channels = sorted(set(ch.tolist()))
        pairs = sorted(set(zip(ch.tolist(), bank.tolist())))
        return dict(channels=channels, banks=[list(p) for p in pairs],
                    channel_utilization_pct=round(100.0 * len(channels) / self.channels, 2))

    def table(self, elements: int, element_bytes: int = 4) -> dict[tuple[int, int], list[int]]:
        """{(channel, bank): element indices stored there} for the first ``elements`` elements."""
        ch, bank = self.locate(np.arange(elements) * element_bytes)
        out: dict[tuple[int, int], list[int]] = {}
        for i, key in enumerate(zip(ch.tolist(), bank.tolist())):
            out.setdefault(key, []).append(i)
        return out


def tiled_matmul_phase_elements(width: int, tile: int, phase: int, block: tuple[int, int]) -> list[int]:
    """Indices of M that block (by, bx) loads in ``phase`` of the tiled matmul: M[row*W + ph*T + tx]."""
    by, _bx = block
    if width % tile or not 0 <= phase < width // tile:
        raise UsageError(f"phase {phase} is outside 0..{width // tile - 1} for width {width}, tile {tile}")
    rows = range(by * tile, (by + 1) * tile)
    return [row * width + phase * tile + tx for row in rows for tx in range(tile)]


def tiled_matmul_phase(layout: DramLayout, width: int = 4, tile: int = 2, phase: int = 0) -> dict:
    """Channels and banks all blocks of one phase touch when loading their M tiles (seed: channels 0, 2)."""
    args.instance(layout, DramLayout, "layout")
    args.integer(width, "width", least=1), args.integer(tile, "tile", least=1), args.integer(phase, "phase")
    if width > MAX_WIDTH:  # every element of M is listed: a picture-sized matrix, not a real one
        raise UsageError(f"width {width} is too large for this element-by-element picture (at most {MAX_WIDTH})")
    tiled_matmul_phase_elements(width, tile, phase, (0, 0))  # UsageError for a phase outside the matrix
    blocks = [(by, bx) for by in range(width // tile) for bx in range(width // tile)]
    per_block = {f"{by},{bx}": tiled_matmul_phase_elements(width, tile, phase, (by, bx)) for by, bx in blocks}
    every = sorted({i for elems in per_block.values() for i in elems})
    return dict(elements=per_block, **layout.touched(np.asarray(every) * 4))


def bytes_in_flight(bandwidth_gbps: float, latency_ns: float, sm_count: int, threads_per_sm: int) -> dict:
    """Little's law: to sustain ``bandwidth_gbps`` when every load waits ``latency_ns``, the GPU must keep
    bandwidth x latency bytes requested and not yet returned; per SM, and per thread when ``threads_per_sm``
    threads are resident on each SM (16-byte loads: how many each thread must have outstanding)."""
    for name, value in (("bandwidth_gbps", bandwidth_gbps), ("latency_ns", latency_ns)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
            raise UsageError(f"{name} must be a finite number > 0, got {value!r}")
    for name, value in (("sm_count", sm_count), ("threads_per_sm", threads_per_sm)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise UsageError(f"{name} must be an int > 0, got {value!r}")
    total = bandwidth_gbps * latency_ns  # GB/s x ns = bytes
    per_sm = total / sm_count
    per_thread = per_sm / threads_per_sm
    return dict(bytes=total, bytes_per_sm=per_sm, bytes_per_thread=per_thread, loads16_per_thread=per_thread / 16)
