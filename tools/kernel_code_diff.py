#!/usr/bin/env python3
"""Whether a change of kernel sources changed any compiled kernel: every catalog kernel compiled with NVRTC (no GPU)
for every supported arch, each kernel's machine code (its cubin .text section, without the line table) hashed with
its ptxas report; ``compare`` prints per arch how many kernels are identical and, for each that is not, its
registers, spills and instruction count before and after.

    python tools/kernel_code_diff.py snapshot BEFORE.json [--arch sm_90 ...]   # on the old sources
    python tools/kernel_code_diff.py snapshot AFTER.json                      # on the new ones
    python tools/kernel_code_diff.py compare BEFORE.json AFTER.json           # exit 1 if any kernel differs
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

INSTRUCTION_BYTES = 16  # every supported arch (sm_75 on) encodes one SASS instruction in 128 bits


def snapshot(archs: list[str]) -> dict:
    from gpumemlab.gpu.compile import compile_specs, runs_on
    from gpumemlab.gpu.cubin import kernel_code
    from gpumemlab.kernels import all_specs

    out = {}
    for arch in archs:
        specs = [s for s in all_specs() if runs_on(s, arch)]
        rows = {}
        for spec, (mod, usage) in compile_specs(specs, arch, progress=True).items():
            code = kernel_code(mod.cubin)[mod.symbol_mapping[spec.name]]
            rows[spec.label] = dict(code=hashlib.sha256(code).hexdigest(), instructions=len(code) // INSTRUCTION_BYTES,
                                    registers=usage.registers if usage else None,
                                    spill_bytes=usage.spill_store_bytes if usage else None,
                                    local_bytes=usage.local_bytes if usage else None)
        out[arch] = dict(sorted(rows.items()))
    return out


def compare(before: dict, after: dict) -> tuple[list[str], bool]:
    lines = ["| arch | kernels compared | identical | only before | only after |", "|---|---|---|---|---|"]
    same_everywhere, changed = True, []
    for arch in sorted(set(before) | set(after), key=lambda a: int(a[3:])):
        b, a = before.get(arch, {}), after.get(arch, {})
        both = sorted(set(b) & set(a))
        same = [k for k in both if b[k]["code"] == a[k]["code"]]
        lines.append(f"| {arch} | {len(both)} | {len(same)} | {len(set(b) - set(a))} | {len(set(a) - set(b))} |")
        same_everywhere &= len(same) == len(both) == len(b) == len(a)
        changed += [(arch, k) for k in both if b[k]["code"] != a[k]["code"]]
    for arch, k in changed:
        x, y = before[arch][k], after[arch][k]
        lines.append(f"{arch} {k}: " + ", ".join(f"{f} {x[f]} -> {y[f]}" for f in
                                                 ("instructions", "registers", "spill_bytes", "local_bytes")))
    return lines, same_everywhere


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot", help="compile every kernel and write its code hash and ptxas report")
    s.add_argument("out")
    s.add_argument("--arch", action="append", help="default: every supported arch")
    c = sub.add_parser("compare", help="per arch: kernels compared and identical; each changed kernel")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args(argv)
    if args.cmd == "snapshot":
        from gpumemlab.gpu.compile import SUPPORTED_ARCHS, parse_arch

        archs = [parse_arch(a) for a in args.arch] if args.arch else list(SUPPORTED_ARCHS)
        rows = snapshot(archs)  # before opening OUT: a failed compile leaves no empty file
        with open(args.out, "w") as fh:
            json.dump(rows, fh, indent=1)
        return 0
    with open(args.before) as fb, open(args.after) as fa:
        lines, same = compare(json.load(fb), json.load(fa))
    print("\n".join(lines))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
