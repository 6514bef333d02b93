#!/usr/bin/env python3
"""Issue 11: does the split-K factor the chooser takes leave a partial last wave? The chosen tiles at every split factor.

    PYTHONPATH=src python3 tools/matmul_split_probe.py OUTDIR [--samples 30] [--shapes MxNxK,...] [--budget-s 60]
                                                          (on the GPU; writes OUTDIR/matmul_split_probe.json)

Per shape: the configuration and split factor ``gpumemlab.matmul`` chooses (``ops.route``), then the same
configuration at split factors 1, 2, 3, 4, 6 and 8 (those with at least one BK step per split), each as its plan
launches it (a memset of C, then the kernel, when K is split), next to cupy.matmul and gpumemlab.matmul itself.
Each is checked first against the float64 product (output poisoned with NaN: ``matmul_unaligned_probe.check``), then
timed interleaved (``bench.timer.time_interleaved``: CUDA events on the work stream around each call, L2 flushed
before each sample). Printed per factor: blocks, resident blocks per SM (the driver's occupancy answer), waves =
ceil(blocks / (resident x SMs)), the K depth per split, the median and the ratio to cuBLAS. The wave model of
``ops.busiest_sm_work`` counts multiply-adds per SM; this shows whether a partial last wave costs a whole wave.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np


SHAPES = [(777, 1001, 513), (1023, 1025, 1027), (999, 1001, 1003), (601, 803, 1201), (2047, 2047, 2047),
          (512, 512, 16384), (4095, 4097, 1023)]
FACTORS = (1, 2, 3, 4, 6, 8)
CUBLAS, LIBRARY = "cupy.matmul", "gpumemlab.matmul"


def probe_shape(m: int, n: int, k: int, dev: dict, flusher, samples: int) -> dict:
    import cupy

    import gpumemlab
    from matmul_unaligned_probe import check, interleaved_fixed, stats_record

    from gpumemlab.bench.verify import device_random_nonzero, poison
    from gpumemlab.gpu import runtime
    from gpumemlab.ops import matmul as ops

    a = device_random_nonzero((m, k), np.float32, m + k)
    b = device_random_nonzero((k, n), np.float32, n + 1)
    chosen = ops.route(m, n, k, aligned=True).choice
    cfg = chosen.config
    a64, b64 = a.astype(cupy.float64), b.astype(cupy.float64)
    c64, absprod = a64 @ b64, cupy.abs(a64) @ cupy.abs(b64)
    del a64, b64
    sms = int(dev["sm_count"])
    rec = dict(shape=f"{m}x{n}x{k}", config=cfg.name, chosen_splits=chosen.splits, factors=[])
    calls = {CUBLAS: lambda: cupy.matmul(a, b), LIBRARY: lambda: gpumemlab.matmul(a, b)}
    seen = set()
    for s in FACTORS:
        chunk, eff = ops.split_chunk(k, cfg.bk, s)
        if eff in seen:
            continue
        seen.add(eff)
        out = cupy.empty((m, n), cupy.float32)
        plan = ops.register_blocked_plan(a, b, out, cfg, None, eff)
        spec = cfg.spec(plan.vec, split=eff > 1)
        resident = runtime.max_active_blocks(runtime.get_kernel(spec), cfg.threads, cfg.smem_bytes)
        blocks = ops._tiles(cfg, m, n) * eff
        poison(out)
        plan.run()
        ok = check(out, c64, absprod, k)
        rec["factors"].append(dict(splits=eff, chunk=chunk, blocks=blocks, resident_per_sm=resident, vec=plan.vec,
                                   waves=math.ceil(blocks / max(1, resident * sms)), check=ok))
        calls[f"splits={eff}"] = plan.run
    got = interleaved_fixed(calls, samples, flusher)
    rec["timings"] = {name: stats_record(st) for name, st in got.items()}
    cub = got[CUBLAS].median
    rec["ratio_to_cublas"] = {name: cub / st.median for name, st in got.items()}
    return rec


def main(argv) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other probes' helpers, beside this file
    from matmul_unaligned_probe import probe_args, probe_device

    args, code = probe_args(__doc__, argv, samples=30, budget_s=60.0, shapes_help="the unaligned zoo shapes and "
                            "controls (at least 20 samples)", outdir="matmul_split_probe.json")
    if args is None:
        return code
    t_start = time.time()

    import cupy

    from gpumemlab.bench.timer import L2Flusher

    dev, shapes = probe_device(args, SHAPES)
    flusher = L2Flusher(dev["l2_bytes"])
    os.makedirs(args.outdir, exist_ok=True)
    path = Path(args.outdir) / "matmul_split_probe.json"
    result = dict(device=dev["name"], sm_count=dev["sm_count"], samples=max(20, args.samples), shapes=[], skipped=[])
    failed = False
    for m, n, k in shapes:
        if time.time() - t_start > args.budget_s:
            result["skipped"].append(f"{m}x{n}x{k}")
            continue
        try:
            rec = probe_shape(m, n, k, dev, flusher, result["samples"])
        except Exception as exc:  # keep going; the JSON says what failed
            rec = dict(shape=f"{m}x{n}x{k}", failed=f"{type(exc).__name__}: {exc}")
        failed |= "failed" in rec or not all(f["check"]["ok"] for f in rec["factors"])
        result["shapes"].append(rec)
        print_shape(rec)
        cupy.get_default_memory_pool().free_all_blocks()
        path.write_text(json.dumps(result))
    flusher.close()
    result["elapsed_s"] = time.time() - t_start
    path.write_text(json.dumps(result))
    print(f"{dev['name']}, {result['elapsed_s']:.1f} s, JSON: {path}; skipped (budget): {result['skipped']}")
    return 1 if failed else 0


def print_shape(rec: dict) -> None:
    if "failed" in rec:
        print(f"{rec['shape']}: FAILED {rec['failed']}", flush=True)
        return
    t, r = rec["timings"], rec["ratio_to_cublas"]
    print(f"{rec['shape']}: {rec['config']}, chosen splits {rec['chosen_splits']}; cuBLAS "
          f"{t[CUBLAS]['median_s'] * 1e6:.2f} us, gpumemlab.matmul {t[LIBRARY]['median_s'] * 1e6:.2f} us "
          f"({r[LIBRARY]:.3f}x)", flush=True)
    for f in rec["factors"]:
        name = f"splits={f['splits']}"
        print(f"   splits {f['splits']:>2} depth {f['chunk']:>5} blocks {f['blocks']:>5} resident/SM "
              f"{f['resident_per_sm']} waves {f['waves']:>2}  {t[name]['median_s'] * 1e6:9.2f} us "
              f"[{t[name]['min_s'] * 1e6:.2f}-{t[name]['max_s'] * 1e6:.2f}]  {r[name]:.3f}x cuBLAS"
              f"  {'ok' if f['check']['ok'] else 'FAILED'}", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
