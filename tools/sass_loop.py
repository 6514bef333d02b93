#!/usr/bin/env python3
"""Static SASS report of one kernel's main loop (no GPU): instruction mix, shared-load latency cover, and how many
global loads a thread has in flight when it first waits on one (memory-level parallelism).

Compiles a package kernel for ARCH with the project's NVRTC path, disassembles the cubin with
``nvdisasm`` and takes the loop with the longest backward branch. For every ``LDS`` in it, prints how many
instructions later its result is first read: a load whose consumer follows a few instructions later
leaves that FFMA waiting (``ncu``: short-scoreboard stalls). This is how the register-blocked SGEMM's
ORDER/PIN parameters were found (docs/notes/matmul.md).

Usage: PYTHONPATH=src python tools/sass_loop.py 'register_blocked<128, 256, ...>' [--source matmul.cu]
       [--arch sm_90] [--nvdisasm PATH] [--list]
nvdisasm: --nvdisasm, else $NVDISASM, else on PATH, else the pip wheel nvidia-cuda-nvdisasm.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

from gpumemlab.ncu.source import find_nvdisasm  # the one finder, shared with lint --validate

PRED = re.compile(r"^@!?U?P\w+\s+")


def disassemble(cubin: bytes, nvdisasm: str, function: str | None = None) -> list[tuple[int, str]]:
    """[(address, instruction text)] of the cubin's code (only the kernel whose symbol is ``function``, if given),
    branch targets as .L_x labels mapped to addresses."""
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as fh:
        fh.write(cubin)
    try:
        text = subprocess.run([nvdisasm, "-c", fh.name], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(fh.name)
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernel", help="name expression, e.g. 'register_blocked<128, 256, 16, ...>'")
    ap.add_argument("--source", default="matmul.cu", help="package kernel file (default matmul.cu)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvdisasm")
    ap.add_argument("--list", action="store_true", help="print every load with its cover")
    ap.add_argument("--loop", metavar="REGEX", help="the longest loop with an instruction matching REGEX "
                    "(default: the longest loop), e.g. 'LDG.*128'")
    args = ap.parse_args(argv)

    from gpumemlab.gpu.compile import compile_group

    mod = compile_group(args.source, [args.kernel], args.arch, use_cache=False)
    usage = mod.usage.get(args.kernel)
    nvdisasm = find_nvdisasm(args.nvdisasm)
    if nvdisasm is None:
        sys.exit("sass_loop: no nvdisasm (pip install nvidia-cuda-nvdisasm, or pass --nvdisasm)")
    body = main_loop(disassemble(mod.cubin, nvdisasm, mod.symbol_mapping.get(args.kernel)), args.loop)
    if not body:
        print(f"{args.kernel}: no loop found")
        return 1
    mix = collections.Counter(opcode(t) for _, t in body)
    ffma = mix.get("FFMA", 0)
    print(f"{args.kernel} ({args.arch}): {usage.registers if usage else '?'} registers, "
          f"{usage.spill_store_bytes if usage else '?'} B spilled; main loop {len(body)} instructions, "
          f"{ffma} FFMA ({100 * ffma / len(body):.1f}%)")
    print("  mix: " + ", ".join(f"{k} {v}" for k, v in mix.most_common(12)))
    cover = load_cover(body, "LDS")
    dists = sorted(d for _, _, d, _ in cover if d is not None)
    if dists:
        print(f"  LDS -> first use: {len(dists)} loads, min {dists[0]}, p10 {dists[len(dists) // 10]}, "
              f"median {dists[len(dists) // 2]} instructions; {sum(d < 32 for d in dists)} under 32")
    global_loads = load_cover(body, "LDG")
    for width in sorted({load_width(LOAD.match(PRED.sub("", t)).group(2)) for _, t, _, _ in global_loads}):
        flights = sorted(f for _, t, _, f in global_loads if load_width(LOAD.match(PRED.sub("", t)).group(2)) == width)
        print(f"  LDG {width}-bit: {len(flights)} loads; at most {flights[-1]} in flight when one is first used")
    if args.list:
        for addr, text, d, f in cover + global_loads:
            print(f"    {addr:#07x} {text:48s} first use after {d}, {f} in flight")
    return 0


if __name__ == "__main__":
    sys.exit(main())
