"""One or two plain sentences: what the lanes do, what it costs, and the fix."""

from __future__ import annotations

from math import gcd

import numpy as np

from . import banks as banks_
from .access import LaneAccesses
from .coalescing import SECTOR


def _lanes(lanes: list[int], limit: int = 6) -> str:
    if len(lanes) > 2 and lanes == list(range(lanes[0], lanes[-1] + 1)):
        return f"lanes {lanes[0]}-{lanes[-1]}"
    shown = ", ".join(map(str, lanes[:limit]))
    return f"lanes {shown}{', ...' if len(lanes) > limit else ''}"


def _first_warp(lanes: LaneAccesses):
    for w, addrs, act in lanes.warps():
        if act.any():
            return w, addrs, act
    raise ValueError("no active lane")  # resolve() refuses such input


def _stride(addrs: np.ndarray, idx: np.ndarray) -> int | None:
    """Bytes between consecutive lanes if constant over the active lanes, else None."""
    if idx.size < 2:
        return None
    d = np.diff(addrs) / np.diff(idx)
    return int(d[0]) if np.all(d == d[0]) and float(d[0]).is_integer() else None


def _varying_dim(lanes: LaneAccesses) -> int | None:
    """Which index of a multi-dimensional array changes between lanes of the first warp."""
    d = lanes.decl
    if len(d.dims) < 2:
        return None
    _, addrs, act = _first_warp(lanes)
    elems = (addrs[0][act] - lanes.offset) // d.element.size
    rel = elems - elems.min()
    idx = [rel // s if k == 0 else (rel // s) % d.dims[k] for k, s in enumerate(d.strides)]  # row-major digits
    moving = [k for k in range(len(d.dims)) if np.unique(idx[k]).size > 1]
    return moving[0] if moving else None


def explain_global(lanes: LaneAccesses, result: dict, cc=(9, 0)) -> str:
    w, addrs, act = _first_warp(lanes)
    idx = np.flatnonzero(act)
    row, width = addrs[0][act], lanes.widths[0]
    rec = result["per_warp"][w]
    ty = lanes.load_type.name
    who = f"warp {w}" + (f" ({idx.size} of 32 lanes active)" if idx.size < 32 else "")
    lane_stride = _stride(row, idx)  # bytes per lane number
    step = _stride(row, np.arange(idx.size))  # bytes between successive active lanes
    sectors, fewest = rec["sectors"], rec["min_sectors"]
    eff = rec["efficiency_pct"]
    unique = np.unique(row).size
    neighbours = "Consecutive lanes" if idx.size == idx[-1] - idx[0] + 1 else "Successive active lanes"
    if unique == 1:
        text = (f"All active lanes of {who} read the same {width}-byte {ty}, so each request moves one "
                f"32-byte sector (broadcast); that is already minimal.")
    elif sectors == fewest and step == width:
        per = max(1, SECTOR // width)
        share = (f"{_lanes(list(range(per)))} share each 32-byte sector" if neighbours.startswith("Consecutive")
                 else f"every {per} active lanes share a 32-byte sector")
        text = (f"{neighbours} of {who} read consecutive {ty}s, so {share} and the request needs the fewest "
                f"sectors ({sectors // rec['requests']}).")
    elif sectors == fewest:
        text = (f"The active lanes of {who} read {unique} distinct {ty}s packed into the fewest sectors "
                f"({sectors // rec['requests']}); on CC >= 2.0 the order of the lanes does not matter.")
    elif step == width:
        start = int(row.min()) % SECTOR
        text = (f"{neighbours} of {who} read consecutive {ty}s, but the first byte is {start} bytes past a "
                f"32-byte boundary, so the warp's bytes straddle {sectors} sectors instead of {fewest} ({eff}% of the "
                f"moved bytes used). Fix: "
                f"align the start (cudaMalloc gives 256 bytes; keep offsets a multiple of 32 bytes, pad rows "
                f"with cudaMallocPitch).")
    elif lane_stride == width:
        text = (f"Only {idx.size} lanes of warp {w} load and the idle lanes leave holes between them: {sectors} "
                f"sectors where {fewest} would hold the data ({eff}% of the moved bytes used). Fix: let the "
                f"working threads be consecutive (compact the work).")
    elif step is not None and abs(step) > width:
        per = max(1, SECTOR // abs(step))
        text = (f"{neighbours} of {who} are {abs(step)} bytes apart, so each 32-byte sector serves only "
                f"{per} lane{'s' if per > 1 else ''} and {eff}% of the moved bytes are used "
                f"({sectors} sectors where {fewest} would do). Fix: {_global_fix(lanes)}")
    else:
        text = (f"The lanes of {who} read scattered {ty}s: {sectors} sectors where {fewest} would hold the data "
                f"({eff}% of the moved bytes used). Fix: {_global_fix(lanes)}")
    if len(lanes.widths) > 1:
        text += (f" {lanes.decl.element.name} is {lanes.decl.element.size} bytes, so the compiler splits it into "
                 f"{len(lanes.widths)} loads of {width} bytes, each its own request.")
    text += _warps_differ(result)
    if "transactions" in result:
        text = _historical(result, rec, w, width, cc) + " " + text
    return text


def _historical(result: dict, rec: dict, w: int, width: int, cc) -> str:
    """The rule of cc 1.x-3.x in one sentence, with warp ``w``'s transactions."""
    sizes = ", ".join(f"{n} x {s} B" for s, n in sorted(_counts(rec["transactions"]).items())) or "none"
    if cc[0] == 1 and cc[1] <= 1:
        rule = (f"On cc {cc[0]}.{cc[1]} a half-warp coalesces only when its k-th thread reads the k-th word of an "
                f"aligned {16 * width}-byte segment, otherwise every thread is its own 32-byte transaction")
    elif cc[0] == 1:
        rule = (f"On cc {cc[0]}.{cc[1]} each half-warp is served by aligned 32/64/128-byte segments, each halved "
                f"while only one half is used, whatever the order of the threads")
    else:
        rule = f"On cc {cc[0]}.{cc[1]} (L1-cached loads) each request moves whole 128-byte lines"
    return f"{rule}: warp {w} needs {sizes} ({result['verdict']})."


def _counts(values) -> dict:
    out: dict = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _global_fix(lanes: LaneAccesses) -> str:
    elem = lanes.decl.element
    if lanes.member is not None or len(lanes.widths) > 1:
        return (f"store the fields of {elem.name} as separate arrays (SoA), or copy the structs coalesced "
                f"through shared memory as plain words.")
    dim = _varying_dim(lanes)
    if dim is not None and dim < len(lanes.decl.dims) - 1:
        return ("let threadIdx.x index the last (contiguous) dimension, transpose the data, or load the tile "
                "coalesced into shared memory and read it from there (corner turning).")
    return ("make consecutive threads read consecutive elements, or load a tile coalesced into shared memory "
            "and read the strided pattern from there.")


def _warps_differ(result: dict) -> str:
    verdicts = [r["verdict"] for r in result["per_warp"] if r["verdict"] != "not executed"]
    if len(set(verdicts)) > 1:
        good = sum(v in ("coalesced", "conflict-free") for v in verdicts)
        return f" Warps differ: {good} of {len(verdicts)} executing warps are {verdicts[0] if good else 'fine'}."
    return ""


def explain_shared(lanes: LaneAccesses, result: dict, cc=(9, 0)) -> str:
    w, addrs, act = _first_warp(lanes)
    rec = result["per_warp"][w]
    width = lanes.widths[0]
    row = addrs[0]
    group = banks_.lanes_per_phase(width, cc, row, act)
    per = {32: "warp", 16: "half-warp", 8: "quarter-warp"}[group]
    if rec["ways"] <= 1:
        shared_word = np.unique(row[act] // 4).size < int(act.sum())
        text = (f"Every bank of warp {w} delivers at most one distinct word per {per}"
                f"{' (lanes reading the same word share it by broadcast)' if shared_word else ''}, so the load "
                f"takes the ideal {rec['wavefronts']} wavefront{'s' if rec['wavefronts'] != 1 else ''}.")
    else:
        text = _conflict_sentence(lanes, w, row, act, width, group, per, cc) + " Fix: " + _shared_fix(lanes, row, act)
    if width > 4 and cc[0] > 1:
        paired = group > {8: 16, 16: 8}.get(width, 32)
        text += (f" {width}-byte accesses are served per {per}"
                 f"{' (pairs of lanes read the same address, so two share each slot)' if paired else ''}, so the "
                 f"ideal is {32 // group} wavefront{'s' if group < 32 else ''} per request.")
    return text + _warps_differ(result)


def _conflict_sentence(lanes, w, row, act, width, group, per, cc) -> str:
    """Name the lanes that pile up in the busiest bank, and the words (1.x: byte addresses) they want."""
    nb = banks_.banks(cc)
    kind = "addresses" if cc[0] == 1 else "words"  # 1.x: even bytes of one word conflict
    best = None
    for g in range(0, row.size, group):
        sel = np.flatnonzero(act[g:g + group]) + g
        if sel.size == 0:
            continue
        units = row[sel] if cc[0] == 1 else row[sel] // 4
        bank = (row[sel] // 4) % nb
        for b in np.unique(bank):
            distinct = np.unique(units[bank == b])
            if best is None or distinct.size > best[0]:
                lanes_in = [int(sel[np.flatnonzero(units == d)[0]]) for d in distinct]
                best = (distinct.size, int(b), lanes_in, distinct.tolist())
    ways, b, who, values = best
    shown = ", ".join(map(str, values[:4])) + (", ..." if len(values) > 4 else "")
    return (f"{_lanes(who).capitalize()} of warp {w} read {ways} different {kind} of bank {b} ({kind} {shown}) "
            f"in one {per}, so they are served one after another: a {ways}-way bank conflict, "
            f"{ways} wavefronts where 1 would do.")


def _shared_fix(lanes: LaneAccesses, row: np.ndarray, act: np.ndarray) -> str:
    d = lanes.decl
    if lanes.member is not None:
        return (f"store the fields of {d.element.name} as separate arrays (SoA), so consecutive threads read "
                f"consecutive words.")
    if len(d.dims) >= 2 and _varying_dim(lanes) == len(d.dims) - 2 and gcd(d.row_words or 1, 32) > 1:
        dims = "".join(f"[{x}]" for x in d.dims[:-1])
        return (f"pad each row by one element, {d.element.name} {d.name}{dims}[{d.dims[-1] + 1}], so a "
                f"column's words fall into different banks.")
    stride = _stride(row[act], np.flatnonzero(act))
    if stride is not None and stride % 4 == 0 and gcd(abs(stride) // 4, 32) > 1:
        return (f"the lanes are {abs(stride) // 4} words apart; use an odd word stride, or sequential addressing "
                f"where consecutive threads read consecutive words (reduce2's sdata[tid] += sdata[tid + s]).")
    return "spread the lanes over different banks (pad, swizzle the index with XOR, or reorder the work)."
