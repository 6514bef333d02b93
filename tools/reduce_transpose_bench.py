"""Short benchmark of issue 5's experiments with their default parameters: a table per experiment, the
headline ratios (sum vs cupy/torch, transpose vs copy/cupy/torch), wall time per experiment, results JSON.

    python3 tools/reduce_transpose_bench.py [OUT_DIR] [experiment ...]
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np

EXPERIMENTS = ["reduce", "transpose", "divergence", "intrinsics", "launch_config"]


def measure_ceilings(session) -> None:
    """copy_gbps (best of cudaMemcpy D2D and copy_vec float4 x4) and read_gbps (read_sum) on 8 x L2."""
    import cupy

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments._copies import copy_kernel_runner, memcpy_runner
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import copy as C

    n = session.dram_bytes(8.0) // 4
    n -= n % 16
    src = device_random_nonzero(n, np.float32, 1)
    dst = cupy.empty_like(src)
    copies = [session.measure(experiment="ceilings", variant=v, params={}, run=fn, bytes=2 * src.nbytes,
                              kind="baseline")
              for v, fn in (("memcpy", memcpy_runner(dst, src)),
                            ("copy_vec", copy_kernel_runner(session, "float4", 4, dst, src)))]
    reads = []
    for u in (2, 4):
        spec = C.read_sum(u)
        grid = session.sm_count * runtime.max_active_blocks(spec, 256)
        part = cupy.empty(grid * 256, np.float32)
        k = runtime.get_kernel(spec)
        fn = (lambda k, g, p: lambda: runtime.launch(k, g, 256, p, src, np.int64(n // 4)))(k, grid, part)
        reads.append(session.measure(experiment="ceilings", variant=f"read_sum<{u}>", params={}, run=fn,
                                     bytes=src.nbytes, kind="baseline"))
    session.ceilings["copy_gbps"] = dict(value=max(r.gbps for r in copies), unit="GB/s", how="best of memcpy, copy_vec")
    session.ceilings["memcpy_gbps"] = dict(value=copies[0].gbps, unit="GB/s", how="cudaMemcpy D2D")
    session.ceilings["read_gbps"] = dict(value=max(r.gbps for r in reads), unit="GB/s", how="read_sum, persistent grid")
    info = runtime.device_info()
    clock_ghz = info["sm_clock_khz"] / 1e6
    session.ceilings["fp32_peak_gflops"] = dict(value=info["sm_count"] * 128 * 2 * clock_ghz, unit="GFLOP/s",
                                                how="SMs x 128 FP32 lanes x 2 x max clock")
    session.records = [r for r in session.records if r.experiment != "ceilings"]


def fmt(v, spec=".1f"):
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, spec)


def table(records) -> str:
    lines = [f"{'variant':44} {'params':34} {'median us':>10} {'GB/s':>8} {'Gop/s':>9} {'%ceil':>6} {'xnaive':>7}  baselines (ratio >1: ours faster)"]
    for r in records:
        p = {k: v for k, v in r.params.items() if k not in ("mib",)}
        base = " ".join(f"{k.split(' ')[0]}={fmt(b.get('ratio'), '.2f')}" for k, b in r.baselines.items())
        extra = r.extra.get("pct_of_copy_in_run")
        note = f" {extra:.1f}%copy" if extra else ""
        lines.append(f"{r.variant[:44]:44} {str(p)[:34]:34} {fmt(r.median_s * 1e6, '.1f'):>10} {fmt(r.gbps):>8} "
                     f"{fmt(r.gflops):>9} {fmt(r.pct_of_ceiling):>6} {fmt(r.speedup_vs_naive, '.2f'):>7}  {base}{note}")
    return "\n".join(lines)


def headline(records) -> list[str]:
    out = []
    by = {}
    for r in records:
        by.setdefault((r.experiment, r.variant, r.params.get("n")), r)
    for (exp, var, n), r in by.items():
        if exp == "reduce" and var == "gpumemlab.sum":
            for b in ("cupy.sum", "torch.sum"):
                if (exp, b, n) in by:
                    out.append(f"sum n=2^{math.log2(n):.0f}: {r.gbps:.0f} GB/s = {100 * r.gbps / by[(exp, b, n)].gbps:.1f}% of {b} ({by[(exp, b, n)].gbps:.0f} GB/s)")
        if exp == "transpose" and var == "gpumemlab.transpose":
            for b in ("cudaMemcpy D2D (ceiling)", "copy_vec float4 x4 (ceiling)", "cupy.ascontiguousarray(x.T)",
                      "torch.t().contiguous()"):
                if (exp, b, n) in by:
                    out.append(f"transpose {n}^2 {r.params.get('dtype')}: {r.gbps:.0f} GB/s = "
                               f"{r.gbps / by[(exp, b, n)].gbps:.3f} x {b} ({by[(exp, b, n)].gbps:.0f} GB/s)")
    return out


def main(argv) -> int:
    from gpumemlab.bench.session import Session
    from gpumemlab.experiments import get
    from gpumemlab.suite.runner import run_experiment
    from gpumemlab.gpu import runtime

    out_dir = Path(argv[1]) if len(argv) > 1 else Path(".")
    names = argv[2:] or EXPERIMENTS
    session = Session()
    print("device:", json.dumps({k: runtime.device_info()[k] for k in ("name", "cc", "sm_count", "l2_bytes",
                                                                         "sm_clock_khz", "driver_version")}))
    import cupy

    print(f"streams: work {session.stream.handle:#x}, CuPy current {cupy.cuda.get_current_stream().ptr:#x}")
    t0 = time.perf_counter()
    try:  # the suite's own ceilings (copy, read, SGEMM); ours (copy, read) if that fails
        from gpumemlab.suite.ceilings import measure_ceilings as suite_ceilings

        suite_ceilings(session)
    except Exception as exc:
        print(f"bench.ceilings failed ({type(exc).__name__}: {exc}); measuring copy/read here")
        measure_ceilings(session)
    print(f"after ceilings: CuPy current {cupy.cuda.get_current_stream().ptr:#x}")
    print("ceilings:", json.dumps({k: round(v["value"], 1) for k, v in session.ceilings.items()}),
          f"({time.perf_counter() - t0:.1f} s)")
    results, walls, status = [], {}, 0
    import cupy

    for name in names:
        exp = get(name)
        current = cupy.cuda.get_current_stream().ptr
        if int(current) != session.stream.handle:  # diagnostics: who moved CuPy off the work stream?
            print(f"NOTE before {name}: CuPy's current stream {current:#x} != work stream {session.stream.handle:#x}")
        t = time.perf_counter()
        try:
            recs = run_experiment(session, exp, dict(exp.params))
        except Exception as exc:  # keep going: one run of this script must report everything it can
            import traceback

            traceback.print_exc()
            print(f"EXPERIMENT {name} FAILED: {exc}")
            partial = [r for r in session.records if r.experiment == name]
            if partial:  # what was measured before the failure is still worth reading
                print(f"{len(partial)} records measured before the failure:\n{table(partial)}")
            status = 1
            continue
        walls[name] = time.perf_counter() - t
        results += recs
        print(f"\n== {name} ({walls[name]:.1f} s) — {exp.seed_claim}\n{table(recs)}")
        for line in exp.describe(recs)["findings"]:
            print("   finding:", line)
        if name == "intrinsics":
            for r in recs:
                a = r.extra["accuracy"]
                print(f"   {r.variant:10} max {a['max_ulp']:.3g} ulp (mean {a['mean_ulp']:.3g}), max abs {a['max_abs_error']:.3g}, "
                      f"max rel {a['max_rel_error']:.3g}, worst at x={a['worst_x']:.6g}; guide: {r.extra['guide']}")
        if name == "launch_config":
            for r in recs:
                m = r.model or {}
                print(f"   {r.variant:20} regs={m.get('registers')} spill_st={m.get('spill_store_bytes')} "
                      f"spill_ld={m.get('spill_load_bytes')} occ_driver={fmt(m.get('driver_occupancy_pct'))}% "
                      f"occ_model={fmt(m.get('model_occupancy_pct'))}%")
    print("\n== headline")
    for line in headline(results):
        print(line)
    print("wall seconds per experiment:", json.dumps({k: round(v, 1) for k, v in walls.items()}),
          f"total {sum(walls.values()):.1f}")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps(dict(
        device=runtime.device_info(), ceilings=session.ceilings, walls=walls,
        results=[r.to_dict() for r in results]), default=lambda o: o.item() if hasattr(o, "item") else str(o)))
    session.close()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
