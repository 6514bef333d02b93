#!/usr/bin/env python3
"""Column sums of a few long rows (sum along axis 0 of (rows, 2^k) float32): sum_cols_thread with 1, 2 or 4 column
vectors per thread, and gpumemlab.sum as users call it, against torch.sum (or cupy.sum without PyTorch).

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

from sample2d_probe import interleaved, paired_stats, spin_kernel

SHAPES = ((3, 1 << 24), (8, 1 << 23), (2, 1 << 25), (32, 1 << 21))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--pads", type=int, nargs="*", default=[], help="also time rows this many floats apart (extra)")
    ap.add_argument("--shapes", default="", help="rows x columns, comma-separated (default: the four built in)")
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
    shapes = [tuple(int(v) for v in t.split("x")) for t in args.shapes.split(",") if t] or SHAPES
    for rows, cols in shapes:
        x = cupy.random.default_rng(1).random((rows, cols), dtype=np.float32) + np.float32(0.5)
        want = x.astype(np.float64).sum(axis=0)
        tol = 1e-5 * cupy.abs(x).astype(np.float64).sum(axis=0)
        out = cupy.empty(cols, np.float32)
        xt = torch.as_tensor(x, device="cuda") if torch else None
        base = (lambda: xt.sum(dim=0)) if torch else (lambda: cupy.sum(x, axis=0))
        calls = {}
        for q in (1, 2, 4):
            spec = K.cols_thread_spec("float", "float", True, q)
            grid = -(-(cols // 4) // (K.COL_THREADS * q))
            calls[f"thread cols={q}"] = (lambda spec=spec, grid=grid: runtime.launch(
                spec, grid, K.COL_THREADS, out, x, np.int64(1), np.int64(rows), np.int64(cols), np.float32(1)))
        calls["gpumemlab.sum"] = lambda: gpumemlab.sum(x, axis=0, out=out)
        if args.pads:  # rows padded apart (the same kernel over a wider array; pad columns summed too, not checked)
            for pad in args.pads:
                xp = cupy.zeros((rows, cols + pad), np.float32)
                xp[:, :cols] = x
                outp = cupy.empty(cols + pad, np.float32)
                spec = K.cols_thread_spec("float", "float", True, 1)
                grid = -(-((cols + pad) // 4) // K.COL_THREADS)
                calls[f"rows {pad} apart"] = (lambda spec=spec, grid=grid, xp=xp, outp=outp, pad=pad: runtime.launch(
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
            rec = dict(variant=name, ok=checks[name], **paired_stats(own[name], paired[name]))
            rec["baseline_ms"] = rec.pop("map_coordinates_ms")  # paired_stats names the baseline map_coordinates
            rec["gbps"] = gbytes / (rec["ms"]["median_ms"] / 1e3)
            srec["variants"].append(rec)
            print(f"{rows:3d}x{cols:<9d} {name:16s} {'ok ' if checks[name] else 'BAD'} {rec['ms']['median_ms']*1e3:8.1f} us"
                  f"  {rec['gbps']:6.0f} GB/s  baseline {rec['baseline_ms']['median_ms']*1e3:8.1f} us"
                  f"  x{rec['speedup']:.3f} (paired {rec['paired_ratio']:.3f}, spread {rec['ms']['spread']:.1%})",
                  flush=True)
        result["shapes"].append(srec)
    (Path(os.environ.get("OUT", ".")) / "reduce_axis_probe.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
