#!/usr/bin/env python3
"""gpumemlab.sample2d's variants (ops/sample.py's Plan, ArrayImage) against cupyx map_coordinates(order=1).

    PYTHONPATH=src python3 tools/sample2d_probe.py [--rounds 21] [--quick]

Workloads (those of the texture experiment): a smooth warp (rotation, scale and a mild distortion) resampling a
side x side float32 image to side x side, and 2^24 uniformly random points; every variant of the texture path
(exact=False) and of the exact path runs on both. Each variant is first checked against map_coordinates on the
same points (max abs error, and relative = max abs error / the image's value range; exact passes at 1e-6, the
texture unit's 8-bit weights at 1/64), then timed with CUDA events around each call (warm-up excluded),
interleaved with map_coordinates in the same loop: every round times map_coordinates and the variant back to back
(the order alternating by round, the variants' order rotating). A round starts behind a GPU spin so the host's
queuing never shows in the events. Printed per (workload, path, variant): registers, verification, median ms,
speed-up (ratio of the medians; median of the per-round ratios), spread (p90 - p10) / median, GB/s of the least
DRAM traffic (the experiment's definition) and its % of the copy ceiling measured here. A small check of every
address mode and filter against NumPy runs first.

Writes $OUT/sample2d_probe.json (OUT: a folder; default the current one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

SPIN_S = 3e-3  # GPU busy time ahead of each round's queue
SECTOR = 32

# bytes per sample of the random workload if no fetched sector is reused: coordinates and output, plus the 2x2
# footprint's sectors: pitched rows hold 8 floats per sector (2 rows x (1 + 1/8) sectors), a CUDA array's
# block-linear sector a 4 x 2 tile ((1 + 1/4) x (1 + 1/2) sectors)
MODEL_RANDOM_PITCH = 12 + SECTOR * 2 * (1 + 1 / 8)
MODEL_RANDOM_ARRAY = 12 + SECTOR * (1 + 1 / 4) * (1 + 1 / 2)


@dataclass(frozen=True)
class Variant:
    name: str
    exact: bool
    plan: dict = field(default_factory=dict)
    array: bool = False     # sample an ArrayImage (copy made once, outside the timing)
    shaped: bool = False    # coords as (rows, cols, 2) (rows order), else flat (n, 2)
    warp_only: bool = False  # rows order means nothing for a flat list of random points


def variants() -> list[Variant]:
    T, E = False, True
    return [
        Variant("default", T),
        Variant("s2", T, dict(samples=2)),
        Variant("s4", T, dict(samples=4)),
        Variant("s8", T, dict(samples=8)),
        Variant("v2 s2", T, dict(samples=2, vector=True)),
        Variant("v2 s4", T, dict(samples=4, vector=True)),
        Variant("v2 s8", T, dict(samples=8, vector=True)),
        Variant("rows s2", T, dict(samples=2, order="rows"), shaped=True, warp_only=True),
        Variant("rows s4", T, dict(samples=4, order="rows"), shaped=True, warp_only=True),
        Variant("rows s8", T, dict(samples=8, order="rows"), shaped=True, warp_only=True),
        Variant("rows v2 s4", T, dict(samples=4, vector=True, order="rows"), shaped=True, warp_only=True),
        Variant("rows v2 s8", T, dict(samples=8, vector=True, order="rows"), shaped=True, warp_only=True),
        Variant("s8 cs", T, dict(samples=8, streaming=True)),
        Variant("rows s8 cs", T, dict(samples=8, order="rows", streaming=True), shaped=True, warp_only=True),
        Variant("array", T, array=True),
        Variant("array v2 s4", T, dict(samples=4, vector=True), array=True),
        Variant("array rows v2 s4", T, dict(samples=4, vector=True, order="rows"), array=True, shaped=True,
                warp_only=True),
        Variant("default", E),
        Variant("ldg", E, dict(source="ldg")),
        Variant("float", E, dict(weights="float")),
        Variant("ldg float", E, dict(source="ldg", weights="float")),
        Variant("ldg float cs", E, dict(source="ldg", weights="float", streaming=True)),
        Variant("ldg float s4", E, dict(source="ldg", weights="float", samples=4)),
        Variant("ldg float s4 cs", E, dict(source="ldg", weights="float", samples=4, streaming=True)),
        Variant("rows ldg float s4", E, dict(source="ldg", weights="float", samples=4, order="rows"), shaped=True,
                warp_only=True),
        Variant("rows ldg float s4 cs", E, dict(source="ldg", weights="float", samples=4, order="rows",
                                                streaming=True), shaped=True, warp_only=True),
        Variant("row4 double", E, dict(source="row4")),
        Variant("row4 float", E, dict(source="row4", weights="float")),
        Variant("row4 float s2", E, dict(source="row4", weights="float", samples=2)),
        Variant("row4 float s4", E, dict(source="row4", weights="float", samples=4)),
        Variant("row4 float v2 s4", E, dict(source="row4", weights="float", samples=4, vector=True)),
        Variant("rows row4 float s4", E, dict(source="row4", weights="float", samples=4, order="rows"),
                shaped=True, warp_only=True),
        Variant("rows row4 float v2 s4", E, dict(source="row4", weights="float", samples=4, vector=True,
                                                 order="rows"), shaped=True, warp_only=True),
        Variant("array points float", E, dict(source="points", weights="float"), array=True),
        Variant("array gather double", E, dict(source="gather"), array=True),
        Variant("array gather float", E, dict(source="gather", weights="float"), array=True),
        Variant("array gather float s4", E, dict(source="gather", weights="float", samples=4), array=True),
        Variant("array gather float v2 s4", E, dict(source="gather", weights="float", samples=4, vector=True),
                array=True),
        Variant("array rows gather float v2 s4", E, dict(source="gather", weights="float", samples=4, vector=True,
                                                         order="rows"), array=True, shaped=True, warp_only=True),
    ]


def gather_parser(doc: str) -> argparse.ArgumentParser:
    """The options the sampling probes share: --rounds, --side (image), --random (points)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=21, help="timed rounds (>= 10)")
    ap.add_argument("--side", type=int, default=8192)
    ap.add_argument("--random", type=int, default=2**24, help="points of the random workload")
    return ap


def paired_stats(own: list[float], paired: list[float], baseline: str = "map_coordinates") -> dict:
    """A variant's times against the baseline's (map_coordinates') from the same rounds (interleaved): summaries,
    the ratio of the medians and the median of the per-round ratios."""
    a, b = summarize(own), summarize(paired)
    return dict(ms=a, **{f"{baseline}_ms": b}, speedup=b["median_ms"] / a["median_ms"],
                paired_ratio=statistics.median(m / o for m, o in zip(paired, own)))


def summarize(ms: list[float]) -> dict:
    s = sorted(ms)
    q = lambda p: float(np.quantile(s, p))  # noqa: E731
    med = statistics.median(s)
    return dict(median_ms=med, min_ms=s[0], p10_ms=q(0.1), p90_ms=q(0.9), spread=(q(0.9) - q(0.1)) / med, n=len(s),
                samples_ms=ms)


def spin_kernel(cupy):
    k = cupy.RawKernel(r'''extern "C" __global__ void spin(long long cycles) {
        const long long t0 = clock64(); while (clock64() - t0 < cycles) { } }''', "spin")
    cycles = np.int64(SPIN_S * cupy.cuda.runtime.getDeviceProperties(cupy.cuda.runtime.getDevice())["clockRate"] * 1e3)
    return lambda: k((1,), (1,), (cycles,))


def event_ms(cupy, fn, count: int) -> list[float]:
    out = []
    for _ in range(count):
        a, b = cupy.cuda.Event(), cupy.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(cupy.cuda.get_elapsed_time(a, b))
    return out


def copy_ceiling(cupy) -> dict:
    """GB/s (read + write) of a 1 GiB device copy by CuPy's elementwise kernel, median of 10."""
    n = 2**28
    src = cupy.ones(n, np.float32)
    dst = cupy.empty_like(src)
    copy = lambda: cupy.copyto(dst, src)  # noqa: E731
    event_ms(cupy, copy, 3)
    st = summarize(event_ms(cupy, copy, 10))
    return dict(bytes=8 * n, gbps=8 * n / (st["median_ms"] * 1e-3) / 1e9, **st)


def burst_us(cupy, fns: dict, calls: int = 200, repeats: int = 3) -> tuple[dict, dict]:
    """Host microseconds per call as users call them: bench.timer.time_host over bursts of ``calls`` calls back to
    back, a device-wide sync ending each burst (PyTorch queues on its own stream, not the timer's), the functions
    alternating over ``repeats`` repeats. Returns (every repeat's us per call, the median repeat's) per name."""
    from gpumemlab.bench.timer import time_host

    us = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            burst = lambda fn=fn: ([fn() for _ in range(calls)], cupy.cuda.Device().synchronize())  # noqa: E731
            us[name].append(time_host(burst).stats.median / calls * 1e6)
    return us, {k: sorted(v)[len(v) // 2] for k, v in us.items()}


def launched_as(spec, shmem: int, call):
    """``call`` (a sample2d call) with its launch made as ``spec`` (None: the call's own kernel) with a dynamic shared
    request of ``shmem`` bytes: the probes' way to run a plan's launch as another kernel copy or capped. The calls
    it prepares are its own (sample2d keeps prepared calls per arrays and options)."""
    from gpumemlab.gpu import runtime
    from gpumemlab.ops import sample

    base, own, request = runtime.Launcher, {}, shmem

    class LaunchedAs(base):
        @classmethod
        def over(cls, kernel, grid, block, args, varying, shmem: int = 0):
            return base.over(spec or kernel, grid, block, args, varying, shmem=request)

    def run():
        kept = sample._calls
        runtime.Launcher, sample._calls = LaunchedAs, own
        try:
            return call()
        finally:
            runtime.Launcher, sample._calls = base, kept
    return run


def interleaved(cupy, calls: dict, base, rounds: int, spin) -> tuple[dict, dict]:
    """Per variant: its times and map_coordinates' times from the same rounds, back to back. Each round starts with
    the spin and an untimed baseline call (the first kernel after the spin runs slower); the variants' order rotates
    by round, and which of a pair goes first flips every len(calls) rounds, so that with two variants the first
    timed call is not always the same variant's."""
    names = list(calls)
    own = {n: [] for n in names}
    paired = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        order = names[k:] + names[:k]
        spin()
        base()
        recs = []
        for name in order:
            mine_first = (r // len(names)) % 2
            seq = [(True, calls[name]), (False, base)] if mine_first else [(False, base), (True, calls[name])]
            for mine, fn in seq:
                a, b = cupy.cuda.Event(), cupy.cuda.Event()
                a.record()
                fn()
                b.record()
                recs.append((name, mine, a, b))
        recs[-1][3].synchronize()
        for name, mine, a, b in recs:
            (own if mine else paired)[name].append(cupy.cuda.get_elapsed_time(a, b))
    return own, paired


def verify(cupy, out, ref, spread: float, exact: bool) -> dict:
    diff = cupy.abs(out.astype(np.float64) - ref.astype(np.float64))
    nan = int(cupy.isnan(out).sum())
    max_abs = float(cupy.nan_to_num(diff, nan=np.inf).max())
    rel = max_abs / spread
    tol = 1e-6 if exact else 1 / 64
    return dict(max_abs=max_abs, rel=rel, nan=nan, tolerance_rel=tol, ok=bool(nan == 0 and rel <= tol),
                over_tolerance=int((diff > tol * spread).sum()))


def sanity(cupy, records: list) -> None:
    """Every address mode and filter on small images (rows 16-byte aligned or not) against NumPy float64, for the
    plans the timing uses: the kernels' edge paths, which the workloads (clamp, linear) barely touch."""
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.experiments.texture import reference_sample
    from gpumemlab.ops.sample import ADDRESS, ArrayImage, Plan, sample2d

    gen = np.random.default_rng(5)
    plans = [(False, Plan(samples=4, vector=True, source="row4", weights="float")), (False, Plan(samples=4)),
             (True, Plan(samples=4, vector=True, weights="float")), (True, Plan(source="points"))]
    for h, w in ((37, 52), (29, 61)):
        host = random_nonzero((h, w), np.float32, gen)
        img = cupy.asarray(host)
        rc = np.stack([gen.uniform(-3, h + 2, 1000), gen.uniform(-3, w + 2, 1000)], -1).astype(np.float32)
        rc = rc.reshape(4, 250, 2)
        try:
            arr = ArrayImage(img)
        except Exception as exc:  # noqa: BLE001 - reported, the rest still runs
            records.append(dict(check="ArrayImage", shape=[h, w], ok=False, error=f"{type(exc).__name__}: {exc}"))
            arr = None
        for address in ADDRESS:
            for mode in ("linear", "nearest"):
                want = reference_sample(host, rc, address, mode == "linear")
                for on_array, plan in plans:
                    if on_array and arr is None:
                        continue
                    for exact in (True, False):
                        rec = dict(check="numpy", shape=[h, w], address=address, mode=mode, array=on_array,
                                   exact=exact, plan=asdict(plan))
                        try:
                            got = sample2d(arr if on_array else img, cupy.asarray(rc), mode=mode, address=address,
                                           exact=exact, plan=plan).get()
                            err = float(np.max(np.abs(got.astype(np.float64) - want)))
                            if exact:
                                ok = err <= 1e-6 * (1 + np.abs(want).max())
                            elif mode == "nearest":
                                ok = float(np.mean(got == want.astype(np.float32))) > 0.99
                            else:
                                ok = err < 0.03
                            rec.update(max_abs=err, ok=bool(ok and not np.isnan(got).any()))
                        except Exception as exc:  # noqa: BLE001
                            rec.update(ok=False, error=f"{type(exc).__name__}: {exc}")
                        records.append(rec)
    img = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
    pts = cupy.asarray([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.5, 0.5], [2.0, 3.0], [-1.0, 5.0]], cupy.float32)
    want = [0.0, 1.0, 4.0, 2.5, 11.0, 3.0]
    try:
        got = sample2d(ArrayImage(img), pts, exact=True, plan=Plan(source="gather")).get().tolist()
        records.append(dict(check="gather order", got=got, want=want, ok=got == want))
    except Exception as exc:  # noqa: BLE001
        records.append(dict(check="gather order", ok=False, error=f"{type(exc).__name__}: {exc}"))


def main(argv=None) -> int:
    ap = gather_parser(__doc__)
    ap.add_argument("--quick", action="store_true", help="1024^2 image, 2^20 random points (a smoke test)")
    ap.add_argument("--only", default="", help="comma-separated variant names (default: all)")
    args = ap.parse_args(argv)
    if args.quick:
        args.side, args.random = 1024, 2**20
    rounds = max(10, args.rounds)
    t_start = time.time()

    import cupy
    from cupyx.scipy.ndimage import map_coordinates

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments.texture import smooth_warp, uniform_points
    from gpumemlab.gpu import runtime
    from gpumemlab.gpu.compile import compile_specs
    from gpumemlab.ops.sample import ArrayImage, Plan, launch_for, sample2d

    info = runtime.device_info()
    arch = info["arch"]
    out_dir = Path(os.environ.get("OUT", "."))
    out_dir.mkdir(parents=True, exist_ok=True)
    result = dict(device=info.get("name"), arch=arch, side=args.side, random_points=args.random, rounds=rounds,
                  model_bytes_per_sample=dict(smooth_warp=16.0, random_pitch=MODEL_RANDOM_PITCH,
                                              random_array=MODEL_RANDOM_ARRAY),
                  sanity=[], workloads=[], errors=[])
    print(f"# {info.get('name')} ({arch}); image {args.side}^2 float32, {args.random} random points, "
          f"{rounds} rounds", flush=True)
    print(f"# model, DRAM bytes per sample: smooth warp 16 (coordinates 8, output 4, the image once 4); random with "
          f"no reuse {MODEL_RANDOM_PITCH:.0f} pitched, {MODEL_RANDOM_ARRAY:.0f} from a CUDA array", flush=True)

    sanity(cupy, result["sanity"])
    bad = [r for r in result["sanity"] if not r.get("ok")]
    print(f"# sanity vs NumPy (every address mode and filter, small images): {len(result['sanity']) - len(bad)} ok, "
          f"{len(bad)} failed", flush=True)
    for r in bad[:12]:
        print(f"#   FAILED {r}", flush=True)
    print(f"# ({time.time() - t_start:.0f} s)", flush=True)

    ceiling = copy_ceiling(cupy)
    result["copy_ceiling"] = ceiling
    print(f"# copy ceiling: {ceiling['gbps']:.0f} GB/s (read + write, 1 GiB, spread {ceiling['spread']:.1%})",
          flush=True)

    side = args.side
    img = device_random_nonzero(side * side, np.float32, 0).reshape(side, side)
    spread = float(img.max() - img.min())
    arr_img = None
    try:
        arr_img = ArrayImage(img)
        copy = event_ms(cupy, lambda: arr_img.array.copy_from(img, cupy.cuda.get_current_stream()), 5)
        result["array_copy"] = summarize(copy)
        print(f"# ArrayImage copy of the image: {result['array_copy']['median_ms']:.3f} ms (made once; the array "
              f"variants below time sampling only)", flush=True)
    except Exception as exc:  # noqa: BLE001
        result["errors"].append(f"ArrayImage: {type(exc).__name__}: {exc}")
        print(f"# ArrayImage failed: {exc}", flush=True)
    spin = spin_kernel(cupy)
    only = set(filter(None, args.only.split(",")))

    warp = smooth_warp(cupy, side, side)
    rnd = uniform_points(cupy, side, side, args.random, 0)
    workloads = (("smooth warp", warp, 4 * side * side), ("uniform random", rnd, min(32 * args.random,
                                                                                      4 * side * side)))
    header = (f"{'workload':15s} {'path':7s} {'variant':30s} {'regs':>4s} {'check':5s} {'max_abs':>9s} "
              f"{'rel':>8s} {'ms':>8s} {'x mc':>6s} {'x pair':>6s} {'spread':>7s} {'GB/s':>6s} {'%ceil':>6s}")
    for wname, pts, touched in workloads:
        shaped_pts = pts if pts.ndim == 3 else None
        flat = pts.reshape(-1, 2)
        n = flat.shape[0]
        pts_t = cupy.ascontiguousarray(flat.T)
        least = 8 * n + touched + 4 * n  # coordinates, the image once or a sector per point, the output
        ref = map_coordinates(img, pts_t, order=1, mode="nearest")
        mc_out = cupy.empty(n, np.float32)
        base = lambda pts_t=pts_t, mc_out=mc_out: map_coordinates(img, pts_t, output=mc_out, order=1,  # noqa
                                                                  mode="nearest")
        res = cupy.empty(n, np.float32)
        wrec = dict(workload=wname, points=n, least_bytes=least, variants=[])
        calls, meta = {}, {}
        for v in variants():
            if (v.warp_only and shaped_pts is None) or (only and v.name not in only) or (v.array and arr_img is None):
                continue
            key = f"{'exact' if v.exact else 'texture'} {v.name}"
            rec = dict(path="exact" if v.exact else "texture", variant=v.name, plan=v.plan, array=v.array,
                       shaped=v.shaped)
            image = arr_img if v.array else img
            p = shaped_pts if v.shaped else flat
            out = res.reshape(p.shape[:-1])
            plan = Plan(**v.plan)
            try:
                ln = launch_for(image, p, out, exact=v.exact, mode="linear", address="clamp", plan=plan)
                usage = compile_specs([ln.spec], arch)[ln.spec][1]
                rec.update(kernel=ln.spec.name, grid=ln.grid, vec=ln.vec, unroll=ln.unroll, source=ln.source,
                           registers=usage.registers if usage else None)
                fn = lambda image=image, p=p, out=out, v=v, plan=plan: sample2d(  # noqa: E731
                    image, p, exact=v.exact, out=out, plan=plan)
                res.fill(np.nan)
                fn()
                rec["check"] = verify(cupy, res, ref, spread, v.exact)
                calls[key] = fn
            except Exception as exc:  # noqa: BLE001
                rec["error"] = f"{type(exc).__name__}: {exc}"
                rec["traceback"] = traceback.format_exc()
            meta[key] = rec
            wrec["variants"].append(rec)
        print(f"# {wname}: {n} points; compiled and checked {len(calls)} variants ({time.time() - t_start:.0f} s)",
              flush=True)
        for fn in list(calls.values()) + [base]:  # warm-up
            fn()
            fn()
        own, paired = interleaved(cupy, calls, base, rounds, spin) if calls else ({}, {})
        all_mc = summarize([t for ts in paired.values() for t in ts]) if calls else None
        wrec["map_coordinates"] = all_mc
        print(header)
        if all_mc:
            gbps = least / (all_mc["median_ms"] * 1e-3) / 1e9
            wrec["map_coordinates"].update(gbps=gbps, pct_ceiling=100 * gbps / ceiling["gbps"])
            print(f"{wname:15s} {'-':7s} {'map_coordinates order=1':30s} {'':>4s} {'':5s} {'':>9s} {'':>8s} "
                  f"{all_mc['median_ms']:8.3f} {1.0:6.2f} {1.0:6.2f} {all_mc['spread']:7.1%} {gbps:6.0f} "
                  f"{100 * gbps / ceiling['gbps']:6.1f}")
        for key, rec in meta.items():
            if key not in own:
                print(f"{wname:15s} {rec['path']:7s} {rec['variant']:30s} ERROR {rec.get('error', '')[:90]}")
                continue
            st, mc = summarize(own[key]), summarize(paired[key])
            ratios = [b / a for a, b in zip(own[key], paired[key])]
            gbps = least / (st["median_ms"] * 1e-3) / 1e9
            rec.update(time=st, map_coordinates_paired=mc, speedup=mc["median_ms"] / st["median_ms"],
                       speedup_paired=statistics.median(ratios), gbps=gbps, pct_ceiling=100 * gbps / ceiling["gbps"])
            chk = rec["check"]
            print(f"{wname:15s} {rec['path']:7s} {rec['variant']:30s} {rec.get('registers') or 0:4d} "
                  f"{'ok' if chk['ok'] else 'FAIL':5s} {chk['max_abs']:9.2e} {chk['rel']:8.1e} {st['median_ms']:8.3f} "
                  f"{rec['speedup']:6.2f} {rec['speedup_paired']:6.2f} {st['spread']:7.1%} {gbps:6.0f} "
                  f"{rec['pct_ceiling']:6.1f}", flush=True)
        if all_mc:
            bound = 100 / wrec["map_coordinates"]["pct_ceiling"]
            print(f"# {wname}: map_coordinates at {wrec['map_coordinates']['pct_ceiling']:.0f}% of the copy ceiling "
                  f"on the least traffic: no sampler beats it by more than {bound:.2f}x here", flush=True)
        result["workloads"].append(wrec)

    result["elapsed_s"] = time.time() - t_start
    path = out_dir / "sample2d_probe.json"
    path.write_text(json.dumps(result, indent=1, default=str))
    print(f"# wrote {path} ({result['elapsed_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
