#!/usr/bin/env python3
"""Issue 11, M = 1 (and N = 1): gpumemlab.matmul's two split-K gemv epilogues against cuBLAS, as users call them.

    PYTHONPATH=src python3 tools/gemv_probe.py OUTDIR [--samples 60] [--shapes MxNxK,...] [--budget-s 45]
                                                                  (on the GPU; writes OUTDIR/gemv_probe.json)

Per shape: the launch each epilogue takes (``ops.gemv_launch``: kernel, grid, k ranges, workspace), a correctness check
first (random non-zero operands, output poisoned with NaN, every element within gamma_K |A||B| of the float64 product
and the normwise error below the TF32 guard: ``matmul_unaligned_probe.check``), for cupy.matmul and for
gpumemlab.matmul under ``ops.options(gemv="atomic")`` (a memset of C, then the kernel adds with atomicAdd) and
``ops.options(gemv="ticket")`` (one launch: partials in a per-stream workspace, the last block adds them in k order),
plus whether a second call gives the same bits. Then samples of the three calls and of the atomic route's memset
alone (``memset(C)``), interleaved by ``bench.timer.time_interleaved`` (the order reversed every round; CUDA events on
the work stream around each Python call; L2 flushed before each sample by ``bench.timer.L2Flusher``), after warm-up
calls: medians with min/max, and the ratio to cuBLAS (t_cuBLAS / t_ours: above 1 is faster).
CUPY_TF32 must be unset or 0 (set to 0 here before CuPy loads); cuBLAS is put in its default (non-TF32) math mode.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np


SHAPES = [(1, 8192, 1024), (1, 4096, 4096), (1, 1024, 8192), (1, 16384, 16384), (4, 8192, 1024), (1, 777, 1001),
          (1024, 1, 8192)]  # the last: N = 1, gemv_rows splits K too
ROUTES = ("atomic", "ticket")  # ops.options(gemv=...)
CUBLAS = "cupy.matmul"
MEMSET = "memset(C)"


def launch_record(m: int, n: int, k: int, sms: int) -> dict:
    """{epilogue: the launch gpumemlab.matmul takes under it} (aligned operands, this device's occupancy)."""
    from gpumemlab.ops import matmul as ops

    out = {}
    for e in ROUTES:
        g = ops.gemv_launch(m, n, k, True, sms, epilogue=e)
        out[e] = dict(kernel=g.spec.name, grid=list(g.grid), block=list(g.block), splits=g.splits, epilogue=g.epilogue,
                      zero_first=g.zero_first, workspace=list(g.workspace) if g.workspace else None)
    return out


def checks(a, b, m: int, n: int, k: int) -> dict:
    """{call: check record}: cuBLAS and each route, output poisoned first; ``repeat_bitwise``: a second call (output
    poisoned again) gave the same bits."""
    import cupy

    import gpumemlab
    from gpumemlab.bench.verify import poison
    from gpumemlab.ops import matmul as ops
    from matmul_unaligned_probe import check

    a64, b64 = a.astype(cupy.float64), b.astype(cupy.float64)
    c64, absprod = a64 @ b64, cupy.abs(a64) @ cupy.abs(b64)
    del a64, b64
    out = cupy.empty((m, n), cupy.float32)
    poison(out)
    cupy.matmul(a, b, out=out)
    got = {CUBLAS: check(out, c64, absprod, k)}
    for e in ROUTES:
        with ops.options(gemv=e):
            poison(out)
            gpumemlab.matmul(a, b, out=out)
            got[e] = check(out, c64, absprod, k)
            first = out.copy()
            poison(out)
            gpumemlab.matmul(a, b, out=out)
            got[e]["repeat_bitwise"] = bool(cupy.array_equal(first, out))
    cupy.cuda.get_current_stream().synchronize()
    return got


def calls(a, b, m: int, n: int) -> dict:
    """The timed callables, each one Python call as a user makes it (the option is switched inside the call)."""
    import cupy

    import gpumemlab
    from gpumemlab.ops import matmul as ops

    def route(e):
        def call():
            with ops.options(gemv=e):
                gpumemlab.matmul(a, b)
        return call

    c = cupy.empty((m, n), cupy.float32)

    def memset():  # the atomic route's extra launch alone, as GemvRun enqueues it
        cupy.cuda.runtime.memsetAsync(c.data.ptr, 0, c.nbytes, cupy.cuda.get_current_stream().ptr)

    return {CUBLAS: lambda: cupy.matmul(a, b), **{e: route(e) for e in ROUTES}, MEMSET: memset}


def probe_shape(m: int, n: int, k: int, dev: dict, flusher, samples: int) -> dict:
    from matmul_unaligned_probe import interleaved_fixed, stats_record

    from gpumemlab.bench.verify import device_random_nonzero

    rec = dict(shape=f"{m}x{n}x{k}", m=m, n=n, k=k, bytes_read=4 * (m * k + k * n),
               launches=launch_record(m, n, k, int(dev["sm_count"])))
    a = device_random_nonzero((m, k), np.float32, m + k)
    b = device_random_nonzero((k, n), np.float32, n + 1)
    rec["checks"] = checks(a, b, m, n, k)
    got = interleaved_fixed(calls(a, b, m, n), samples, flusher)
    rec["timings"] = {name: stats_record(s) for name, s in got.items()}
    cub = got[CUBLAS].median
    rec["ratio_to_cublas"] = {e: cub / got[e].median for e in ROUTES}
    rec["ticket_saves_s"] = got["atomic"].median - got["ticket"].median
    rec["dram_gbps"] = {name: rec["bytes_read"] / got[name].median / 1e9 for name in (CUBLAS, *ROUTES)}
    return rec


def main(argv) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # matmul_unaligned_probe's helpers, beside this file
    from matmul_unaligned_probe import probe_args, probe_device

    args, code = probe_args(__doc__, argv, samples=60, budget_s=45.0, shapes_help="the issue's list (at least 30 "
                            "samples)", outdir="gemv_probe.json")
    if args is None:
        return code
    t_start = time.time()

    import cupy

    from gpumemlab.bench.timer import L2Flusher
    from gpumemlab.ops import matmul as ops

    dev, shapes = probe_device(args, SHAPES)
    samples = max(30, args.samples)
    flusher = L2Flusher(dev["l2_bytes"])
    os.makedirs(args.outdir, exist_ok=True)
    path = os.path.join(args.outdir, "gemv_probe.json")
    result = dict(device={k: dev[k] for k in ("name", "sm_count", "cc", "l2_bytes", "sm_clock_khz", "memory_clock_khz",
                                              "memory_bus_width_bits", "nvrtc_version", "driver_version")},
                  cupy=cupy.__version__, cupy_tf32=os.environ.get("CUPY_TF32"), samples=samples,
                  l2_flush_bytes=flusher.nbytes, default_epilogue=ops._GEMV["epilogue"], shapes=[], skipped=[])
    failed = False
    for m, n, k in shapes:
        if time.time() - t_start > args.budget_s:
            result["skipped"].append(f"{m}x{n}x{k}")
            continue
        t0 = time.time()
        try:
            rec = probe_shape(m, n, k, dev, flusher, samples)
        except Exception as exc:  # keep going; the JSON says what failed
            rec = dict(shape=f"{m}x{n}x{k}", failed=f"{type(exc).__name__}: {exc}")
        rec["wall_s"] = time.time() - t0
        failed |= bool(rec.get("failed")) or not all(c["ok"] for c in rec.get("checks", {}).values())
        result["shapes"].append(rec)
        _print_shape(rec)
        cupy.get_default_memory_pool().free_all_blocks()
        ops.release_scratch()
        result["elapsed_s"] = time.time() - t_start
        Path(path).write_text(json.dumps(result))
    flusher.close()
    _print_table(result["shapes"])
    result["elapsed_s"] = time.time() - t_start
    Path(path).write_text(json.dumps(result))
    print(f"{dev['name']}, {result['elapsed_s']:.1f} s, JSON: {path}"
          + (f"; skipped (budget) {', '.join(result['skipped'])}" if result["skipped"] else ""))
    return 1 if failed else 0


def _us(x: float) -> str:
    return f"{x * 1e6:.2f}"


def _print_shape(rec: dict) -> None:
    if rec.get("failed"):
        print(f"{rec['shape']:>16} FAILED {rec['failed']}", flush=True)
        return
    t, a = rec["launches"]["ticket"], rec["launches"]["atomic"]
    other = "" if (a["grid"], a["splits"]) == (t["grid"], t["splits"]) else f" (atomic: grid {a['grid']})"
    chk = ", ".join(f"{name} {'ok' if c['ok'] else 'FAILED'}"
                    + ("" if "repeat_bitwise" not in c else " same bits" if c["repeat_bitwise"] else " bits vary")
                    for name, c in rec["checks"].items())
    print(f"{rec['shape']:>16} {t['kernel']} grid {t['grid']}{other}, {t['splits']} k ranges; checks: {chk}; "
          f"{rec['wall_s']:.1f} s", flush=True)


def _print_table(rows: list) -> None:
    print("\nmedian us [min-max] per call, L2 flushed before each sample; ratio = t_cuBLAS / t_ours (above 1: faster)")
    print(f"{'shape':>16} {'splits':>6} {'cuBLAS':>22} {'atomic (memset+kernel)':>24} {'ratio':>6} "
          f"{'ticket (one launch)':>22} {'ratio':>6} {'memset':>7} {'saved':>7}")
    for r in rows:
        if r.get("failed"):
            print(f"{r['shape']:>16} FAILED")
            continue
        t = r["timings"]

        def cell(name, width):
            s = t[name]
            return f"{_us(s['median_s'])} [{_us(s['min_s'])}-{_us(s['max_s'])}]".rjust(width)

        print(f"{r['shape']:>16} {r['launches']['ticket']['splits']:>6} {cell(CUBLAS, 22)} {cell('atomic', 24)} "
              f"{r['ratio_to_cublas']['atomic']:6.3f} {cell('ticket', 22)} {r['ratio_to_cublas']['ticket']:6.3f} "
              f"{_us(t[MEMSET]['median_s']):>7} {_us(r['ticket_saves_s']):>7}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
