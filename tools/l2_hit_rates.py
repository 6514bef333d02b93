#!/usr/bin/env python3
"""L2 hit rates of the l2_persist sliding-window benchmark (seed 003, Best Practices 9.2.2.2), per point.

    python3 tools/l2_hit_rates.py time OUT.json      # CUDA-event medians per point (no profiler)
    ncu --clock-control none --cache-control none --kernel-name sliding_window --csv --metrics M,... \
        python3 tools/l2_hit_rates.py profile OUT.json > ncu.csv    # each point: 2 warm-up launches + 1
    python3 tools/l2_hit_rates.py summarize time.json profile.json ncu.csv   # markdown table on stdout

Points: the regions of the l2_persist experiment (1/3 to 2x the largest set-aside, streaming region 8x L2) under
five settings - no window with the set-aside limit as found, with limit 0 and with the largest limit, and a
window with hitRatio 1.0 or the seed's tuned hitRatio (largest limit) - plus a sweep of the limit with no window
at the smallest region. Every point starts with the persisting lines reset; the device is left as found.
"""

from __future__ import annotations

import csv
import json
import statistics
import sys

import numpy as np

FRACTIONS = (1 / 3, 1 / 2, 2 / 3, 5 / 6, 1.0, 1.25, 1.5, 2.0)
LIMIT_SWEEP = (0.0, 0.125, 0.25, 0.5, 0.75, 1.0)  # of the largest set-aside, no window, smallest region
SETTINGS = ("no window, limit as found", "no window, limit 0", "no window, limit max", "hit_ratio 1.0",
            "tuned hit_ratio")
METRICS = ("gpu__time_duration.sum", "lts__t_sector_hit_rate.pct", "lts__t_sectors_lookup_hit.sum",
           "lts__t_sectors_lookup_miss.sum", "dram__bytes_read.sum", "dram__bytes_write.sum")
WARMUP, SAMPLES = 2, 20


def points(set_aside: int, limit_found: int, block: int):
    """(label, region bytes, limit bytes, window kind) for every point, in launch order."""
    regions = [max(4 * block, int(f * set_aside) // 4 * 4) for f in FRACTIONS]
    limit = {"no window, limit as found": limit_found, "no window, limit 0": 0}
    for region in regions:
        for s in SETTINGS:
            yield s, region, limit.get(s, set_aside), s if "window," not in s else None
    for f in LIMIT_SWEEP:
        yield f"no window, limit {f:g} x max", regions[0], int(f * set_aside), None


def measure(mode: str, out_path: str) -> None:
    import cupy

    from gpumemlab.experiments.l2_persist import window_for
    from gpumemlab.gpu import l2, runtime
    from gpumemlab.kernels import blocks_for
    from gpumemlab.kernels import l2 as K

    ws = runtime.work_stream()
    lim = l2.limits()
    set_aside, found = lim["max_set_aside"], l2.persisting_limit()
    prev_window = l2.get_window(ws.handle)
    data_size = 8 * lim["l2_bytes"] // 4 // K.BLOCK * K.BLOCK
    rng = np.random.default_rng(0)
    streaming = cupy.asarray(rng.integers(1, 2**32, data_size, dtype=np.uint32))
    persistent = cupy.asarray(rng.integers(1, 2**32, int(2.0 * set_aside) // 4 + K.BLOCK, dtype=np.uint32))
    kernel = runtime.get_kernel(K.SLIDING_WINDOW)
    grid = blocks_for(data_size, K.BLOCK)
    rows = []
    try:
        for label, region, limit, policy in points(set_aside, found, K.BLOCK):
            ws.sync()
            l2.set_persisting_limit(limit)
            window = window_for(policy, persistent.data.ptr, region, set_aside, lim["max_window"]) if policy \
                else l2.NO_WINDOW
            l2.set_window(window, ws.handle)
            l2.reset_persisting_lines()
            args = (persistent, streaming, np.uint32(data_size), np.uint32(region // 4))
            n = WARMUP + (SAMPLES if mode == "time" else 1)
            times = []
            for i in range(n):
                start = ws.record_timing()
                runtime.launch(kernel, grid, K.BLOCK, *args, stream=ws)
                end = ws.record_timing()
                if i >= WARMUP:
                    end.sync()
                    times.append(runtime.elapsed_s(start, end))
            rows.append(dict(label=label, region=region, limit=l2.persisting_limit(), window=vars(window),
                             launches=n, times_s=times))
    finally:
        ws.sync()
        l2.set_window(prev_window, ws.handle)
        l2.set_persisting_limit(found)
        l2.reset_persisting_lines()
    info = runtime.device_info()
    with open(out_path, "w") as f:
        json.dump(dict(device=info["name"], l2_bytes=lim["l2_bytes"], max_set_aside=set_aside, limit_found=found,
                       limit_after=l2.persisting_limit(), streaming_bytes=4 * data_size, rows=rows), f, indent=1)


def ncu_rows(path: str) -> list[dict]:
    """One dict per profiled launch (metric name -> float), in launch order, from ``ncu --csv`` output."""
    with open(path) as f:
        lines = [ln for ln in f if ln.startswith('"')]  # the CSV part; the program's own lines are dropped
    launches: dict[int, dict] = {}
    for rec in csv.DictReader(lines):
        value = rec["Metric Value"].replace(",", "")
        launches.setdefault(int(rec["ID"]), {})[rec["Metric Name"]] = float(value) if value else float("nan")
    return [launches[k] for k in sorted(launches)]


def summarize(time_path: str, profile_path: str, ncu_path: str) -> str:
    timed, prof = json.load(open(time_path)), json.load(open(profile_path))
    launches = ncu_rows(ncu_path)
    mib = 2**20
    out = [f"Device: {timed['device']}; L2 {timed['l2_bytes'] / mib:g} MiB, largest set-aside "
           f"{timed['max_set_aside'] / mib:g} MiB, set-aside limit as found {timed['limit_found']} B "
           f"(after: {timed['limit_after']} B); streaming region {timed['streaming_bytes'] / mib:g} MiB.", "",
           "| setting | region MiB | limit MiB | median us (events, 20) | ncu us | L2 hit % | L2 hit sectors | "
           "L2 miss sectors | DRAM read MiB | DRAM write MiB | DRAM GB/s |", "|" + "---|" * 11]
    i = 0
    for t, p in zip(timed["rows"], prof["rows"]):
        i += p["launches"]
        m = launches[i - 1]  # the last launch of the point (after its warm-up)
        out.append(f"| {t['label']} | {t['region'] / mib:.2f} | {t['limit'] / mib:.2f} | "
                   f"{statistics.median(t['times_s']) * 1e6:.1f} | {m['gpu__time_duration.sum'] / 1e3:.1f} | "
                   f"{m['lts__t_sector_hit_rate.pct']:.1f} | {m['lts__t_sectors_lookup_hit.sum']:.0f} | "
                   f"{m['lts__t_sectors_lookup_miss.sum']:.0f} | {m['dram__bytes_read.sum'] / mib:.1f} | "
                   f"{m['dram__bytes_write.sum'] / mib:.1f} | "
                   f"{(m['dram__bytes_read.sum'] + m['dram__bytes_write.sum']) / m['gpu__time_duration.sum']:.0f} |")
    if i != len(launches):
        raise SystemExit(f"summarize: {len(launches)} profiled launches, the points account for {i}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] in ("time", "profile"):
        measure(sys.argv[1], sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "summarize":
        sys.stdout.write(summarize(*sys.argv[2:]))
    else:
        sys.exit(__doc__)
