"""Hand-derived per-access tables of the lint corpora: run a table's launches, and compare lint's numbers with it.

A table is RUNS (file, kernel or None for every kernel of the file, Options keywords) and EXPECTED rows
(run index, kernel, "line:column", access as written, load/store/atomic, call lines, expected), expected being
global (sectors/request, ideal, verdict), shared (wavefronts/request, ideal, ways, verdict), constant (reads/request,
ideal, verdict), or ("unknown", the
reason's first words). Used by the corpus tests and by tools/lint_accuracy.py.
"""

from __future__ import annotations

from pathlib import Path

from gpumemlab.lint import lint_file
from gpumemlab.lint.analysis import Options


def numbers(f) -> tuple:
    if f.unknown_reason:
        return ("unknown", f.unknown_reason)
    if f.space == "shared":
        return (f.wavefronts_per_request, f.ideal_wavefronts_per_request, f.conflict_ways, f.verdict)
    if f.space == "constant":
        return (f.reads_per_request, f.ideal_reads_per_request, f.verdict)
    return (f.sectors_per_request, f.ideal_sectors_per_request, f.verdict)


def run_findings(folder: Path, runs: list, run: int, solo=()) -> dict:
    """Run ``runs[run]``: its findings keyed as EXPECTED rows are (kernels in ``solo`` only in their own run)."""
    name, kernel, opts = runs[run]
    got = {}
    for r in lint_file(str(folder / name), Options(kernel=kernel, **opts), resources=False):
        assert r.error is None, (name, r.name, r.error)
        if kernel is None and r.name in solo:
            continue
        for f in r.findings:
            key = (run, r.name, f"{f.line}:{f.column}", f.text, f.access, tuple(f.call_lines))
            assert key not in got, key
            got[key] = f
    return got


def all_findings(folder: Path, runs: list, solo=()) -> dict:
    got = {}
    for run in range(len(runs)):
        got.update(run_findings(folder, runs, run, solo))
    return got


def matches(want: tuple, have: tuple) -> bool:
    """An expected row against lint's numbers (an expected unknown: lint's reason starts with its words)."""
    if want[0] == "unknown":
        return have[0] == "unknown" and have[1].startswith(want[1])
    return have == want
