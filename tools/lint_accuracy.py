"""lint on a corpus against its hand-derived table (tests/lint/test_lint_idioms.py, tests/lint/test_lint_published.py):
exact / unknown / wrong, per access of the table.

Counts every access of the table: exact (the same numbers and verdict), unknown where the table expects unknown
(by design), unknown where it expects numbers (needlessly), wrong, and not analyzed (the run failed or lost the
access); accesses lint reports that the table does not have are counted as extra. The lint that runs is the one on
PYTHONPATH, so an older checkout's src can be measured on today's table:
PYTHONPATH=OLD/src python tools/lint_accuracy.py [idioms|published ...]
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLES = {"idioms": ("test_lint_idioms.py", "IDIOMS"), "published": ("test_lint_published.py", "PUBLISHED")}


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def score(table: str) -> tuple[Counter, list]:
    sys.path.insert(0, str(ROOT / "tests" / "lint"))  # lint_tables, which the test modules import
    import lint_tables

    test_file, folder = TABLES[table]
    t = _module(ROOT / "tests" / "lint" / test_file)
    expected = {e[:6]: e[6] for e in t.EXPECTED}
    tally, misses = Counter(), []
    for run in range(len(t.RUNS)):
        try:
            got = lint_tables.run_findings(getattr(t, folder), t.RUNS, run, getattr(t, "SOLO", ()))
            failure = None
        except Exception as exc:  # noqa: BLE001 - a lint failure (or an older lint's) is what is being counted
            got, failure = {}, f"{type(exc).__name__}: {str(exc)[:80]}"
        tally["extra"] += len([k for k in got if k not in expected])
        misses += [(k[1:5], "extra") for k in got if k not in expected]
        for key, want in expected.items():
            if key[0] != run:
                continue
            f = got.get(key)
            if f is None:
                tally["not analyzed"] += 1
                misses.append((key[1:5], failure or "access not found"))
                continue
            have = lint_tables.numbers(f)
            if want[0] == "unknown":
                tally["unknown, by design" if lint_tables.matches(want, have) else "wrong"] += 1
            elif have[0] == "unknown":
                tally["unknown, needlessly"] += 1
                misses.append((key[1:5], have[1][:80]))
            else:
                tally["exact" if have == want else "wrong"] += 1
                if have != want:
                    misses.append((key[1:5], f"{have} != {want}"))
    return tally, misses


def main(argv: list[str]) -> int:
    for table in argv or list(TABLES):
        if table not in TABLES:
            print(f"unknown table {table!r}: one of {', '.join(TABLES)}", file=sys.stderr)
            return 2
        tally, misses = score(table)
        n = sum(v for k, v in tally.items() if k != "extra")
        print(f"{table}: {n} accesses: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
        for m in misses:
            print("  ", *m)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
