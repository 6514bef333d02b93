"""Shared-memory bank conflicts: wavefronts, ideal wavefronts, conflicts, ways.

CC >= 2.0: 32 banks of 4 bytes; word w lives in bank w % 32. Lanes reading the same word are
served together (broadcast), so a group of lanes needs as many wavefronts as the largest number
of *distinct* words any one bank must deliver. CC 1.x: 16 banks, served per half-warp; distinct
addresses in one bank conflict (so does char s[tid]: 4 bytes of one word), and 8-/16-byte
accesses are split into 4-byte ones.

The one rule that decides how a warp is cut into phases (:func:`lanes_per_phase`) is kept apart so
that Nsight Compute measurements can correct it.
"""

from __future__ import annotations

import numpy as np

from .access import LaneAccesses

BANK_BYTES = 4


def banks(cc) -> int:
    return 16 if cc[0] == 1 else 32


def lanes_per_phase(width: int, cc, starts: np.ndarray | None = None, active: np.ndarray | None = None) -> int:
    """How many lanes are served together for an access of ``width`` bytes per lane (the one rule).

    Volta and later, as commonly measured with ncu: 4-byte and narrower accesses are served per
    warp, 8-byte accesses per half-warp, 16-byte accesses per quarter-warp (the return path moves
    128 bytes, one register of the warp, per wavefront). Refinement (NVIDIA's answer for CC 7.x on
    the developer forum): when every active lane n reads the same address as lane n^1, or every one
    as lane n^2, two lanes share the returned data and a phase serves twice as many lanes (a
    broadcast float4 takes 2 wavefronts, not 4). CC 1.x: per half-warp.
    """
    if cc[0] == 1:
        return 16
    lanes = {8: 16, 16: 8}.get(width, 32)
    if lanes < 32 and cc >= (7, 0) and starts is not None and _uniform_pairs(starts, active):
        lanes *= 2
    return lanes


def _uniform_pairs(starts: np.ndarray, active: np.ndarray) -> bool:
    """Every active lane n has an active partner n^1 (or every one n^2) reading the same address."""
    n = starts.size
    lane = np.arange(n)
    for step in (1, 2):
        partner = lane ^ step
        inside = partner < n
        p = np.where(inside, partner, lane)
        ok = ~active | (inside & active[p] & (starts[p] == starts))
        if ok.all():
            return True
    return False


def phase_wavefronts(starts: np.ndarray, width: int, cc) -> int:
    """Wavefronts for one phase (at least one lane): the most distinct words (1.x: addresses) of one bank."""
    if cc[0] == 1:
        units = np.unique(starts)  # 1.x: distinct addresses conflict, equal ones broadcast
        bank = (units // BANK_BYTES) % banks(cc)
    else:
        words = np.unique(np.concatenate([starts // BANK_BYTES + k for k in range(-(-width // BANK_BYTES))]))
        bank = words % banks(cc)
    return int(np.bincount(bank).max())


def request_wavefronts(addr_row: np.ndarray, active: np.ndarray, width: int, cc) -> dict:
    """One warp-level shared load: wavefronts, ideal (one per phase with active lanes), ways (worst phase)."""
    if cc[0] == 1 and width > BANK_BYTES:  # 1.x splits 8/16-byte accesses into 4-byte requests
        parts = [request_wavefronts(addr_row + k * BANK_BYTES, active, BANK_BYTES, cc)
                 for k in range(width // BANK_BYTES)]
        return dict(wavefronts=sum(p["wavefronts"] for p in parts), ideal=sum(p["ideal"] for p in parts),
                    ways=max(p["ways"] for p in parts))
    size = lanes_per_phase(width, cc, addr_row, active)
    per_phase = [phase_wavefronts(addr_row[g:g + size][active[g:g + size]], width, cc)
                 for g in range(0, addr_row.size, size) if active[g:g + size].any()]
    return dict(wavefronts=sum(per_phase), ideal=len(per_phase), ways=max(per_phase))  # callers: >= 1 active lane


def _summary(reqs: list[dict]) -> dict:
    wf = sum(r["wavefronts"] for r in reqs)
    ideal = sum(r["ideal"] for r in reqs)
    ways = max((r["ways"] for r in reqs), default=0)
    verdict = "not executed" if not reqs else "conflict-free" if ways <= 1 else f"{ways}-way bank conflict"
    return dict(requests=len(reqs), wavefronts=wf, ideal_wavefronts=ideal, conflicts=wf - ideal, ways=ways,
                verdict=verdict)


def analyze(lanes: LaneAccesses, cc=(9, 0)) -> dict:
    """Totals over the block's warps and ``per_warp``; ``conflicts`` = wavefronts - ideal (as ncu)."""
    all_reqs, per_warp = [], []
    for w, addrs, act in lanes.warps():
        reqs = [request_wavefronts(row, act, width, cc) for row, width in zip(addrs, lanes.widths)] if act.any() else []
        per_warp.append(dict(warp=w, active_lanes=int(act.sum()), **_summary(reqs)))
        all_reqs += reqs
    out = _summary(all_reqs)
    out["per_warp"] = per_warp
    return out
