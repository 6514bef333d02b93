#!/usr/bin/env python3
"""Issue 11's last transpose gap: transpose_vec geometries at a large square size against a device copy of the
same bytes, interleaved (event-timed on one stream, >= 10 samples each, cold L2 not needed: the matrix is many
times the L2), each checked against x.T first. Also gpumemlab.copy's host time per call against the alternatives.

    PYTHONPATH=src python3 tools/transpose_probe.py [n] [out.json]

Variants: blocks per SM (MINB: the register target of __launch_bounds__), PIPE (the next tile fetched into registers
while the current one is stored) and tiles per block (gridDim.y = row tiles / that).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time

import numpy as np

# (tile, blocks per SM, PIPE, tiles per block); a 128 x 128 float tile (64 KiB) takes dynamic shared memory
VARIANTS = [(64, 4, False, 1), (64, 2, False, 1), (64, 4, True, 2), (128, 1, False, 1), (128, 2, False, 1),
            (128, 3, False, 1), (128, 2, True, 4), (128, 3, False, 4)]
SAMPLES = 15


def main(argv: list[str]) -> int:
    import cupy

    from gpumemlab import copy as lib_copy
    from gpumemlab import transpose as lib_transpose
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import KernelSpec
    from gpumemlab.kernels import transpose as K

    n = int(argv[0]) if argv else 16384
    path = argv[1] if len(argv) > 1 else None
    x = cupy.random.random((n, n), dtype=np.float32) + 0.5
    want = cupy.ascontiguousarray(x.T)
    out, twin = cupy.empty_like(x), cupy.empty_like(x)
    nbytes = x.nbytes
    start, end = cupy.cuda.Event(), cupy.cuda.Event()

    def timed(fn) -> float:
        start.record()
        fn()
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end) / 1e3

    def memcpy():
        twin.data.copy_from_device_async(x.data, nbytes)

    runs = {}
    for tile, minb, pipe, tpb in VARIANTS:
        spec = KernelSpec(K.SRC, f"transpose_vec<float, float4, {tile}, {minb}, {str(pipe).lower()}>")
        shmem = tile * tile * 4 if tile * tile * 4 > 48 * 1024 else 0
        if shmem:
            runtime.set_max_dynamic_shared(runtime.get_kernel(spec), shmem)
        grid = (math.ceil(n / tile), min(math.ceil(math.ceil(n / tile) / tpb), K.MAX_GRID_Y))

        def run(spec=spec, grid=grid, shmem=shmem):
            runtime.launch(spec, grid, K.VEC_THREADS, out, x, np.int32(n), np.int32(n), shmem=shmem)
        out.fill(np.nan)
        run()
        ok = bool(cupy.array_equal(out, want))
        runs[f"tile={tile} minb={minb} pipe={int(pipe)} tiles/block={tpb}"] = dict(fn=run, ok=ok)
    runs["library transpose (as called)"] = dict(fn=lambda: lib_transpose(x), ok=bool(cupy.array_equal(lib_transpose(x), want)))
    rows = []
    for name, r in runs.items():
        r["fn"](); memcpy()  # warm
        mine, base = [], []
        for _ in range(SAMPLES):
            mine.append(timed(r["fn"]))
            base.append(timed(memcpy))
        m, b = statistics.median(mine), statistics.median(base)
        spread = (max(mine) - min(mine)) / m
        rows.append(dict(variant=name, ok=r["ok"], ms=m * 1e3, memcpy_ms=b * 1e3, of_memcpy=b / m, spread=spread,
                         samples_s=mine, memcpy_samples_s=base))
        print(f"{name:40s} ok={r['ok']!s:5s} {m * 1e3:8.3f} ms  memcpy {b * 1e3:8.3f} ms  {b / m * 100:6.1f}% of "
              f"memcpy  spread {spread * 100:4.1f}%", flush=True)
    # host time per call, tiny input, back to back (the GPU work is far shorter than the host's)
    tiny = cupy.ones(16, np.float32)
    host = {}
    paths = {"gpumemlab.copy": lambda: lib_copy(tiny), "x.copy()": lambda: tiny.copy(),
             "empty + cudaMemcpyAsync": lambda: _memcpy_copy(cupy, tiny)}
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
    # GPU time of the copy kernel (gpumemlab.copy's launch) vs cudaMemcpyAsync D2D, same buffers, interleaved
    sizes = {}
    del out, twin, want
    big = cupy.empty(nbytes // 4, np.float32)
    for k in range(12, 31, 2):
        m = (1 << k) // 4
        src, dst = x.reshape(-1)[:m], big[:m]
        kern = lambda src=src, dst=dst: lib_copy(src, out=dst)  # noqa: E731
        mc = lambda src=src, dst=dst: dst.data.copy_from_device_async(src.data, src.nbytes)  # noqa: E731
        kern(); mc()
        a_s, b_s = [], []
        for _ in range(SAMPLES):
            a_s.append(timed(kern))
            b_s.append(timed(mc))
        a_m, b_m = statistics.median(a_s), statistics.median(b_s)
        sizes[1 << k] = dict(kernel_s=a_s, memcpy_s=b_s)
        print(f"copy {1 << k:>11d} B  kernel {a_m * 1e6:9.2f} us  memcpy {b_m * 1e6:9.2f} us  memcpy/kernel time "
              f"{b_m / a_m:5.2f}", flush=True)
    if path:
        json.dump(dict(device=runtime.device_info()["name"], n=n, rows=rows, host_us=host, copy_sizes=sizes), open(path, "w"), indent=1)
    return 0 if all(r["ok"] for r in rows) else 1


def _memcpy_copy(cupy, x):
    y = cupy.empty(x.shape, x.dtype)
    y.data.copy_from_device_async(x.data, x.nbytes)
    return y


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
