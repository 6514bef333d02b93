#!/usr/bin/env python3
"""sample2d as users call it, after a first call has observed the points, against the same call with the default plan
passed explicitly (no observation: the layout every call had before) and map_coordinates(order=1).

    PYTHONPATH=src python3 tools/sample2d_learned_probe.py [--rounds 31] [--path exact|texture] [--caps B ...]
        [--flat SAMPLES:CAP ...] [--only random] [--small]

Workloads over a side^2 float32 image: 2^24 uniformly random points, flat (n, 2) and shaped (rows, cols, 2); the
smooth warp's side^2 points, image-shaped and flattened. Variants of the path (exact=True, or the texture unit):
"fixed" (plan=default_plan(...): what a first call runs) and "learned" (plan=None); --caps B: the fixed plan capped
at B blocks per SM (runtime.l1_kept_cap); --flat SAMPLES:CAP: flat plans of SAMPLES per thread capped at CAP blocks
per SM (0: no cap). Each is checked against map_coordinates (max abs error) and "learned" against "fixed" bit for
bit, then timed interleaved with map_coordinates (sample2d_probe's loop). Printed per workload: the observed counts,
the kernel the learned call launches (and its dynamic shared request), medians, paired ratios.
Writes $OUT/sample2d_learned_probe[_texture].json.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from sample2d_probe import burst_us, gather_parser, interleaved, launched_as, paired_stats, spin_kernel


def main(argv=None) -> int:
    ap = gather_parser(__doc__)
    ap.add_argument("--path", choices=("exact", "texture"), default="exact")
    ap.add_argument("--caps", type=int, nargs="*", default=[], help="the fixed plan capped at these blocks per SM")
    ap.add_argument("--flat", nargs="*", default=[], metavar="SAMPLES:CAP",
                    help="flat plans of SAMPLES per thread capped at CAP blocks per SM (0: no cap)")
    ap.add_argument("--only", choices=("random", "warp"), help="one kind of workload")
    ap.add_argument("--small", action="store_true",
                    help="instead: host microseconds per call on small inputs (SMALL), bursts of 200 calls")
    ap.add_argument("--profile", action="store_true",
                    help="with --small: also cProfile 2,000 learned calls on the first small input (top 15 by own time)")
    args = ap.parse_args(argv)
    import cupy
    from cupyx.scipy.ndimage import map_coordinates

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments.texture import smooth_warp, uniform_points
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import texture as K
    from gpumemlab.ops import sample as S

    exact = args.path == "exact"
    if args.small:
        return small(cupy, map_coordinates, S, exact, args.profile)

    def capped_call(spec, cap, call):
        """``call`` with its launch replaced by ``spec``'s copy capped at ``cap`` blocks per SM (None: no cap)."""
        capped = runtime.l1_kept_cap(spec, K.BLOCK, cap) if cap else (spec, 0)
        return launched_as(*capped, call) if capped is not None else None

    info = runtime.device_info()
    side = args.side
    img = device_random_nonzero(side * side, np.float32, 0).reshape(side, side)
    rnd = uniform_points(cupy, side, side, args.random, 0)
    warp = smooth_warp(cupy, side, side).reshape(-1, 2)
    rows = int(np.sqrt(args.random))
    workloads = {"random, flat": rnd, "random, shaped": rnd.reshape(rows, -1, 2),
                 "warp, shaped": warp.reshape(side, side, 2), "warp, flat": warp}
    workloads = {k: v for k, v in workloads.items() if not args.only or k.startswith(args.only)}
    result = dict(device=info.get("name"), path=args.path, rounds=args.rounds, workloads=[])
    print(f"# {info.get('name')}: sample2d ({args.path}) fixed vs learned, {args.rounds} rounds", flush=True)
    spin = spin_kernel(cupy)
    for name, pts in workloads.items():
        pts_t = cupy.ascontiguousarray(pts.reshape(-1, 2).T)
        ref = map_coordinates(img, pts_t, order=1, mode="nearest").reshape(pts.shape[:-1])
        mc_out, fixed_out, learned_out, other_out = (cupy.empty_like(ref) for _ in range(4))
        fixed_plan = S.default_plan(exact, pts.ndim >= 3)
        sample = lambda p, o, plan=None: S.sample2d(img, p, exact=exact, out=o, plan=plan)  # noqa: E731
        calls = {"fixed": lambda p=pts, o=fixed_out, f=fixed_plan: sample(p, o, f),
                 "learned": lambda p=pts, o=learned_out: sample(p, o)}
        fixed_ln = S.launch_for(img, pts, fixed_out, exact=exact, mode="linear", address="clamp", plan=fixed_plan)
        for cap in args.caps:
            run = capped_call(fixed_ln.spec, cap, lambda p=pts, f=fixed_plan: sample(p, other_out, f))
            if run:
                calls[f"fixed, {cap}/SM"] = run
        for pair in args.flat:
            k, cap = (int(x) for x in pair.split(":"))
            plan = replace(S.EXACT_FLAT_PLAN if exact else S.FIRST_WRITTEN, samples=k)
            ln = S.launch_for(img, pts, other_out, exact=exact, mode="linear", address="clamp", plan=plan)
            run = capped_call(ln.spec, cap, lambda p=pts, f=plan: sample(p, other_out, f))
            if run:
                calls[f"s{k} cap {cap}"] = run
        base = lambda t=pts_t, o=mc_out: map_coordinates(img, t, output=o.reshape(-1), order=1, mode="nearest")  # noqa
        for o in (fixed_out, learned_out):
            o.fill(np.nan)
        for fn in calls.values():
            fn()
        runtime.synchronize()  # the first learned call's observation is in
        counts = S._observations(pts, ref.size)[0]
        ln = S.launch_for(img, pts, learned_out, exact=exact, mode="linear", address="clamp")
        chosen, _, shmem = S.observed_launch(img, pts, learned_out, ln, exact, "clamp")
        calls["learned"]()
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
            print(f"  {v:12s} {a['median_ms']:.4f} ms (spread {a['spread']:.2%})  map_coordinates "
                  f"{b['median_ms']:.4f} ms  x{st['speedup']:.4f} (paired {st['paired_ratio']:.4f})", flush=True)
        result["workloads"].append(rec)
        del pts_t, ref, mc_out, fixed_out, learned_out, other_out
        cupy.get_default_memory_pool().free_all_blocks()
    suffix = "" if exact else "_texture"
    (Path(os.environ.get("OUT", ".")) / f"sample2d_learned_probe{suffix}.json").write_text(json.dumps(result, indent=1))
    return 0


# small inputs as users call them: (image side, points, kind)
SMALL = ((512, 4096, "random"), (1024, 65536, "random"), (256, 65536, "warp"), (1024, 1 << 20, "warp"),
         (2048, 1 << 20, "random"))


def small(cupy, map_coordinates, S, exact: bool, profile: bool = False) -> int:
    """Host time per call as users call it (sample2d_probe.burst_us: bursts of 200 calls, 5 repeats, the median
    printed): sample2d learned (plan=None), fixed (the default plan passed: what a first call runs), map_coordinates."""
    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments.texture import smooth_warp, uniform_points

    calls, rows = 200, []
    for side, n, kind in SMALL:
        img = device_random_nonzero(side * side, np.float32, 0).reshape(side, side)
        pts = (uniform_points(cupy, side, side, n, 0) if kind == "random"
               else smooth_warp(cupy, int(n ** 0.5), int(n ** 0.5)).reshape(-1, 2) * np.float32(side / n ** 0.5))
        pts_t = cupy.ascontiguousarray(pts.T)
        fixed = S.default_plan(exact, False)
        fns = {"learned": lambda: S.sample2d(img, pts, exact=exact),
               "fixed": lambda: S.sample2d(img, pts, exact=exact, plan=fixed),
               "map_coordinates": lambda: map_coordinates(img, pts_t, order=1, mode="nearest")}
        for fn in fns.values():
            fn()
        cupy.cuda.Device().synchronize()
        us, med = burst_us(cupy, fns, calls, repeats=5)
        rows.append(dict(side=side, points=n, kind=kind, calls=calls, us_per_call=us))
        if profile and len(rows) == 1:
            import cProfile
            import pstats

            with cProfile.Profile() as prof:
                for _ in range(2000):
                    fns["learned"]()
            cupy.cuda.Device().synchronize()
            pstats.Stats(prof).sort_stats("tottime").print_stats(15)
        print(f"{kind:6s} {n:8d} points over {side}^2: " + ", ".join(f"{k} {v:.1f} us" for k, v in med.items())
              + f"; learned x{med['map_coordinates'] / med['learned']:.2f} map_coordinates", flush=True)
    out = Path(os.environ.get("OUT", ".")) / f"sample2d_learned_small{'' if exact else '_texture'}.json"
    out.write_text(json.dumps(dict(path="exact" if exact else "texture", small=rows), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
