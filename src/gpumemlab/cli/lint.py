"""Sub-command ``lint``: every load and store of a .cu file through the model, like clang-tidy or ruff.

One line per finding, ``FILE:LINE:COL: RULE: message``, then a table per kernel; ``--json`` prints the schema of
docs/lint.md; ``--fail-on RULES`` exits 1 when a finding has one of those rules. Needs the ``lint`` extra
(libclang); without it the command says so in one line and exits 2.
"""

from __future__ import annotations

import json
import os
import re

from ..errors import UsageError


def add_commands(sub) -> None:
    p = sub.add_parser("lint", help="coalescing and bank conflicts of every access of your .cu file (no GPU needed)",
                       description="Parse a CUDA C++ file, evaluate each load and store of each kernel for one warp "
                                   "and report sectors/request, wavefronts, the verdict and the fix.")
    p.add_argument("file", help="a .cu file")
    p.add_argument("--kernel", help="only this __global__ function")
    p.add_argument("--block", help="block shape X[,Y[,Z]] (default: the file's launches of the kernel, else 256)")
    p.add_argument("--grid", help="grid shape X[,Y[,Z]] as gridDim (default: the file's launches, else 4,4,1; "
                                  "--validate launches it)")
    p.add_argument("--block-idx", help="analyze only this block (default: block 0, or its neighbours for an access "
                                       "with no full warp in block 0)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]", help="define a macro")
    p.add_argument("--let", action="append", default=[], metavar="PARAM=VALUE",
                   help="a kernel parameter's runtime value (integer), e.g. --let width=517 or, for a struct "
                        "parameter's member, --let A.stride=1024 (an array member's element: --let t.sizes[0]=64); "
                        "also a __constant__ integer the host writes: --let c_n=1000, --let c_params.width=512")
    p.add_argument("--template", action="append", default=[], metavar="NAME=TYPE|VALUE",
                   help="a template argument, e.g. --template T=float --template TILE=32")
    p.add_argument("--arch", default="sm_90", help="target architecture (default sm_90): the model's rules and NVRTC")
    p.add_argument("--json", action="store_true", help="print JSON (schema: docs/lint.md)")
    p.add_argument("--fail-on", default="", metavar="RULES",
                   help="exit 1 if a finding has one of these rules: uncoalesced,bank-conflict,constant-serialized,"
                        "spill,unknown")
    p.add_argument("--no-resources", action="store_true", help="skip NVRTC (registers, spills, occupancy)")
    p.add_argument("--launch-average", action="store_true",
                   help="also run every block of --grid and give each access's numbers per request over the whole "
                        "launch (JSON key launch: what Nsight Compute's Source Counters average; --validate does)")
    p.add_argument("--assume-data-guards", action="store_true",
                   help="accesses under a guard on loaded data (if (mask[i])): give the numbers assuming every lane "
                        "the guard's known part selects executes (JSON key assumption); without it they are unknown")
    p.add_argument("--validate", action="store_true",
                   help="GPU: run each kernel once (one launch of --grid x --block, synthesized arguments) under "
                        "Nsight Compute and compare its Source Counters per line")
    p.set_defaults(func=cmd_lint)


def _pairs(items, what: str, integer: bool) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        # a parameter or __constant__ variable, a struct member, an array's element
        member = r"[A-Za-z_]\w*(\[\d+\])?(\.[A-Za-z_]\w*(\[\d+\])?)*"
        if not sep or not re.fullmatch(member if integer else r"[A-Za-z_]\w*", name) or not value:
            raise UsageError(f"bad {what} {item!r}: expected NAME=VALUE")
        if integer:
            try:
                out[name] = int(value, 0)
            except ValueError:
                raise UsageError(f"bad {what} {item!r}: the value must be an integer") from None
        else:
            out[name] = value
    return out


def cmd_lint(args) -> int:
    from ..lint import RULES, lint_file, to_json
    from ..lint.analysis import Options

    fail_on = {r.strip() for r in args.fail_on.split(",") if r.strip()}
    bad = fail_on - set(RULES)
    if bad:
        raise UsageError(f"--fail-on {sorted(bad)[0]!r}: rules are {', '.join(RULES)}")
    for d in args.defines:
        if not re.fullmatch(r"[A-Za-z_]\w*(=.*)?", d):
            raise UsageError(f"bad -D {d!r}: expected NAME or NAME=VALUE")
    opts = Options(kernel=args.kernel, block=args.block, grid=args.grid, block_idx=args.block_idx,
                   defines=list(args.defines), lets=_pairs(args.let, "--let", True),
                   templates=_pairs(args.template, "--template", False), arch=args.arch,
                   launch_average=args.launch_average or args.validate, assume_data_guards=args.assume_data_guards)
    reports = lint_file(args.file, opts, resources=not args.no_resources)
    if args.validate:
        from ..ncu.source import validate_lint  # GPU path, imported only when asked for
        from ..lint.frontend import read_source

        from ..lint import compiled
        from ..lint.resources import include_dirs

        return validate_lint(read_source(args.file), reports, opts, as_json=args.json,
                             include_path=include_dirs(args.file),  # the file's headers, the toolkit's
                             as_compiled=lambda *a: compiled.attach_from_cubin(*a, opts.arch))
    if args.json:
        print(json.dumps(to_json(args.file, opts, reports), indent=2))
    else:
        print_report(args.file, reports)
    errors = any(r.error for r in reports)
    hits = [f for r in reports for f in r.findings if f.rule in fail_on]
    spills = "spill" in fail_on and any((r.resources or {}).get("spill_store_bytes") for r in reports)
    if errors:
        return 2
    return 1 if hits or spills else 0


def _message(f) -> str:
    what = f"{f.space + ' ' if f.space else ''}{f.access} `{f.text}`"
    if f.call_lines:
        what += f" (called from line {', '.join(map(str, f.call_lines))})"
    if f.verdict == "unknown":
        return f"{what}: unknown: {f.unknown_reason}"
    if f.verdict == "not executed":
        return f"{what}: 0 requests (the guards select no thread of the block)"
    if f.space == "shared":
        nums = (f"{f.wavefronts_per_request:g} wavefronts/request (ideal {f.ideal_wavefronts_per_request:g}), "
                f"{f.verdict}")
    elif f.space == "constant":
        nums = f"{f.reads_per_request:g} reads/request (ideal {f.ideal_reads_per_request:g}), {f.verdict}"
    else:
        nums = (f"{f.sectors_per_request:g} sectors/request (ideal {f.ideal_sectors_per_request:g}), {f.verdict}")
    text = f"{what}: {nums}"
    if f.not_modelled:
        text += f" ({f.not_modelled})"
    if f.fix:
        after = ", ".join(f"{k.replace('_per_request', '/request').replace('_', ' ')} {v:g}"
                          for k, v in (f.fix_predicted or {}).items() if v is not None and not k.startswith("ideal"))
        text += f"; fix: {f.fix}" + (f" -> {after}" if after else "")
    return text


def print_report(path: str, reports) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False, width=160)
    for r in reports:
        if r.error:
            print(f"{path}:{r.error.split(': ', 1)[0]}: error: kernel {r.name} not analyzed: "
                  f"{r.error.split(': ', 1)[-1]}" if re.match(r"\d+:\d+: ", r.error)
                  else f"{path}:{r.line}:1: error: kernel {r.name} not analyzed: {r.error}")
        for f in r.findings:
            if f.rule != "ok":
                where = f.file if f.file and f.file != os.path.abspath(path) else path  # a helper in a header
                print(f"{where}:{f.line}:{f.column}: {f.rule}: {_message(f)}")
        spill = (r.resources or {}).get("spill_store_bytes")
        if spill:
            print(f"{path}:{r.line}:1: spill: kernel {r.name} spills {spill} bytes per thread to local memory")
    for r in reports:
        res = r.resources
        head = f"{r.name}" + (f"<{', '.join(f'{k}={v}' for k, v in r.template.items())}>" if r.template else "")
        if res:
            head += (f"  {res['registers']} registers, {res['shared_bytes']} B shared, spills "
                     f"{res['spill_store_bytes']} B ({res['arch']})")
        if r.occupancy:
            head += f"  occupancy {r.occupancy['occupancy_pct']}% (limited by {', '.join(r.occupancy['limiters'])})"
        if r.launch_bounds:
            head += f"  __launch_bounds__{r.launch_bounds}"
        table = Table(title=escape(head), title_justify="left", show_lines=False)
        for col in ("line", "access", "space", "bytes", "sectors/req", "ideal", "wavefronts/req", "ways", "reads/req",
                    "verdict"):
            table.add_column(col, justify="right" if col not in ("access", "space", "verdict") else "left")
        for f in r.findings:
            called = f" (from line {', '.join(map(str, f.call_lines))})" if f.call_lines else ""
            table.add_row(f"{f.line}:{f.column}", escape(f"{f.access} {f.text}"[:60] + called), f.space or "-",
                          _v(f.element_bytes), _v(f.sectors_per_request), _v(f.ideal_sectors_per_request),
                          _v(f.wavefronts_per_request), _v(f.conflict_ways), _v(f.reads_per_request),
                          escape(f.verdict if f.verdict != "unknown" else f"unknown: {f.unknown_reason}"[:70]))
        console.print(table)
        for f in r.findings:
            for line in _details(f):
                console.print(escape(f"  {f.line}:{f.column}: {line}"))
        for n in r.notes:
            console.print(escape(f"  note: {n}"))


def _details(f) -> list[str]:
    """What the table cannot hold: the lanes a data guard was assumed to select, loop iterations that differ."""
    out = [f"assumed: {f.assumption}"] if f.assumption else []
    if f.not_modelled:
        out.append(f"not modelled: {f.not_modelled}")
    c = f.compiled
    if c:
        unit = "wavefronts" if f.space == "shared" else "sectors"
        lines = " and ".join(map(str, c["accesses_lines"]))
        what = (f"the accesses of line{'s' if len(c['accesses_lines']) > 1 else ''} {lines} are one {c['instruction']}"
                if c["how"] == "merged" else f"this access is {c['requests']} {c['instruction']}")
        ways = f", {c['conflict_ways']}-way" if f.space == "shared" else ""
        out.append(f"as compiled: {what} ({c['element_bytes']} bytes a lane): {c['requests']} request(s), "
                   f"{c['total']:g} {unit}{ways}; as written {c['total_as_written']:g} {unit}")
    if len(f.iterations) > 1:
        unit = {"shared": "wavefronts", "constant": "reads"}.get(f.space, "sectors")
        key = f"{unit}_per_request"
        runs = [f"{c['first']}" + (f"-{c['last']}" if c["last"] > c["first"] else "") + ": " +
                (f"{c[key]:g} {unit}/request, {c['active_lanes']} lanes" if c.get(key) is not None else
                 "not executed" if c.get("requests") == 0 else "unknown") for c in f.iterations[:8]]
        more = ", ..." if len(f.iterations) > 8 else ""
        out.append(f"loop iterations differ (0 = the first, reported above): {'; '.join(runs)}{more}")
    return out


def _v(x) -> str:
    return "-" if x is None else f"{x:g}" if isinstance(x, float) else str(x)
