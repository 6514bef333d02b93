#!/usr/bin/env python3
"""Run every reduce, transpose, launch and matmul kernel (and the library's sum, transpose, copy, matmul) once on
small odd sizes, for compute-sanitizer (memcheck, racecheck, synccheck). Checks every result too and exits 1
on a mismatch, listing them.

    compute-sanitizer --tool racecheck python3 tools/sanitize_kernels.py [reduce transpose launch matmul gemv library]
    SAN_RB_ONLY=1: matmul's register_blocked configurations only (every candidate, plain and split-K, vec 4 and 1)
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

FAILURES: list[str] = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)


def reduce_kernels(rng):
    import cupy

    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import reduce as R

    for n in (1, 257, 1000, 5003, 70_001):
        x = random_nonzero(n, np.float32, rng)
        xd = cupy.asarray(x)
        for step in R.LADDER:  # one pass each: sizes that leave partial blocks
            blocks = math.ceil(n / step.per_block)
            out = cupy.full(blocks, np.nan, np.float32)
            runtime.launch(step.spec, blocks, R.BLOCK, out, xd, np.int64(n))
            check(abs(float(out.sum()) - x.astype(np.float64).sum()) < 1e-3, f"{step.name} n={n}")
        ticket = cupy.zeros(1, np.uint32)
        for config in R.VECTORIZED + R.TUNING:  # 3 blocks: uneven shares, partial tiles, a misaligned start
            part = cupy.full(3, np.nan, np.float32)
            res = cupy.full(1, np.nan, np.float32)
            if config.kernel == "reduce6":
                runtime.launch(config.spec(), 3, config.block, part, xd[1:], np.int64(n - 1))
                runtime.launch(R.reduce_final("float", "float"), 1, R.FINAL_BLOCK, res, part, np.int64(3))
            else:
                runtime.launch(config.spec(), 3, config.block, res, part, ticket, xd[1:], np.int64(n - 1))
            check(abs(float(res[0]) - x[1:].astype(np.float64).sum()) < 1e-3, f"{config.label} n={n}")


def launch_kernels(rng):
    import cupy

    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import launch as L

    xa = cupy.asarray(random_nonzero(5000, np.float32, rng))
    outs = []
    for spec in [L.NATURAL] + L.SPILL_DEMO:  # the register-pressure kernel, natural and spilling
        o = cupy.full(2 * 64, np.nan, np.float32)
        runtime.launch(spec, 2, 64, o, xa, np.int64(xa.size))
        outs.append(o.get())
    check(all(np.array_equal(o, outs[0]) for o in outs), "accumulators with register limits")


def transpose_kernels(rng):
    import cupy

    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import transpose as T

    for ctype, dtype in ((v, k) for k, v in T.CTYPES.items()):
        for rows, cols in ((33, 65), (64, 64), (132, 68), (1, 9)):
            x = random_nonzero((rows, cols), dtype, rng)
            xd = cupy.asarray(x)
            for v in T.LADDER:
                w = v.width(ctype)
                if rows % w or cols % w:
                    continue
                out = cupy.empty((cols, rows) if v.transposes else (rows, cols), dtype)
                runtime.launch(v.spec(ctype), v.grid(rows, cols), v.block, out, xd, rows, cols)
                check(np.array_equal(out.get(), x.T if v.transposes else x), f"{v.name} {ctype} {rows}x{cols}")


def matmul_kernels(rng, rb_only: bool):
    import cupy

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments.matmul import Reference
    from gpumemlab.kernels.matmul import CANDIDATES
    from gpumemlab.ops import matmul as ops

    def run(variant, m, n, k, cfg=None, vec=None, splits=None):
        a = device_random_nonzero((m, k), np.float32, 1)
        b = None if ops.VARIANTS[variant].op == "aat" else device_random_nonzero((k, n), np.float32, 2)
        out = cupy.empty((m, m if b is None else n), cupy.float32)
        p = (ops.register_blocked_plan(a, b, out, cfg, vec, splits) if variant == "register_blocked"
             else ops.plan(variant, a, b, out))
        try:
            Reference(a, b).verifier(p.run, out, variant)()
        except Exception as exc:
            check(False, f"{variant} {cfg.name if cfg else ''} {m}x{n}x{k}: {exc}")

    for v in () if rb_only else ops.AB_VARIANTS:
        if ops.VARIANTS[v].k32:
            run(v, 64, 96, 32)
        elif v != "register_blocked":
            run(v, 67, 45, 37)
    for v in () if rb_only else ops.AAT_VARIANTS:
        run(v, 96, 0, 32)
    for cfg in CANDIDATES:
        run("register_blocked", 140, 136, 36, cfg, 4)
        run("register_blocked", 67, 45, 37, cfg, 1)
        run("register_blocked", 72, 68, 100, cfg, 4, 3)
        run("register_blocked", 33, 17, 41, cfg, 1, 2)


def gemv_kernels(rng):
    """The M = 1 and N = 1 paths: float4 and scalar loads, one k range and split k ranges, partial blocks."""
    import cupy

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments.matmul import Reference
    from gpumemlab.ops import matmul as ops

    for m, n, k in ((1, 1000, 3000), (1, 1001, 37), (1, 8, 4096), (1, 4096, 8), (1, 1, 1), (333, 1, 1000),
                    (7, 1, 37), (1, 260, 100_003)):
        a = device_random_nonzero((m, k), np.float32, 1)
        b = device_random_nonzero((k, n), np.float32, 2)
        out = cupy.empty((m, n), cupy.float32)
        try:
            Reference(a, b).verifier(ops.gemv_plan(a, b, out).run, out, "gemv")()
        except Exception as exc:
            check(False, f"gemv {m}x{n}x{k}: {exc}")


def library(rng):
    import cupy

    import gpumemlab
    from gpumemlab.bench.verify import random_nonzero

    for dtype in ("float32", "float64", "int32"):  # the single-block and the two-pass path
        for n in (0, 1, 3001, 70_001, 300_007):
            x = random_nonzero(n, dtype, rng)
            got = float(gpumemlab.sum(cupy.asarray(x)))
            check(abs(got - x.astype(np.float64).sum()) <= 1e-3 * max(1.0, np.abs(x).sum() * 1e-3), f"sum {dtype} {n}")
    for dtype in ("float32", "float64", "int32"):
        for shape in ((33, 65), (1, 9), (132, 68)):
            x = random_nonzero(shape, dtype, rng)
            check(np.array_equal(gpumemlab.transpose(cupy.asarray(x)).get(), x.T), f"transpose {dtype} {shape}")
            check(np.array_equal(gpumemlab.copy(cupy.asarray(x)).get(), x), f"copy {dtype} {shape}")
    a = cupy.asarray(random_nonzero((67, 37), np.float32, rng))
    b = cupy.asarray(random_nonzero((37, 45), np.float32, rng))
    want = a.get().astype(np.float64) @ b.get().astype(np.float64)
    err = np.abs(gpumemlab.matmul(a, b).get() - want).max()
    check(err < 1e-4 * np.abs(want).max(), f"matmul 67x45x37: max error {err}")


def main(argv: list[str]) -> int:
    rb_only = os.environ.get("SAN_RB_ONLY") == "1"
    groups = dict(reduce=reduce_kernels, transpose=transpose_kernels, launch=launch_kernels,
                  matmul=lambda r: matmul_kernels(r, rb_only), gemv=gemv_kernels,
                  library=library)
    names = argv or (["matmul"] if rb_only else list(groups))
    unknown = [n for n in names if n not in groups]
    if unknown:
        print(f"unknown group {unknown[0]!r}; expected {', '.join(groups)}", file=sys.stderr)
        return 2
    from gpumemlab.gpu import runtime

    runtime.work_stream()
    rng = np.random.default_rng(0)
    for name in names:
        groups[name](rng)
    runtime.synchronize()
    if FAILURES:
        print("WRONG RESULTS:", *FAILURES, sep="\n  ")
        return 1
    print(f"sanitize driver: {', '.join(names)}: all results correct")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
