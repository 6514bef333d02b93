#!/usr/bin/env python3
"""Does the L2 fetch granularity (``cudaLimitMaxL2FetchGranularity``: 32, 64 or 128 bytes fetched from DRAM per
miss) change scattered gathers? gpumemlab.sample2d (exact and texture) against map_coordinates(order=1).

    PYTHONPATH=src python3 tools/l2_fetch_probe.py [--rounds 21]

The limit is a per-context hint. For each value (the one found first, then 32, 64, 128) every call below runs
under it, interleaved round by round with map_coordinates (sample2d_probe's loop: a GPU spin ahead of each
round, CUDA events around each call). A last set, "scoped", sets 32 around sample2d's call only (set, call,
restore) while map_coordinates runs under the value found: a library could do this, if the hint holds for the
work launched while it is set. The value read back after each set is recorded (a device may ignore the hint).
Workloads: 2^24 uniformly random points and the smooth warp, over an 8192^2 float32 image.

Writes $OUT/l2_fetch_probe.json.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from sample2d_probe import gather_parser, interleaved, paired_stats, spin_kernel


def limit_calls():
    from cuda.bindings import driver

    from gpumemlab.gpu import runtime
    from gpumemlab.gpu.runtime import _check

    runtime.ensure_device()
    lim = driver.CUlimit.CU_LIMIT_MAX_L2_FETCH_GRANULARITY
    get = lambda: int(_check(driver.cuCtxGetLimit(lim), "cuCtxGetLimit"))  # noqa: E731
    put = lambda v: _check(driver.cuCtxSetLimit(lim, int(v)), "cuCtxSetLimit")  # noqa: E731
    return get, put


def main(argv=None) -> int:
    args = gather_parser(__doc__).parse_args(argv)
    import cupy
    from cupyx.scipy.ndimage import map_coordinates

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments.texture import smooth_warp, uniform_points
    from gpumemlab.gpu import runtime
    from gpumemlab.ops.sample import sample2d

    get, put = limit_calls()
    found = get()
    t0 = time.perf_counter()
    for _ in range(1000):
        put(found)
    set_us = (time.perf_counter() - t0) * 1e3
    info = runtime.device_info()
    result = dict(device=info.get("name"), found=found, set_call_us=set_us, rounds=args.rounds, runs=[])
    print(f"# {info.get('name')}: fetch granularity found {found} B; one cuCtxSetLimit call {set_us:.2f} us",
          flush=True)
    side = args.side
    img = device_random_nonzero(side * side, np.float32, 0).reshape(side, side)
    spin = spin_kernel(cupy)
    workloads = (("uniform random", uniform_points(cupy, side, side, args.random, 0)),
                 ("smooth warp", smooth_warp(cupy, side, side).reshape(-1, 2)))
    for wname, pts in workloads:
        pts_t = cupy.ascontiguousarray(pts.T)
        mc_out = cupy.empty(pts.shape[0], np.float32)
        ref = map_coordinates(img, pts_t, order=1, mode="nearest")
        base = lambda: map_coordinates(img, pts_t, output=mc_out, order=1, mode="nearest")  # noqa: E731
        ex_out, tx_out = cupy.empty_like(mc_out), cupy.empty_like(mc_out)

        def scoped():
            put(32)
            try:
                sample2d(img, pts, exact=True, out=ex_out)
            finally:
                put(found)

        calls = {"exact": lambda: sample2d(img, pts, exact=True, out=ex_out),
                 "texture": lambda: sample2d(img, pts, out=tx_out)}
        for g in (found, 32, 64, 128, "scoped"):
            if g == "scoped":
                put(found)
                run_calls = {"exact scoped 32": scoped}
            else:
                put(g)
                run_calls = calls
            got = get()
            ex_out.fill(np.nan)
            for fn in run_calls.values():
                fn()
            err = float(cupy.abs(ex_out - ref).max())
            own, paired = interleaved(cupy, run_calls, base, args.rounds, spin)
            for name in run_calls:
                rec = dict(workload=wname, granularity=g, read_back=got, variant=name,
                           **paired_stats(own[name], paired[name]), exact_max_abs=err)
                a, b = rec["ms"], rec["map_coordinates_ms"]
                result["runs"].append(rec)
                print(f"{wname:15s} g={str(g):7s} (reads {got:3d}) {name:16s} {a['median_ms']:7.3f} ms "
                      f"(spread {a['spread']:.1%})  map_coordinates {b['median_ms']:7.3f} ms (spread {b['spread']:.1%})"
                      f"  x{rec['speedup']:.3f} (paired {rec['paired_ratio']:.3f})  exact max_abs {err:.2e}",
                      flush=True)
        put(found)
    out = Path(os.environ.get("OUT", ".")) / "l2_fetch_probe.json"
    out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
