"""`gpumemlab compare`: runs side by side (two results.json: B against A; more: a fleet)."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import UsageError
from . import positive_number

EPILOG = """\
Two files: records matched by (experiment, variant, params); speed ratio = time_A / time_B of the
medians (> 1: B faster); a ratio whose range (from both spreads) contains 1 is a tie within noise.
More files: a fleet; each record's median on every run against the fleet median, outliers flagged
(modified z-score above 3.5 and more than --outlier-rel from the fleet median).

Exit codes: 0; 1 with --fail-below X when a pair's matched record has a ratio below X and is not a tie
(for a fleet: an outlier whose speed relative to the fleet median is below X); 2 on bad input.
"""


def add_commands(sub) -> None:
    p = sub.add_parser("compare", help="compare runs: two results.json side by side, or a fleet of them",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", metavar="RESULTS_JSON", help="two or more results.json files (A B ...)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON instead of Markdown")
    p.add_argument("--spread", choices=("p10-p90", "min-max"), default="p10-p90",
                   help="each median's spread for the tie test (default: p10-p90)")
    p.add_argument("--ignore-param", action="append", default=[], metavar="KEY",
                   help="leave this parameter out of the match (e.g. n for sizes taken from each GPU's L2); "
                        "records that did different work then compare per byte or flop")
    p.add_argument("--fail-below", type=positive_number, default=None, metavar="RATIO",
                   help="exit 1 if a record's speed ratio is below RATIO outside the noise (e.g. 0.95)")
    p.add_argument("--outlier-rel", type=positive_number, default=None, metavar="FRACTION",
                   help="fleet: least distance from the fleet median to flag an outlier (default 0.05)")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args) -> int:
    from ..report import compare

    if len(args.results) < 2:
        raise UsageError("needs at least two results.json files")
    runs = compare.load_runs(args.results)
    if len(runs) == 2:
        if args.outlier_rel is not None:
            raise UsageError("--outlier-rel applies to three or more runs")
        cmp = compare.compare_pair(*runs, spread=args.spread, ignore=tuple(args.ignore_param))
        failed = [f"{m.experiment}/{m.variant} ({m.ratio:.3f})" for m in cmp.failures(args.fail_below)] \
            if args.fail_below else []
        text = compare.render_pair(cmp)
    else:
        if args.spread != "p10-p90":
            raise UsageError("--spread applies to two runs; a fleet compares medians")
        rel = compare.OUTLIER_REL if args.outlier_rel is None else args.outlier_rel
        cmp = compare.compare_fleet(runs, ignore=tuple(args.ignore_param), rel=rel)
        failed = [f"{row.experiment}/{row.variant} on {runs[i].label} ({row.relative[i]:.3f})"
                  for row, i in cmp.failures(args.fail_below)] if args.fail_below else []
        text = compare.render_fleet(cmp)
    if args.json:
        print(json.dumps(dict(cmp.to_dict(), failed=failed), indent=1))
    else:
        print(text)
    if failed:
        print(f"gpumemlab compare: {len(failed)} records below {args.fail_below:g}: {', '.join(failed[:10])}"
              + (" ..." if len(failed) > 10 else ""), file=sys.stderr)
        return 1
    return 0
