"""lint on the idioms corpus against its hand-derived table (tests/lint/test_lint_idioms.py): exact / unknown / wrong.

Counts every access of the table: exact (the same numbers and verdict), unknown where the table expects unknown
(by design), unknown where it expects numbers (needlessly), wrong, and not analyzed (the run failed or lost the
access). The lint that runs is the one on PYTHONPATH, so an older checkout's src can be measured on today's table:
PYTHONPATH=OLD/src python tools/lint_accuracy.py
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    from gpumemlab.lint import lint_file
    from gpumemlab.lint.analysis import Options

    spec = importlib.util.spec_from_file_location("idioms", ROOT / "tests" / "lint" / "test_lint_idioms.py")
    t = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(t)
    expected = {e[:6]: e[6] for e in t.EXPECTED}
    tally, misses = Counter(), []
    for run, (name, kernel, opts) in enumerate(t.RUNS):
        try:
            reports = lint_file(str(t.IDIOMS / name), Options(kernel=kernel, **opts), resources=False)
        except Exception as exc:  # noqa: BLE001 - an older lint's failure is what is being counted
            got, failure = {}, f"{type(exc).__name__}: {str(exc)[:80]}"
        else:
            failure = None
            got = {(run, r.name, f"{f.line}:{f.column}", f.text, f.access, tuple(f.call_lines)): f
                   for r in reports if not (kernel is None and r.name in t.SOLO) for f in r.findings}
        for key, want in expected.items():
            if key[0] != run:
                continue
            f = got.get(key)
            if f is None:
                tally["not analyzed"] += 1
                misses.append((key[1:4], failure or "access not found"))
                continue
            have = t.numbers(f)
            if want[0] == "unknown":
                tally["unknown, by design" if have[0] == "unknown" else "wrong"] += 1
            elif have[0] == "unknown":
                tally["unknown, needlessly"] += 1
                misses.append((key[1:4], have[1][:80]))
            else:
                tally["exact" if have == want else "wrong"] += 1
                if have != want:
                    misses.append((key[1:4], f"{have} != {want}"))
    print(f"{len(expected)} accesses: " + ", ".join(f"{k} {v}" for k, v in tally.items()))
    for m in misses:
        print("  ", *m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
