"""Registers, shared memory and spills of each kernel from NVRTC (the ``cuda`` extra), and its occupancy."""

from __future__ import annotations

import importlib
import os
import subprocess

from ..errors import GpumemlabError
from ..model.cc import parse_cc

NVRTC_INCLUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvrtc_include")
_occupancy = importlib.import_module("gpumemlab.model.occupancy")  # the package exports a function of that name


def _name_expression(r) -> str:
    if not r.template:
        return r.name
    return f"{r.name}<{', '.join(str(v) for v in r.template.values())}>"


def include_dirs(path: str) -> list[str]:
    """The file's own folder (its local headers), then the CUDA toolkit's headers where one is installed
    (cooperative_groups.h and the like, which NVRTC does not carry), then lint's own math.h, float.h, stdint.h and
    limits.h (NVRTC has no system headers; kernels include them for FLT_MAX, INFINITY, uint8_t)."""
    dirs = [os.path.dirname(os.path.abspath(path))]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.isfile(os.path.join(root, "include", "cooperative_groups.h")):
            inc = os.path.join(root, "include")
            dirs += [inc] + ([os.path.join(inc, "cccl")] if os.path.isdir(os.path.join(inc, "cccl")) else [])
            break
    return dirs + [NVRTC_INCLUDE]


def attach(parsed, reports, opts) -> None:
    """Fill ``resources`` and ``occupancy`` of each report, or a note saying why not."""
    try:
        from ..gpu.compile import compile_group
    except ImportError:
        for r in reports:
            r.notes.append("registers/spills: not available (install the cuda extra for NVRTC)")
        return
    from .analysis import _cc_of

    cc = parse_cc(_cc_of(opts.arch))
    todo = [r for r in reports if r.error is None and not r.unbound]
    for r in reports:
        if r.error is None and r.unbound:  # NVRTC cannot pick an instance: it would fail the whole file
            r.notes.append(f"registers/spills: not compiled (give --template {r.unbound[0]}=...)")
    names = [_name_expression(r) for r in todo]
    if not names:
        return
    defines = tuple(tuple(d.split("=", 1)) if "=" in d else (d, "1") for d in opts.defines)
    includes = (("include_path", include_dirs(parsed.path)),)
    try:
        mod = compile_group(parsed.path, names, f"sm_{cc[0]}{cc[1]}", includes, defines, text=parsed.text)
    except (GpumemlabError, ImportError, OSError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        for r in todo:
            r.notes.append(f"registers/spills: NVRTC could not compile the file ({first[:160]})")
        return
    _compare_sass(mod, todo, names, cc)
    for r, n in zip(todo, names):
        u = mod.usage.get(n)
        if u is None:
            r.notes.append("registers/spills: ptxas reported nothing for this kernel")
            continue
        r.resources = dict(registers=u.registers, shared_bytes=u.shared_bytes, spill_store_bytes=u.spill_store_bytes,
                           spill_load_bytes=u.spill_load_bytes, local_bytes=u.local_bytes, arch=mod.arch)
        if cc in _occupancy.SM_TABLE:
            threads = r.block[0] * r.block[1] * r.block[2]
            occ = _occupancy.occupancy(threads, u.registers, u.shared_bytes, cc, None, u.barriers)
            r.occupancy = dict(occupancy_pct=occ["occupancy_pct"], blocks_per_sm=occ["blocks_per_sm"],
                               active_warps=occ["active_warps"], limiters=occ["limiters"])


def _compare_sass(mod, reports, names, cc) -> None:
    """As written vs as compiled (lint/compiled.py), where nvdisasm is installed (the test extra)."""
    from ..gpu.sass import find_nvdisasm
    from . import compiled

    nvdisasm = find_nvdisasm()
    if nvdisasm is None:
        for r in reports:
            r.notes.append("as compiled: not compared (nvdisasm not found: pip install nvidia-cuda-nvdisasm)")
        return
    try:
        per_symbol = compiled.memory_instructions(compiled.disassemble(mod.cubin, nvdisasm))
    except (OSError, subprocess.CalledProcessError) as exc:
        for r in reports:
            r.notes.append(f"as compiled: nvdisasm failed ({str(exc).strip()[:120]})")
        return
    for r, n in zip(reports, names):
        r.sass = per_symbol.get(mod.symbol_mapping.get(n, n), [])
        compiled.attach(r, r.sass, cc)
