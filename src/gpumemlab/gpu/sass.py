"""SASS of a compiled kernel, read statically (no GPU): the main loop and how far each load runs ahead of its first
use (shared loads: short-scoreboard stalls; global loads: how many a thread has in flight when it first waits).

nvdisasm comes from the ``test`` extra's nvidia-cuda-nvdisasm wheel, $NVDISASM or PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

PRED = re.compile(r"^@!?U?P\w+\s+")


def find_nvdisasm(given: str | None = None) -> str | None:
    """nvdisasm: ``given``, else $NVDISASM, else on PATH, else the pip wheel's; None if there is none."""
    for cand in (given, os.environ.get("NVDISASM"), shutil.which("nvdisasm")):
        if cand and Path(cand).exists():
            return cand
    try:
        import nvidia

        for root in nvidia.__path__:
            for p in sorted(Path(root).glob("cu*/bin/nvdisasm")):
                return str(p)
    except ImportError:
        pass
    return None


@lru_cache(maxsize=4)
def _nvdisasm(cubin: bytes, nvdisasm: str) -> str:
    """nvdisasm's text of a whole cubin, kept for the next kernel of the same cubin (a family is one cubin)."""
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as fh:
        fh.write(cubin)
    try:
        return subprocess.run([nvdisasm, "-c", fh.name], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(fh.name)


def disassemble(cubin: bytes, nvdisasm: str, function: str | None = None) -> list[tuple[int, str]]:
    """[(address, instruction text)] of the cubin's code (only the kernel whose symbol is ``function``, if given),
    branch targets as .L_x labels mapped to addresses."""
    text = _nvdisasm(bytes(cubin), nvdisasm)
    ins, labels, pending, section = [], {}, [], None
    for line in text.splitlines():
        m = re.match(r"\s*\.section\s+\.text\.([^,\s]+)", line)
        if m:
            section = m.group(1)
        if function is not None and section != function:
            continue
        m = re.match(r"\s*\.(L_x_\d+):", line)
        if m:
            pending.append(m.group(1))
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            addr = int(m.group(1), 16)
            for p in pending:
                labels.setdefault(p, addr)
            pending = []
            ins.append((addr, m.group(2).strip()))
    return [(a, re.sub(r"`\(\.(L_x_\d+)\)", lambda m: f"{labels.get(m.group(1), -1):#x}", t)) for a, t in ins]


def main_loop(ins: list[tuple[int, str]], containing: str | None = None) -> list[tuple[int, str]]:
    """The body of the longest backward branch (start label .. branch); with ``containing`` (a regex), the longest
    one whose body has an instruction that matches it."""
    best = None
    for addr, text in ins:
        m = re.search(r"BRA\s+(0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < addr:
            span = (int(m.group(1), 16), addr)
            if containing and not any(span[0] <= a <= span[1] and re.search(containing, t) for a, t in ins):
                continue
            if best is None or span[1] - span[0] > best[1] - best[0]:
                best = span
    if best is None:
        return []
    return [(a, t) for a, t in ins if best[0] <= a <= best[1]]


def opcode(text: str) -> str:
    return PRED.sub("", text).split()[0]


LOAD = re.compile(r"(LDS|LDG)((?:\.[A-Z0-9]+)*)\s+R(\d+)")


def load_width(qualifiers: str) -> int:
    """Bits per thread of a load from its qualifiers (.64, .128; 32 otherwise)."""
    m = re.search(r"\.(64|128)(?:\.|$)", qualifiers)
    return int(m.group(1)) if m else 32


def load_cover(body: list[tuple[int, str]], op: str = "LDS") -> list[tuple[int, str, int | None, int]]:
    """For each ``op`` load (LDS or LDG) in the loop: (address, text, instructions until its result is first read,
    loads of the same op and width issued from it up to that read, itself included: how many such loads a thread
    has in flight when it first waits on this one). The loop wraps around."""
    out = []
    for i, (addr, text) in enumerate(body):
        m = LOAD.match(PRED.sub("", text))
        if not m or m.group(1) != op:
            continue
        width = load_width(m.group(2))
        regs = {f"R{int(m.group(3)) + q}" for q in range(width // 32)}
        dist, flight = None, 1
        for d, (_, later) in enumerate(body[i + 1:] + body[:i + 1], 1):
            plain = PRED.sub("", later)
            operands = re.split(r"[,\s\[\]]+", plain)[2:]  # skip opcode and destination
            if any(o.split(".")[0] in regs for o in operands):
                dist = d
                break
            other = LOAD.match(plain)
            flight += bool(other and other.group(1) == op and load_width(other.group(2)) == width)
        out.append((addr, text, dist, flight))
    return out
