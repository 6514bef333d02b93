#!/usr/bin/env python3
"""Scattered gathers and resident threads: sample2d(exact=True) on 2^24 uniformly random points (8192^2 float32)
with its blocks per SM capped, and with other block sizes, against map_coordinates(order=1).

    PYTHONPATH=src python3 tools/sample2d_occupancy_probe.py [--rounds 21]

The exact path's flat kernel is launched as sample2d launches it; a cap of B blocks per SM is a dynamic shared
memory request that leaves room for B blocks only (the driver's occupancy answer is printed), and a block size
other than 256 replaces kernels.texture.BLOCK for the call. Caps made inside the kernel (thinned blocks, a resident
grid with idle blocks) were measured and reverted: docs/notes/sample2d.md gives the commits. A DRAM-bound gather
needs enough requests in flight; past that point more of them only queue. Each variant is checked against map_coordinates (max abs error) and
timed interleaved with it (sample2d_probe's loop). Writes $OUT/sample2d_occupancy_probe.json.
"""

from __future__ import annotations

import json
from dataclasses import replace
import os
import sys
from pathlib import Path

import numpy as np

from sample2d_probe import gather_parser, interleaved, launched_as, paired_stats, spin_kernel

# caps: shared-memory requests that cap residency (and take L1); l1caps: the same with L1 kept; samples: L1-kept caps
# on plans with 2 and 4 samples per thread; blocks: other block sizes
GROUPS = ("caps", "l1caps", "samples", "blocks")


def main(argv=None) -> int:
    ap = gather_parser(__doc__)
    ap.add_argument("--warp", action="store_true", help="the smooth warp's points, flattened, instead of random ones")
    ap.add_argument("--groups", nargs="+", default=list(GROUPS), choices=GROUPS, help="which variants (default: all)")
    args = ap.parse_args(argv)
    import cupy
    from cupyx.scipy.ndimage import map_coordinates

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments.texture import smooth_warp, uniform_points
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import texture as K
    from gpumemlab.ops import sample as S
    flat = S.EXACT_FLAT_PLAN  # the default plan for flat points, which the caps are applied to

    info = runtime.device_info()
    side = args.side
    img = device_random_nonzero(side * side, np.float32, 0).reshape(side, side)
    pts = (smooth_warp(cupy, side, side).reshape(-1, 2) if args.warp
           else uniform_points(cupy, side, side, args.random, 0))
    pts_t = cupy.ascontiguousarray(pts.T)
    ref = map_coordinates(img, pts_t, order=1, mode="nearest")
    mc_out, out = cupy.empty_like(ref), cupy.empty_like(ref)
    base = lambda: map_coordinates(img, pts_t, output=mc_out, order=1, mode="nearest")  # noqa: E731
    block0 = K.BLOCK
    ln = S.launch_for(img, pts, out, exact=True, mode="linear", address="clamp", plan=flat)
    kernel = runtime.get_kernel(ln.spec)
    smem_sm = int(info.get("shared_per_sm_bytes") or 228 * 1024)

    def variant(block: int, shmem: int, kern=None, plan=flat):
        sample = launched_as(kern, shmem, lambda: S.sample2d(img, pts, exact=True, out=out, plan=plan))

        def call():
            K.BLOCK = block
            S.plan_launch.cache_clear()
            try:
                sample()
            finally:
                K.BLOCK = block0
                S.plan_launch.cache_clear()
        return call

    calls = {"default": variant(block0, 0)}
    meta = {"default": dict(block=block0, shmem=0, blocks_per_sm=runtime.max_active_blocks(kernel, block0, 0))}
    for cap in (6, 4, 3, 2) if "caps" in args.groups else ():
        shmem = smem_sm // cap - 2048
        if shmem > 48 * 1024:
            runtime.set_max_dynamic_shared(kernel, shmem)
        name = f"cap {cap} blocks/SM"
        calls[name] = variant(block0, shmem)
        meta[name] = dict(block=block0, shmem=shmem, blocks_per_sm=runtime.max_active_blocks(kernel, block0, shmem))
    plans = ([(flat, (7, 6, 5, 4, 3, 2))] if "l1caps" in args.groups else []) + (
        [(replace(flat, samples=k), (4, 3)) for k in (2, 4)] if "samples" in args.groups else [])
    for plan, caps in plans:  # runtime.l1_kept_cap: a copy at the smallest carveout, the smallest capping request
        spec = S.launch_for(img, pts, out, exact=True, mode="linear", address="clamp", plan=plan).spec
        for cap, capped in ((c, runtime.l1_kept_cap(spec, block0, c)) for c in caps):
            if capped is None:
                continue
            name = f"L1 kept, cap {cap} blocks/SM" + (f", {plan.samples} samples" if plan.samples > 1 else "")
            calls[name] = variant(block0, capped[1], capped[0], plan)
            meta[name] = dict(block=block0, shmem=capped[1], blocks_per_sm=cap, samples=plan.samples)
    for block in (128, 512, 1024) if "blocks" in args.groups else ():
        calls[f"block {block}"] = variant(block, 0)
        meta[f"block {block}"] = dict(block=block, shmem=0, blocks_per_sm=runtime.max_active_blocks(kernel, block, 0))
    spin = spin_kernel(cupy)
    result = dict(device=info.get("name"), kernel=ln.spec.name, rounds=args.rounds, variants=[])
    print(f"# {info.get('name')}: {ln.spec.name}, {pts.shape[0]} {'smooth-warp' if args.warp else 'random'} points "
          f"over {side}^2", flush=True)
    for name, fn in calls.items():
        out.fill(np.nan)
        fn()
        meta[name]["max_abs"] = float(cupy.nan_to_num(cupy.abs(out - ref), nan=np.inf).max())
    own, paired = interleaved(cupy, calls, base, args.rounds, spin)
    for name in calls:
        rec = dict(variant=name, **meta[name], **paired_stats(own[name], paired[name]))
        a, b, ratio = rec["ms"], rec["map_coordinates_ms"], rec["paired_ratio"]
        result["variants"].append(rec)
        print(f"{name:18s} block {meta[name]['block']:4d} shmem {meta[name]['shmem']:6d} blocks/SM "
              f"{meta[name]['blocks_per_sm']:2d}  {a['median_ms']:.3f} ms (spread {a['spread']:.1%})  map_coordinates "
              f"{b['median_ms']:.3f} ms  x{rec['speedup']:.3f} (paired {ratio:.3f})  max_abs {meta[name]['max_abs']:.1e}",
              flush=True)
    (Path(os.environ.get("OUT", ".")) / f"sample2d_occupancy_probe{'_warp' if args.warp else ''}.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
