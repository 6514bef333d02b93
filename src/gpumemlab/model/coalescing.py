"""Global-memory coalescing: requests, 32-byte sectors, 128-byte lines, efficiency, verdict.

CC >= 5.0 (what Nsight Compute counts as l1tex__t_requests / l1tex__t_sectors): each warp-level
load instruction with at least one active lane is one request; it moves every distinct 32-byte
sector that its active lanes touch. The historical rules (``transactions``) follow the CUDA
Programming Guide of their time:

- 1.0/1.1: per half-warp, one 64-byte (4-byte words), 128-byte (8-byte) or two 128-byte (16-byte)
  transaction(s) if the k-th active thread reads the k-th word of an aligned segment; otherwise
  one 32-byte transaction per active thread.
- 1.2/1.3: per half-warp, segments of 32/64/128 bytes (1-/2-/4+-byte words) found from the
  lowest active thread, each halved while only its lower or upper half is used.
- 2.x/3.x (L1-cached loads): 8-byte accesses are split into half-warp requests, 16-byte ones
  into quarter-warp requests; each moves one 128-byte line per distinct line.
"""

from __future__ import annotations

import numpy as np

from .access import LaneAccesses

SECTOR = 32
LINE = 128
HALF_WARP = 16


def union_bytes(starts: np.ndarray, width: int) -> int:
    """Bytes covered by the ranges [s, s + width) (unique bytes a request asks for)."""
    s = np.unique(starts)
    if s.size == 0:
        return 0
    gaps = np.minimum(np.diff(s), width)
    return int(gaps.sum()) + width


def units_touched(starts: np.ndarray, width: int, unit: int) -> int:
    """Distinct aligned ``unit``-byte blocks the ranges [s, s + width) touch."""
    s = np.unique(starts)
    first, last = s // unit, (s + width - 1) // unit
    if np.array_equal(first, last):
        return int(np.unique(first).size)
    return int(np.unique(np.concatenate([np.arange(a, b + 1) for a, b in zip(first, last)])).size)


def request_stats(starts: np.ndarray, width: int) -> dict:
    """One warp-level load of ``width`` bytes per active lane, lanes' byte addresses in ``starts``."""
    unique = union_bytes(starts, width)
    return dict(sectors=units_touched(starts, width, SECTOR), lines=units_touched(starts, width, LINE),
                unique_bytes=unique, min_sectors=-(-unique // SECTOR))


def _summary(reqs: list[dict]) -> dict:
    sectors = sum(r["sectors"] for r in reqs)
    unique = sum(r["unique_bytes"] for r in reqs)
    out = dict(requests=len(reqs), sectors=sectors, lines=sum(r["lines"] for r in reqs),
               sectors_per_request=round(sectors / len(reqs), 3) if reqs else None,
               efficiency_pct=round(100.0 * unique / (SECTOR * sectors), 2) if sectors else None)
    out["min_sectors"] = sum(r["min_sectors"] for r in reqs)
    out["verdict"] = ("coalesced" if sectors == out["min_sectors"] else "uncoalesced") if reqs else "not executed"
    return out


# ---------------------------------------------------------------- historical transactions

def _cc1x_strict(addrs: np.ndarray, lanes: np.ndarray, width: int) -> tuple[list[int], bool]:
    """CC 1.0/1.1: the k-th thread must read the k-th word of a 16*width-aligned segment."""
    if width in (4, 8, 16):
        base = addrs - lanes * width
        if np.all(base == base[0]) and base[0] % (HALF_WARP * width) == 0:
            return {4: [64], 8: [128], 16: [128, 128]}[width], True
    return [SECTOR] * int(addrs.size), False


def _cc12_segments(addrs: np.ndarray, width: int) -> tuple[list[int], bool]:
    """CC 1.2/1.3: serve the lowest pending thread's segment, halved while only one half is used."""
    seg = {1: 32, 2: 64}.get(width, 128)
    pending = np.unique(addrs)
    out = []
    while pending.size:
        lo = pending[0] // seg * seg
        inside = pending[(pending >= lo) & (pending < lo + seg)]
        size, start = seg, lo
        while size > SECTOR:
            half = size // 2
            if np.all(inside + width <= start + half):
                size = half
            elif np.all(inside >= start + half):
                start, size = start + half, half
            else:
                break
        out.append(int(size))
        pending = pending[(pending < lo) | (pending >= lo + seg)]
    fewest = -(-union_bytes(addrs, width) // seg)
    return out, len(out) == fewest


def _cc2x_lines(addrs: np.ndarray, width: int) -> tuple[list[int], bool]:
    lines = units_touched(addrs, width, LINE)
    return [LINE] * lines, lines == -(-union_bytes(addrs, width) // LINE)


def _historical(addr_row: np.ndarray, active: np.ndarray, width: int, cc) -> tuple[list[int], bool]:
    """Transactions (byte sizes) for one warp-level load, and whether each part was coalesced."""
    # 1.x: half-warps; 2.x/3.x: 8-byte loads per half-warp, 16-byte per quarter-warp, else the whole warp
    group = HALF_WARP if cc[0] == 1 else {8: 16, 16: 8}.get(width, addr_row.size)
    trans, ok = [], True
    lanes = np.arange(addr_row.size)
    for g in range(0, addr_row.size, group):
        act = active[g:g + group]
        if not act.any():
            continue
        a = addr_row[g:g + group][act]
        if cc[0] == 1 and cc[1] <= 1:
            t, good = _cc1x_strict(a, lanes[g:g + group][act] - g, width)
        elif cc[0] == 1:
            t, good = _cc12_segments(a, width)
        else:
            t, good = _cc2x_lines(a, width)
        trans += t
        ok &= good
    return trans, ok


# ---------------------------------------------------------------- the analysis

def analyze(lanes: LaneAccesses, cc=(9, 0)) -> dict:
    """Counts for all warps of the block (totals) and for each warp (``per_warp``)."""
    historical = cc[0] <= 3
    all_reqs, all_trans, all_ok, per_warp = [], [], True, []
    for w, addrs, act in lanes.warps():
        reqs, trans, ok = [], [], True
        if act.any():
            for row, width in zip(addrs, lanes.widths):
                reqs.append(request_stats(row[act], width))
                if historical:
                    t, good = _historical(row, act, width, cc)
                    trans += t
                    ok &= good
        rec = dict(warp=w, active_lanes=int(act.sum()), **_summary(reqs))
        if historical:
            rec["transactions"] = trans
            if reqs:
                rec["verdict"] = "coalesced" if ok else "uncoalesced"
            all_trans += trans
            all_ok &= ok
        per_warp.append(rec)
        all_reqs += reqs
    out = _summary(all_reqs)
    if historical:
        out["transactions"] = all_trans
        out["verdict"] = "coalesced" if all_ok else "uncoalesced"
    out["per_warp"] = per_warp
    return out
