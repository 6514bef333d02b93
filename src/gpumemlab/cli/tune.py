"""Sub-command ``tune``: tune a kernel family on this GPU, or print a tuned table as markdown (no GPU)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UsageError

def add_commands(sub) -> None:
    from ..tune.registry import MODULES

    p = sub.add_parser("tune", help="tune a kernel family on this GPU and write its per-device table",
                       description="Check, screen and time every valid point of a family's space against its "
                                   "baseline (matmul: cuBLAS SGEMM, reduce: cupy.sum, l2_persist: no window "
                                   "as found), finish with an interleaved "
                                   "round of the best, and write OUT/FAMILY.json (--install: also the package's "
                                   "kernels/tuned/FAMILY.json for this device, for the families the library reads). "
                                   "--table FILE prints a tuned file.")
    p.add_argument("family", choices=tuple(MODULES))
    p.add_argument("--shapes", nargs="+", metavar="SHAPE", help="matmul: MxNxK; reduce: element counts (2^28, "
                                                                 "1000003); l2_persist: TABLE:STREAM MiB (30:400); "
                                                                 "default: the family's")
    p.add_argument("--configs", nargs="+", metavar="NAME", help="only these points (a point name or a table label)")
    p.add_argument("--out", default="gpumemlab-tune", help="folder for FAMILY.json and the cache (default: "
                                                           "./gpumemlab-tune)")
    p.add_argument("--install", action="store_true", help="also write the result into the package's tuned table "
                   "(matmul: compared with the installed table first, as --compare, and installed only where no zoo "
                   "shape got slower)")
    p.add_argument("--compare", action="store_true", help="matmul: time the library with the new and the installed "
                   "table's choice and cuBLAS on every zoo shape they route differently, in this run "
                   "(OUT/matmul.compare.json)")
    p.add_argument("--cache", help="cache of measured points (default: OUT/FAMILY.cache.json)")
    p.add_argument("--top", type=int, help="screened points timed again in the final round (default: the family's)")
    p.add_argument("--table", metavar="FILE", help="print a tuned file of FAMILY as markdown tables and exit")
    p.set_defaults(func=cmd_tune)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cmd_tune(args) -> int:
    from ..tune import table

    if args.table:
        data = table.load(args.table)
        if data["family"] != args.family:
            raise UsageError(f"{args.table} is a {data['family']} table, not {args.family}")
        print(table.markdown(data))
        return 0
    if args.compare and args.family != "matmul":
        raise UsageError(f"--compare: only matmul is compared with its installed table, not {args.family}")
    if args.top is not None and args.top < 0:
        raise UsageError(f"--top {args.top}: expected 0 or more")
    from ..report.write import output_folder
    from ..tune import engine, families

    family = families.get(args.family)
    if args.install and not family.installs:
        raise UsageError(f"--install: the library reads no {family.name} table (docs/notes/tuning.md); "
                         "run without --install to measure")
    if family.name == "host_route":
        from ..ops import stream_map  # noqa: F401  (loading the pipeline hands it to the family it is timed by)
    command = " ".join(["gpumemlab tune", args.family] + (["--shapes", *args.shapes] if args.shapes else [])
                       + (["--configs", *args.configs] if args.configs else [])
                       + ([f"--top {args.top}"] if args.top is not None else []))
    with output_folder(Path(args.out)) as out:  # a bad --out must not cost a tuning run
        entry = engine.tune(family, args.shapes, args.configs, cache=args.cache or out / f"{family.name}.cache.json",
                            top=args.top, command=command, log=_log)
        path = engine.write(family, entry, out)
    print(table.markdown(dict(table.load(path), devices={entry["device"]["name"]: entry})))
    _log(f"wrote {path}")
    if (args.compare or args.install) and family.name == "matmul" and entry["chosen"]:
        entry = _keep_matmul(entry, out, family.metric)
    if args.install and entry is not None:
        _log(f"installed into {engine.install(family, entry)}")
    elif args.install:
        _log("gpumemlab tune: nothing installed: the re-tuned table is slower on a zoo shape (see above)")
        return 1
    if entry is not None and not entry["chosen"]:
        _log(f"gpumemlab tune: no point of {family.name} passed verification")
        return 1
    return 0


def _keep_matmul(entry: dict, out: Path, metric: str) -> dict | None:
    """The re-tuned matmul entry as it may be installed (:func:`gpumemlab.suite.tables.keep`): the installed choice
    kept where the new one made a zoo shape slower in this run, None when that is not enough; unchanged when this
    device has no installed entry to compare with."""
    import json

    from ..gpu import runtime
    from ..ops.matmul.choice import tuned_entry
    from ..suite.tables import keep

    installed = tuned_entry(entry["device"])
    if installed is None:
        _log(f"no installed matmul entry for {entry['device']['name']} (or its chip): nothing to compare with")
        return entry
    res = keep(installed, entry, runtime.device_info(), metric, log=lambda text: print(f"\n{text}", flush=True))
    (out / "matmul.compare.json").write_text(json.dumps(dict(device=entry["device"]["name"], **res), indent=1))
    return res["entry"]
