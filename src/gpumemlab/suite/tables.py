"""A re-tuned matmul table against the installed one, in the same run, before it is installed.

On every zoo shape and 2-D held-out shape of the matmul_shapes experiment whose tiles the two entries choose
differently, ``gpumemlab.matmul`` with each entry's choice and cuBLAS (``cupy.matmul``) are timed interleaved (A B C,
C B A, ...) with the suite's timer as users call them (CUDA events around the Python call, warm operands, as the
matmul_shapes experiment times the GEMMs), every output checked against float64 first. :func:`keep` then keeps the
installed choice at the tuned shape nearest to each compared shape the new choice made slower, compares that entry again in the same run and returns it only when no shape is
slower (docs/notes/tuning.md).
"""

from __future__ import annotations

import math

from ..bench.timer import TimerConfig
from ..errors import VerificationError
from ..tune import table

MAX_FLOPS = 2e12  # larger zoo shapes run long enough that the tiles' rate is settled: no choice differs there
SLOWER = 0.98     # old/new below this: the new choice made the shape slower
TIMER = TimerConfig(warmup=2, min_samples=10, min_time_s=0.05, max_time_s=0.5, batch=5)


def _label(c) -> str:
    return f"{c.config.bm}x{c.config.bn}x{c.config.bk}/{c.splits}"


def time_choices(m: int, n: int, k: int, choices: dict, timer: TimerConfig = TIMER) -> dict:
    """{name: statistics} of the library with each choice ({name: Choice}) and of cuBLAS ("cuBLAS"), interleaved,
    after each output (poisoned with NaN first) is checked against the float64 product."""
    import cupy
    import numpy as np

    from ..bench.timer import time_interleaved
    from ..bench.verify import device_random_nonzero
    from ..ops.matmul import matmul

    a = device_random_nonzero((m, k), np.float32, m + k)
    b = device_random_nonzero((k, n), np.float32, n + 1)
    answer = a.astype(cupy.float64) @ b.astype(cupy.float64)
    outs = {name: cupy.empty((m, n), cupy.float32) for name in (*choices, "cuBLAS")}
    fns = {name: (lambda c=c, out=outs[name]: matmul(a, b, out=out, config=c)) for name, c in choices.items()}
    fns["cuBLAS"] = lambda: cupy.matmul(a, b, out=outs["cuBLAS"])
    for name, fn in fns.items():
        outs[name].fill(np.nan)
        fn()
        err = float(cupy.linalg.norm(outs[name] - answer)) / float(cupy.linalg.norm(answer))
        if not err <= 1e-4:
            raise VerificationError(f"matmul with the {name} choice at {m}x{n}x{k}: relative error {err:.2e}")
    return time_interleaved(fns, cfg=timer)


def compared_shapes() -> list[tuple[str, int, int, int]]:
    """(group, M, N, K) of the zoo, then of the matmul_shapes experiment's held-out 2-D products not in it: a tuned
    shape's choice also routes the untuned shapes nearest to it, which a comparison of the zoo alone misses."""
    from ..experiments.matmul_shapes import HELD_OUT
    from ..tune.matmul import ZOO

    shapes = {(m, n, k): (group, m, n, k) for group, m, n, k in ZOO}
    for s in HELD_OUT:
        if not (s.batch_a or s.batch_b or s.vector):
            shapes.setdefault((s.m, s.n, s.k), (s.group, s.m, s.n, s.k))
    return list(shapes.values())


def compare(old: dict, new: dict, device: dict, max_flops: float = MAX_FLOPS) -> tuple[list[dict], int]:
    """(one record per compared shape (:func:`compared_shapes`) whose route differs between the two entries, the
    number of shapes routed alike)."""
    from ..gpu import runtime
    from ..ops.matmul import choice as C

    sms = int(device["sm_count"])
    records, same = [], 0
    with runtime.work_stream():
        for group, m, n, k in compared_shapes():
            if C.is_gemv(m, n) or 2.0 * m * n * k > max_flops:
                continue
            ro, rn = (C.route(m, n, k, True, e, sms) for e in (old, new))
            if ro.choice == rn.choice:
                same += 1
                continue
            stats = time_choices(m, n, k, dict(old=ro.choice, new=rn.choice))
            t = {name: s.median for name, s in stats.items()}
            records.append(dict(group=group, shape=table.mnk_name(m, n, k), kind=rn.kind, old=_label(ro.choice),
                                new=_label(rn.choice), old_config=ro.choice.config.name,
                                new_config=rn.choice.config.name, median_s=t, old_over_new=t["old"] / t["new"],
                                stats={name: dict(median=s.median, p10=s.p10, p90=s.p90, n=s.n)
                                       for name, s in stats.items()}))
    return records, same


def markdown(records: list[dict], same: int) -> str:
    """The comparison as a table (times in us; old/new > 1: the new choice is faster) and its summary line."""
    lines = ["| group | shape | old | new | old us | new us | old/new | cuBLAS/old | cuBLAS/new |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        t = r["median_s"]
        lines.append(f"| {r['group']} | {r['shape']} | {r['old']} | {r['new']} | {1e6 * t['old']:.1f} | "
                     f"{1e6 * t['new']:.1f} | {r['old_over_new']:.3f} | {t['cuBLAS'] / t['old']:.3f} | "
                     f"{t['cuBLAS'] / t['new']:.3f} |")
    ratios = [r["old_over_new"] for r in records]
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    lines += ["", f"{same} shapes with the same choice; {len(records)} compared; geometric mean old/new "
              f"{geomean:.3f}, worst {min(ratios, default=float('nan')):.3f}"]
    return "\n".join(lines)


def nearest_tuned(shape: str, chosen: dict) -> str:
    """The tuned shape nearest to ``shape`` (sum of |log2| ratios of M, N and K; ties: the first by name)."""
    mnk = table.parse_mnk(shape)
    return min(sorted(chosen), key=lambda s: sum(abs(math.log2(x / y)) for x, y in zip(mnk, table.parse_mnk(s))))


def keep(old: dict, new: dict, device: dict, metric: str, log=print, slower: float = SLOWER) -> dict:
    """The re-tuned ``new`` entry, kept where it is not slower than the installed ``old`` on the compared shapes (both
    timed in this run, :func:`compare`): {"entry": the entry to install or None, "compared": the first comparison's
    records, "kept_compared": the second's}. ``log`` gets each comparison as markdown."""
    records, same = compare(old, new, device)
    log(f"{device['name']}: installed vs re-tuned\n\n{markdown(records, same)}")
    revert: dict = {}
    for r in records:
        if r["old_over_new"] < slower:
            revert.setdefault(nearest_tuned(r["shape"], new["chosen"]), []).append(
                f"{r['shape']} (old/new {r['old_over_new']:.3f})")
    kept = new
    for shape, why in sorted(revert.items()):
        kept = table.keep_choices(kept, old, [shape], f"the new one made {', '.join(why)} slower in the same "
                                  "run", metric)
    again = records
    if revert:
        again, same = compare(old, kept, device)
        log(f"{device['name']}: installed vs re-tuned with the installed choice kept at "
            f"{', '.join(sorted(revert))}\n\n{markdown(again, same)}")
    still = [r["shape"] for r in again if r["old_over_new"] < slower]
    if still:
        log(f"not installable: still slower at {', '.join(still)}")
    return dict(entry=None if still else kept, compared=records, kept_compared=again)
