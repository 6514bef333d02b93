"""As written and as compiled: lint's accesses next to the SASS memory instructions NVRTC made of them.

ptxas merges neighbouring accesses it can prove aligned into one wider instruction (two 4-byte shared stores
``s[2*t]``, ``s[2*t+1]`` -> one ``STS.64``) and splits a wide one it cannot prove aligned. A merged shared access is
served in half-warp phases, so its wavefronts differ from those of the two it replaced; global sectors per
request change the same way. Per kernel and (space, load/store), a SASS instruction whose width no access of
lint's at its line has is matched with lint's accesses of the same array: a merge when their lanes read the
consecutive pieces of one aligned word of the instruction's width, a split when one access is a multiple of it.
The model then gives the compiled instruction's numbers (``Finding.compiled``). Nothing is guessed: an
instruction that matches no such group is left alone.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from ..model import predict
from ..model.cc import parse_cc
from ..ncu.source import disassemble, sass_instructions

_OP = re.compile(r"^(@!?U?P\w+\s+)?(LDG|STG|LDS|STS|LD|ST)((?:\.[A-Z0-9_]+)*)\s")
_SPACE = {"LDG": ("global", "load"), "STG": ("global", "store"), "LD": ("global", "load"),
          "ST": ("global", "store"), "LDS": ("shared", "load"), "STS": ("shared", "store")}
_WIDTH = {"64": 8, "128": 16, "U8": 1, "S8": 1, "U16": 2, "S16": 2}


def memory_instructions(text: str) -> dict[str, list[tuple[int, str, str, int, str, bool]]]:
    """{function symbol: [(source line, space, load/store, bytes per lane, mnemonic, predicated)]} from
    ``nvdisasm -g`` (predicated: the instruction has a guard predicate other than PT)."""
    out: dict[str, list] = {}
    for fn, line, _, ins in sass_instructions(text):
        rows = out.setdefault(fn, [])
        op = _OP.match(ins + " ") if ins is not None else None
        if op is None:
            continue
        space, kind = _SPACE[op.group(2)]
        width = next((_WIDTH[s] for s in op.group(3).split(".") if s in _WIDTH), 4)
        guard = (op.group(1) or "").strip().lstrip("@!")
        rows.append((line, space, kind, width, op.group(2) + op.group(3), guard not in ("", "PT")))
    return out


def _numbers(lanes, cc) -> dict:
    res = predict(lanes, cc)
    r = res["requests"]
    if lanes.space == "shared":
        return dict(requests=r, wavefronts_per_request=round(res["wavefronts"] / r, 3),
                    ideal_wavefronts_per_request=round(res["ideal_wavefronts"] / r, 3), conflict_ways=res["ways"])
    return dict(requests=r, sectors_per_request=round(res["sectors"] / r, 3),
                ideal_sectors_per_request=round(res["min_sectors"] / r, 3))


def _scalar(f) -> bool:
    lanes = getattr(f, "_lanes", None)
    return lanes is not None and len(lanes.widths) == 1


def _merge_group(f, width: int, pool: list, line: int):
    """The accesses of ``pool`` that, with ``f``, fill one aligned ``width``-byte word per lane (in order), else None.
    Partners nearest the instruction's ``line`` first (a loop elsewhere may touch the same words)."""
    w = f._lanes.widths[0]
    act = f._lanes.active
    row = f._lanes.addresses[0]
    base = row - row % width
    if width % w or np.any((row % width)[act] % w) or len(set((row % width)[act].tolist())) != 1:
        return None
    pool = [f] + sorted((g for g in pool if g is not f), key=lambda g: abs(g.line - line))
    group = []
    for j in range(width // w):
        want = base + j * w
        hit = next((g for g in pool if g._lanes.widths[0] == w and np.array_equal(g._lanes.active, act)
                    and np.array_equal(g._lanes.addresses[0][act], want[act])), None)
        if hit is None:
            return None
        group.append(hit)
    return group, base


def _merge_iterations(f, width: int):
    """([f], aligned starts) when the first ``width / w`` iterations of ``f``'s loop read, in every lane of the
    analyzed warp, the consecutive pieces of one aligned ``width``-byte word (an unrolled loop ptxas vectorized)."""
    inst = getattr(f, "_instances", None)
    w = f._lanes.widths[0]
    k = width // w
    if not inst or width % w or len(inst) < k:
        return None
    act = f._lanes.active
    row = f._lanes.addresses[0]
    if np.any(row[act] % width):
        return None
    for j, (off, active) in enumerate(inst[:k]):
        lanes_j = np.asarray([int(x) if m else 0 for x, m in zip(off, act)], dtype=np.int64)
        if not np.array_equal(np.asarray(active, dtype=bool) & act, act) or \
                not np.array_equal(lanes_j[act], row[act] + j * w):
            return None
    return [f], row


def attach(report, instructions: list, cc) -> None:
    """Set ``compiled`` on the findings of one kernel whose SASS instructions are wider or narrower than written."""
    todo = {}
    for line, space, kind, width, mnem, _ in instructions:
        todo.setdefault((space, kind), []).append((line, width, mnem))
    for (space, kind), ins in todo.items():
        acc = [f for f in report.findings if f.space == space and f.access == kind and _scalar(f) and f.requests]
        for line, width, mnem in ins:
            here = [f for f in acc if f.line == line]
            widths = {f._lanes.widths[0] for f in here}
            if not here or width in widths:
                continue  # as written (or an access lint does not see at this line)
            for f in here:
                if f.compiled is not None:
                    continue
                pool = [g for g in acc if g.array == f.array]
                per_iteration = 1.0  # requests of the instruction per execution of the source access
                if width > f._lanes.widths[0]:
                    found = _merge_group(f, width, pool, line)
                    how = "merged"
                    if found is None:  # an unrolled loop: consecutive iterations of this access in one instruction
                        found = _merge_iterations(f, width)
                        how = "merged iterations"
                        per_iteration = f._lanes.widths[0] / width
                    if found is None:
                        continue
                    group, base = found
                    lanes = replace(f._lanes, widths=(width,), addresses=base[None, :].astype(np.int64))
                else:
                    w = f._lanes.widths[0]
                    if w % width or width < 4 or sum(1 for i in ins if i[0] == line and i[1] == width) % (w // width):
                        continue  # narrower than a word: the compiler loads only the bytes it uses, not a split
                    group = [f]
                    rows = f._lanes.addresses[0][None, :] + np.arange(0, w, width)[:, None]
                    lanes = replace(f._lanes, widths=(width,) * (w // width), addresses=rows.astype(np.int64))
                    how = "split"
                nums = _numbers(lanes, cc)
                key = "wavefronts_per_request" if space == "shared" else "sectors_per_request"
                written = sum(g.requests * getattr(g, key) for g in group) / per_iteration
                lines = sorted({g.line for g in group})
                for g in group:
                    g.compiled = dict(instruction=mnem, line=line, how=how, element_bytes=width,
                                      accesses_lines=lines, **nums, total=round(nums["requests"] * nums[key], 3),
                                      total_as_written=round(written, 3), requests_per_execution=
                                      round(nums["requests"] * per_iteration, 3))


def attach_from_cubin(reports, cubin: bytes, mapping: dict, nvdisasm: str, arch: str) -> None:
    """As written vs as compiled from a cubin built elsewhere (the one ``--validate`` ran, what ncu measured), for
    the reports that have no comparison yet; the launch averages with that cubin's predication."""
    from .analysis import _cc_of

    from . import launch

    per_symbol = memory_instructions(disassemble(cubin, nvdisasm))
    cc = parse_cc(_cc_of(arch))
    for r in reports:
        name = r.name + (f"<{', '.join(str(v) for v in r.template.values())}>" if r.template else "")
        r.sass = per_symbol.get(mapping.get(name, name), [])
        if not any(f.compiled for f in r.findings):
            attach(r, r.sass, cc)
        launch.attach(r, r.sass, cc)  # which instructions are predicated, in the code the GPU ran
