#!/usr/bin/env python3
"""Check the analyzer against the GPU: Nsight Compute counters and the driver's occupancy.

    python -m gpumemlab.ncu.recorded OUTDIR [--only NAME ...] [--skip-occupancy]
    python -m gpumemlab.ncu.recorded OUTDIR --dry-run [--arch sm_90]   # no GPU: compile and predict

1. Single-warp access cases (float/float2/float3/float4/double/char, strides, offsets, broadcast,
   masks, 2-D tiles, 8-/16-byte shared accesses): the model's requests/sectors or
   wavefronts/conflicts for this GPU's compute capability vs ncu's l1tex counters, all cases in one
   ncu run (see gpumemlab.ncu). Writes OUTDIR/ncu_cases.json, the file that
   tests/model/data/ncu_cases.json records.
2. Occupancy of the package's kernels (registers and shared memory from ptxas) vs
   cuOccupancyMaxActiveBlocksPerMultiprocessor. Writes OUTDIR/occupancy_cases.json.

A failing case is reported and the run goes on. Exit code 0 when everything agrees, 1 otherwise, 2 for
bad input or no GPU (one line). ``--dry-run`` needs no GPU: it compiles the microkernels and the package's
kernels for ``--arch`` and prints the model's answers (files *_dry_run.json); exit 0 when all compiled.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

COMMAND = "python -m gpumemlab.ncu.recorded OUTDIR"


def c(name, access, decl, block=32, lets=(), active=None, offset=0):
    return dict(name=name, access=access, decl=decl, block=block, lets=list(lets), active=active, offset=offset)


TID = "threadIdx.x"
CASES = [
    # global: the Best Practices offset/stride cases and the slides' patterns
    c("g_float_unit", f"a[{TID}]", "float a[]"),
    c("g_float_offset1", f"a[{TID} + 1]", "float a[]"),
    c("g_float_offset8", f"a[{TID} + 8]", "float a[]"),
    c("g_float_byte_offset", f"a[{TID}]", "float a[]", offset=4),
    c("g_float_stride2", f"a[{TID} * 2]", "float a[]"),
    c("g_float_stride4", f"a[{TID} * 4]", "float a[]"),
    c("g_float_stride8", f"a[{TID} * 8]", "float a[]"),
    c("g_float_stride32", f"a[{TID} * 32]", "float a[]"),
    c("g_float_stride_large", f"a[{TID} * 4097]", "float a[]"),
    c("g_float_broadcast", "a[5]", "float a[]"),
    c("g_float_pairs", f"a[{TID} / 2]", "float a[]"),
    c("g_float_permuted_xor", f"a[{TID} ^ 1]", "float a[]"),
    c("g_float_reversed", f"a[31 - {TID}]", "float a[]"),
    c("g_float_permuted_mod", f"a[({TID} * 7) % 32]", "float a[]"),
    c("g_float_mask_even", f"a[{TID}]", "float a[]", active=f"{TID} % 2 == 0"),
    c("g_float_mask_first8", f"a[{TID}]", "float a[]", active=f"{TID} < 8"),
    c("g_float_mask_slides", f"a[{TID}]", "float a[]", active=f"{TID} % 16 != 3 && {TID} % 16 != 13"),
    c("g_float_column", f"a[{TID}][0]", "float a[32][32]"),
    c("g_float_tile_8x4", "a[threadIdx.y][threadIdx.x]", "float a[64][64]", block=(8, 4)),
    c("g_float_tile_8x4_padded", "a[threadIdx.y][threadIdx.x]", "float a[64][65]", block=(8, 4)),
    c("g_float2", f"a[{TID}]", "float2 a[]"),
    c("g_float2_member_y", f"a[{TID}].y", "float2 a[]"),
    c("g_float3", f"a[{TID}]", "float3 a[]"),
    c("g_float3_member_x", f"a[{TID}].x", "float3 a[]"),
    c("g_float4", f"a[{TID}]", "float4 a[]"),
    c("g_float4_offset1", f"a[{TID} + 1]", "float4 a[]"),
    c("g_float4_member_w", f"a[{TID}].w", "float4 a[]"),
    c("g_double", f"a[{TID}]", "double a[]"),
    c("g_double_stride2", f"a[{TID} * 2]", "double a[]"),
    c("g_double2", f"a[{TID}]", "double2 a[]"),
    c("g_int4_mask_odd", f"a[{TID}]", "int4 a[]", active=f"{TID} % 2 == 1"),
    c("g_char", f"a[{TID}]", "char a[]"),
    c("g_char_stride4", f"a[{TID} * 4]", "char a[]"),
    c("g_char_stride33", f"a[{TID} * 33]", "char a[]"),
    c("g_short", f"a[{TID}]", "short a[]"),
    c("g_seed000_c", "c[i*4 + j]", "float c[]", lets=["i=blockIdx.x*blockDim.x + threadIdx.x", "j=1"]),
    c("g_seed000_e", "e[i*8]", "float e[]", lets=["i=blockIdx.x*blockDim.x + threadIdx.x"]),
    # shared: banks, broadcast, padding, 8- and 16-byte phases
    c("s_float_unit", f"s[{TID}]", "__shared__ float s[32]"),
    c("s_float_stride2", f"s[{TID} * 2]", "__shared__ float s[64]"),
    c("s_float_stride3", f"s[{TID} * 3]", "__shared__ float s[96]"),
    c("s_float_stride8", f"s[{TID} * 8]", "__shared__ float s[256]"),
    c("s_float_stride32", f"s[{TID} * 32]", "__shared__ float s[1024]"),
    c("s_float_stride33", f"s[{TID} * 33]", "__shared__ float s[1056]"),
    c("s_float_broadcast", "s[7]", "__shared__ float s[32]"),
    c("s_float_two_words_one_bank", f"s[({TID} / 16) * 32]", "__shared__ float s[64]"),
    c("s_float_permuted", f"s[({TID} * 7) % 32]", "__shared__ float s[32]"),
    c("s_float_mask_odd", f"s[{TID} * 2]", "__shared__ float s[64]", active=f"{TID} % 2 == 1"),
    c("s_tile_column", f"s[{TID}][0]", "__shared__ float s[32][32]"),
    c("s_tile_column_padded", f"s[{TID}][0]", "__shared__ float s[32][33]"),
    c("s_tile_row", f"s[0][{TID}]", "__shared__ float s[32][32]"),
    c("s_tile_2d_block", "s[threadIdx.y][threadIdx.x * 4]", "__shared__ float s[4][32]", block=(8, 4)),
    c("s_reduce1_s1", "sdata[index]", "__shared__ float sdata[256]", lets=["s=1", "index=2*s*threadIdx.x"],
      active="index < 256"),
    c("s_reduce1_s2", "sdata[index]", "__shared__ float sdata[256]", lets=["s=2", "index=2*s*threadIdx.x"],
      active="index < 256"),
    c("s_reduce2", f"sdata[{TID} + 16]", "__shared__ float sdata[256]"),
    c("s_double_unit", f"s[{TID}]", "__shared__ double s[32]"),
    c("s_double_stride2", f"s[{TID} * 2]", "__shared__ double s[64]"),
    c("s_double_broadcast", "s[3]", "__shared__ double s[32]"),
    c("s_double_column", f"s[{TID}][0]", "__shared__ double s[32][32]"),
    c("s_double_column_padded", f"s[{TID}][0]", "__shared__ double s[32][33]"),
    c("s_double_halves_same_words", f"s[{TID} % 16]", "__shared__ double s[16]"),
    c("s_float2_unit", f"s[{TID}]", "__shared__ float2 s[32]"),
    c("s_float2_stride16", f"s[{TID} * 16]", "__shared__ float2 s[512]"),
    c("s_float4_unit", f"s[{TID}]", "__shared__ float4 s[32]"),
    c("s_float4_stride2", f"s[{TID} * 2]", "__shared__ float4 s[64]"),
    c("s_float4_broadcast", "s[1]", "__shared__ float4 s[32]"),
    c("s_float4_quarters_same", f"s[{TID} % 8]", "__shared__ float4 s[8]"),
    c("s_float4_member_x", f"s[{TID}].x", "__shared__ float4 s[32]"),
    c("s_float4_pairs", f"s[{TID} / 2]", "__shared__ float4 s[16]"),
    c("s_float4_forum_mod4", f"s[{TID} % 4]", "__shared__ float4 s[4]"),
    c("s_double_pairs", f"s[{TID} / 2]", "__shared__ double s[16]"),
    c("s_double_pairs_xor2", f"s[({TID} / 4) * 2 + {TID} % 2]", "__shared__ double s[16]"),
    c("s_double_stride2_pairs", f"s[({TID} / 2) * 2]", "__shared__ double s[32]"),
    c("s_float3_unit", f"s[{TID}]", "__shared__ float3 s[32]"),
    c("s_char_unit", f"s[{TID}]", "__shared__ char s[32]"),
    c("s_char_stride4", f"s[{TID} * 4]", "__shared__ char s[128]"),
    c("s_char_stride128", f"s[{TID} * 128]", "__shared__ char s[4096]"),
    c("s_short_unit", f"s[{TID}]", "__shared__ short s[64]"),
]


def run_access_cases(out: Path, only: set[str] | None, dry_arch: str | None = None) -> tuple[int, int, list[dict]]:
    from gpumemlab import ncu
    from gpumemlab.model import predict, resolve

    chosen = [k for k in CASES if not only or k["name"] in only]
    rows, lanes_by, micro = [], {}, []
    for k in chosen:
        try:
            lanes = resolve(k["access"], k["decl"], block=k["block"], lets=k["lets"], active=k["active"],
                            offset=k["offset"])
            lanes_by[k["name"]] = lanes
            micro.append(ncu.case_from_lanes(f"{ncu.KERNEL_PREFIX}{k['name']}", lanes))
        except Exception as exc:  # one bad case must not stop the others
            rows.append(dict(case=k, error=f"model: {type(exc).__name__}: {exc}"))
    t0 = time.time()
    if dry_arch:  # no GPU: check that every microkernel compiles, print the predictions
        from gpumemlab.gpu.compile import compile_text

        print(f"dry run: compiling {len(micro)} microkernels for {dry_arch} (one NVRTC program)...", flush=True)
        compile_text(ncu.microkernel_source(micro), [m["name"] for m in micro], dry_arch)
        res = dict(device=None, measured={}, errors={})
        print(f"dry run: {len(micro)} microkernels compiled for {dry_arch} in {time.time() - t0:.1f} s")
    else:
        res = ncu.measure(micro) if micro else dict(device=None, measured={}, errors={})
        print(f"ncu: {len(micro)} microkernels in {time.time() - t0:.1f} s on "
              f"{res['device']['name'] if res['device'] else 'no device'}")
    cc = tuple(res["device"]["cc"]) if res["device"] else _arch_cc(dry_arch or "sm_90")
    for k in chosen:
        if k["name"] not in lanes_by:
            continue
        kname = f"{ncu.KERNEL_PREFIX}{k['name']}"
        lanes = lanes_by[k["name"]]
        pred = predict(lanes, cc)
        space = lanes.space
        predicted = {q: pred[q] for q in ncu.METRICS[space]}
        measured = res["measured"].get(kname)
        err = res["errors"].get(kname)
        agree = measured is not None and all(measured.get(q) == v for q, v in predicted.items())
        rows.append(dict(case=k, space=space, predicted=predicted, measured=measured, agree=agree, error=err,
                         verdict=pred["verdict"]))
    agreed = sum(1 for r in rows if r.get("agree"))
    print_table(rows, dry=bool(dry_arch))
    doc = dict(device=res["device"], cc=list(cc), command=COMMAND, metrics=ncu.METRICS,
               cases=[dict(**r["case"], space=r.get("space"), predicted=r.get("predicted"), measured=r.get("measured"),
                           agree=r.get("agree", False), error=r.get("error")) for r in rows])
    path = out / ("ncu_cases_dry_run.json" if dry_arch else "ncu_cases.json")
    path.write_text(json.dumps(doc, indent=1))
    if dry_arch:
        predicted = sum(1 for r in rows if r.get("predicted"))
        print(f"access cases (dry run, nothing measured): {predicted} of {len(rows)} predicted and compiled for "
              f"{dry_arch} -> {path}")
        return predicted, len(rows), rows
    print(f"access cases: {agreed} of {len(rows)} agree with ncu exactly -> {path}")
    return agreed, len(rows), rows


def print_table(rows: list[dict], dry: bool = False) -> None:
    print(f"{'case':<30}{'space':<8}{'predicted':<28}{'measured':<28}result")
    for r in rows:
        name = r["case"]["name"]
        pred = " ".join(f"{k}={v}" for k, v in (r.get("predicted") or {}).items())
        meas = " ".join(f"{k}={v}" for k, v in (r.get("measured") or {}).items()) or "-"
        result = ("ok" if r.get("agree") else "ERROR " + r["error"] if r.get("error") else
                  "compiles (dry run)" if dry else "not measured" if r.get("measured") is None else "DIFFERS")
        print(f"{name:<30}{r.get('space') or '-':<8}{pred:<28}{meas:<28}{result}")


def _arch_cc(arch: str) -> tuple[int, int]:
    digits = arch.split("_")[-1].rstrip("a")
    return int(digits[:-1]), int(digits[-1])


# (threads per block, dynamic shared bytes): the kernels do not opt in to more than 48 KiB
BLOCKS = ((128, 0), (256, 0), (1024, 0), (256, 20_000), (128, 40_000))


def run_occupancy(out: Path, dry_arch: str | None = None) -> tuple[int, int]:
    """The model's blocks per SM against the driver's for every kernel at BLOCKS; in a dry run the model's alone
    (every kernel compiled once per source, with progress)."""
    from gpumemlab.gpu.compile import compile_specs, runs_on
    from gpumemlab.kernels import all_specs
    from gpumemlab.model import occupancy

    if dry_arch:
        runtime, info = None, dict(name=f"dry run ({dry_arch})", cc=list(_arch_cc(dry_arch)), arch=dry_arch)
    else:
        from gpumemlab.gpu import runtime

        info = runtime.device_info()
    cc, arch = tuple(info["cc"]), info["arch"]
    specs = [s for s in all_specs() if runs_on(s, arch)]
    records, lines, kernels_ok, kernels_n = [], [], 0, 0
    compiled = compile_specs(specs, arch, progress=True)
    for spec in specs:
        usage = compiled[spec][1]
        if usage is None:
            records.append(dict(kernel=spec.label, error="compile: ptxas reported no resource usage"))
            lines.append(f"{spec.label[:47]:<48}ERROR no ptxas report")
            continue
        kernels_n += 1
        cells, agrees = [], []
        for threads, dyn in BLOCKS:
            rec = dict(kernel=spec.label, threads=threads, dynamic_smem=dyn, registers=usage.registers,
                       shared_bytes=usage.shared_bytes, barriers=usage.barriers)
            try:
                model = occupancy(threads, usage.registers, usage.shared_bytes + dyn, cc, barriers=usage.barriers,
                                  opt_in=False)
                rec["model"], rec["limiters"] = model["blocks_per_sm"], model["limiters"]
            except Exception as exc:
                rec["model_error"] = f"{type(exc).__name__}: {exc}"
            if runtime is not None:
                try:
                    rec["driver"] = runtime.max_active_blocks(spec, threads, dyn)
                except Exception as exc:  # e.g. a block larger than the kernel's __launch_bounds__
                    rec["driver_error"] = f"{type(exc).__name__}: {exc}"
            rec["agree"] = rec.get("model") == rec.get("driver") if "driver" in rec else None
            agrees.append(rec["agree"] if runtime is not None else "model" in rec)
            records.append(rec)
            mark = {True: "", False: "!", None: "?"}[rec["agree"]] if runtime is not None else ""
            cells.append(f"{threads}{'+' + str(dyn) if dyn else ''}:{rec.get('model', 'E')}/{rec.get('driver', '-')}{mark}")
        ok = False not in agrees and True in agrees
        kernels_ok += ok
        verdict = ("model ok" if ok else "MODEL ERROR") if runtime is None else \
            "ok" if ok else "DIFFERS" if False in agrees else "no driver answer"
        lines.append(f"{spec.label[:47]:<48}{usage.registers:>4} {usage.shared_bytes:>6}  {'  '.join(cells)}  {verdict}")
    path = out / ("occupancy_cases_dry_run.json" if dry_arch else "occupancy_cases.json")
    path.write_text(json.dumps(dict(device=info["name"], cc=list(cc), command=COMMAND, cases=records), indent=1))
    print(f"\n{'kernel':<48}{'regs':>4} {'smem':>6}  threads[+dynamic smem]: model/driver blocks per SM "
          f"(! differs, ? no driver answer)")
    print("\n".join(lines))
    if dry_arch:
        print(f"occupancy (dry run, no driver asked): the model answered for {kernels_ok} of {kernels_n} kernels "
              f"compiled for {dry_arch} -> {path}")
    else:
        print(f"occupancy: {kernels_ok} of {kernels_n} kernels agree with the driver at every block size -> {path}")
    return kernels_ok, kernels_n


def _check(args) -> Path:
    """Bad input or no GPU: one line (UsageError, NoDeviceError) before anything runs; the output folder."""
    from gpumemlab.errors import GpumemlabError, UsageError
    from gpumemlab.gpu.compile import check_arch, parse_arch

    unknown = sorted(set(args.only or ()) - {k["name"] for k in CASES})
    if unknown:
        raise UsageError(f"unknown case(s) {', '.join(unknown)} for --only (python -m gpumemlab.ncu.recorded "
                         f"OUTDIR --dry-run lists them)")
    if args.dry_run:
        args.arch = check_arch(parse_arch(args.arch))
    else:
        from gpumemlab.gpu.runtime import ensure_device
        from gpumemlab.ncu.runner import find_ncu

        if not args.skip_access:
            try:
                find_ncu()
            except GpumemlabError:
                ensure_device()  # no GPU at all: say that rather than blame the missing ncu
                raise
        if not args.skip_occupancy:
            ensure_device()
    out = Path(args.outdir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"OUTDIR {out}: cannot write there ({exc.strerror or exc})") from None
    return out


def _part(name: str, run) -> bool:
    """Run one part ((agreed, total) = run()); a failure is reported in one line (ours) or with its traceback."""
    from gpumemlab.errors import GpumemlabError

    try:
        agreed, total = run()
        return agreed == total
    except GpumemlabError as exc:
        print(f"{name}: FAILED: {str(exc).splitlines()[0]}")
    except Exception:  # a bug of ours: where it came from matters
        traceback.print_exc()
        print(f"{name}: FAILED (see the traceback above)")
    return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpumemlab.ncu.recorded", description=__doc__.splitlines()[1])
    ap.add_argument("outdir")
    ap.add_argument("--only", nargs="+", help="run only these access cases")
    ap.add_argument("--skip-occupancy", action="store_true")
    ap.add_argument("--skip-access", action="store_true")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: compile the microkernels, print predictions")
    ap.add_argument("--arch", default="sm_90", help="architecture of --dry-run (default sm_90)")
    args = ap.parse_args(argv)
    from gpumemlab.errors import GpumemlabError

    try:
        out = _check(args)
    except GpumemlabError as exc:
        hint = " (--dry-run compiles and predicts without one)" if "no CUDA device" in str(exc) else ""
        print(f"{ap.prog}: {str(exc).splitlines()[0]}{hint}", file=sys.stderr)
        return exc.exit_code
    t0 = time.time()
    dry = args.arch if args.dry_run else None
    good = True
    if not args.skip_access:
        good &= _part("access cases", lambda: run_access_cases(out, set(args.only) if args.only else None, dry)[:2])
    if not args.skip_occupancy:
        good &= _part("occupancy", lambda: run_occupancy(out, dry))
    print(f"done in {time.time() - t0:.0f} s")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
