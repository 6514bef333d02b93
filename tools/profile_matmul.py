#!/usr/bin/env python3
"""The program `ncu` profiles (tools/gpu_check.sh stage `profile`): cuBLAS SGEMM, the named register_blocked
configurations and, with --library, gpumemlab.matmul as users call it (the route and configuration it chooses), two
launches each at one shape, nothing else (no reference, no timer).

    ncu ... python3 tools/profile_matmul.py [--shape 4096x4096x4096] [--library] [CONFIG ...]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("configs", nargs="*", metavar="CONFIG", help="register_blocked configuration names")
    ap.add_argument("--library", action="store_true", help="also gpumemlab.matmul(a, b, out=out)")
    ap.add_argument("--shape", default="4096x4096x4096", help="MxNxK")
    args = ap.parse_args(argv)

    import cupy

    import gpumemlab

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels.matmul import RBConfig
    from gpumemlab.ops.blas import cublas_sgemm, tf32_disabled
    from gpumemlab.ops.matmul.launch import register_blocked_plan

    m, n, k = (int(x) for x in args.shape.lower().split("x"))
    with runtime.work_stream() as ws:
        a = device_random_nonzero((m, k), np.float32, 1)
        b = device_random_nonzero((k, n), np.float32, 2)
        out = cupy.empty((m, n), cupy.float32)
        tf32_disabled()
        runs = [("cuBLAS", lambda: cublas_sgemm(a, b, out))]
        runs += [(name, register_blocked_plan(a, b, out, RBConfig.from_name(name), 4, 1).run) for name in args.configs]
        if args.library:
            runs.append(("gpumemlab.matmul", lambda: gpumemlab.matmul(a, b, out=out)))
        for label, run in runs:
            for _ in range(2):
                run()
            ws.sync()
            print(f"profiled {label} at {args.shape}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
