"""`gpumemlab sass KERNEL`: a static report of one kernel's main loop from its SASS (no GPU).

The instruction mix, how many instructions after each shared-memory load (``LDS``) its result is first read (a
consumer a few instructions later leaves that FFMA waiting: ncu's short-scoreboard stalls), and how many global
loads a thread has in flight when it first waits on one (memory-level parallelism). This is how the
register-blocked SGEMM's ORDER/PIN parameters were found (docs/notes/matmul.md).
"""

from __future__ import annotations

import collections
import re
import subprocess

from ..errors import CompileError, UsageError


def add_commands(sub) -> None:
    p = sub.add_parser("sass", help="a kernel's main loop from its SASS: instruction mix, load-to-use distances, "
                                    "loads in flight (no GPU needed; nvdisasm)", description=__doc__.split("\n\n")[1])
    p.add_argument("kernel", help="name expression, e.g. 'register_blocked<128, 256, 16, ...>'")
    p.add_argument("--source", default="sgemm.cu", help="package kernel file (default sgemm.cu)")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--nvdisasm", help="nvdisasm to use (default: $NVDISASM, PATH, then the nvidia-cuda-nvdisasm wheel)")
    p.add_argument("--list", action="store_true", help="print every load with its cover")
    p.add_argument("--loop", metavar="REGEX", help="the longest loop with an instruction matching REGEX "
                   "(default: the longest loop), e.g. 'LDG.*128'")
    p.set_defaults(func=cmd_sass)


def cmd_sass(args) -> int:
    from ..gpu.compile import check_arch, compile_group, parse_arch
    from ..gpu.sass import disassemble, find_nvdisasm, main_loop

    nvdisasm = find_nvdisasm(args.nvdisasm)
    if nvdisasm is None:
        raise UsageError("no nvdisasm (pip install nvidia-cuda-nvdisasm, or pass --nvdisasm)")
    if args.loop is not None:
        try:
            re.compile(args.loop)
        except re.error as exc:
            raise UsageError(f"bad --loop regex {args.loop!r}: {exc}") from None
    try:
        mod = compile_group(args.source, [args.kernel], check_arch(parse_arch(args.arch)), use_cache=False)
    except CompileError as exc:  # a name NVRTC cannot instantiate
        raise UsageError(f"{str(exc).strip().splitlines()[0]} (is {args.kernel!r} a kernel of {args.source}? "
                         "--source names its file)") from None
    try:
        body = main_loop(disassemble(mod.cubin, nvdisasm, mod.symbol_mapping.get(args.kernel)), args.loop)
    except subprocess.CalledProcessError as exc:
        raise CompileError(f"nvdisasm failed: {(exc.stderr or '').strip().splitlines()[:1] or exc}") from None
    if not body:
        print(f"{args.kernel}: no loop found")
        return 1
    print("\n".join(loop_report(args.kernel, args.arch, mod.usage.get(args.kernel), body, args.list)))
    return 0


def loop_report(kernel: str, arch: str, usage, body, every_load: bool) -> list[str]:
    from ..gpu.sass import LOAD, PRED, load_cover, load_width, opcode

    mix = collections.Counter(opcode(t) for _, t in body)
    ffma = mix.get("FFMA", 0)
    lines = [f"{kernel} ({arch}): {usage.registers if usage else '?'} registers, "
             f"{usage.spill_store_bytes if usage else '?'} B spilled; main loop {len(body)} instructions, "
             f"{ffma} FFMA ({100 * ffma / len(body):.1f}%)",
             "  mix: " + ", ".join(f"{k} {v}" for k, v in mix.most_common(12))]
    cover = load_cover(body, "LDS")
    dists = sorted(d for _, _, d, _ in cover if d is not None)
    if dists:
        lines.append(f"  LDS -> first use: {len(dists)} loads, min {dists[0]}, p10 {dists[len(dists) // 10]}, "
                     f"median {dists[len(dists) // 2]} instructions; {sum(d < 32 for d in dists)} under 32")
    global_loads = load_cover(body, "LDG")

    def width(text):
        return load_width(LOAD.match(PRED.sub("", text)).group(2))

    for w in sorted({width(t) for _, t, _, _ in global_loads}):
        flights = sorted(f for _, t, _, f in global_loads if width(t) == w)
        lines.append(f"  LDG {w}-bit: {len(flights)} loads; at most {flights[-1]} in flight when one is first used")
    if every_load:
        lines += [f"    {addr:#07x} {text:48s} first use after {d}, {f} in flight" for addr, text, d, f in
                  cover + global_loads]
    return lines
