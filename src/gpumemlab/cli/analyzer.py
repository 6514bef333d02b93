"""Sub-commands ``analyze``, ``occupancy`` and ``intensity`` (the analyzer's face in the CLI).

Everything here runs without a GPU except three opt-in paths, which import
:mod:`gpumemlab.ncu` or ``gpu/`` lazily: ``analyze --validate`` (runs ncu), ``occupancy --kernel``
(compiles a built-in kernel with NVRTC for its ptxas report; no GPU needed) and ``intensity``
with no device given (asks the driver for this GPU's name; without one the answer is the OP/B
alone and the device is reported as unknown).
"""

from __future__ import annotations

import importlib
import json
import textwrap

from ..errors import GpumemlabError, UsageError
from . import positive_number
from ..model import predict, resolve
from ..model.access import warn
from ..model.cc import SUPPORTED_CC, cc_str, parse_cc, require

# The package exports functions named like these modules, so fetch the modules themselves.
occupancy_ = importlib.import_module("gpumemlab.model.occupancy")
intensity_ = importlib.import_module("gpumemlab.model.intensity")

HEADLINE_GLOBAL = ("requests", "sectors", "lines", "sectors_per_request", "efficiency_pct", "verdict")
HEADLINE_SHARED = ("requests", "wavefronts", "ideal_wavefronts", "conflicts", "ways", "verdict")
LABELS = {"efficiency_pct": "efficiency", "sectors_per_request": "sectors/request", "ideal_wavefronts": "ideal wavefronts"}


def _ccs(ccs) -> str:
    return ", ".join(cc_str(c) for c in ccs)


def add_commands(sub) -> None:
    p = sub.add_parser("analyze", help="coalescing or bank conflicts of one access expression (no GPU needed)",
                       description="Predict requests/sectors (global) or wavefronts/bank conflicts (shared) "
                                   "of one warp-wide access, e.g.: gpumemlab analyze 'a[threadIdx.x*2]' "
                                   "--decl 'float a[]'",
                       epilog="Legal but suspicious input is answered, with one warning line on stderr each (exit 0): "
                              "a negative index into a pointer, a lane more than 16 MiB from its warp's first lane (an "
                              "unsigned index that wrapped?), a --let name defined twice. An empty dimension "
                              "(--block 32,,1) is an error.")
    p.add_argument("access", help="C expression: NAME[index]...[.x|.y|.z|.w], e.g. 's[threadIdx.x][5]'")
    p.add_argument("--decl", required=True, help="C declaration: 'float a[]', 'float3 a[]', '__shared__ float s[32][33]'")
    p.add_argument("--space", choices=("global", "shared"), help="memory space (default: shared if --decl says "
                                                                   "__shared__, else global)")
    p.add_argument("--let", action="append", default=[], metavar="[TYPE] NAME=EXPR",
                   help="define a name (in order); a C type converts the value as C does: --let 'int i=threadIdx.x - 16' "
                        "is -16 for thread 0, without 'int' it is unsigned (4294967280)")
    p.add_argument("--block", default="256", help="block shape X[,Y[,Z]] (default 256)")
    p.add_argument("--grid", default="1", help="grid shape X[,Y[,Z]] (default 1)")
    p.add_argument("--block-idx", default="0", help="which block to analyze, X[,Y[,Z]] (default 0)")
    p.add_argument("--active", help="C condition: the threads that execute the access (default all)")
    p.add_argument("--offset", type=int, default=0, help="bytes past a 256-byte-aligned base (default 0)")
    p.add_argument("--cc", default="9.0", help=f"compute capability MAJOR.MINOR (default 9.0; accepted: "
                                               f"{_ccs(SUPPORTED_CC)}; 1.x-3.x add historical transactions)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--validate", action="store_true", help="GPU: run a microkernel under ncu and compare")
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("occupancy", help="blocks and warps per SM (the CUDA occupancy calculation)")
    p.add_argument("--threads", type=int, required=True, help="threads per block")
    p.add_argument("--regs", type=int, help="registers per thread (required unless --kernel; with --kernel it "
                                                       "replaces the kernel's count, with a warning)")
    p.add_argument("--smem", type=int, default=0, help="shared memory bytes per block (with --kernel: dynamic, "
                                                       "added to the kernel's static shared memory)")
    p.add_argument("--cc", default="9.0", help=f"compute capability (default 9.0; accepted: {_ccs(SUPPORTED_CC)}; "
                                               f"occupancy tables for {_ccs(occupancy_.SM_TABLE)})")
    p.add_argument("--carveout", type=int, help="preferred shared memory per SM in bytes (default: the largest)")
    p.add_argument("--barriers", type=int, default=0, help="named barriers per block, 0..16 (they limit blocks per "
                                                           "SM on cc >= 9.0; default 0)")
    p.add_argument("--kernel", help="take registers and shared memory from a built-in kernel's ptxas report")
    p.add_argument("--no-opt-in", action="store_true", help="the kernel has not opted in to more than 48 KiB of "
                                                             "shared memory per block (default: assume it has)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_occupancy)

    p = sub.add_parser("intensity", help="OP/B of the matmul kernels and their roofline bound")
    p.add_argument("kernel", nargs="?", help=f"one of {', '.join(intensity_.KERNELS)} (default: all)")
    p.add_argument("--tile", type=int, default=32, help="tile width T (default 32)")
    p.add_argument("--coarsen", type=int, help=f"coarsening factor C of 'coarsened' (default {intensity_.DEFAULT_COARSEN})")
    p.add_argument("--device", help="a device of the table (h100, h200, a100, v100, rtx4090, ...)")
    p.add_argument("--peak-gflops", type=positive_number, help="FP32 peak in GFLOP/s (with --bandwidth-gbs; with --device they "
                                                                    "replace the table's values, with a warning)")
    p.add_argument("--bandwidth-gbs", type=positive_number, help="DRAM bandwidth in GB/s (with --peak-gflops)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_intensity)


# ---------------------------------------------------------------- analyze

def cmd_analyze(args) -> int:
    cc = parse_cc(args.cc)
    lanes = resolve(args.access, args.decl, space=args.space, block=args.block, grid=args.grid, lets=args.let,
                    active=args.active, offset=args.offset, block_idx=args.block_idx)
    result = predict(lanes, cc)
    if args.validate:
        from ..ncu import validate_access  # GPU path, imported only when asked for
        from ..ncu.runner import find_ncu

        try:
            find_ncu()
        except GpumemlabError:
            from ..gpu.runtime import ensure_device

            ensure_device()  # no GPU at all: say that (NoDeviceError) rather than blame the missing ncu
            raise
        return validate_access(lanes, requested_cc=cc, as_json=args.json)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(format_analysis(lanes, result))
    return 0


def format_analysis(lanes, result: dict) -> str:
    b = lanes.launch.block
    head = (f"{lanes.access}  with  {lanes.decl.text}  ({result['space']}, cc {result['cc']}, block "
            f"{b[0]}x{b[1]}x{b[2]}: {lanes.launch.nwarps} warp{'s' if lanes.launch.nwarps > 1 else ''})")
    keys = HEADLINE_SHARED if result["space"] == "shared" else HEADLINE_GLOBAL
    lines = [head]
    for k in keys:
        extra = f"   (fewest possible {result['min_sectors']})" if k == "sectors" else ""
        lines.append(f"  {LABELS.get(k, k.replace('_', ' ')):<22}{_fmt(result[k])}"
                     f"{' %' if k == 'efficiency_pct' and result[k] is not None else ''}{extra}")
    if "transactions" in result:
        lines.append(f"  {'transactions':<22}{_transactions(result['transactions'])}")
    lines += _per_warp_table(result, keys)
    lines.append("")
    lines += textwrap.wrap(result["explanation"], width=100)
    return "\n".join(lines)


def _fmt(v) -> str:
    return "-" if v is None else str(v)


def _transactions(sizes: list[int]) -> str:
    counts: dict[int, int] = {}
    for s in sizes:
        counts[s] = counts.get(s, 0) + 1
    parts = [f"{n} x {s} B" for s, n in sorted(counts.items())]
    return f"{len(sizes)} ({', '.join(parts)}; {sum(sizes)} bytes)" if sizes else "0"


def _per_warp_table(result: dict, keys) -> list[str]:
    rows = result["per_warp"]
    cols = [k for k in keys if k != "verdict"] + ["verdict"]
    signature = {tuple(r[k] for k in cols) for r in rows}
    if len(rows) < 2 or len(signature) < 2:
        return []
    out = ["", "  per warp:  " + "  ".join(["warp", "lanes"] + [c.replace("_", " ") for c in cols])]
    for r in rows[:32]:
        out.append("             " + "  ".join([f"{r['warp']:>4}", f"{r['active_lanes']:>5}"] +
                                               [f"{_fmt(r[c]):>{len(c)}}" for c in cols]))
    if len(rows) > 32:
        out.append(f"             ... {len(rows) - 32} more warps (see --json)")
    return out


# ---------------------------------------------------------------- occupancy

def cmd_occupancy(args) -> int:
    cc = require(parse_cc(args.cc), tuple(occupancy_.SM_TABLE), "occupancy")  # before compiling any --kernel
    regs, smem, barriers, source = args.regs, args.smem, args.barriers, None
    if args.smem < 0:
        raise UsageError(f"--smem must be >= 0 bytes, got {args.smem}")
    if args.kernel:
        from ..gpu.compile import kernel_resources  # compiles with NVRTC (no GPU needed)

        if args.regs is not None:
            warn(f"--regs {args.regs} replaces the register count of --kernel {args.kernel}'s ptxas report")
        usage = kernel_resources(args.kernel, cc)
        regs = usage["registers"] if args.regs is None else args.regs
        smem = usage["shared_bytes"] + args.smem
        barriers = max(barriers, usage.get("barriers", 0))
        source = usage
    elif regs is None:
        raise UsageError("give --regs (registers per thread) or --kernel NAME")
    result = occupancy_.occupancy(args.threads, regs, smem, cc, args.carveout, barriers, opt_in=not args.no_opt_in)
    if source:
        result["kernel"] = source
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(format_occupancy(result))
    return 0


def format_occupancy(r: dict) -> str:
    who = f"{r['kernel']['name']}: " if r.get("kernel") else ""
    lines = [f"{who}{r['threads']} threads ({r['warps_per_block']} warps), {r['regs']} registers/thread, "
             f"{r['smem']} B shared/block on cc {r['cc']}",
             f"  blocks per SM        {r['blocks_per_sm']}",
             f"  active warps         {r['active_warps']} of {r['max_warps']}  ({r['occupancy_pct']}% occupancy)",
             f"  limited by           {', '.join(r['limiters'])}"]
    allowed = ", ".join(f"{k.replace('_', ' ')} {v if v is not None else 'no limit'}" for k, v in r["limits"].items())
    lines.append(f"  blocks allowed by    {allowed}")
    lines.append(f"  allocations          {r['registers_per_warp']} registers/warp, {r['smem_per_block']} B shared/block "
                 f"(incl. reservation), {r['shared_per_sm']} B shared/SM")
    if r["reason"]:
        lines.append(f"  cannot launch: {r['reason']}")
    if r["opt_in"]:
        lines.append("  note: more than 48 KiB of shared memory per block needs cudaFuncSetAttribute("
                     "MaxDynamicSharedMemorySize) (assumed)")
    return "\n".join(lines)


# ---------------------------------------------------------------- intensity

def cmd_intensity(args) -> int:
    names = [intensity_.kernel_name(args.kernel)] if args.kernel is not None else list(intensity_.KERNELS)
    device_name, note = args.device, None
    if args.device is not None and args.peak_gflops is not None:
        warn(f"--peak-gflops and --bandwidth-gbs replace the device table's values for {args.device}")
    if args.device is None and args.peak_gflops is None and args.bandwidth_gbs is None:
        device_name, note = _this_gpu()
    rows = []
    for name in names:  # listing every kernel: --coarsen applies to the coarsened one only
        coarsen = args.coarsen if (args.kernel or intensity_.KERNELS[name][2]) else None
        rows.append(intensity_.intensity(name, args.tile, coarsen, device_name=device_name,
                                         peak_gflops=args.peak_gflops, bandwidth_gbs=args.bandwidth_gbs))
    if args.json:
        payload = rows[0] if args.kernel else {"kernels": rows}
        if note:
            payload = {**payload, "note": note}
        print(json.dumps(payload, indent=2))
        return 0
    print(format_intensity(rows, note))
    return 0


def _this_gpu() -> tuple[str | None, str | None]:
    """This GPU's table name, or None and why not (no GPU, or not in the table)."""
    from ..gpu.runtime import current_device_name  # asks the driver, lazily

    name = current_device_name()
    if name is None:
        return None, "device unknown (no GPU found): give --device or --peak-gflops/--bandwidth-gbs for the roofline"
    if intensity_.find_device(name) is None:
        return None, f"this GPU ({name}) is not in the device table: give --peak-gflops and --bandwidth-gbs"
    return name, f"device: this GPU ({name})"


def format_intensity(rows: list[dict], note: str | None) -> str:
    lines = []
    for r in rows:
        params = ", ".join(p for p in (f"T={r['tile']}" if r["tile"] else "",
                                       f"C={r['coarsen']}" if r["coarsen"] else "") if p)
        lines.append(f"{r['kernel']}{f' ({params})' if params else ''}: {r['op_per_byte']:g} FLOP per byte of global "
                     f"memory - {intensity_.KERNELS[r['kernel']][0]}")
        if r["device"]:
            d = r["device"]
            lines.append(f"  {d['name']}: {d['peak_gflops']:g} GFLOP/s FP32, {d['bandwidth_gbs']:g} GB/s -> ridge "
                         f"{r['ridge_op_per_byte']:g} FLOP/B; bound {r['bound_gflops']:g} GFLOP/s "
                         f"({r['bound']}-bound, {r['pct_of_peak']:g}% of peak)")
    if note:
        lines.append(note)
    return "\n".join(lines)
