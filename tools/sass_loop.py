#!/usr/bin/env python3
"""Static SASS report of one kernel's main loop (no GPU): instruction mix, shared-load latency cover, and how many
global loads a thread has in flight when it first waits on one (memory-level parallelism).

Compiles a package kernel for ARCH with the project's NVRTC path, disassembles the cubin with
``nvdisasm`` and takes the loop with the longest backward branch. For every ``LDS`` in it, prints how many
instructions later its result is first read: a load whose consumer follows a few instructions later
leaves that FFMA waiting (``ncu``: short-scoreboard stalls). This is how the register-blocked SGEMM's
ORDER/PIN parameters were found (docs/notes/matmul.md).

Usage: PYTHONPATH=src python tools/sass_loop.py 'register_blocked<128, 256, ...>' [--source sgemm.cu]
       [--arch sm_90] [--nvdisasm PATH] [--list]
nvdisasm: --nvdisasm, else $NVDISASM, else on PATH, else the pip wheel nvidia-cuda-nvdisasm.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys

from gpumemlab.gpu.sass import LOAD, PRED, disassemble, find_nvdisasm, load_cover, load_width, main_loop, opcode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="sass_loop", description=__doc__.split("\n\nUsage:")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel", help="name expression, e.g. 'register_blocked<128, 256, 16, ...>'")
    ap.add_argument("--source", default="sgemm.cu", help="package kernel file (default sgemm.cu)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvdisasm")
    ap.add_argument("--list", action="store_true", help="print every load with its cover")
    ap.add_argument("--loop", metavar="REGEX", help="the longest loop with an instruction matching REGEX "
                    "(default: the longest loop), e.g. 'LDG.*128'")
    args = ap.parse_args(argv)

    from gpumemlab.errors import CompileError, GpumemlabError

    try:
        return report(args)
    except GpumemlabError as exc:  # a kernel name NVRTC cannot instantiate, an unknown source or arch
        hint = f" (is {args.kernel!r} a kernel of {args.source}? --source names its file)" \
            if isinstance(exc, CompileError) else ""
        print(f"sass_loop: {str(exc).strip().splitlines()[0]}{hint}", file=sys.stderr)
        return exc.exit_code
    except subprocess.CalledProcessError as exc:
        print(f"sass_loop: nvdisasm failed: {(exc.stderr or '').strip().splitlines()[:1] or exc}", file=sys.stderr)
        return 1
    except re.error as exc:
        print(f"sass_loop: bad --loop regex {args.loop!r}: {exc}", file=sys.stderr)
        return 2


def report(args) -> int:
    from gpumemlab.gpu.compile import check_arch, compile_group, parse_arch

    nvdisasm = find_nvdisasm(args.nvdisasm)
    if nvdisasm is None:
        print("sass_loop: no nvdisasm (pip install nvidia-cuda-nvdisasm, or pass --nvdisasm)", file=sys.stderr)
        return 2
    if args.loop is not None:
        re.compile(args.loop)
    mod = compile_group(args.source, [args.kernel], check_arch(parse_arch(args.arch)), use_cache=False)
    usage = mod.usage.get(args.kernel)
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
