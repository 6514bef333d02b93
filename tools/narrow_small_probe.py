#!/usr/bin/env python3
"""Small column sums of a few columns (sum_cols_narrow, axis 0 of (rows, 2..8)) as users call them: the planned splits
(NARROW_WAVES=2: a second launch adds them) against one split (NARROW_WAVES=0: one launch, one block per column
group) and torch.sum. Host us per call (sample2d_probe.burst_us, bursts of 200, median of 5 repeats) and CUDA events
around the same bursts (ours only; torch queues on its own stream). Writes $OUT/narrow_small.json.

    PYTHONPATH=src python3 tools/narrow_small_probe.py
"""
import json
import os
import sys
sys.path.insert(0, "tools")
import cupy, numpy as np
import torch
import gpumemlab
from gpumemlab.ops import reduce_axis as RA
from sample2d_probe import burst_us
res = []
for shape in [(16384, 3), (65536, 3), (262144, 3), (1048576, 3), (65536, 8), (65536, 2), (262144, 8)]:
    x = cupy.random.default_rng(4).random(shape, dtype=np.float32) + np.float32(0.5)
    xt = torch.as_tensor(x, device="cuda")
    want = x.astype(np.float64).sum(axis=0)
    fns, plans = {}, {}
    for nw in (2, 0):
        RA.NARROW_WAVES = nw; RA._call_plan.cache_clear(); RA._prepared.cache_clear()
        prep = RA._prepared(x.shape, 0, x.dtype, None, False, False, True)
        plans[nw] = [(p.kind, p.splits) for p in prep.passes]
        out = cupy.empty(prep.shape, np.float32)
        prep.run(x, out)
        assert bool((cupy.abs(out - want) <= 1e-5 * want).all())
        def call(prep=prep):
            o = cupy.empty(prep.shape, np.float32); prep.run(x, o); return o
        fns[f"splits {plans[nw][0][1]}"] = call
    fns["torch.sum"] = lambda: xt.sum(dim=0)
    us, med = burst_us(cupy, fns, 200, repeats=5)
    # GPU time per call: events around a burst of 200 (queued ahead)
    ev = {}
    for k, f in fns.items():
        if k.startswith("torch"):
            continue  # queued on torch's own stream
        s, e = cupy.cuda.Event(), cupy.cuda.Event()
        for _ in range(20): f()
        times = []
        for _ in range(5):
            s.record(); [f() for _ in range(200)]; e.record(); e.synchronize(); times.append(cupy.cuda.get_elapsed_time(s, e) / 200 * 1e3)
        ev[k] = sorted(times)[2]
    print(shape, plans, {k: round(v, 1) for k, v in med.items()}, "events", {k: round(v, 1) for k, v in ev.items()}, flush=True)
    res.append(dict(shape=shape, plans={str(k): v for k, v in plans.items()}, us=us, events_us=ev))
json.dump(res, open(os.path.join(os.environ.get("OUT", "."), "narrow_small.json"), "w"), indent=1)
