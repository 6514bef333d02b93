#!/usr/bin/env python3
"""Issue 11's last transpose gap: transpose_vec geometries and block orders against a device copy of the same bytes.

    PYTHONPATH=src python3 tools/transpose_probe.py [OUT_DIR] [--shapes RxC,...] [--samples 40] [--sets orders]
                                                    [--extras] [--budget-s 75]       (on the GPU; JSON into OUT_DIR)
    PYTHONPATH=src python3 tools/transpose_probe.py --model RESIDENT [--shapes ...] [--sets ...]   (no GPU)

Per shape (float32; default 16384x16384, 8192x8192, 16380x16388 and 16383x16385): the library's plan
(``ops.transpose.launch_plan``: its kernel and grid, launched into a preallocated output) and, where the library takes
the vector kernel (both sides multiples of 4), every geometry of the chosen sets (``kernels.transpose``:
``PROBE_ORDERS``: the row order at MINB 6, grouped by G = 2..32 and diagonal; ``PROBE_SESSION23``: blocks per SM,
PIPE, 128 x 128 tiles, tiles per block). 16383x16385 is not a multiple of 4: the library's fallback kernel
(transpose_tiled 32x8) is timed alone there. Two controls on every shape: the 32x8 tile kernels' plain copy and
copy through shared memory (``CONTROLS``: the staging's load / barrier / store phases without the transpose's
write pattern). Each is first checked against ``cupy.ascontiguousarray(x.T)`` into a
NaN-poisoned output (and ``gpumemlab.transpose(x)`` too). Then ``--samples`` rounds, the variants in a rotated order
each round, each variant sample followed by a cudaMemcpyAsync D2D sample of the same bytes; every sample is one event
pair after an L2 flush (a memset of twice the L2). Reported: median, min, max per variant, % of the copy (the shape's
pooled copy median / the variant's median, and the median of the per-pair ratios), blocks per SM (the driver's
occupancy answer) and the first wave's footprint (``kernels.transpose.wave_footprint``: row bands and mean
contiguous run along a row of ``in`` and of ``out`` for the blocks resident at once, if blocks start in linear order).

``--extras``: session 23's other measurements too (gpumemlab.copy's host time per call, the copy kernel against
cudaMemcpyAsync at 4 KiB..1 GiB). ``--model RESIDENT``: print the wave footprints for RESIDENT blocks and exit.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from gpumemlab.kernels import transpose as K  # no GPU needed to import

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other probes, beside this file
from matmul_unaligned_probe import summary  # noqa: E402  (median, min/max, p10/p90 of a sample list)

SETS = {"orders": K.PROBE_ORDERS, "session23": K.PROBE_SESSION23, "spans": K.PROBE_SPANS, "tall": K.PROBE_TALL}
DEFAULT_SHAPES = "16384x16384,8192x8192,16380x16388,16383x16385"
LIBRARY = "library plan"
# controls: the 32x8 tile kernels' copy (same indexing, no shared memory) and copy through a shared tile (load, barrier,
# store, barrier: the transpose's phases, with row-order writes as local as the reads)
CONTROLS = {"control: copy_tile 32x8 (no transpose)": K.COPY,
            "control: copy_tile 32x8 through shared": K.COPY_SHARED}
MIN_SAMPLES = 20


def parse_shapes(text: str) -> list[tuple[int, int]]:
    shapes = []
    for item in filter(None, text.split(",")):
        r, c = (int(v) for v in item.lower().split("x"))
        if r < 1 or c < 1:
            raise ValueError(f"bad shape {item!r}")
        shapes.append((r, c))
    return shapes


def geometries(sets: str) -> list[K.VecGeometry]:
    out = []
    for name in filter(None, sets.split(",")):
        if name not in SETS:
            raise ValueError(f"unknown set {name!r}; expected {', '.join(SETS)}")
        out += [g for g in SETS[name] if g not in out]
    return out


def takes_vector(rows: int, cols: int) -> bool:
    """Whether the library's plan for an aligned float32 rows x cols input is the vector kernel (the orders apply)."""
    return rows % 4 == 0 and cols % 4 == 0 and min(rows, cols) > K.THIN_MAX


def footprint_line(fp: dict | None) -> str:
    if not fp:
        return f"{'-':>28s}"
    return (f"in {fp['in_bands']:4d} bands {fp['in_run_bytes'] / 1024:6.1f}K  "
            f"out {fp['out_bands']:4d} bands {fp['out_run_bytes'] / 1024:5.1f}K")


def model(shapes, geoms, resident: int) -> int:
    """The first wave's footprint per geometry and shape for ``resident`` blocks (no GPU)."""
    for rows, cols in shapes:
        print(f"{rows}x{cols}, {resident} resident blocks (footprint: row bands touched, mean contiguous run "
              f"along a row)")
        for g in [K.VecGeometry()] + [g for g in geoms if g != K.VecGeometry()]:
            if takes_vector(rows, cols) or g == K.VecGeometry():
                fp = K.wave_footprint(g, rows, cols, resident) if takes_vector(rows, cols) else None
                print(f"  {g.name:54s} {footprint_line(fp)}")
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=os.environ.get("OUT") or ".", help="directory for transpose_probe.json")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma-separated ROWSxCOLS (float32)")
    ap.add_argument("--samples", type=int, default=40, help=f"timed rounds per shape (at least {MIN_SAMPLES})")
    ap.add_argument("--sets", default="orders", help=f"comma-separated geometry sets: {', '.join(SETS)}")
    ap.add_argument("--extras", action="store_true", help="also gpumemlab.copy's host time and copy sizes")
    ap.add_argument("--budget-s", type=float, default=75.0, help="start no new shape after this many seconds")
    ap.add_argument("--model", type=int, metavar="RESIDENT", help="print wave footprints for RESIDENT blocks; no GPU")
    args = ap.parse_args(argv)
    shapes, geoms = parse_shapes(args.shapes), geometries(args.sets)
    if args.model is not None:
        return model(shapes, geoms, args.model)
    return measure(args, shapes, geoms)


def measure(args, shapes, geoms) -> int:
    t_start = time.time()
    import cupy

    import gpumemlab
    from gpumemlab.bench.timer import L2Flusher
    from gpumemlab.bench.verify import poison
    from gpumemlab.gpu import runtime
    from gpumemlab.gpu.compile import compile_specs
    from gpumemlab.ops import transpose as ops

    samples = max(MIN_SAMPLES, args.samples)
    ws = runtime.work_stream()  # CuPy's current stream: launches, the copies, the flushes and the events
    dev = runtime.device_info()
    sms = dev["sm_count"]
    flusher = L2Flusher(dev["l2_bytes"])
    start, end = cupy.cuda.Event(), cupy.cuda.Event()

    def timed(fn, flush: bool = True) -> float:
        if flush:
            flusher.flush(ws)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end) / 1e3

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "transpose_probe.json"
    result = dict(device={k: dev.get(k) for k in ("name", "sm_count", "cc", "l2_bytes", "memory_clock_khz",
                                                  "memory_bus_width_bits", "driver_version", "nvrtc_version")},
                  samples=samples, sets=args.sets, l2_flush_bytes=flusher.nbytes, shapes=[], skipped=[])
    usage = lambda spec: compile_specs([spec], dev["arch"])[spec][1]  # noqa: E731  (the runtime's compile: cached)
    failed = False
    for rows, cols in shapes:
        if time.time() - t_start > args.budget_s:
            result["skipped"].append(f"{rows}x{cols}")
            continue
        rec = _shape(cupy, gpumemlab, runtime, ops, poison, timed, usage, rows, cols, geoms, samples, sms)
        failed |= not all(v["ok"] for v in rec["variants"].values()) or not rec["library_call_ok"]
        result["shapes"].append(rec)
        _print_shape(rec)
        cupy.get_default_memory_pool().free_all_blocks()
        result["elapsed_s"] = time.time() - t_start
        path.write_text(json.dumps(result))
    if args.extras:
        result["extras"] = _extras(cupy, gpumemlab, timed)
    _print_summary(result["shapes"])
    result["elapsed_s"] = time.time() - t_start
    path.write_text(json.dumps(result))
    print(f"{result['elapsed_s']:.1f}s, JSON: {path}" + (f"; skipped {result['skipped']}" if result["skipped"] else ""))
    return 1 if failed else 0


def _shape(cupy, gpumemlab, runtime, ops, poison, timed, usage, rows, cols, geoms, samples, sms) -> dict:
    t0 = time.time()
    x = cupy.random.random((rows, cols), dtype=np.float32) + np.float32(0.5)
    want = cupy.ascontiguousarray(x.T)
    out = cupy.empty((cols, rows), np.float32)
    twin = cupy.empty_like(x)
    nbytes = x.nbytes
    r32, c32 = np.int32(rows), np.int32(cols)

    def memcpy():
        twin.data.copy_from_device_async(x.data, nbytes)

    spec, grid, block, shmem, extra = ops.launch_plan(rows, cols, "float32", True, sms)
    plans = {LIBRARY: (spec, grid, block, shmem, extra, K.VecGeometry() if spec == K.VecGeometry().spec() else None)}
    if takes_vector(rows, cols):
        for g in geoms:
            plans.setdefault(g.name if g != K.VecGeometry() else LIBRARY,
                             (g.spec(), g.grid(rows, cols), (K.VEC_THREADS,), g.shmem(), (), g))
    rec = dict(shape=f"{rows}x{cols}", rows=rows, cols=cols, bytes=nbytes, vector=takes_vector(rows, cols),
               variants={})
    runs = {}
    for name, v in CONTROLS.items():  # copies (out keeps the shape): the staging's cost without the transpose's writes
        plans[name] = (v.spec("float"), v.grid(rows, cols), v.block, 0, (), None)
    for name, (spec, grid, block, shmem, extra, geom) in plans.items():
        kernel = runtime.get_kernel(spec)
        if shmem:
            runtime.set_max_dynamic_shared(kernel, shmem)

        def run(spec=spec, grid=grid, block=block, shmem=shmem, extra=extra):
            runtime.launch(spec, grid, block, out, x, r32, c32, *extra, shmem=shmem)
        poison(out)
        run()
        ok = bool(cupy.array_equal(out.reshape(rows, cols), x) if name in CONTROLS else cupy.array_equal(out, want))
        per_sm = runtime.max_active_blocks(kernel, math.prod(block), shmem)
        u = usage(spec)
        rec["variants"][name] = dict(kernel=spec.name, grid=list(grid), shmem=shmem, ok=ok, blocks_per_sm=per_sm,
                                     registers=u.registers if u else None,
                                     footprint=K.wave_footprint(geom, rows, cols, per_sm * sms) if geom else None)
        runs[name] = run
    rec["library_call_ok"] = bool(cupy.array_equal(gpumemlab.transpose(x), want))
    del want
    names = list(runs)
    for name in names:  # warm-up
        for _ in range(2):
            timed(runs[name])
            timed(memcpy)
    got = {n: [] for n in names}
    copies = {n: [] for n in names}
    for i in range(samples):
        for name in names[i % len(names):] + names[:i % len(names)]:  # the order rotated every round
            got[name].append(timed(runs[name]))
            copies[name].append(timed(memcpy))
    pooled = [t for n in names for t in copies[n]]
    rec["copy"] = summary(pooled)
    copy_med = rec["copy"]["median_s"]
    for name in names:
        v = rec["variants"][name]
        v.update(summary(got[name]))
        v["samples_s"], v["copy_samples_s"] = got[name], copies[name]
        v["copy_median_s"] = statistics.median(copies[name])
        v["of_copy"] = copy_med / v["median_s"]
        v["of_copy_paired"] = statistics.median(c / t for c, t in zip(copies[name], got[name]))
    rec["wall_s"] = time.time() - t0
    return rec


def _print_shape(rec: dict) -> None:
    c = rec["copy"]
    print(f"\n{rec['shape']} float32 ({rec['bytes'] / 2**20:.0f} MiB each way): cudaMemcpyAsync D2D median "
          f"{c['median_s'] * 1e6:8.1f} us (min {c['min_s'] * 1e6:.1f}, max {c['max_s'] * 1e6:.1f}, "
          f"{c['n']} samples)" + ("" if rec["vector"] else "  [not a multiple of 4: the library's fallback only]"))
    if not rec["library_call_ok"]:
        print("  gpumemlab.transpose(x) WRONG")
    print(f"  {'variant':54s} {'ok':5s} {'B/SM':>4s} {'median':>9s} {'min':>9s} {'max':>9s}  {'of copy':>7s} "
          f"{'paired':>7s}  first wave (in / out)")
    for name, v in rec["variants"].items():
        print(f"  {name:54s} {str(v['ok']):5s} {v['blocks_per_sm']:4d} {v['median_s'] * 1e6:9.1f} "
              f"{v['min_s'] * 1e6:9.1f} {v['max_s'] * 1e6:9.1f}  {v['of_copy'] * 100:6.1f}% "
              f"{v['of_copy_paired'] * 100:6.1f}%  {footprint_line(v['footprint'])}", flush=True)


def _print_summary(shapes: list[dict]) -> None:
    print("\nsummary (% of the copy, pooled copy median / variant median; controls left out):")
    for rec in shapes:
        lib = rec["variants"][LIBRARY]
        best_name, best = max(((n, v) for n, v in rec["variants"].items() if n not in CONTROLS),
                              key=lambda kv: kv[1]["of_copy"])
        line = f"  {rec['shape']:12s} library {lib['of_copy'] * 100:5.1f}%"
        if best_name != LIBRARY:
            line += (f"; best {best_name} {best['of_copy'] * 100:5.1f}% "
                     f"({(best['of_copy'] - lib['of_copy']) * 100:+.1f} points)")
        print(line + ("" if all(v["ok"] for v in rec["variants"].values()) else "  WRONG RESULTS"))


def _extras(cupy, gpumemlab, timed) -> dict:
    """Session 23's: host time per call of gpumemlab.copy (tiny input, back to back) against x.copy() and
    empty + cudaMemcpyAsync, and the copy kernel's GPU time against cudaMemcpyAsync D2D at 4 KiB..1 GiB
    (interleaved, warm L2 as then)."""
    tiny = cupy.ones(16, np.float32)

    def memcpy_copy():
        y = cupy.empty(tiny.shape, tiny.dtype)
        y.data.copy_from_device_async(tiny.data, tiny.nbytes)
        return y

    host = {}
    paths = {"gpumemlab.copy": lambda: gpumemlab.copy(tiny), "x.copy()": lambda: tiny.copy(),
             "empty + cudaMemcpyAsync": memcpy_copy}
    for _ in range(3):
        for name, fn in paths.items():
            for _ in range(200):
                fn()
            cupy.cuda.Device().synchronize()
            t = time.perf_counter()
            for _ in range(5000):
                fn()
            cupy.cuda.Device().synchronize()
            host.setdefault(name, []).append((time.perf_counter() - t) / 5000 * 1e6)
    for name, us in host.items():
        print(f"host per call {name:28s} {statistics.median(us):6.2f} us  {[round(u, 2) for u in us]}")
    sizes = {}
    src_all = cupy.random.random(1 << 28, dtype=np.float32)
    dst_all = cupy.empty_like(src_all)
    for k in range(12, 31, 2):
        m = (1 << k) // 4
        src, dst = src_all[:m], dst_all[:m]
        kern = lambda src=src, dst=dst: gpumemlab.copy(src, out=dst)  # noqa: E731
        mc = lambda src=src, dst=dst: dst.data.copy_from_device_async(src.data, src.nbytes)  # noqa: E731
        kern(), mc()
        a_s, b_s = [], []
        for _ in range(MIN_SAMPLES):
            a_s.append(timed(kern, flush=False))
            b_s.append(timed(mc, flush=False))
        a_m, b_m = statistics.median(a_s), statistics.median(b_s)
        sizes[1 << k] = dict(kernel_s=a_s, memcpy_s=b_s)
        print(f"copy {1 << k:>11d} B  kernel {a_m * 1e6:9.2f} us  memcpy {b_m * 1e6:9.2f} us  memcpy/kernel time "
              f"{b_m / a_m:5.2f}", flush=True)
    return dict(host_us=host, copy_sizes=sizes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
