"""Suite commands: bench, run, list, device, kernels, report, merge."""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import sys
from pathlib import Path

from ..errors import GpumemlabError, UsageError
from ..report.write import input_file, output_folder, prepare_out, write_report
from ..suite import command_line, run_suite
from ..suite.run import finished


def add_commands(sub) -> None:
    p = sub.add_parser("bench", help="run every experiment and write results.json, report.md and plots")
    p.add_argument("--out", default="gpumemlab-report", help="output folder (default: ./gpumemlab-report)")
    p.add_argument("--only", nargs="+", metavar="EXPERIMENT", help="run only these experiments")
    p.add_argument("--skip", nargs="+", metavar="EXPERIMENT", default=[], help="skip these experiments")
    p.add_argument("--quick", action="store_true", help="small sizes and few samples (a smoke run)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run recorded in --out: skip its finished experiments, run the rest")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar (none either when stderr is not a terminal)")
    p.add_argument("--device", type=int, default=None, metavar="N", help="run on GPU N (default: the current one, 0)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("run", help="run one experiment (gpumemlab run NAME --help: its parameters)", add_help=False)
    p.add_argument("experiment", nargs="?")
    p.add_argument("--help", "-h", action="store_true", help="this help; with NAME: the experiment's parameters")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="override a declared parameter (lists: comma-separated)")
    p.add_argument("--out", default=None, help="also write results.json/report.md/plots here")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json", action="store_true", help="print the records as JSON")
    p.add_argument("--device", type=int, default=None, metavar="N", help="run on GPU N (default: the current one, 0)")
    p.set_defaults(func=cmd_run, parser=p)

    p = sub.add_parser("list", help="list the experiments and what each reproduces")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("device", help="device properties and measured ceilings; with several GPUs, peer access, "
                                      "links and peer copy rates")
    p.add_argument("--json", action="store_true")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--device", type=int, default=None, metavar="N", help="GPU N (default: the current one, 0)")
    p.add_argument("--p2p", default=None, metavar="RESULTS", help="peer copy rates from this results.json's p2p "
                                                                  "records instead of a quick measurement")
    p.set_defaults(func=cmd_device)

    p = sub.add_parser("kernels", help="compile every kernel and print the ptxas resource report (no GPU needed)")
    p.add_argument("--arch", default=None, help="e.g. sm_90 (default: the GPU's own; required without a GPU)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--reports", default=None, metavar="FILE",
                   help="take ptxas reports from FILE for kernel groups whose source, options, arch and NVRTC version "
                        "are unchanged (keyed by their hash), compile the others, and rewrite FILE with this run's")
    p.set_defaults(func=cmd_kernels)

    p = sub.add_parser("report", help="re-render report.md and plots from a results.json (no GPU needed)")
    p.add_argument("results", help="path to results.json")
    p.add_argument("--out", default=None, help="output folder (default: the results.json folder)")
    p.add_argument("--format", choices=("md", "csv", "html"), default="md",
                   help="md: report.md, report.html and plots (default); csv: report.csv; html: report.html")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("merge", help="merge runs of one GPU model into one results.json and its report (no GPU "
                                     "needed); with one run, re-render it with the current findings and texts")
    p.add_argument("out", help="folder for results.json, report.md and plots")
    p.add_argument("runs", nargs="+", metavar="RESULTS",
                   help="results.json files, the base first: each experiment whole from the first run that has it")
    p.set_defaults(func=cmd_merge)


# ---------------------------------------------------------------- running experiments

def _console(quiet: bool = False):
    """The progress bar's console: stderr when it is a terminal and not --quiet, else None (no bar)."""
    from rich.console import Console

    console = Console(stderr=True)
    return None if quiet or not console.is_terminal else console


def describe_params(exp) -> list[str]:
    """One line per declared parameter: name, type and default (what ``--param KEY=VALUE`` overrides)."""
    lines = []
    for key, value in exp.params.items():
        if isinstance(value, (list, tuple)):
            kind = f"list of {type(value[0]).__name__}" if value else "list"
            shown = ",".join(map(str, value)) if len(value) <= 8 else \
                f"{','.join(map(str, value[:4]))},...,{value[-1]} ({len(value)} values)"
        else:
            kind, shown = type(value).__name__, str(value)
        lines.append(f"{key} = {shown}  ({kind})")
    return lines


def _print_summary(res) -> None:
    from rich.console import Console
    from rich.table import Table

    from ..report.format import SUMMARY_COLUMNS, summary_row

    table = Table(title=f"gpumemlab on {res.device.get('name')}", show_lines=False)
    for col in SUMMARY_COLUMNS:
        table.add_column(col, overflow="fold")
    for r in res.results:
        table.add_row(*summary_row(r))
    console = Console()
    if not console.is_terminal:  # logs and pipes: wide enough that rows stay on one line
        console = Console(width=220)
    console.print(table)
    for name, info in res.experiments.items():  # the seed's claim next to what this run measured
        console.print(f"[bold]{name}[/bold] - the seed reported: {info.get('seed_claim', '')}", highlight=False)
        for finding in info.get("findings") or []:
            console.print(f"    measured here: {finding}", highlight=False)
    for e in res.errors:
        print(f"error: {e['experiment']}: {e['error']}", file=sys.stderr)


def _select(only, skip):
    from ..experiments import get, registry

    reg = registry()
    for name in list(only or []) + list(skip or []):
        get(name)  # UsageError for unknown names
    return [e for n, e in reg.items() if (not only or n in only) and n not in skip]


def cmd_bench(args) -> int:
    selected = _select(args.only, args.skip)
    with output_folder(Path(args.out)) as out:  # before any GPU work: a bad --out must not cost a run
        previous = _previous_run(out) if args.resume else None
        res = run_suite(selected, lambda e: dict(e.params), args.quick, command_line(sys.argv[1:]),
                        _console(args.quiet), out=out, resume=previous, device=args.device)
    return _finish(res, out)


def _previous_run(out: Path):
    """The run to continue; None (start anew) when a run there was killed before it saved anything."""
    from ..bench.records import RunResults

    path = out / "results.json"
    leftovers = sorted(out.glob(".results.json.*.tmp")) + sorted(out.glob(".gpumemlab-render-*"))
    for p in leftovers:  # a killed run's half-written files: never read, the run we continue owns the folder
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
    if not path.is_file():
        if leftovers:
            print(f"gpumemlab bench: --resume: the run in {out} was stopped before it saved anything; starting it anew",
                  file=sys.stderr)
            return None
        raise UsageError(f"--resume: no results.json in {out} to continue")
    return RunResults.load(path)


def _finish(res, out: Path | None) -> int:
    """Report what a run left and its exit code: 128 + signal if stopped, 1 if an experiment failed."""
    stopped = res.meta.get("interrupted")
    if stopped:
        what = "the finished experiments are" if finished(res) else "no experiment had finished; the ceilings are"
        where = f"; {what} in {out / 'results.json'}" if out else ""
        again = f" (continue with: gpumemlab bench --resume --out {out})" if out else ""
        print(f"gpumemlab: stopped by {stopped}{where}{again}", file=sys.stderr)
        return 128 + int(signal.Signals[stopped])
    if out is not None:
        from ..suite.run import StopOnSignals, Stopped

        try:
            with StopOnSignals():  # a signal while rendering: the temporary render folder is removed
                write_report(res, out)
        except Stopped as stop:
            print(f"gpumemlab: stopped by {stop} while writing the report; {out / 'results.json'} is complete "
                  f"(render it with: gpumemlab report {out / 'results.json'})", file=sys.stderr)
            return 128 + stop.signum
    _print_summary(res)
    if out is not None:
        print(f"wrote {out / 'results.json'}, {out / 'report.md'} and plots", file=sys.stderr)
    return 1 if res.errors else 0


def cmd_run(args) -> int:
    from ..experiments import get, parse_params

    if args.help:
        exp = get(args.experiment) if args.experiment else None  # an unknown name: one line, no help
        args.parser.print_help()
        if exp is not None:
            print(f"\n{exp.name}: {exp.title}\nparameters (override with -p KEY=VALUE; lists comma-separated):")
            for line in describe_params(exp) or ["none"]:
                print(f"  {line}")
        return 0
    if not args.experiment:
        raise UsageError("which experiment? e.g. gpumemlab run stride_copy (gpumemlab list names them all)")
    exp = get(args.experiment)
    params = parse_params(exp, args.param)
    with output_folder(Path(args.out)) if args.out else contextlib.nullcontext() as out:
        res = run_suite([exp], lambda e: params, args.quick, command_line(sys.argv[1:]), _console(args.quiet),
                        out=out, device=args.device)
    if args.json and not res.meta.get("interrupted"):
        if out is not None:
            write_report(res, out)
        print(json.dumps([r.to_dict() for r in res.results], indent=1))
        return 1 if res.errors else 0
    return _finish(res, out)


def cmd_list(args) -> int:
    from ..experiments import registry

    reg = registry()
    if args.json:
        print(json.dumps({n: dict(e.describe(), params=e.params) for n, e in reg.items()}, indent=1))
        return 0
    width = max(map(len, reg), default=0)
    for name, exp in reg.items():
        print(f"{name:<{width}}  {exp.title}  [{exp.seed}]")
        print(f"{'':<{width}}  parameters: {'; '.join(describe_params(exp)) or 'none'}")
    return 0


def cmd_device(args) -> int:
    from ..suite.ceilings import measure_ceilings
    from ..bench.session import Session
    from ..gpu import runtime

    from ..bench import peers
    from ..bench.records import RunResults

    results = RunResults.load(input_file(args.p2p)) if args.p2p else None  # a bad file: one line before any GPU work
    if args.device is not None:
        runtime.use_device(args.device)
    info = runtime.device_info()
    session = Session(quick=args.quick)
    ceilings = measure_ceilings(session, quick=args.quick)
    session.close()
    topo = peers.topology(results) if info["device_count"] > 1 else None
    if args.json:
        print(json.dumps(dict(device=info, ceilings=ceilings, **({"peers": topo} if topo else {})), indent=1))
        return 0
    for k, v in info.items():
        print(f"{k:32} {v}")
    for k, v in ceilings.items():
        print(f"{k:32} {v['value']:,.1f} {v['unit']}  ({v['how']})")
    if topo:
        print_topology(topo)
    return 0


def print_topology(topo: dict) -> None:
    """The peer-access matrix (cudaDeviceCanAccessPeer), each pair's link and the peer copy rates."""
    n = topo["count"]
    print(f"\npeer access (row can access column; cudaDeviceCanAccessPeer), {n} GPUs:")
    print("      " + "".join(f"GPU{b:<4}" for b in range(n)))
    for a in range(n):
        cells = ["-" if v is None else ("yes" if v else "no") for v in topo["peer_access"][a]]
        print(f"GPU{a:<3}" + "".join(f"{c:<7}" for c in cells) + f"  {topo['names'][a]}")
    print("links:")
    for pair, link in topo["links"].items():
        rate = f", {link['gbps']:,.1f} GB/s per direction" if link.get("gbps") else ""
        print(f"  GPU {pair}: {link['type']}{rate}  ({link['how']})")
    if topo["copy_gbps"]:
        print(f"peer copy rates ({topo['copy_source']}):")
        for pair, gbps in topo["copy_gbps"].items():
            print(f"  {pair}: {gbps:,.1f} GB/s")


def cmd_kernels(args) -> int:
    from ..gpu.compile import check_arch, compile_specs, load_reports, parse_arch, runs_on, save_reports
    from ..kernels import all_specs

    if args.arch is not None:
        arch = check_arch(parse_arch(args.arch))  # ArchError: one line naming the archs NVRTC knows
    else:
        from ..gpu import runtime

        try:
            arch = runtime.device_arch()
        except GpumemlabError:
            raise UsageError("no GPU to take the arch from: pass --arch, e.g. --arch sm_90") from None
    specs = [s for s in all_specs() if runs_on(s, arch)]
    skipped = [s for s in all_specs() if not runs_on(s, arch)]
    reports = None if args.reports is None else load_reports(Path(args.reports))
    compiled = compile_specs(specs, arch, progress=True, reports=reports)
    if reports is not None:
        save_reports(Path(args.reports), reports)
        taken = sum(mod is None for mod, _ in compiled.values())
        print(f"gpumemlab kernels: {taken} of {len(compiled)} kernels' reports taken from {args.reports} (their "
              f"sources, options and NVRTC unchanged), {len(compiled) - taken} compiled", file=sys.stderr)
    rows = []
    bad = []
    for spec in specs:
        u = compiled[spec][1]
        if u is None:
            bad.append(f"{spec.label} (no ptxas report)")
            continue
        rows.append(dict(kernel=spec.label, registers=u.registers, shared_bytes=u.shared_bytes,
                         spill_store_bytes=u.spill_store_bytes, spill_load_bytes=u.spill_load_bytes,
                         local_bytes=u.local_bytes, source=spec.source, spills_expected=spec.spills_expected,
                         from_cubin=u.from_cubin))
        if u.spill_store_bytes is None and not spec.spills_expected:
            bad.append(f"{spec.label} (spills unknown: no ptxas report, {u.local_bytes} B stack frame)")
        elif (u.spill_store_bytes or u.spill_load_bytes) and not spec.spills_expected:
            bad.append(spec.label)
        elif u.local_bytes and not spec.spills_expected:  # a local array or a stack the kernel did not mean to have
            bad.append(f"{spec.label} ({u.local_bytes} B stack frame)")
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        w = max(len(r["kernel"]) for r in rows)
        print(f"{'kernel':<{w}}  regs  smem(B)  spill st/ld(B)  local(B)   [{arch}]")
        for r in rows:
            flag = "  (deliberate)" if r["spills_expected"] and r["spill_store_bytes"] else ""
            spill = "?" if r["spill_store_bytes"] is None else f"{r['spill_store_bytes']}/{r['spill_load_bytes']}"
            print(f"{r['kernel']:<{w}}  {r['registers']:>4}  {r['shared_bytes']:>7}  "
                  f"{spill:>13}  {r['local_bytes']:>8}{flag}")
    for need in sorted({s.min_sm for s in skipped}):
        names = [s.label for s in skipped if s.min_sm == need]
        print(f"gpumemlab kernels: skipped {len(names)} variant(s) that need sm_{need} or newer on {arch}: "
              f"{', '.join(names)}", file=sys.stderr)
    if bad:
        print(f"gpumemlab kernels: unexpected register spills, stack frames or missing reports for {arch}: "
              f"{', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


def cmd_report(args) -> int:
    from ..bench.records import RunResults

    path = input_file(args.results)
    res = RunResults.load(path)  # ResultsError names the first bad record and field
    out = prepare_out(Path(args.out) if args.out else path.parent)
    if args.format == "md":
        written = write_report(res, out) / "report.md"
    else:
        from ..report import csv, html

        written = {"csv": csv.write_csv, "html": html.write_html}[args.format](res, out)
    print(f"wrote {written}", file=sys.stderr)
    return 0


def cmd_merge(args) -> int:
    from ..bench.records import RunResults
    from ..suite.merge import merge_runs, missing_experiments

    res = merge_runs([RunResults.load(input_file(p)) for p in args.runs])  # UsageError: runs of different GPUs
    missing = missing_experiments(res)
    if missing:
        print(f"gpumemlab merge: no records of {', '.join(missing)}", file=sys.stderr)
    out = write_report(res, Path(args.out))
    print(f"{out}: {len(res.results)} records, {len(res.meta['merged_runs'])} merged run(s), "
          f"complete={res.meta['complete']}")
    return 0
