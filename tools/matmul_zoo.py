#!/usr/bin/env python3
"""Sweep the register-blocked configurations (x split-K factors) over the matmul shape zoo, and time the
library call against cupy.matmul as users call them; write everything as JSON (the chooser's evidence).

    python3 tools/matmul_zoo.py OUT.json [--max-sweep-flops 2e11] [--samples 10] [--configs A,B] [--groups G,H]
                                                                                      (on the GPU)
    python3 tools/matmul_zoo.py --install OUT.json   (anywhere: the winners into kernels/tuned/matmul_shapes.json)

Per shape: correctness of ``gpumemlab.matmul`` against float64 (output poisoned with NaN first); kernel-only
medians (CUDA events on the current stream, one warm-up call excluded) of every candidate x splits and of
cuBLAS on the same operands; then ``gpumemlab.matmul(a, b)`` and ``cupy.matmul(a, b)`` alternated, each
sample an event pair around the Python call. Raw samples are kept.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from datetime import UTC


def timed(fn, samples: int) -> list[float]:
    import cupy

    fn()  # warm-up: compilation, allocation
    out = []
    for _ in range(samples):
        e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        out.append(cupy.cuda.get_elapsed_time(e0, e1) * 1e-3)
    return out


def interleaved(fns: dict, samples: int) -> dict:
    import cupy

    for fn in fns.values():
        fn()
    cupy.cuda.get_current_stream().synchronize()
    got = {name: [] for name in fns}
    for _ in range(samples):
        for name, fn in fns.items():
            e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            got[name].append(cupy.cuda.get_elapsed_time(e0, e1) * 1e-3)
    return got


HELD_OUT = ("odd",)  # shapes never installed: the zoo experiment judges the nearest-shape rule on them


def install(sweep_path: str) -> int:
    """Write the fastest swept point of every shape (held-out groups excepted) for the sweep's device."""
    from datetime import datetime

    from gpumemlab.ops import matmul as ops

    data = json.loads(open(sweep_path).read())
    winners = {}
    for rec in data["shapes"]:
        sweep = rec.get("sweep_median_s")
        if not sweep or rec["group"] in HELD_OUT:
            continue
        point, t = min(sweep.items(), key=lambda kv: kv[1])
        config, splits = point.split("/")
        winners[rec["shape"]] = dict(config=config, splits=int(splits), median_s=t,
                                     cublas_median_s=float(np.median(rec["cublas_kernel_s"])))
    path = ops.SHAPES_PATH
    try:
        table = json.loads(path.read_text())
    except OSError:
        table = dict(format=1, about="fastest register_blocked point per zoo shape and device, written by "
                     "`python3 tools/matmul_zoo.py --install SWEEP.json` from a sweep on that device "
                     "(measured: never edit by hand)", devices={})
    before = table["devices"].get(data["device"]["name"], {})
    occupancy = data.get("occupancy", {})
    if data.get("groups"):  # a sweep of some groups: the other shapes keep their earlier winners
        winners = {**before.get("winners", {}), **winners}
        occupancy = {**before.get("occupancy", {}), **occupancy}
    table["devices"][data["device"]["name"]] = dict(
        device=data["device"], date=datetime.now(UTC).isoformat(timespec="seconds"),
        command="python3 tools/matmul_zoo.py SWEEP.json && python3 tools/matmul_zoo.py --install SWEEP.json",
        held_out=list(HELD_OUT), occupancy=occupancy, winners=winners)
    path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"{len(winners)} winners for {data['device']['name']} -> {path.name}")
    from gpumemlab.kernels import matmul as K

    new = sorted({w["config"] for w in winners.values()} - {c.name for c in K.CANDIDATES})
    if new:  # the chooser ignores them (and tests/test_matmul_zoo.py fails) until they are candidates
        print(f"winners that are not in kernels/matmul.py's CANDIDATES yet: {', '.join(new)}", file=sys.stderr)
    return 0


def main(argv) -> int:
    if argv[:1] == ["--install"] and len(argv) == 2:
        return install(argv[1])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--max-sweep-flops", type=float, default=2e11)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--configs", default="", help="comma-separated config names (default: every candidate); any "
                    "valid point of the space by its name, e.g. 128x32x16_w32x32_i1_t4x4_s3_a0_b4_o2_p1 (the chooser "
                    "uses a winner only once it is in kernels/matmul.py's CANDIDATES)")
    ap.add_argument("--groups", default="", help="comma-separated zoo groups to sweep (default: all), e.g. "
                    "tall_skinny,short_wide,large_k")
    args = ap.parse_args(argv)
    from gpumemlab.gpu.fp32 import tf32_env_problem

    problem = tf32_env_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    import cupy

    import gpumemlab
    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments._matmul import Reference
    from gpumemlab.experiments._zoo import ZOO, shape_name
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import matmul as K
    from gpumemlab.ops import matmul as ops

    dev = runtime.device_info()
    sms = int(dev["sm_count"])
    cfgs = [K.RBConfig.from_name(c) for c in args.configs.split(",") if c] or list(K.CANDIDATES)
    occ = {}
    for cfg in cfgs:
        kern = runtime.get_kernel(cfg.spec(4))
        ops._allow_smem(kern, cfg.spec(4), cfg.smem_bytes)
        occ[cfg.name] = runtime.max_active_blocks(kern, cfg.threads, cfg.smem_bytes)
    groups = {g for g in args.groups.split(",") if g}
    result = dict(device=dict(name=dev["name"], sm_count=sms, cc=list(dev.get("cc", []))), occupancy=occ,
                  samples=args.samples, groups=sorted(groups), shapes=[])
    t_start = time.time()
    unknown = groups - {g for g, *_ in ZOO}
    if unknown:
        print(f"matmul_zoo: unknown group(s) {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    for group, m, n, k in ZOO:
        if groups and group not in groups:
            continue
        rec = dict(group=group, shape=shape_name(m, n, k), m=m, n=n, k=k)
        a = device_random_nonzero((m, k), np.float32, m + k)
        b = device_random_nonzero((k, n), np.float32, n + 1)
        flops = 2.0 * m * n * k
        samples = args.samples if flops < 2e12 else max(5, args.samples // 2)
        try:
            if flops <= 2e11:
                out = cupy.empty((m, n), cupy.float32)
                Reference(a, b).verifier(lambda: gpumemlab.matmul(a, b, out=out), out, "matmul")()  # raises if wrong
                rec["checked"] = True
            cout = cupy.empty((m, n), cupy.float32)
            rec["cublas_kernel_s"] = timed(lambda: cupy.matmul(a, b, out=cout), samples)
            if m > 1 and n > 1 and flops <= args.max_sweep_flops:
                sweep = {}
                for cfg in cfgs:
                    for s in ops.SWEEP_SPLITS:
                        if s > 1 and (k // s < 128 or ops._tiles(cfg, m, n) * s > 4 * occ[cfg.name] * sms):
                            continue
                        p = ops.register_blocked_plan(a, b, cout, cfg, None, s)
                        if p.splits != s:
                            continue
                        sweep[f"{cfg.name}/{s}"] = float(np.median(timed(p.run, samples)))
                rec["sweep_median_s"] = sweep
            else:
                p = ops.plan("auto", a, b, cout)
                rec["auto_kernel_s"] = timed(p.run, samples)
            rec["library_vs_cupy_s"] = interleaved(
                {"gpumemlab.matmul": lambda: gpumemlab.matmul(a, b), "cupy.matmul": lambda: cupy.matmul(a, b)}, samples)
        except Exception as exc:  # keep the sweep going; the JSON says what failed
            rec["failed"] = f"{type(exc).__name__}: {exc}"
        del a, b
        cupy.get_default_memory_pool().free_all_blocks()
        result["shapes"].append(rec)
        lib = rec.get("library_vs_cupy_s", {})
        ratio = (np.median(lib["cupy.matmul"]) / np.median(lib["gpumemlab.matmul"])) if lib else float("nan")
        print(f"{time.time() - t_start:6.1f}s {group:12s} {rec['shape']:>20s} ratio {ratio:.2f} "
              f"{rec.get('failed', '')}", flush=True)
        with open(args.out, "w") as f:
            json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
