#!/usr/bin/env python3
"""Tune gpumemlab's register_blocked SGEMM on this GPU (device script).

1. correctness of every candidate configuration (``kernels.matmul.CANDIDATES``), both the aligned
   (vec 4) and the any-size (vec 1) instantiation, on odd shapes against a float64 reference -
   in a child process, so that a kernel fault cannot take the timings with it;
2. timing of every correct candidate and of cuBLAS SGEMM (FP32, TF32 off) in the same process at
   1024^3, 4096^3, 8192^3 and M x N x K = 4096 x 1000 x 8192 (each result verified first);
3. writes ``<out>/matmul_tuned.json`` ({"devices": {name: entry}}, the format of
   ``src/gpumemlab/kernels/tuned/matmul.json``) and prints a table, including what ``auto`` picks.

Usage: PYTHONPATH=src python3 tools/matmul_tune.py --out DIR [--configs NAME ...] [--shapes MxNxK ...]
       (--table TUNED_JSON prints one as markdown; --profile CONFIG ... is the program ncu profiles)
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

SHAPES = ["1024x1024x1024", "4096x4096x4096", "8192x8192x8192", "4096x1000x8192"]
CHECKS = {4: [(256, 256, 256), (260, 132, 36), (300, 1000, 516), (4, 4, 4)],
          1: [(1000, 777, 1023), (7, 13, 5), (129, 67, 9), (1, 1, 1)]}


def parse_shape(text: str) -> tuple[int, int, int]:
    m, n, k = (int(x) for x in text.lower().split("x"))
    return m, n, k


def check(names: list[str]) -> dict:
    """{config name: None if correct else the error} for the named candidates (plain and split-K)."""
    import numpy as np

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments._matmul import Reference
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels.matmul import RBConfig
    from gpumemlab.ops.matmul import register_blocked_plan

    import cupy

    ws = runtime.work_stream()
    result = {}
    with ws:
        for name in names:
            cfg = RBConfig.from_name(name)
            try:
                for vec, shapes in CHECKS.items():
                    for (m, n, k), splits in [(s, 1) for s in shapes] + [(shapes[0], 3)]:
                        a = device_random_nonzero((m, k), np.float32, m + k)
                        b = device_random_nonzero((k, n), np.float32, n + 1)
                        out = cupy.empty((m, n), cupy.float32)
                        p = register_blocked_plan(a, b, out, cfg, vec, splits)
                        Reference(a, b).verifier(p.run, out, f"{name} vec{vec} {m}x{n}x{k} splits {p.splits}")()
                result[name] = None
            except Exception as exc:  # report and go on: a wrong config is dropped, not fatal
                result[name] = f"{type(exc).__name__}: {exc}"
                if "CUDA_ERROR" in str(exc) or "illegal" in str(exc).lower():
                    raise
    return result


def check_isolated(names: list[str]) -> dict:
    """Run :func:`check` in a child; if the child dies (a sticky CUDA fault), one child per config."""
    cmd = [sys.executable, __file__, "--check-only", *names]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 0:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"checker died (rc {proc.returncode}); isolating configs\n{proc.stderr[-2000:]}", flush=True)
    out = {}
    for name in names:
        p = subprocess.run([sys.executable, __file__, "--check-only", name], capture_output=True, text=True)
        out[name] = (json.loads(p.stdout.strip().splitlines()[-1])[name] if p.returncode == 0
                     else f"crashed (rc {p.returncode}): {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''}")
    return out


def tune(names: list[str], shapes: list[str]) -> dict:
    import numpy as np

    import cupy

    from gpumemlab.bench.stats import gflop_per_s
    from gpumemlab.bench.timer import TimerConfig, time_gpu
    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments._matmul import Reference, cublas_runner
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels.matmul import RBConfig
    from gpumemlab.ops.matmul import _split_options, choose, register_blocked_plan

    stream = runtime.work_stream()
    info = runtime.device_info()
    print(f"CuPy current stream {cupy.cuda.get_current_stream().ptr:#x}, work stream {stream.handle:#x}", flush=True)
    cfg_timer = TimerConfig(warmup=2, min_samples=10, min_time_s=0.05, max_time_s=0.4)
    configs = {n: RBConfig.from_name(n) for n in names}
    occupancy = {}
    for name, cfg in configs.items():
        kernel = runtime.get_kernel(cfg.spec(4))
        if cfg.smem_bytes > 48 * 1024:
            runtime.set_max_dynamic_shared(kernel, cfg.smem_bytes)
        occupancy[name] = runtime.max_active_blocks(kernel, cfg.threads, cfg.smem_bytes)
    table = {s: {} for s in shapes}     # shape -> config -> best GFLOP/s over its split options
    best_split = {s: {} for s in shapes}
    cublas = {}
    with stream:
        for shape in shapes:
            m, n, k = parse_shape(shape)
            a = device_random_nonzero((m, k), np.float32, 1)
            b = device_random_nonzero((k, n), np.float32, 2)
            out = cupy.empty((m, n), cupy.float32)
            ref = Reference(a, b)
            flops = 2.0 * m * n * k
            blas = cublas_runner(a, b, out)
            ref.verifier(blas, out, "cuBLAS")()
            cublas[shape] = gflop_per_s(flops, time_gpu(blas, stream=stream, cfg=cfg_timer).stats.median)
            for name, cfg in configs.items():
                for splits in _split_options(cfg, m, n, k, max(1, occupancy[name]) * info["sm_count"]):
                    p = register_blocked_plan(a, b, out, cfg, None, splits)
                    try:
                        ref.verifier(p.run, out, f"{name} splits {splits}")()
                    except Exception as exc:
                        print(f"{shape} {name} splits {splits}: {exc}", flush=True)
                        continue
                    g = gflop_per_s(flops, time_gpu(p.run, stream=stream, cfg=cfg_timer).stats.median)
                    if g > table[shape].get(name, 0.0):
                        table[shape][name], best_split[shape][name] = g, p.splits
            # cuBLAS once more at the end of the shape: clocks drift; keep its better number
            cublas[shape] = max(cublas[shape],
                                gflop_per_s(flops, time_gpu(blas, stream=stream, cfg=cfg_timer).stats.median))
            del a, b, out, ref
            cupy.get_default_memory_pool().free_all_blocks()

    squares = [s for s in shapes if len(set(parse_shape(s))) == 1]
    big = max(squares or shapes, key=lambda s: parse_shape(s)[0])
    entry = dict(
        tool="tools/matmul_tune.py", date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        device=dict(name=info["name"], cc=info["cc"], sm_count=info["sm_count"], nvrtc=info["nvrtc_version"],
                    driver=info["driver_version"]),
        rate_shape=big,
        configs=[dict(name=n, blocks_per_sm=occupancy[n], rate_gflops=table[big].get(n),
                      gflops={s: table[s].get(n) for s in shapes}, splits={s: best_split[s].get(n) for s in shapes})
                 for n in names if table[big].get(n)],
        shapes={},
    )
    for shape in shapes:
        if table[shape]:
            win = max(table[shape], key=table[shape].get)
            entry["shapes"][shape] = dict(winner=win, splits=best_split[shape][win], gflops=table[shape][win],
                                          cublas_gflops=cublas[shape],
                                          pct_of_cublas=100.0 * table[shape][win] / cublas[shape])
    # what `auto` does on shapes it was not tuned on: the wave model over the measured rates
    model_entry = dict(entry, shapes={})
    entry["model_check"] = {}
    for s in shapes:
        c = choose(*parse_shape(s), device=info, entry=model_entry)
        entry["model_check"][s] = dict(config=c.config.name, splits=c.splits)
    return dict(entry=entry, table=table, cublas=cublas, occupancy=occupancy, splits=best_split)


def print_table(res: dict, shapes: list[str]) -> None:
    table, cublas, entry, occ, splits = res["table"], res["cublas"], res["entry"], res["occupancy"], res["splits"]
    names = sorted({n for s in shapes for n in table[s]}, key=lambda n: -(table[shapes[-2 if len(shapes) > 1 else -1]].get(n) or 0))
    print("\nGFLOP/s (and % of cuBLAS FP32 measured in the same run); /sN: best split-K factor")
    print(f"{'config':36s} {'occ':>3s} " + " ".join(f"{s:>24s}" for s in shapes))
    print(f"{'cuBLAS SGEMM (TF32 off)':36s} {'':>3s} " + " ".join(f"{cublas[s]:>24,.0f}" for s in shapes))
    for n in names:
        cells = []
        for s in shapes:
            g = table[s].get(n)
            sp = splits[s].get(n, 1)
            cells.append(f"{g:>12,.0f} ({100 * g / cublas[s]:5.1f}%){'/s%d' % sp if sp > 1 else '   '}" if g
                         else f"{'-':>24s}")
        print(f"{n:36s} {occ.get(n, 0):>3d} " + " ".join(cells))
    print("\nauto (tuned winners):")
    for s, w in entry["shapes"].items():
        print(f"  {s:>16s}: {w['winner']:36s} splits {w['splits']} {w['gflops']:>10,.0f} GFLOP/s "
              f"= {w['pct_of_cublas']:.1f}% of cuBLAS")
    print("wave model (untuned shapes) would pick:", json.dumps(entry["model_check"]))


def bench(out_dir: str, names: list[str]) -> None:
    """Ceilings + the matmul experiments with their declared defaults (what `gpumemlab bench --only` runs),
    importing only these experiment modules; writes results.json (and report.md when the report renders)."""
    import importlib

    from gpumemlab.suite.ceilings import measure_ceilings
    from gpumemlab.suite.runner import run_experiment
    from gpumemlab.bench.records import RunResults
    from gpumemlab.bench.session import Session
    from gpumemlab.gpu import runtime

    session = Session()
    t0 = time.time()
    measure_ceilings(session)
    print(f"ceilings {time.time() - t0:.1f} s", flush=True)
    describe, errors = {}, []
    for name in names:
        exp = importlib.import_module(f"gpumemlab.experiments.{name}").EXPERIMENT
        t = time.time()
        n0 = len(session.records)
        try:
            run_experiment(session, exp, dict(exp.params))
        except Exception as exc:
            errors.append(dict(experiment=name, error=f"{type(exc).__name__}: {exc}"))
        describe[name] = exp.describe(session.records[n0:])
        print(f"{name}: {len(session.records) - n0} records in {time.time() - t:.1f} s", flush=True)
    session.close()
    res = RunResults(meta=dict(command="tools/matmul_tune.py --bench", wall_s=time.time() - t0),
                     device=runtime.device_info(), ceilings=session.ceilings, results=session.records,
                     experiments=describe, errors=errors)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    res.save(out / "results.json")
    try:
        from gpumemlab.report.markdown import render

        (out / "report.md").write_text(render(res))
    except Exception as exc:  # the report is another module's job; the JSON is the source of truth
        print(f"report not rendered: {exc}")
    for name, info in describe.items():
        for f in info.get("findings") or []:
            print(f"{name}: {f}")


def install(path: str) -> None:
    """Merge the device entries of a matmul_tuned.json into src/gpumemlab/kernels/tuned/matmul.json."""
    from gpumemlab.ops.matmul import TUNED_PATH

    new = json.loads(Path(path).read_text())["devices"]
    target = Path(TUNED_PATH)
    data = json.loads(target.read_text()) if target.exists() else {}
    data.setdefault("about", "register_blocked tuning per device name, written by tools/matmul_tune.py "
                             "(measured: never edit by hand; rerun the tool on the device instead)")
    data.setdefault("devices", {}).update(new)
    data["devices"] = dict(sorted(data["devices"].items()))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=1) + "\n")
    print(f"installed {', '.join(new)} into {target}")


def summarize(path: str) -> None:
    """Print the matmul experiments' records of a results.json compactly (the device log's table)."""
    data = json.loads(Path(path).read_text())
    print(f"device: {data['device'].get('name')}; wall {data['meta'].get('wall_s', 0):.0f} s; "
          f"cuBLAS ceiling {data['ceilings'].get('sgemm_cublas_gflops', {}).get('value', 0):,.0f} GFLOP/s")
    for e in data.get("errors", []):
        print("ERROR", e)
    print(f"{'experiment':17s} {'variant':24s} {'params':22s} {'median':>10s} {'GFLOP/s':>9s} {'GB/s':>8s} "
          f"{'%cuBLAS':>7s} {'%peak':>6s} {'OP/B':>6s} {'x prev':>6s} n")
    for r in data["results"]:
        if not r["experiment"].startswith("matmul"):
            continue
        x = r.get("extra") or {}
        opb = (r.get("model") or {}).get("op_per_byte")
        params = ",".join(f"{v}" for k, v in r["params"].items() if k != "op") or "-"
        if r["params"].get("op"):
            params = r["params"]["op"] + ":" + params
        print(f"{r['experiment']:17s} {r['variant'][:24]:24s} {params[:22]:22s} {r['time_s']['median'] * 1e3:9.3f}ms "
              f"{r.get('gflops') or 0:9,.0f} {r.get('gbps') or 0:8,.1f} {x.get('pct_of_cublas', 0):7.1f} "
              f"{x.get('pct_of_fp32_peak', 0):6.1f} {opb or 0:6.2f} {x.get('speedup_vs_previous', 0):6.2f} "
              f"{r['time_s'].get('n')}" + (f"  [{x['config']} vec{x.get('vec')} splits{x.get('splits', 1)}]" if x.get("config") else "")
              + (f"  transpose {x['transpose_s'] * 1e3:.2f} ms" if x.get("transpose_s") else ""))


def markdown_table(path: str) -> str:
    """Markdown tables (one per device) of a matmul_tuned.json: TFLOP/s and % of cuBLAS per config and shape."""
    out = []
    for device, e in json.loads(Path(path).read_text())["devices"].items():
        shapes = list(e["shapes"])
        out += [f"{device} ({e['date']}, {e['tool']}):", "",
                "| config | blocks/SM | " + " | ".join(shapes) + " |", "|---|---|" + "---|" * len(shapes),
                "| cuBLAS SGEMM (TF32 off) | | " + " | ".join(f"{e['shapes'][s]['cublas_gflops'] / 1e3:.1f}"
                                                          for s in shapes) + " |"]
        key = e.get("rate_shape") or max(shapes, key=lambda s: math.prod(parse_shape(s)))  # rows by the largest shape's rate
        for c in sorted(e["configs"], key=lambda c: -(c["gflops"].get(key) or 0)):
            cells = []
            for s in shapes:
                g, sp = c["gflops"].get(s), (c.get("splits") or {}).get(s) or 1
                cells.append("-" if not g else f"{g / 1e3:.1f} ({100 * g / e['shapes'][s]['cublas_gflops']:.1f}%"
                             + (f", split {sp})" if sp > 1 else ")"))
            out.append(f"| {c['name']} | {c['blocks_per_sm']} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def profile(names: list[str], shape: str = "4096x4096x4096") -> None:
    """Run each named config and cuBLAS twice at ``shape`` and nothing else (no reference, no timer):
    the program that ``ncu`` profiles in tools/matmul_device.sh's profile step."""
    import numpy as np

    import cupy

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments._matmul import cublas_runner
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels.matmul import RBConfig
    from gpumemlab.ops.matmul import register_blocked_plan

    m, n, k = parse_shape(shape)
    with runtime.work_stream() as ws:
        a = device_random_nonzero((m, k), np.float32, 1)
        b = device_random_nonzero((k, n), np.float32, 2)
        out = cupy.empty((m, n), cupy.float32)
        runs = [("cuBLAS", cublas_runner(a, b, out))]
        runs += [(name, register_blocked_plan(a, b, out, RBConfig.from_name(name), 4, 1).run) for name in names]
        for label, run in runs:
            for _ in range(2):
                run()
            ws.sync()
            print(f"profiled {label} at {shape}", flush=True)


def usage(arch: str | None) -> None:
    """ptxas's report (registers, spills) for every candidate instantiation, with this machine's NVRTC."""
    from gpumemlab.gpu.compile import compile_specs, nvrtc_version
    from gpumemlab.kernels.matmul import CANDIDATES

    if arch is None:
        from gpumemlab.gpu import runtime

        arch = runtime.device_arch()
    specs = [c.spec(v, sp) for c in CANDIDATES for v in (4, 1) for sp in (False, True)]
    print(f"ptxas report, {arch}, NVRTC {nvrtc_version()}")
    for spec, (_mod, u) in compile_specs(specs, arch).items():
        print(f"  {spec.name:78s} regs {u.registers:3d} spill {u.spill_store_bytes}/{u.spill_load_bytes} "
              f"stack {u.local_bytes}" if u else f"  {spec.name}: no report")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=".", help="folder for matmul_tuned.json")
    ap.add_argument("--configs", nargs="*", help="candidate names (default: all)")
    ap.add_argument("--shapes", nargs="*", default=SHAPES, help="MxNxK shapes to time")
    ap.add_argument("--check-only", nargs="*", help=argparse.SUPPRESS)
    ap.add_argument("--summarize", metavar="RESULTS_JSON", help="print the matmul records of a results.json")
    ap.add_argument("--bench", metavar="DIR", help="run the matmul experiments, write DIR/results.json")
    ap.add_argument("--install", metavar="TUNED_JSON", help="merge a matmul_tuned.json into the package's table")
    ap.add_argument("--usage", nargs="?", const="", metavar="ARCH", help="print ptxas's report for every candidate")
    ap.add_argument("--profile", nargs="+", metavar="CONFIG", help="run CONFIGs and cuBLAS at 4096^3 for ncu")
    ap.add_argument("--table", metavar="TUNED_JSON", help="print a matmul_tuned.json as markdown tables")
    args = ap.parse_args(argv)
    if args.table:
        print(markdown_table(args.table))
        return 0
    if args.profile:
        profile(args.profile)
        return 0
    if args.usage is not None:
        usage(args.usage or None)
        return 0
    if args.install:
        install(args.install)
        return 0
    if args.bench:
        bench(args.bench, ["matmul", "matmul_sizes", "matmul_shared_ab"])
        summarize(str(Path(args.bench) / "results.json"))
        return 0
    if args.summarize:
        summarize(args.summarize)
        return 0
    if args.check_only is not None:
        print(json.dumps(check(args.check_only)))
        return 0

    from gpumemlab.kernels.matmul import CANDIDATES

    names = args.configs or [c.name for c in CANDIDATES]
    t0 = time.time()
    errors = check_isolated(names)
    good = [n for n in names if errors.get(n) is None]
    for n in names:
        print(f"check {n:44s} {'ok' if errors.get(n) is None else 'FAILED: ' + str(errors[n])}", flush=True)
    print(f"correctness: {len(good)}/{len(names)} configs in {time.time() - t0:.0f} s", flush=True)
    if not good:
        return 1
    res = tune(good, list(args.shapes))
    res["entry"]["failed_checks"] = {n: e for n, e in errors.items() if e}
    name = res["entry"]["device"]["name"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "matmul_tuned.json").write_text(json.dumps({"devices": {name: res["entry"]}}, indent=1))
    print_table(res, list(args.shapes))
    print(f"\nwrote {out / 'matmul_tuned.json'} ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
