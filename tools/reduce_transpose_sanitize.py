"""Run every reduce / transpose kernel (and the library entry points) once on small odd sizes, for
compute-sanitizer (memcheck, racecheck, synccheck). Checks results too, and exits non-zero on a mismatch.

    compute-sanitizer --tool racecheck python3 tools/reduce_transpose_sanitize.py
"""

from __future__ import annotations

import math
import sys

import numpy as np


def main() -> int:
    import cupy

    import gpumemlab
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import reduce as R
    from gpumemlab.kernels import CTYPES
    from gpumemlab.kernels import transpose as T

    runtime.work_stream()
    rng = np.random.default_rng(0)
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    # reduction ladder: one pass each, sizes that leave partial blocks
    for n in (1, 257, 1000, 5003, 70_001):
        x = random_nonzero(n, np.float32, rng)
        xd = cupy.asarray(x)
        for step in R.LADDER:
            blocks = math.ceil(n / step.per_block)
            out = cupy.full(blocks, np.nan, np.float32)
            runtime.launch(step.spec, blocks, R.BLOCK, out, xd, np.int64(n))
            check(abs(float(out.sum()) - x.astype(np.float64).sum()) < 1e-3, f"{step.name} n={n}")
        ticket = cupy.zeros(1, np.uint32)
        for config in R.VECTORIZED + R.TUNING:  # a small grid so blocks get uneven shares / partial tiles
            grid = 3
            part = cupy.full(grid, np.nan, np.float32)
            res = cupy.full(1, np.nan, np.float32)
            spec = config.spec()
            if config.kernel == "reduce6":
                runtime.launch(spec, grid, config.block, part, xd[1:], np.int64(n - 1))
                runtime.launch(R.reduce_final("float", "float"), 1, R.FINAL_BLOCK, res, part, np.int64(grid))
            else:
                runtime.launch(spec, grid, config.block, res, part, ticket, xd[1:], np.int64(n - 1))
            check(abs(float(res[0]) - x[1:].astype(np.float64).sum()) < 1e-3, f"{config.label} n={n}")
    # the library's typed passes, both the single-block and the two-pass path
    for dtype in ("float32", "float64", "int32"):
        for n in (0, 1, 3001, 70_001, 300_007):
            x = random_nonzero(n, dtype, rng)
            got = float(gpumemlab.sum(cupy.asarray(x)))
            check(abs(got - x.astype(np.float64).sum()) <= 1e-3 * max(1.0, np.abs(x).sum() * 1e-3), f"sum {dtype} {n}")
    # the register-pressure kernel, natural and with spills to local memory
    from gpumemlab.kernels import register_pressure as L

    xa = cupy.asarray(random_nonzero(5000, np.float32, rng))
    outs = []
    for spec in [L.NATURAL] + L.SPILL_DEMO:
        o = cupy.full(2 * 64, np.nan, np.float32)
        runtime.launch(spec, 2, 64, o, xa, np.int64(xa.size))
        outs.append(o.get())
    check(all(np.array_equal(o, outs[0]) for o in outs), "accumulators with register limits")
    # transpose ladder and the library
    for ctype, dtype in ((CTYPES[d], d) for d in T.DTYPES):
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
            check(np.array_equal(gpumemlab.transpose(xd).get(), x.T), f"transpose {dtype} {rows}x{cols}")
    runtime.synchronize()
    if failures:
        print("WRONG RESULTS:", *failures, sep="\n  ")
        return 1
    print("sanitize driver: all results correct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
