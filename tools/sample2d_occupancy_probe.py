#!/usr/bin/env python3
"""Scattered gathers and resident threads: sample2d(exact=True) on 2^24 uniformly random points (8192^2 float32)
with its blocks per SM capped, and with other block sizes, against map_coordinates(order=1).

    PYTHONPATH=src python3 tools/sample2d_occupancy_probe.py [--rounds 21]

The exact path's flat kernel with every warp working is launched as sample2d launches it; a cap of B blocks per SM is
a dynamic shared memory request that leaves room for B blocks only (the driver's occupancy answer is printed), and a
block size other than 256 replaces kernels.texture.BLOCK for the call. The thinned variants are sample2d's plans with
`thin` set (the default: 2): a block whose first 32 points are scattered works with 1/thin of its warps. A DRAM-bound gather needs enough requests in flight;
past that point more of them only queue. Each variant is checked against map_coordinates (max abs error) and
timed interleaved with it (sample2d_probe's loop). Writes $OUT/sample2d_occupancy_probe.json.
"""

from __future__ import annotations

import json
from dataclasses import replace
import os
import sys
from pathlib import Path

import numpy as np

from sample2d_probe import gather_parser, interleaved, paired_stats, spin_kernel

# caps: shared-memory requests that cap residency (and take L1); l1caps: the same with L1 kept; samples: L1-kept caps
# on plans with 2 and 4 samples per thread; thin: Plan.thin; forced: thinned blocks without the look at the points;
# blocks: other block sizes
# resident: a grid of resident blocks taking tiles from a counter, CAP per SM working on scattered points (0: all)
GROUPS = ("caps", "l1caps", "samples", "thin", "forced", "resident", "blocks")


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
    one_shot = replace(S.EXACT_FLAT_PLAN, thin=None)  # every warp working: what the caps are applied to

    info = runtime.device_info()
    side = args.side
    img = device_random_nonzero(side * side, np.float32, 0).reshape(side, side)
    pts = (smooth_warp(cupy, side, side).reshape(-1, 2) if args.warp
           else uniform_points(cupy, side, side, args.random, 0))
    pts_t = cupy.ascontiguousarray(pts.T)
    ref = map_coordinates(img, pts_t, order=1, mode="nearest")
    mc_out, out = cupy.empty_like(ref), cupy.empty_like(ref)
    base = lambda: map_coordinates(img, pts_t, output=mc_out, order=1, mode="nearest")  # noqa: E731
    launch, block0 = runtime.launch, K.BLOCK
    ln = S.launch_for(img, pts, out, exact=True, mode="linear", address="clamp", plan=one_shot)
    kernel = runtime.get_kernel(ln.spec)
    smem_sm = int(info.get("shared_per_sm_bytes") or 228 * 1024)

    def variant(block: int, shmem: int, kern=None, plan=one_shot):
        def call():
            K.BLOCK = block
            S.plan_launch.cache_clear()
            runtime.launch = lambda spec, *a, **kw: launch(kern or spec, *a, **{**kw, "shmem": shmem})
            try:
                S.sample2d(img, pts, exact=True, out=out, plan=plan)
            finally:
                runtime.launch, K.BLOCK = launch, block0
                S.plan_launch.cache_clear()
        return call

    from cuda.bindings import driver
    carveout = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT

    def l1_kept(spec):
        """A second instance of ``spec`` (its own compiled function) whose shared memory carveout is set to 8% (the
        smallest the driver rounds it to), and the smallest shared request that caps it at each block count."""
        carved_spec = replace(spec, defines=tuple(spec.defines) + (("GML_CARVED_COPY", "1"),))  # its own module
        carved = runtime.get_kernel(carved_spec)
        runtime._check(driver.cuFuncSetAttribute(runtime._func_handle(carved), carveout, 8), "cuFuncSetAttribute")
        first = {}
        for shmem in range(256, 48 * 1024, 256):
            first.setdefault(runtime.max_active_blocks(carved, block0, shmem), shmem)
        return carved_spec, first

    calls = {"every warp": variant(block0, 0)}
    meta = {"every warp": dict(block=block0, shmem=0, blocks_per_sm=runtime.max_active_blocks(kernel, block0, 0))}
    for cap in (6, 4, 3, 2) if "caps" in args.groups else ():
        shmem = smem_sm // cap - 2048
        if shmem > 48 * 1024:
            runtime.set_max_dynamic_shared(kernel, shmem)
        name = f"cap {cap} blocks/SM"
        calls[name] = variant(block0, shmem)
        meta[name] = dict(block=block0, shmem=shmem, blocks_per_sm=runtime.max_active_blocks(kernel, block0, shmem))
    plans = ([(one_shot, (7, 6, 5, 4, 3, 2))] if "l1caps" in args.groups else []) + (
        [(replace(one_shot, samples=k), (4, 3)) for k in (2, 4)] if "samples" in args.groups else [])
    for plan, caps in plans:
        carved_spec, first = l1_kept(S.launch_for(img, pts, out, exact=True, mode="linear", address="clamp",
                                                  plan=plan).spec)
        for cap in (c for c in caps if c in first):
            name = f"L1 kept, cap {cap} blocks/SM" + (f", {plan.samples} samples" if plan.samples > 1 else "")
            calls[name] = variant(block0, first[cap], carved_spec, plan)
            meta[name] = dict(block=block0, shmem=first[cap], blocks_per_sm=cap, samples=plan.samples)
    thins = [(t, False) for t in (2, 4, 8) if "thin" in args.groups] + (
        [(2, True)] if "forced" in args.groups else [])
    for thin, forced in thins:
        plan = replace(one_shot, thin=thin)
        spec = S.launch_for(img, pts, out, exact=True, mode="linear", address="clamp", plan=plan).spec
        if forced:  # every block thinned, no look at its points (texture.cu's SAMPLE_THIN_ALWAYS)
            spec = replace(spec, defines=tuple(spec.defines) + (("SAMPLE_THIN_ALWAYS", "1"),))
        name = f"thin {thin}" + (" always" if forced else "")
        calls[name] = variant(block0, 0, spec if forced else None, plan)
        meta[name] = dict(block=block0, shmem=0, blocks_per_sm=runtime.max_active_blocks(spec, block0, 0),
                          kernel=spec.name)
    counters = cupy.zeros(2 + 1024, np.uint32)
    for cap in (0, 5, 4, 3) if "resident" in args.groups else ():
        spec = K.sample_exact("clamp", True, "ldg", True, 1, 1, cap=cap)
        per_sm = runtime.max_active_blocks(spec, block0, 0)
        grid = min(ln.grid, info["sm_count"] * per_sm)
        h, w = img.shape
        tail = (np.int32(ln.width), np.int32(ln.tiles), np.uint32(ln.grid), counters, np.uint32(counters.size - 2),
                np.float32(1), np.float32(0), np.float32(1), np.float32(0))
        name = f"resident, cap {cap}"
        calls[name] = (lambda spec=spec, grid=grid, tail=tail: runtime.launch(
            spec, grid, block0, out, img, np.int64(img.strides[0] // 4), np.uint64(0), np.int32(h), np.int32(w), pts,
            np.int64(out.size), *tail))
        meta[name] = dict(block=block0, shmem=0, blocks_per_sm=per_sm, grid=grid, kernel=spec.name)
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
    if int(counters.sum()):
        print(f"!!! the resident kernels left their counters at {counters.get()[:4]}...", flush=True)
    own, paired = interleaved(cupy, calls, base, args.rounds, spin)
    if int(counters.sum()):
        print(f"!!! the resident kernels left their counters at {counters.get()[:4]}...", flush=True)
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
