#!/usr/bin/env python3
"""Issue 11, split-K tiles: gpumemlab.matmul's two split-K epilogues of register_blocked against cuBLAS, as users call it.

    PYTHONPATH=src python3 tools/splitk_probe.py OUTDIR [--samples 40] [--shapes MxNxK,...] [--budget-s 45]
                                                 [--ticket-max-splits N]
                                                                 (on the GPU; writes OUTDIR/splitk_probe.json)

Per shape: the launch each epilogue takes (``ops.route`` + ``ops.splitk_epilogue``: kernel, grid, k ranges,
workspace), a correctness check first (random non-zero operands, output poisoned with NaN, every element within
gamma_K |A||B| of the float64 product and the normwise error below the TF32 guard: ``matmul_unaligned_probe.check``)
for cupy.matmul and for gpumemlab.matmul under ``ops.options(splitk="atomic")`` (a memset of C, then the kernel adds
its partial tiles with atomicAdd) and ``ops.options(splitk="ticket")`` (one launch: partial tiles in a per-stream
workspace, the last block of each tile adds them in split order), plus whether a second call gives the same bits.
Then samples of the three calls and of the atomic route's memset alone, interleaved by
``bench.timer.time_interleaved`` (order reversed every round; CUDA events on the work stream around each Python
call; L2 flushed before each sample), after warm-up calls: medians with min/max, ratio to cuBLAS (t_cuBLAS / t_ours:
above 1 is faster). 4096^3 is the no-split control (both routes take the same unsplit kernel).
The helpers are tools/gemv_probe.py's (checks' pattern, stats_record) and matmul_unaligned_probe.check, imported.
CUPY_TF32 must be unset or 0 (set to 0 here before CuPy loads); cuBLAS is put in its default (non-TF32) math mode.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # gemv_probe and matmul_unaligned_probe, beside this file

SHAPES = [(777, 1001, 513), (64, 64, 65536), (512, 512, 16384), (256, 512, 65536), (1023, 1025, 1027),
          (4096, 4096, 4096)]  # the last: no split (control)
ROUTES = ("atomic", "ticket")  # ops.options(splitk=...)
CUBLAS = "cupy.matmul"
MEMSET = "memset(C)"


def launch_record(m: int, n: int, k: int, aligned: bool) -> dict:
    """{epilogue: the launch gpumemlab.matmul takes under it} on this device (the route, its tile and splits)."""
    from gpumemlab.ops import matmul as ops

    r = ops.route(m, n, k, aligned)
    cfg = r.choice.config
    chunk, splits = ops.split_chunk(k, cfg.bk, r.choice.splits)
    tiles = ops._tiles(cfg, m, n)
    out = {}
    for e in ROUTES:
        sk = ops.splitk_epilogue(m, n, splits, tiles, e)
        spec = cfg.spec(1 if r.kind == "scalar" else 4, split=splits > 1, pad=r.kind == "pad",
                        epilogue=sk.epilogue or "atomic")
        out[e] = dict(route=r.kind, config=cfg.name, kernel=spec.name, grid=[tiles, splits], threads=cfg.threads,
                      k_chunk=chunk, splits=splits, epilogue=sk.epilogue, zero_first=sk.zero_first,
                      workspace=list(sk.workspace) if sk.workspace else None)
    return out


def checks(a, b, m: int, n: int, k: int) -> dict:
    """{call: check record}: cuBLAS and each route, output poisoned first; ``repeat_bitwise``: a second call gave the
    same bits (the ticket sums in split order: it must)."""
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
        with ops.options(splitk=e):
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
            with ops.options(splitk=e):
                gpumemlab.matmul(a, b)
        return call

    c = cupy.empty((m, n), cupy.float32)

    def memset():  # the atomic route's extra launch alone
        cupy.cuda.runtime.memsetAsync(c.data.ptr, 0, c.nbytes, cupy.cuda.get_current_stream().ptr)

    return {CUBLAS: lambda: cupy.matmul(a, b), **{e: route(e) for e in ROUTES}, MEMSET: memset}


def probe_shape(m: int, n: int, k: int, flusher, samples: int) -> dict:
    from gemv_probe import stats_record

    from gpumemlab.bench.timer import TimerConfig, time_interleaved
    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.gpu import runtime

    rec = dict(shape=f"{m}x{n}x{k}", m=m, n=n, k=k, flops=2 * m * n * k,
               launches=launch_record(m, n, k, n % 4 == 0 and k % 4 == 0))
    a = device_random_nonzero((m, k), np.float32, m + k)
    b = device_random_nonzero((k, n), np.float32, n + 1)
    rec["checks"] = checks(a, b, m, n, k)
    cfg = TimerConfig(warmup=3, min_samples=samples, max_samples=samples, min_time_s=0.0, max_time_s=60.0, batch=10)
    got = time_interleaved(calls(a, b, m, n), stream=runtime.work_stream(), flusher=flusher, cfg=cfg)
    rec["timings"] = {name: stats_record(s) for name, s in got.items()}
    cub = got[CUBLAS].median
    rec["ratio_to_cublas"] = {e: cub / got[e].median for e in ROUTES}
    rec["ticket_saves_s"] = got["atomic"].median - got["ticket"].median
    rec["tflops"] = {name: rec["flops"] / got[name].median / 1e12 for name in (CUBLAS, *ROUTES)}
    return rec


def _compile_one(spec, arch: str) -> str:
    """A worker: compile one spec into the on-disk cache (NVRTC only, no CUDA context)."""
    from gpumemlab.gpu.compile import compile_specs

    compile_specs([spec], arch)
    return spec.name


def prewarm(shapes: list, arch: str) -> dict:
    """Compile the kernels the shapes will take (both epilogues) in parallel processes into the compile cache, so the
    first calls below load cubins instead of running NVRTC one kernel at a time (the 60-second budget)."""
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing

    from gpumemlab.kernels import KernelSpec
    from gpumemlab.kernels import matmul as K

    t0 = time.time()
    names = sorted({rec["kernel"] for m, n, k in shapes
                    for rec in launch_record(m, n, k, n % 4 == 0 and k % 4 == 0).values()})
    specs = [KernelSpec(K.SRC, name) for name in names]
    try:
        with ProcessPoolExecutor(max_workers=max(1, min(len(specs), os.cpu_count() or 1, 16)),
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            list(pool.map(_compile_one, specs, [arch] * len(specs)))
        error = None
    except Exception as exc:  # the calls compile what is missing, one at a time
        error = f"{type(exc).__name__}: {exc}"
    return dict(kernels=names, seconds=time.time() - t0, error=error)


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", help="where splitk_probe.json goes")
    ap.add_argument("--samples", type=int, default=40, help="timed samples per call and shape (at least 30)")
    ap.add_argument("--shapes", default="", help="comma-separated MxNxK (default: the issue's list)")
    ap.add_argument("--budget-s", type=float, default=45.0, help="start no new shape after this many seconds")
    ap.add_argument("--ticket-max-splits", type=int, default=None,
                    help="ops.SPLITK_TICKET_MAX_SPLITS for this run (e.g. 256: the ticket on every split shape)")
    args = ap.parse_args(argv)
    tf32 = os.environ.get("CUPY_TF32")
    if tf32 not in (None, "", "0"):
        print(f"CUPY_TF32={tf32}: cuBLAS would not be FP32; unset it", file=sys.stderr)
        return 2
    os.environ["CUPY_TF32"] = "0"  # before CuPy loads
    t_start = time.time()

    import cupy

    from gpumemlab.bench.timer import L2Flusher
    from gpumemlab.gpu import runtime
    from gpumemlab.ops import matmul as ops
    from gpumemlab.ops.blas import tf32_disabled

    if args.ticket_max_splits is not None:
        ops.SPLITK_TICKET_MAX_SPLITS = args.ticket_max_splits  # before the first call (prepared launches are cached)
    runtime.work_stream()
    tf32_disabled()
    dev = runtime.device_info()
    shapes = ([tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s] if args.shapes
              else SHAPES)
    samples = max(30, args.samples)
    flusher = L2Flusher(dev["l2_bytes"])
    os.makedirs(args.outdir, exist_ok=True)
    path = os.path.join(args.outdir, "splitk_probe.json")
    result = dict(device={k: dev[k] for k in ("name", "sm_count", "cc", "l2_bytes", "sm_clock_khz", "memory_clock_khz",
                                              "memory_bus_width_bits", "nvrtc_version", "driver_version")},
                  cupy=cupy.__version__, cupy_tf32=os.environ.get("CUPY_TF32"), samples=samples,
                  l2_flush_bytes=flusher.nbytes, default_splitk=ops._SPLITK["epilogue"],
                  workspace_max_floats=ops.SPLITK_WORKSPACE_MAX,
                  ticket_max_splits=ops.SPLITK_TICKET_MAX_SPLITS, shapes=[], skipped=[])
    result["prewarm"] = prewarm(shapes, dev["arch"])
    print(f"compiled {len(result['prewarm']['kernels'])} kernels in {result['prewarm']['seconds']:.1f} s"
          + (f" ({result['prewarm']['error']})" if result["prewarm"]["error"] else ""), flush=True)
    failed = False
    for m, n, k in shapes:
        if time.time() - t_start > args.budget_s:
            result["skipped"].append(f"{m}x{n}x{k}")
            continue
        t0 = time.time()
        try:
            rec = probe_shape(m, n, k, flusher, samples)
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
    t = rec["launches"]["ticket"]
    chk = ", ".join(f"{name} {'ok' if c['ok'] else 'FAILED'}"
                    + ("" if "repeat_bitwise" not in c else " same bits" if c["repeat_bitwise"] else " bits vary")
                    for name, c in rec["checks"].items())
    print(f"{rec['shape']:>16} {t['route']} {t['kernel']} grid {t['grid']}, ticket route: {t['epilogue']}; "
          f"checks: {chk}; {rec['wall_s']:.1f} s", flush=True)


def _print_table(rows: list) -> None:
    print("\nmedian us [min-max] per call, L2 flushed before each sample; ratio = t_cuBLAS / t_ours (above 1: faster)")
    print(f"{'shape':>16} {'splits':>6} {'cuBLAS':>22} {'atomic (memset+kernel)':>24} {'ratio':>6} "
          f"{'ticket (one launch)':>22} {'ratio':>6} {'memset':>7}")
    for r in rows:
        if r.get("failed"):
            print(f"{r['shape']:>16} FAILED")
            continue
        t = r["timings"]

        def cell(name, width):
            s = t[name]
            return f"{_us(s['median_s'])} [{_us(s['min_s'])}-{_us(s['max_s'])}]".rjust(width)

        memset = _us(t[MEMSET]["median_s"]) if MEMSET in t else "-"
        print(f"{r['shape']:>16} {r['launches']['ticket']['splits']:>6} {cell(CUBLAS, 22)} {cell('atomic', 24)} "
              f"{r['ratio_to_cublas']['atomic']:6.3f} {cell('ticket', 22)} {r['ratio_to_cublas']['ticket']:6.3f} "
              f"{memset:>7}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
