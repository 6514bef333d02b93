#!/usr/bin/env python3
"""Issue 11, unaligned FP32 shapes: ``gpumemlab.matmul`` as users call it, per route, against cupy.matmul.

    PYTHONPATH=src python3 tools/matmul_unaligned_probe.py [--samples 10] [--budget-s 140] [--shapes MxNxK,...]
                                                                              (on the GPU; JSON into $OUT)

Per shape, for each variant of ``gpumemlab.ops.matmul.options`` (``before``: the chooser before the padded route and
the wave model; ``direct+waves``: the same loads, the wave model's tiles; ``pad``: the padded route forced;
``pad_nearest``: forced, the nearest winner's tiles; ``auto``: the default now): the route it takes
(``ops.describe``), a correctness check against float64 first (output poisoned with NaN; every element within
gamma_K |A||B| with gamma_K = K u / (1 - K u), u = 2^-24, the FP32 bound for K products in any order, and the
normwise error below the TF32 guard), then samples that alternate the variants with ``cupy.matmul`` (one event pair
around each Python call, a synchronize after each, the order rotated every round), after two warm-up calls each.
For shapes the padded route copies, the copy kernel and the multiply are also timed alone (kernel launches only).
CUPY_TF32 must be unset or 0 (set to 0 here before CuPy loads); cuBLAS is put in its default (non-TF32) math mode.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

from gpumemlab.gpu.fp32 import require_fp32_env  # no CuPy at import

SHAPES = [(1023, 1025, 1027), (777, 1001, 513), (1001, 1001, 1001), (3001, 2999, 3000), (4095, 4097, 1023),
          (513, 777, 1001), (129, 4097, 1025), (2047, 2049, 4097)]
# aligned controls: two measured zoo shapes (their own winners) and one the zoo held out (its nearest winner)
CONTROLS = [(1024, 1024, 1024), (4096, 4096, 4096), (1000, 1000, 1000)]
VARIANTS = {  # name: ops.options(route=..., waves=...)
    "before": ("direct", "off"),
    "direct+waves": ("direct", "all"),
    "pad": ("pad", "all"),
    "pad_nearest": ("pad", "off"),
    "auto": ("auto", "unaligned"),
}
U = 2.0 ** -24  # FP32 unit roundoff
TF32_GUARD = 1e-4  # ||C - C64|| / ||C64||: FP32 sums land far below, TF32 inputs near 3e-4


def shape_name(m, n, k) -> str:
    return f"{m}x{n}x{k}"


def summary(samples: list[float]) -> dict:
    x = np.asarray(samples)
    med = float(np.median(x))
    return dict(median_s=med, min_s=float(x.min()), max_s=float(x.max()), p10_s=float(np.percentile(x, 10)),
                p90_s=float(np.percentile(x, 90)),
                spread=float((np.percentile(x, 90) - np.percentile(x, 10)) / med) if med else None, n=len(samples))


def probe_args(doc: str, argv, *, samples: int, budget_s: float, shapes_help: str, outdir: str | None = None):
    """The matmul probes' options parsed (OUTDIR when ``outdir`` names the JSON written there, --samples, --budget-s,
    --shapes), then the FP32 check made before CuPy loads: (args, None), or (None, 2) with the reason printed."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    if outdir:
        ap.add_argument("outdir", help=f"where {outdir} goes")
    ap.add_argument("--samples", type=int, default=samples, help="timed samples per call and shape")
    ap.add_argument("--budget-s", type=float, default=budget_s, help="start no new shape after this many seconds")
    ap.add_argument("--shapes", default="", help=f"comma-separated MxNxK (default: {shapes_help})")
    args = ap.parse_args(argv)
    problem = require_fp32_env()
    if problem:
        print(problem, file=sys.stderr)
        return None, 2
    return args, None


def probe_device(args, default_shapes: list) -> tuple[dict, list]:
    """(device info, [(M, N, K)]) once CuPy's current stream is the work stream and cuBLAS runs pure FP32: the shapes
    of ``--shapes``, else ``default_shapes``."""
    from gpumemlab.gpu import runtime
    from gpumemlab.ops.blas import tf32_disabled

    runtime.work_stream()
    tf32_disabled()
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s]
    return runtime.device_info(), shapes or list(default_shapes)


def stats_record(s) -> dict:
    """A bench.timer Stats as JSON: median, extremes, p10/p90, relative spread and the raw samples."""
    return dict(median_s=s.median, min_s=s.min, max_s=s.max, p10_s=s.p10, p90_s=s.p90, spread=s.rel_spread, n=s.n,
                samples_s=list(s.samples))


def interleaved_fixed(calls: dict, samples: int, flusher) -> dict:
    """{name: Stats} of ``calls`` timed interleaved on the work stream, L2 flushed before each sample, exactly
    ``samples`` samples each after 3 warm-ups."""
    from gpumemlab.bench.timer import TimerConfig, time_interleaved
    from gpumemlab.gpu import runtime

    cfg = TimerConfig(warmup=3, min_samples=samples, max_samples=samples, min_time_s=0.0, max_time_s=60.0, batch=10)
    return time_interleaved(calls, stream=runtime.work_stream(), flusher=flusher, cfg=cfg)


def check(out, c64, absprod, k: int) -> dict:
    """Elementwise |C - C64| <= gamma_K (|A| |B|), and the normwise relative error (TF32 guard)."""
    import cupy

    finite = bool(cupy.isfinite(out).all())
    if not finite:
        return dict(ok=False, finite=False)
    gamma = k * U / (1 - k * U)
    diff = cupy.abs(out.astype(cupy.float64) - c64)
    worst = float((diff / (gamma * absprod)).max())
    rel = float(cupy.linalg.norm(diff) / cupy.linalg.norm(c64))
    return dict(ok=worst <= 1.0 and rel < TF32_GUARD, finite=True, worst_over_bound=worst, rel_fro=rel)


def event_time(fn) -> float:
    import cupy

    e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
    e0.record()
    fn()
    e1.record()
    e1.synchronize()
    return cupy.cuda.get_elapsed_time(e0, e1) * 1e-3


def main(argv) -> int:
    args, code = probe_args(__doc__, argv, samples=10, budget_s=140.0, shapes_help="the issue's list and controls")
    if args is None:
        return code
    samples = max(10, args.samples)
    t_start = time.time()

    import cupy

    import gpumemlab
    from gpumemlab.bench.verify import device_random_nonzero, poison
    from gpumemlab.kernels.matmul import RBConfig
    from gpumemlab.ops import matmul as ops

    dev, shapes = probe_device(args, SHAPES + CONTROLS)
    shapes = [(s, "control" if s[1] % 4 == 0 and s[2] % 4 == 0 else "unaligned") for s in shapes]
    out_dir = os.environ.get("OUT") or "."
    path = os.path.join(out_dir, "matmul_unaligned_probe.json")
    result = dict(device={k: dev[k] for k in ("name", "sm_count", "cc", "sm_clock_khz", "memory_clock_khz",
                                              "memory_bus_width_bits", "nvrtc_version", "driver_version")},
                  cupy=cupy.__version__, cupy_tf32=os.environ.get("CUPY_TF32"), samples=samples,
                  variants={k: dict(route=r, waves=w) for k, (r, w) in VARIANTS.items()},
                  model=dict(pad_max_copy_share=ops.PAD_MAX_COPY_SHARE, wave_margin=ops.WAVE_MARGIN,
                             wave_full_threads=ops.WAVE_FULL_THREADS, wave_reach=ops.WAVE_REACH),
                  shapes=[], skipped=[])
    rows = []
    for (m, n, k), group in shapes:
        if time.time() - t_start > args.budget_s:
            result["skipped"].append(shape_name(m, n, k))
            continue
        rec = dict(shape=shape_name(m, n, k), group=group, m=m, n=n, k=k, variants={})
        t0 = time.time()
        try:
            a = device_random_nonzero((m, k), np.float32, m + k)
            b = device_random_nonzero((k, n), np.float32, n + 1)
            a64, b64 = a.astype(cupy.float64), b.astype(cupy.float64)
            c64 = a64 @ b64
            absprod = cupy.abs(a64) @ cupy.abs(b64)
            del a64, b64
            out = cupy.empty((m, n), cupy.float32)
            poison(out)
            cupy.matmul(a, b, out=out)
            rec["cupy_check"] = check(out, c64, absprod, k)
            for name, (route, waves) in VARIANTS.items():
                with ops.options(route=route, waves=waves):
                    v = dict(route=ops.describe(m, n, k, True, dev))
                    poison(out)
                    gpumemlab.matmul(a, b, out=out)
                    cupy.cuda.get_current_stream().synchronize()
                    v["check"] = check(out, c64, absprod, k)
                rec["variants"][name] = v
            del c64, absprod
            names = list(VARIANTS) + ["cupy.matmul"]

            def timed(name):  # the options are set outside the event pair: only the call is timed
                if name == "cupy.matmul":
                    return event_time(lambda: cupy.matmul(a, b))
                with ops.options(*VARIANTS[name]):
                    return event_time(lambda: gpumemlab.matmul(a, b))

            for name in names:  # warm-up: compilation, kept scratch, cuBLAS heuristics
                timed(name)
                timed(name)
            got = {name: [] for name in names}
            for i in range(samples):
                for name in names[i % len(names):] + names[:i % len(names)]:  # rotate the order every round
                    got[name].append(timed(name))
            rec["cupy_s"] = got.pop("cupy.matmul")
            rec["cupy"] = summary(rec["cupy_s"])
            for name, s in got.items():
                v = rec["variants"][name]
                v["samples_s"] = s
                v.update(summary(s))
                v["ratio_to_cublas"] = rec["cupy"]["median_s"] / v["median_s"]
            pad = rec["variants"]["pad"]["route"]
            if pad["kind"] == "pad":  # the padded route's two launches alone, on its own scratch
                cfg = RBConfig.from_name(pad["config"])
                p = ops.register_blocked_plan(a, b, cupy.empty((m, n), cupy.float32), cfg, None, pad["splits"],
                                              pad=True)
                parts = {}
                for part, fn in p.parts.items():
                    fn()
                    parts[part] = [event_time(fn) for _ in range(samples)]
                rec["pad_parts_s"] = parts
                rec["pad_parts"] = {part: summary(s) for part, s in parts.items()}
        except Exception as exc:  # keep going; the JSON says what failed
            rec["failed"] = f"{type(exc).__name__}: {exc}"
        rec["wall_s"] = time.time() - t0
        result["shapes"].append(rec)
        rows.append(rec)
        _print_shape(rec)
        a = b = out = None
        cupy.get_default_memory_pool().free_all_blocks()
        ops.release_scratch()
        result["elapsed_s"] = time.time() - t_start
        with open(path, "w") as f:
            json.dump(result, f)
    _print_summary(rows)
    result["elapsed_s"] = time.time() - t_start
    with open(path, "w") as f:
        json.dump(result, f)
    print(f"{result['elapsed_s']:.1f}s, JSON: {path}" + (f"; skipped {result['skipped']}" if result["skipped"] else ""))
    return 0 if all(not r.get("failed") and all(v["check"]["ok"] for v in r["variants"].values()) for r in rows) else 1


def _print_shape(rec):
    if rec.get("failed"):
        print(f"{rec['shape']:>16} FAILED {rec['failed']}", flush=True)
        return
    cub = rec["cupy"]["median_s"]
    chk = rec["cupy_check"]
    print(f"{rec['shape']:>16} ({rec['group']}) cuBLAS {cub * 1e3:.4f} ms, spread {rec['cupy']['spread']:.2f}; "
          f"cupy check {'ok' if chk['ok'] else 'FAILED'} {chk.get('rel_fro', float('nan')):.1e}", flush=True)
    for name, v in rec["variants"].items():
        r = v["route"]
        dec = r.get("decision") or {}
        share = dec.get("share")
        tiles = f"{r.get('config', '-').split('_')[0]}/{r.get('splits', '-')}"
        chk = v["check"]
        print(f"{'':>16} {name:13s} {r['kind']:7s} {tiles:16s} {v['median_s'] * 1e3:9.4f} ms  "
              f"ratio {v['ratio_to_cublas']:.3f}  spread {v['spread']:.2f}  "
              f"check {'ok' if chk['ok'] else 'FAILED'} {chk.get('worst_over_bound', float('nan')):.2e}"
              + (f"  copy share {share:.3f}" if share is not None else ""), flush=True)
    if rec.get("pad_parts"):
        parts = ", ".join(f"{p} {s['median_s'] * 1e6:.1f} us" for p, s in rec["pad_parts"].items())
        dec = rec["variants"]["pad"]["route"].get("decision") or {}
        ideal = (f" (model: copies {dec['copy_s'] * 1e6:.1f} us at the DRAM peak, product {dec['gemm_s'] * 1e6:.1f} us "
                 f"at the FP32 peak)" if dec.get("copy_s") else "")
        print(f"{'':>16} padded route alone: {parts}{ideal}", flush=True)


def _print_summary(rows):
    print("\nratio to cuBLAS (median / median), unaligned shapes:")
    names = list(VARIANTS)
    print(f"{'shape':>16} " + " ".join(f"{n:>13s}" for n in names))
    ratios = {n: [] for n in names}
    for rec in rows:
        if rec.get("failed"):
            continue
        vals = [rec["variants"][n]["ratio_to_cublas"] for n in names]
        if rec["group"] != "control":
            for n, x in zip(names, vals):
                ratios[n].append(x)
        tag = "  (control)" if rec["group"] == "control" else ""
        print(f"{rec['shape']:>16} " + " ".join(f"{x:13.3f}" for x in vals) + tag)
    if ratios[names[0]]:
        print(f"{'geomean':>16} " + " ".join(f"{math.exp(np.mean(np.log(ratios[n]))):13.3f}" for n in names))
        print(f"{'min':>16} " + " ".join(f"{min(ratios[n]):13.3f}" for n in names))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
