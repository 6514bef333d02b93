#!/usr/bin/env python3
"""sample2d(exact=True) as users call it, after a first call has observed the points, against the same call with the
default plan passed explicitly (no observation: the layout every call had before) and map_coordinates(order=1).

    PYTHONPATH=src python3 tools/sample2d_learned_probe.py [--rounds 31]

Workloads over a side^2 float32 image: 2^24 uniformly random points, flat (n, 2) and shaped (rows, cols, 2); the
smooth warp's side^2 points, image-shaped and flattened. Variants: "fixed" (plan=default_plan(...): what a first call
runs) and "learned" (plan=None); with --caps, the fixed plan capped at B blocks per SM. Each is checked against map_coordinates (max abs error) and "learned" against
"fixed" bit for bit, then timed interleaved with map_coordinates (sample2d_probe's loop). Printed per workload: the
observed counts, the kernel the learned call launches (and its dynamic shared request), medians, paired ratios.
Writes $OUT/sample2d_learned_probe.json.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from sample2d_probe import gather_parser, interleaved, paired_stats, spin_kernel


def main(argv=None) -> int:
    ap = gather_parser(__doc__)
    ap.add_argument("--caps", type=int, nargs="*", default=[], help="also the fixed plan capped at these blocks per SM "
                    "(runtime.l1_kept_cap): residency that register counts of other builds would give")
    ap.add_argument("--texture", nargs="*", default=[], metavar="SAMPLES:CAP",
                    help="instead: the texture path (exact=False) on the random points, its default against flat plans "
                         "of SAMPLES per thread capped at CAP blocks per SM (0: no cap)")
    args = ap.parse_args(argv)
    import cupy
    from cupyx.scipy.ndimage import map_coordinates

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments.texture import smooth_warp, uniform_points
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import texture as K
    from gpumemlab.ops import sample as S

    launch = runtime.launch

    def with_cap(capped, call):
        """``call`` with its launch replaced by the capped copy and its shared request."""
        runtime.launch = lambda spec, *a, **kw: launch(capped[0], *a, **{**kw, "shmem": capped[1]})
        try:
            call()
        finally:
            runtime.launch = launch

    info = runtime.device_info()
    side = args.side
    img = device_random_nonzero(side * side, np.float32, 0).reshape(side, side)
    rnd = uniform_points(cupy, side, side, args.random, 0)
    warp = smooth_warp(cupy, side, side).reshape(-1, 2)
    rows = int(np.sqrt(args.random))
    workloads = {"random, flat": rnd, "random, shaped": rnd.reshape(rows, -1, 2),
                 "warp, shaped": warp.reshape(side, side, 2), "warp, flat": warp}
    if args.texture:
        workloads = {k: v for k, v in workloads.items() if k.startswith("random")}
    result = dict(device=info.get("name"), rounds=args.rounds, workloads=[])
    print(f"# {info.get('name')}: sample2d(exact=True) fixed vs learned, {args.rounds} rounds", flush=True)
    spin = spin_kernel(cupy)
    for name, pts in workloads.items():
        pts_t = cupy.ascontiguousarray(pts.reshape(-1, 2).T)
        ref = map_coordinates(img, pts_t, order=1, mode="nearest").reshape(pts.shape[:-1])
        mc_out, fixed_out, learned_out = (cupy.empty_like(ref) for _ in range(3))
        fixed_plan = S.default_plan(True, pts.ndim >= 3)
        calls = {"fixed": lambda p=pts, o=fixed_out, f=fixed_plan: S.sample2d(img, p, exact=True, out=o, plan=f),
                 "learned": lambda p=pts, o=learned_out: S.sample2d(img, p, exact=True, out=o)}
        if args.texture:
            calls = {"texture": lambda p=pts, o=fixed_out: S.sample2d(img, p, out=o)}
            for pair in args.texture:
                k, cap = (int(x) for x in pair.split(":"))
                plan = S.Plan(samples=k)
                ln = S.launch_for(img, pts, learned_out, exact=False, mode="linear", address="clamp", plan=plan)
                capped = runtime.l1_kept_cap(ln.spec, K.BLOCK, cap) if cap else (ln.spec, 0)
                if capped is not None:
                    calls[f"texture s{k} cap {cap}"] = lambda p=pts, o=learned_out, f=plan, c=capped: with_cap(
                        c, lambda: S.sample2d(img, p, out=o, plan=f))
        base = lambda t=pts_t, o=mc_out: map_coordinates(img, t, output=o.reshape(-1), order=1, mode="nearest")  # noqa
        fixed_ln = S.launch_for(img, pts, fixed_out, exact=True, mode="linear", address="clamp", plan=fixed_plan)
        for cap in args.caps if not args.texture else ():
            capped = runtime.l1_kept_cap(fixed_ln.spec, K.BLOCK, cap)
            if capped is not None:
                calls[f"fixed, {cap}/SM"] = lambda p=pts, o=fixed_out, f=fixed_plan, c=capped: with_cap(
                    c, lambda: S.sample2d(img, p, exact=True, out=o, plan=f))
        for o in (fixed_out, learned_out):
            o.fill(np.nan)
        for fn in calls.values():
            fn()
        runtime.synchronize()  # the first learned call's observation is in
        counts = S._observations(pts, ref.size)[0]
        ln = S.launch_for(img, pts, learned_out, exact=True, mode="linear", address="clamp")
        chosen, _, shmem = S.observed_launch(img, pts, learned_out, ln, "clamp")
        calls.get("learned", lambda: None)()
        rec = dict(workload=name, points=int(ref.size), shape=list(pts.shape), counts=counts,
                   kernel=chosen.spec.label, shmem=shmem, capped=shmem > 0,
                   max_abs={k: float(cupy.nan_to_num(cupy.abs(o - ref), nan=np.inf).max())
                            for k, o in (("fixed", fixed_out), ("learned", learned_out))},
                   identical=bool(cupy.array_equal(fixed_out, learned_out)), variants=[])
        own, paired = interleaved(cupy, calls, base, args.rounds, spin)
        print(f"{name}: counts {counts} -> {chosen.spec.label} shmem {shmem}; identical {rec['identical']}, "
              f"max_abs {rec['max_abs']}", flush=True)
        for v in calls:
            st = paired_stats(own[v], paired[v])
            rec["variants"].append(dict(variant=v, **st))
            a, b = st["ms"], st["map_coordinates_ms"]
            print(f"  {v:8s} {a['median_ms']:.4f} ms (spread {a['spread']:.2%})  map_coordinates "
                  f"{b['median_ms']:.4f} ms  x{st['speedup']:.4f} (paired {st['paired_ratio']:.4f})", flush=True)
        result["workloads"].append(rec)
        del pts_t, ref, mc_out, fixed_out, learned_out
        cupy.get_default_memory_pool().free_all_blocks()
    (Path(os.environ.get("OUT", ".")) / "sample2d_learned_probe.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
