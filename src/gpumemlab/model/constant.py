"""Constant-memory model: a warp's load from ``__constant__`` memory is served one distinct address at a time.

When every active lane reads the same word the constant cache broadcasts it (one request); each further
distinct address in the warp costs another, serialized request (CUDA C++ Programming Guide, "Device Memory
Accesses", constant memory; seed 001 memory-space slides).
"""

from __future__ import annotations

import numpy as np

from .access import resolve


def warp_reads(addresses: np.ndarray, active: np.ndarray) -> int:
    """Serialized reads for one warp: every load instruction (a row of byte addresses) is served once per distinct
    4-byte word its active lanes read."""
    return sum(len(np.unique(row[active] // 4)) for row in addresses)


def verdict(reads: int, loads: int) -> str:
    """``broadcast`` when each load instruction reads one word, else ``serialized``."""
    return "broadcast" if reads == loads else "serialized"


def constant_requests(access: str, decl: str, **kw) -> dict:
    """Serialized requests per warp for ``access`` to the ``__constant__`` array ``decl``.

    ``decl`` may carry the ``__constant__`` qualifier (``"__constant__ float taps[64]"``); the keyword
    arguments are those of :func:`gpumemlab.model.analyze_global` (block, grid, lets, active, ...).
    Returns ``requests_per_warp`` (the worst warp), ``mean_requests_per_warp``, ``warps`` and a ``verdict``.
    """
    lanes = resolve(access, decl.replace("__constant__", " ").strip(), space="global", **kw)
    counts = [warp_reads(addrs, active) for _w, addrs, active in lanes.warps() if active.any()]
    worst = max(counts)
    loads = len(lanes.widths)
    text = ("broadcast: one request per warp" if verdict(worst, loads) == "broadcast" else
            f"serialized: up to {worst // loads} distinct addresses per warp, {worst // loads} requests "
            f"where a broadcast needs 1")
    return dict(requests_per_warp=worst, mean_requests_per_warp=float(np.mean(counts)), warps=len(counts),
                loads_per_element=loads, verdict=text)
