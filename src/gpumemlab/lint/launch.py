"""The launch average: each access's numbers per request over every warp of every block of the grid.

Nsight Compute's Source Counters divide a line's sectors (or wavefronts) by the warp-level instructions executed
in the whole launch, not per analyzed warp: warps the guards leave partial, blocks whose start has another
alignment, later loop iterations and tails all count. lint runs the kernel once per block of ``--grid`` (every
block, up to MAX_BLOCKS) and sums the model's counts over every warp and iteration.

Which warps issue an instruction depends on how it was compiled: a branch skips a warp none of whose lanes
take it; a predicated instruction (``@P0 LDS``, what ptxas makes of a short ``if`` body such as a tree
reduction's ``if (tid < s) sdata[tid] += sdata[tid + s]``) issues in every warp that reaches the ``if``, its lanes
off. The SASS tells which (``predicated``); without it lint counts the warps that have an executing lane and says
that it did.
"""

from __future__ import annotations


import re

import numpy as np

from ..model import banks as _banks
from ..model import coalescing as _coalescing
from ..model.access import LaneAccesses, make_launch
from .interp import LAUNCH_STEPS, LintLimit
from .ltypes import element_type, loads

WARP = 32
MAX_BLOCKS = 256  # blocks of the grid run (one interpreter run each); larger grids get no launch average


class Instances:
    """Every execution of one access in the launch: (block launch, blocks it stands for, iteration, byte offsets,
    executing lanes, lanes reaching the innermost if or loop iteration), per block and loop iteration (0: the
    first)."""

    def __init__(self):
        self.rows: list = []
        self.reason: str | None = None  # why there is no launch average


def collect(make_run, launch, keys, same=(False, False)) -> dict:
    """{access key: Instances} over every block of ``launch.grid``; ``make_run(block launch)``: a KernelRun whose
    ``run()`` gives that block's Interpreter. All the runs share LAUNCH_STEPS evaluation steps. ``same``: the
    blocks of each (y, z) row run the same (the code never reads blockIdx.y / .z): only y = 0 / z = 0 is run and
    counted gridDim.y / .z times."""
    out = {k: Instances() for k in keys}
    left = LAUNCH_STEPS
    gx, gy, gz = launch.grid
    if gx * gy * gz > MAX_BLOCKS:
        for v in out.values():
            v.reason = f"grid of {gx * gy * gz} blocks: lint runs at most {MAX_BLOCKS} (give a smaller --grid)"
        return out
    weight = (gy if same[0] else 1) * (gz if same[1] else 1)
    for z in range(1 if same[1] else gz):
        for y in range(1 if same[0] else gy):
            for x in range(gx):
                blk = make_launch(launch.block, launch.grid, (x, y, z))
                run = make_run(blk)
                run.steps_left = left
                try:
                    it = run.run()
                except (LintLimit, RecursionError):
                    for v in out.values():
                        v.reason = v.reason or (f"the launch needs more than {LAUNCH_STEPS} evaluation steps (give a "
                                                f"smaller --grid or smaller sizes)")
                    return out
                left -= it.steps
                for key, inst in out.items():
                    if inst.reason is not None:
                        continue
                    a = it.accesses.get(key)
                    if a is None:
                        continue  # the block does not reach it: no instruction
                    why = _incomplete(a)
                    if why:
                        inst.reason = f"block ({x}, {y}, {z}): {why}"
                        continue
                    if not a.held:  # an execution the compiler serves from a register issues nothing
                        inst.rows.append((blk, weight, 0, a.offsets, a.active, a.reach))
                    inst.rows += [(blk, weight, i + 1, off, act, r) for i, ((_, off, act), r, held) in
                                  enumerate(zip(a.later, a.later_reach, a.later_held)) if not held]
    return out


_BLOCK_AXIS = {axis: re.compile(rf"\bblockIdx\b(?!\s*\.\s*[{'xz' if axis == 'y' else 'xy'}]\b)|\b(block_index|group_index|"
                                rf"this_grid|meta_group_rank)\b") for axis in "yz"}


def same_rows(texts) -> tuple[bool, bool]:
    """Whether no text reads blockIdx.y, blockIdx.z (or blockIdx whole, or a cooperative group's index)."""
    return tuple(not any(_BLOCK_AXIS[axis].search(t) for t in texts) for axis in "yz")


def _incomplete(a) -> str | None:
    if a.unknown is not None or a.offsets is None:
        return a.unknown or "address not known"
    stopped = [lp for lp in a.loops if not lp.complete]
    if stopped:
        lp = stopped[0]
        return f"the loop at line {lp.line} was not run to its end ({lp.stopped or 'not every iteration run'})"
    return None


def _lanes(a, decl, blk, off, act, width=None, split=None) -> LaneAccesses:
    """The model's input for one block's execution of access ``a`` (optionally as the compiled instruction:
    ``width`` bytes merged, or pieces of ``split`` bytes)."""
    parts = loads(a.type)
    base = np.zeros(act.size, dtype=np.int64)
    base[act] = np.asarray([int(x) for x in off[act]], dtype=np.int64)
    if width is not None:
        widths, rows = (width,), (base - base % width)[None, :]
    elif split is not None:
        widths = (split,) * (parts[0][1] // split)
        rows = base[None, :] + np.arange(0, parts[0][1], split)[:, None]
    else:
        widths = tuple(w for _, w in parts)
        rows = base[None, :] + np.asarray([o for o, _ in parts], dtype=np.int64)[:, None]
    return LaneAccesses(a.text, decl, a.buf.space, blk, 0, element_type(a.type), a.member, widths,
                        rows.astype(np.int64), act)


def average(f, a, inst: Instances, predicated, cc) -> dict:
    """``f.launch``: requests (warp-level instructions executed) and the numbers per request over the launch."""
    if inst.reason is not None:
        return dict(unknown_reason=inst.reason)
    if loads(a.type) is None:
        return dict(unknown_reason=f"loads of {getattr(a.type, 'name', '?')} cannot be split into instructions")
    c = f.compiled
    width = split = None
    if c is not None:
        if c["how"] == "merged iterations":
            return dict(unknown_reason="ptxas merged consecutive loop iterations into one instruction: its launch "
                                       "average is not modeled")
        width, split = (c["element_bytes"], None) if c["how"] == "merged" else (None, c["element_bytes"])
    shared = f.space == "shared"
    tot = dict(requests=0, units=0, ideal=0)
    seen: dict = {}
    blocks = {}
    for blk, weight, i, off, act, reach in inst.rows:
        act = np.asarray(act, dtype=bool)
        pred = predicated[i] if isinstance(predicated, list) else predicated
        issue = (np.asarray(reach, dtype=bool) | act) if pred else act
        if not issue.any():
            continue
        blocks[blk.block_idx] = weight
        if act.any():
            lanes = _lanes(a, f._decl, blk, off, act, width, split)
            rows = lanes.addresses
            bad = [(w, row) for row, w in zip(rows, lanes.widths) if np.any(row[act] % w)]
            if bad:
                return dict(unknown_reason=f"misaligned {bad[0][0]}-byte access in block {blk.block_idx}")
            lo = int(rows[:, act].min())
            key = (act.tobytes(), (rows - (lo - lo % 128)).tobytes(), lanes.widths)
            nums = seen.get(key)
            if nums is None:  # sectors, lines and banks repeat every 128 bytes
                res = (_banks if shared else _coalescing).analyze(lanes, cc)
                nums = seen[key] = (res["requests"], res["wavefronts" if shared else "sectors"],
                                    res["ideal_wavefronts" if shared else "min_sectors"], rows.shape[0])
            for k, v in zip(("requests", "units", "ideal"), nums):
                tot[k] += v * weight
            nparts = nums[3]
        else:
            nparts = len(loads(a.type)) if width is None and split is None else \
                (1 if width is not None else loads(a.type)[0][1] // split)
        # warps with no executing lane that still issue the predicated instruction: requests that move nothing
        for w in range(0, act.size, WARP):
            if issue[w:w + WARP].any() and not act[w:w + WARP].any():
                tot["requests"] += nparts * weight
    unit = "wavefronts" if shared else "sectors"
    r = tot["requests"]
    return dict(blocks=sum(blocks.values()), requests=r,
                **{f"{unit}_per_request": round(tot["units"] / r, 3) if r else 0,
                   f"ideal_{unit}_per_request": round(tot["ideal"] / r, 3) if r else 0},
                total=tot["units"], predicated=predicated,
                issued_by=("per iteration of the unrolled loop, as its instruction is predicated or not"
                           if isinstance(predicated, list) else
                           "every warp reaching the enclosing if or loop iteration (a predicated instruction)"
                           if predicated else "the warps with an executing lane" if predicated is False else
                           "the warps with an executing lane (no SASS to tell a predicated instruction)"))


def attach(report, instructions: list | None, cc) -> None:
    """Set ``launch`` on every finding whose executions were collected; ``instructions``: the kernel's SASS
    memory instructions (lint/compiled.memory_instructions), or None where no SASS is available."""
    for f in report.findings:
        inst = getattr(f, "_launch_instances", None)
        if inst is None:
            continue
        if f.verdict == "unknown":
            f.launch = dict(unknown_reason=f.unknown_reason)
            continue
        if f.space == "constant":  # Source Counters have no constant-cache counts to average against
            f.launch = dict(unknown_reason="__constant__ loads: the launch average covers global and shared memory")
            continue
        f.launch = average(f, f._access, inst, _predicated(f, report.findings, instructions), cc)


def _predicated(f, findings, instructions):
    """Whether the access's SASS instructions (its line, space and kind) have a guard predicate: True, False, None
    (no SASS), or one flag per loop iteration where ptxas unrolled the loop into as many instructions per access
    as it has iterations and predicated some of them (a tree reduction's last step is often a branch)."""
    if instructions is None:
        return None
    line = f.compiled["line"] if f.compiled else f.line
    flags = [ins[-1] for ins in instructions if ins[0] == line and ins[1] == f.space and ins[2] == f.access]
    if not flags:
        return None
    if all(flags) or not any(flags):
        return flags[0]
    here = [g for g in findings if g.line == f.line and g.space == f.space and g.access == f.access]
    iterations = 1 + len(f._access.later)
    if len(flags) == len(here) * iterations and all(1 + len(g._access.later) == iterations for g in here
                                                    if getattr(g, "_access", None) is not None):
        m = len(here)
        return [all(flags[i * m:(i + 1) * m]) for i in range(iterations)]
    return all(flags)
