"""Pick gpumemlab.sum's configuration: every reduce7 configuration of kernels.reduce.TUNING x TUNING_WAVES
against cupy.sum (and torch.sum) in the same run, float32, cold L2.

Round 1 screens everything once at each size; round 2 re-measures the best few, the current library
configuration and the baselines in several interleaved rounds (longer samples) and reports each one's
median GB/s and its ratio to cupy.sum in the same round. Every configuration is verified against the
float64 sum within its tree bound before it is timed.

    python3 tools/reduce_transpose_tune.py [OUT_DIR] [--top 6] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default=".")
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--log2", type=int, nargs="+", default=[28, 26])
    args = ap.parse_args()

    import cupy

    from gpumemlab.bench.session import Session
    from gpumemlab.bench.timer import TimerConfig
    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments import _torch
    from gpumemlab.experiments.reduce import checker, vectorized_runner
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import reduce as K
    from gpumemlab.ops import reduce as ops_reduce

    t0 = time.perf_counter()
    session = Session()
    info = runtime.device_info()
    print("device:", info["name"], "SMs", info["sm_count"], "L2", info["l2_bytes"] >> 20, "MiB")
    torch = _torch.torch_module()
    configs = [c.with_waves(w) for c in K.TUNING for w in K.TUNING_WAVES]
    if K.LIBRARY not in configs:
        configs.append(K.LIBRARY)
    long_timer = TimerConfig(min_samples=30, min_time_s=0.25, max_time_s=1.0)
    results = {}
    for log2 in args.log2:
        with session.stream:
            n = session.fit_elements(1 << log2, 4 * 1.3, "reduce tune")
            x = device_random_nonzero(n, np.float32, 7)
            ref = float(x.sum(dtype=np.float64))
            abs_sum = float(cupy.abs(x).sum(dtype=np.float64))
            result = cupy.empty(1, np.float32)
            box = {}

            def runner(name):
                """(run, get, bound, poison) of a configuration or a baseline."""
                if name == "cupy.sum":
                    return (lambda: box.__setitem__("v", cupy.sum(x))), (lambda: box["v"]), 1e-4, box.clear
                if name == "torch.sum":
                    t = _torch.as_tensor(x)
                    fn = _torch.on_work_stream(session, lambda: box.__setitem__("v", torch.sum(t)))

                    def get():
                        session.stream.sync()
                        return box["v"].item()
                    return fn, get, 1e-4, box.clear
                cfg = by_label[name]
                fn, p = vectorized_runner(session, cfg, x, result)
                return fn, (lambda: result[0]), ops_reduce.relative_bound(p, np.float32), (lambda: result.fill(np.nan))

            by_label = {c.label: c for c in configs}
            baselines = ["cupy.sum"] + (["torch.sum"] if torch is not None else [])

            def measure(name, timer=None):
                fn, get, bound, poison = runner(name)
                rec = session.measure(experiment="reduce_tune", variant=name, params=dict(n=n), run=fn, bytes=4 * n,
                                      verify=checker(fn, get, ref, abs_sum, bound, name, poison), ceiling=None,
                                      timer=timer)
                return rec.gbps

            screen = {name: measure(name) for name in baselines + list(by_label)}
            ranked = sorted(by_label, key=lambda k: -screen[k])
            finalists = ranked[: args.top] + ([K.LIBRARY.label] if K.LIBRARY.label not in ranked[: args.top] else [])
            rounds = []
            for r in range(args.rounds):
                order = baselines + finalists if r % 2 == 0 else finalists[::-1] + baselines[::-1]
                rounds.append({name: measure(name, long_timer) for name in order})
            final = {}
            for name in baselines + finalists:
                gbps = [rd[name] for rd in rounds]
                ratios = [rd[name] / rd["cupy.sum"] for rd in rounds]
                final[name] = dict(gbps=statistics.median(gbps), gbps_rounds=gbps,
                                   vs_cupy=statistics.median(ratios), vs_cupy_rounds=ratios,
                                   vs_torch=(statistics.median([rd[name] / rd["torch.sum"] for rd in rounds])
                                             if "torch.sum" in baselines else None),
                                   config=by_label[name].as_dict() if name in by_label else None)
            results[n] = dict(screen=screen, final=final)
            print(f"\n== n = 2^{math.log2(n):.2f} ({4 * n / 2**20:.0f} MiB): screen (GB/s, one measurement each)")
            for name in baselines + ranked:
                print(f"   {name:58} {screen[name]:8.0f}  {100 * screen[name] / screen['cupy.sum']:6.1f}% of cupy.sum")
            print(f"== n = 2^{math.log2(n):.2f}: finalists, {args.rounds} interleaved rounds (median GB/s, "
                  "median of per-round ratios)")
            for name, f in sorted(final.items(), key=lambda kv: -kv[1]["gbps"]):
                torch_part = f"  {100 * f['vs_torch']:6.1f}% of torch.sum" if f["vs_torch"] else ""
                print(f"   {name:58} {f['gbps']:8.0f}  {100 * f['vs_cupy']:6.1f}% of cupy.sum{torch_part}   "
                      f"rounds {' '.join(f'{g:.0f}' for g in f['gbps_rounds'])}")
            del x
    session.close()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "reduce_tune.json").write_text(json.dumps(dict(device=info["name"], results=results), default=str))
    print(f"tune wall {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
