"""Speed of `gpumemlab lint` on a 1,000-line file (docs/notes/lint.md): cold (a new process) and warm (in process).

Builds the file from the test corpus's kernels (each copy renamed), then times `python -m gpumemlab lint` in fresh
processes and `lint_file` repeated in this one. Run: PYTHONPATH=src python tools/lint_bench.py [--lines 1000]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "lint" / "corpus"


def build(lines: int) -> str:
    """Copies of the corpus files, their functions and types renamed per copy, until ``lines`` lines."""
    sources = [p.read_text() for p in sorted(CORPUS.glob("*.cu")) if "templates" not in p.name]
    declared = re.compile(r"(?:__global__|__device__)\s+(?:\w+\s+)*?(\w+)\s*\(|(?:struct|\}\s*)\s*(\w+)\s*[;{]"
                          r"|\bint\s+(main)\s*\(")
    out, copy = [], 0
    while sum(s.count("\n") for s in out) < lines:
        for s in sources:
            names = {n for m in declared.finditer(s) for n in m.groups() if n and n not in ("void", "float", "int")}
            for n in sorted(names, key=len, reverse=True):
                s = re.sub(rf"\b{n}\b", f"{n}_{copy}", s)
            out.append(re.sub(r"#define (\w+)", r"#undef \1\n#define \1", s))
        copy += 1
    return "".join(out)  # whole files: at least ``lines`` lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lines", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.cu"
        path.write_text(build(args.lines))
        n = path.read_text().count("\n")
        cmd = [sys.executable, "-m", "gpumemlab", "lint", str(path), "--no-resources", "--json"]
        cold, cold_cpu = [], []
        for _ in range(args.repeat):
            t, r = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(cmd, check=False, capture_output=True)
            cold.append(time.perf_counter() - t)
            r2 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cold_cpu.append(r2.ru_utime + r2.ru_stime - r.ru_utime - r.ru_stime)
        from gpumemlab.lint import lint_file

        reports = lint_file(str(path), resources=False)
        warm, warm_cpu = [], []
        for _ in range(args.repeat):
            t, c = time.perf_counter(), time.process_time()
            lint_file(str(path), resources=False)
            warm.append(time.perf_counter() - t)
            warm_cpu.append(time.process_time() - c)
        accesses = sum(len(r.findings) for r in reports)
        print(f"{n} lines, {len(reports)} kernels, {accesses} accesses")
        for what, wall, cpu in (("cold (new process, import + parse + lint)", cold, cold_cpu),
                                ("warm (lint_file again in process)", warm, warm_cpu)):
            print(f"{what:42} wall median {statistics.median(wall):.3f} s (min {min(wall):.3f}, max {max(wall):.3f}); "
                  f"CPU median {statistics.median(cpu):.3f} s")
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
