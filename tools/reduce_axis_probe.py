#!/usr/bin/env python3
"""Column sums of a few long rows (sum along axis 0 of (rows, 2^k) float32): sum_cols_thread launched alone, and
gpumemlab.sum as users call it, against torch.sum (or cupy.sum without PyTorch).

    PYTHONPATH=src python3 tools/reduce_axis_probe.py [--rounds 31]

Each variant is checked against a float64 sum first (relative error <= 1e-5 of the sum of magnitudes), then timed
with CUDA events around each call, interleaved with the baseline in the same loop (sample2d_probe's loop). GB/s
counts the input read once and the output written once. Writes $OUT/reduce_axis_probe.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from sample2d_probe import burst_us, interleaved, paired_stats, spin_kernel

SHAPES = ((3, 1 << 24), (8, 1 << 23), (2, 1 << 25), (32, 1 << 21))

# --raw: hand-written variants of the float4 column sum (one o), compiled by CuPy: cache hints on the loads and the
# stores, and a grid of resident blocks taking column vectors in turn, U at a time
RAW = r"""
template <int HINT, int U>
__device__ __forceinline__ void col_sum(float* __restrict__ out, const float* __restrict__ in, long long rows,
                                        long long vectors, long long g0, long long step) {
    for (long long g = g0; g < vectors; g += step * U) {
        float4 acc[U];
        float4 v[U][4];
#pragma unroll
        for (int u = 0; u < U; ++u) acc[u] = make_float4(0, 0, 0, 0);
        for (long long j = 0; j < rows; j += 4) {
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    const long long gg = g + u * step;
                    const float4* p = reinterpret_cast<const float4*>(in + (j + r) * vectors * 4) + gg;
                    v[u][r] = (j + r < rows && gg < vectors) ? ((HINT & 1) ? __ldcs(p) : __ldg(p)) : make_float4(0, 0, 0, 0);
                }
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    acc[u].x += v[u][r].x; acc[u].y += v[u][r].y; acc[u].z += v[u][r].z; acc[u].w += v[u][r].w;
                }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long gg = g + u * step;
            if (gg < vectors) {
                if (HINT & 2) __stcs(reinterpret_cast<float4*>(out) + gg, acc[u]);
                else reinterpret_cast<float4*>(out)[gg] = acc[u];
            }
        }
    }
}
template <int HINT, int U>
__global__ void col_sum_k(float* out, const float* in, long long rows, long long vectors) {
    col_sum<HINT, U>(out, in, rows, vectors, (long long)blockIdx.x * blockDim.x + threadIdx.x,
                     (long long)gridDim.x * blockDim.x);
}
"""
# HINT: 1 evict-first loads (ld.global.cs), 2 streaming stores (st.global.cs), 3 both
RAW_VARIANTS = {"raw one-shot": (0, 1, False), "raw one-shot cs": (3, 1, False), "raw ld.cs": (1, 1, False),
                "raw st.cs": (2, 1, False), "raw resident U1": (0, 1, True), "raw resident U2": (0, 2, True),
                "raw resident U2 cs": (3, 2, True), "raw resident U4": (0, 4, True)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--pads", type=int, nargs="*", default=[], help="also time rows this many floats apart (extra)")
    ap.add_argument("--raw", action="store_true", help="also the hand-written variants (RAW)")
    ap.add_argument("--waves", type=int, nargs="*", default=[],
                    help="instead: gpumemlab.sum on WAVE_CASES (split sums), reduce_axis.WAVES set to each")
    ap.add_argument("--small", action="store_true",
                    help="instead: host microseconds per call on small inputs (SMALL_CASES), bursts of 200 calls")
    ap.add_argument("--shapes", default="", help="rows x columns, comma-separated (default: the four built in)")
    ap.add_argument("--cases", default="", help="--waves on these instead of WAVE_CASES: SHAPE:AXIS, comma-separated, "
                    "a shape as AxBxC (e.g. 512x512x256:1)")
    args = ap.parse_args(argv)
    import cupy

    import gpumemlab
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import reduce as K

    try:
        import torch
    except ImportError:
        torch = None
    info = runtime.device_info()
    spin = spin_kernel(cupy)
    result = dict(device=info.get("name"), rounds=args.rounds, baseline="torch.sum" if torch else "cupy.sum",
                  shapes=[])
    print(f"# {info.get('name')}: column sums, {args.rounds} interleaved rounds against {result['baseline']}",
          flush=True)
    if args.waves:
        return waves(cupy, gpumemlab, torch, args, spin, result)
    if args.small:
        return small(cupy, gpumemlab, torch, result)
    shapes = [tuple(int(v) for v in t.split("x")) for t in args.shapes.split(",") if t] or SHAPES
    for rows, cols in shapes:
        x = cupy.random.default_rng(1).random((rows, cols), dtype=np.float32) + np.float32(0.5)
        want = x.astype(np.float64).sum(axis=0)
        tol = 1e-5 * cupy.abs(x).astype(np.float64).sum(axis=0)
        out = cupy.empty(cols, np.float32)
        xt = torch.as_tensor(x, device="cuda") if torch else None
        base = (lambda: xt.sum(dim=0)) if torch else (lambda: cupy.sum(x, axis=0))
        spec = K.cols_thread_spec("float", "float", True)
        grid = -(-(cols // 4) // K.COL_THREADS)
        calls = {"sum_cols_thread": lambda spec=spec, grid=grid: runtime.launch(
            spec, grid, K.COL_THREADS, out, x, np.int64(1), np.int64(rows), np.int64(cols), np.float32(1))}
        calls["gpumemlab.sum"] = lambda: gpumemlab.sum(x, axis=0, out=out)
        if args.raw:
            mod = cupy.RawModule(code=RAW, options=("-std=c++17",), name_expressions=[
                f"col_sum_k<{h}, {u}>" for h, u, _ in RAW_VARIANTS.values()])
            resident = info["sm_count"] * 8
            for name, (h, u, res) in RAW_VARIANTS.items():
                kern = mod.get_function(f"col_sum_k<{h}, {u}>")
                vectors = cols // 4
                grid = resident if res else -(-vectors // 256)
                calls[name] = (lambda kern=kern, grid=grid, vectors=vectors: kern(
                    (grid,), (256,), (out, x, np.int64(rows), np.int64(vectors))))
        if args.pads:  # rows padded apart (the same kernel over a wider array; pad columns summed too, not checked)
            for pad in args.pads:
                xp = cupy.zeros((rows, cols + pad), np.float32)
                xp[:, :cols] = x
                outp = cupy.empty(cols + pad, np.float32)
                grid = -(-((cols + pad) // 4) // K.COL_THREADS)
                calls[f"rows {pad} apart"] = (lambda grid=grid, xp=xp, outp=outp, pad=pad: runtime.launch(
                    spec, grid, K.COL_THREADS, outp, xp, np.int64(1), np.int64(rows), np.int64(cols + pad),
                    np.float32(1)))
        checks = {}
        for name, fn in calls.items():
            out.fill(np.nan)
            fn()
            checks[name] = bool((cupy.abs(out - want) <= tol).all()) if not name.startswith("rows ") else True
        own, paired = interleaved(cupy, calls, base, args.rounds, spin)
        gbytes = (rows + 1) * cols * 4 / 1e9
        srec = dict(shape=[rows, cols], variants=[])
        for name in calls:
            rec = dict(variant=name, ok=checks[name], **paired_stats(own[name], paired[name], "baseline"))
            rec["gbps"] = gbytes / (rec["ms"]["median_ms"] / 1e3)
            srec["variants"].append(rec)
            print(f"{rows:3d}x{cols:<9d} {name:16s} {'ok ' if checks[name] else 'BAD'} {rec['ms']['median_ms']*1e3:8.1f} us"
                  f"  {rec['gbps']:6.0f} GB/s  baseline {rec['baseline_ms']['median_ms']*1e3:8.1f} us"
                  f"  x{rec['speedup']:.3f} (paired {rec['paired_ratio']:.3f}, spread {rec['ms']['spread']:.1%})",
                  flush=True)
        result["shapes"].append(srec)
    (Path(os.environ.get("OUT", ".")) / "reduce_axis_probe.json").write_text(json.dumps(result, indent=1))
    return 0


WAVE_CASES = (((512, 512, 256), 1), ((256, 512, 512), (0, 2)), ((4096, 64, 256), 0), ((16384, 16384), 0),
              ((3, 1 << 24), 1), ((2, 1 << 25), 1), ((8, 1 << 23), 1), ((64, 1 << 20), 1))  # ... and row sums


def waves(cupy, gpumemlab, torch, args, spin, result) -> int:
    """sum_cols' and sum_rows' split count: the same call with reduce_axis.WAVES (waves of resident blocks the splits aim at) set
    to each value, interleaved with the baseline; the plans' caches are cleared between values."""
    from gpumemlab.ops import reduce_axis as RA

    result["waves"] = []
    cases = [(tuple(int(v) for v in c.split(":")[0].split("x")), int(c.split(":")[1]))
             for c in args.cases.split(",") if c] or WAVE_CASES
    for shape, axis in cases:
        x = cupy.random.default_rng(2).random(shape, dtype=np.float32) + np.float32(0.5)
        xt = torch.as_tensor(x, device="cuda") if torch else None
        base = (lambda: xt.sum(dim=axis)) if torch else (lambda: cupy.sum(x, axis=axis))
        want = x.astype(np.float64).sum(axis=axis)
        calls, plans = {}, {}
        for w in args.waves:
            def call(w=w):
                RA.WAVES = w
                RA._call_plan.cache_clear()
                RA._prepared.cache_clear()
                return gpumemlab.sum(x, axis=axis)
            got = call()
            plans[f"WAVES={w}"] = [(p.kind, p.splits) for p in RA._prepared(
                x.shape, axis, x.dtype, None, False, False, True).passes]
            assert bool((cupy.abs(got - want) <= 1e-5 * want).all()), (shape, axis, w)
            prep = RA._prepared(x.shape, axis, x.dtype, None, False, False, True)
            out = cupy.empty(prep.shape, np.float32)
            calls[f"WAVES={w}"] = (lambda prep=prep, out=out: prep.run(x, out))  # the plan made with this value
        own, paired = interleaved(cupy, calls, base, args.rounds, spin)
        for name in calls:
            rec = dict(shape=list(shape), axis=axis, variant=name, plan=plans[name],
                       **paired_stats(own[name], paired[name], "baseline"))
            result["waves"].append(rec)
            print(f"{str(shape):18s} axis {str(axis):7s} {name:9s} {plans[name]}  {rec['ms']['median_ms']*1e3:7.1f} us"
                  f"  baseline {rec['baseline_ms']['median_ms']*1e3:7.1f} us  x{rec['speedup']:.3f}"
                  f" (paired {rec['paired_ratio']:.3f}, spread {rec['ms']['spread']:.1%})", flush=True)
    (Path(os.environ.get("OUT", ".")) / "reduce_axis_probe.json").write_text(json.dumps(result, indent=1))
    return 0


# small inputs of each path: narrow (2^16 x 3), thread-sized columns at small scale (3 x 4096: sum_cols), rows
SMALL_CASES = (((1 << 16, 3), 0), ((3, 4096), 0), ((4096, 3), 1), ((64, 64), 0))


def small(cupy, gpumemlab, torch, result) -> int:
    """Host time per call as users call it (sample2d_probe.burst_us: bursts of 200 calls back to back, the
    library_overhead experiment's measure), the libraries alternating over 3 repeats; the median repeat is printed."""
    calls = 200
    result["small"] = []
    for shape, axis in SMALL_CASES:
        x = cupy.random.default_rng(4).random(shape, dtype=np.float32) + np.float32(0.5)
        fns = {"gpumemlab.sum": lambda: gpumemlab.sum(x, axis=axis), "cupy.sum": lambda: cupy.sum(x, axis=axis)}
        if torch:
            xt = torch.as_tensor(x, device="cuda")
            fns["torch.sum"] = lambda: xt.sum(dim=axis)
        want = x.astype(np.float64).sum(axis=axis)
        assert bool((cupy.abs(fns["gpumemlab.sum"]() - want) <= 1e-5 * want).all()), (shape, axis)
        us, med = burst_us(cupy, fns, calls)
        result["small"].append(dict(shape=list(shape), axis=axis, calls=calls, us_per_call=us))
        print(f"{str(shape):12s} axis {axis}: " + ", ".join(f"{k} {v:.1f} us" for k, v in med.items()), flush=True)
    (Path(os.environ.get("OUT", ".")) / "reduce_axis_probe.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
