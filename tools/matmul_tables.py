#!/usr/bin/env python3
"""Compare two matmul tables on this GPU before installing one: on every zoo shape whose tiles the two tables
choose differently, ``gpumemlab.matmul`` with each table's choice and cuBLAS (``cupy.matmul``), timed interleaved
(A B C, C B A, ...) with the suite's timer as users call them (CUDA events around the Python call, warm operands,
as the matmul_shapes experiment times the GEMMs), every output checked against float64 first.

    PYTHONPATH=src python3 tools/matmul_tables.py OLD.json NEW.json [--out compare.json] [--keep TABLE.json]

OLD / NEW: tuned matmul tables (``gpumemlab tune matmul`` writes OUT/matmul.json; the package's is
src/gpumemlab/kernels/tuned/matmul.json); each gives this device's entry (or its chip's). Prints a markdown table
(times in us; old/new > 1: the new choice is faster) and writes every record with its raw statistics to --out.
--keep: NEW's entry with OLD's choice kept at the tuned shape nearest to each zoo shape the new choice made slower
(old/new below --slower), compared with OLD again in the same run; if no shape is slower then, OLD's file with
that entry installed is written to TABLE.json (copy it over the package's table to install it).
"""

from __future__ import annotations

import argparse
import json
import math
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="matmul_tables", description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--out", help="JSON of every record")
    ap.add_argument("--keep", metavar="TABLE", help="write OLD's file with the non-regressing re-tuned entry")
    ap.add_argument("--slower", type=float, default=0.98, help="old/new below this is slower (default 0.98)")
    ap.add_argument("--max-flops", type=float, default=2e12, help="skip larger shapes (default 2e12)")
    args = ap.parse_args(argv)

    from gpumemlab.errors import GpumemlabError
    from gpumemlab.tune import table

    try:
        files = [table.load(p) for p in (args.old, args.new)]
        return _run(files, args)
    except GpumemlabError as exc:
        print(f"matmul_tables: {exc}", file=sys.stderr)
        return 2


def _label(c) -> str:
    return f"{c.config.bm}x{c.config.bn}x{c.config.bk}/{c.splits}"


def _time_shape(m: int, n: int, k: int, choices: dict, timer) -> dict:
    """{"old", "new", "cuBLAS": statistics} of the library with each choice and of cuBLAS, interleaved, after each
    output (poisoned with NaN first) is checked against the float64 product."""
    import cupy
    import numpy as np

    import gpumemlab
    from gpumemlab.bench.timer import time_interleaved
    from gpumemlab.bench.verify import device_random_nonzero

    a = device_random_nonzero((m, k), np.float32, m + k)
    b = device_random_nonzero((k, n), np.float32, n + 1)
    answer = a.astype(cupy.float64) @ b.astype(cupy.float64)
    outs = {name: cupy.empty((m, n), cupy.float32) for name in (*choices, "cuBLAS")}
    fns = {name: (lambda c=c, out=outs[name]: gpumemlab.matmul(a, b, out=out, config=c)) for name, c in choices.items()}
    fns["cuBLAS"] = lambda: cupy.matmul(a, b, out=outs["cuBLAS"])
    for name, fn in fns.items():
        outs[name].fill(np.nan)
        fn()
        err = float(cupy.linalg.norm(outs[name] - answer)) / float(cupy.linalg.norm(answer))
        if not err <= 1e-4:
            raise SystemExit(f"matmul_tables: {name} at {m}x{n}x{k}: relative error {err:.2e}")
    return time_interleaved(fns, cfg=timer)


def _compare(old: dict, new: dict, device: dict, max_flops: float, title: str) -> list[dict]:
    """One record per zoo shape whose route differs (old, new and cuBLAS timed interleaved), printed as a table."""
    import cupy

    from gpumemlab.bench.timer import TimerConfig
    from gpumemlab.gpu import runtime
    from gpumemlab.ops.matmul import choice as C
    from gpumemlab.tune.matmul import ZOO

    sms = int(device["sm_count"])
    timer = TimerConfig(warmup=2, min_samples=10, min_time_s=0.05, max_time_s=0.5, batch=5)
    records, same = [], 0
    print(f"\n{title}\n\n| group | shape | old | new | old us | new us | old/new | cuBLAS/old | cuBLAS/new |\n"
          "|---|---|---|---|---|---|---|---|---|")
    with runtime.work_stream():
        for group, m, n, k in ZOO:
            if C.is_gemv(m, n) or 2.0 * m * n * k > max_flops:
                continue
            ro, rn = (C.route(m, n, k, True, e, sms) for e in (old, new))
            if ro.choice == rn.choice:
                same += 1
                continue
            stats = _time_shape(m, n, k, dict(old=ro.choice, new=rn.choice), timer)
            t = {name: s.median for name, s in stats.items()}
            rec = dict(group=group, shape=f"{m}x{n}x{k}", m=m, n=n, k=k, kind=rn.kind, old=_label(ro.choice),
                       new=_label(rn.choice), old_config=ro.choice.config.name, new_config=rn.choice.config.name,
                       median_s=t, old_over_new=t["old"] / t["new"],
                       stats={name: dict(median=s.median, p10=s.p10, p90=s.p90, n=s.n) for name, s in stats.items()})
            records.append(rec)
            print(f"| {group} | {rec['shape']} | {rec['old']} | {rec['new']} | {1e6 * t['old']:.1f} | "
                  f"{1e6 * t['new']:.1f} | {rec['old_over_new']:.3f} | {t['cuBLAS'] / t['old']:.3f} | "
                  f"{t['cuBLAS'] / t['new']:.3f} |", flush=True)
            cupy.get_default_memory_pool().free_all_blocks()
    ratios = [r["old_over_new"] for r in records]
    print(f"\n{same} shapes with the same choice; {len(records)} compared; geometric mean old/new "
          f"{math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float('nan'):.3f}, "
          f"worst {min(ratios, default=float('nan')):.3f}")
    return records


def _nearest_tuned(m: int, n: int, k: int, chosen: dict) -> str:
    from gpumemlab.ops.matmul.choice import _log_distance
    from gpumemlab.tune import table

    return min(sorted(chosen), key=lambda s: _log_distance((m, n, k), table.parse_mnk(s)))


def _run(files, args) -> int:
    from gpumemlab.gpu import runtime
    from gpumemlab.tune import table

    device = runtime.device_info()
    old, new = (table.device_entry(f["devices"], device) for f in files)
    if old is None or new is None:
        raise SystemExit(f"matmul_tables: no entry for {device['name']} in {args.old if old is None else args.new}")
    records = _compare(old, new, device, args.max_flops, f"{device['name']}: old {args.old}, new {args.new}")
    doc = dict(device=device["name"], records=records)
    if args.keep:
        slower = [r for r in records if r["old_over_new"] < args.slower]
        revert = {}
        for r in slower:
            revert.setdefault(_nearest_tuned(r["m"], r["n"], r["k"], new["chosen"]), []).append(
                f"{r['shape']} (old/new {r['old_over_new']:.3f})")
        kept = new
        for shape, why in sorted(revert.items()):
            kept = table.keep_choices(kept, old, [shape], f"the new one made zoo {', '.join(why)} slower in the "
                                      "same run", files[1]["metric"])
        again = _compare(old, kept, device, args.max_flops, f"{device['name']}: old vs re-tuned with {len(revert)} "
                         f"installed choice(s) kept ({', '.join(sorted(revert)) or 'none'})") if revert else records
        doc.update(kept=kept.get("kept", {}), records_kept=again)
        still = [r["shape"] for r in again if r["old_over_new"] < args.slower]
        if still:
            print(f"\nnot written: still slower at {', '.join(still)}")
        else:
            out = dict(files[0], devices=dict(sorted({**files[0]["devices"], device["name"]: kept}.items())))
            bad = table.problems(out)
            if bad:
                raise SystemExit(f"matmul_tables: the kept table is invalid: {bad[0]}")
            with open(args.keep, "w") as f:
                f.write(json.dumps(out, indent=1) + "\n")
            print(f"\nwrote {args.keep}: {device['name']}'s entry re-tuned, {len(revert)} installed choice(s) kept")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
