#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck over every matmul variant on small odd sizes (device script).
# Usage (repo root): PYTHONPATH=src bash tools/sanitize_matmul.sh [memcheck|racecheck ...]
# SAN_RB_ONLY=1: only the register_blocked configurations (every candidate, plain and split-K, vec 4 and 1).
set -u
CASES='
import os, numpy as np, cupy
from gpumemlab.gpu import runtime
from gpumemlab.bench.verify import device_random_nonzero
from gpumemlab.experiments.matmul import Reference
from gpumemlab.kernels.matmul import CANDIDATES
from gpumemlab.ops import matmul as ops
runtime.work_stream()
def run(variant, m, n, k, cfg=None, vec=None, splits=None):
    a = device_random_nonzero((m, k), np.float32, 1)
    b = None if ops.VARIANTS[variant].op == "aat" else device_random_nonzero((k, n), np.float32, 2)
    out = cupy.empty((m, m if b is None else n), cupy.float32)
    if variant == "register_blocked":
        p = ops.register_blocked_plan(a, b, out, cfg, vec, splits)
    else:
        p = ops.plan(variant, a, b, out)
    Reference(a, b).verifier(p.run, out, variant)()
count = 0
rb_only = os.environ.get("SAN_RB_ONLY") == "1"
for v in () if rb_only else ops.AB_VARIANTS:
    if ops.VARIANTS[v].k32:
        run(v, 64, 96, 32)
    elif v != "register_blocked":
        run(v, 67, 45, 37)
    count += 1
for v in () if rb_only else ops.AAT_VARIANTS:
    run(v, 96, 0, 32); count += 1
for cfg in CANDIDATES:
    run("register_blocked", 140, 136, 36, cfg, 4)
    run("register_blocked", 67, 45, 37, cfg, 1)
    run("register_blocked", 72, 68, 100, cfg, 4, 3)
    run("register_blocked", 33, 17, 41, cfg, 1, 2)
    count += 4
runtime.synchronize()
print(f"sanitized {count} launches: all results correct")
'
rc=0
for tool in ${@:-memcheck racecheck}; do
    echo "== compute-sanitizer --tool $tool"
    timeout ${T_TOOL:-300} compute-sanitizer --tool "$tool" --error-exitcode 9 python3 -c "$CASES" 2>&1 | grep -v "^========= COMPUTE-SANITIZER$" | tail -25
    r=${PIPESTATUS[0]}
    echo "== $tool exit code $r"
    [ "$r" -ne 0 ] && rc=$r
done
exit $rc
