"""The committed GPU runs (docs/results/<gpu>/results.json.xz), each read once per test session: a load validates
every record, and a dozen tests read the same three files. The runs are shared between tests: read them, never change
them (build a changed run from copies, as tests/test_report_rules.py does)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
NAMES = sorted(p.parent.name for p in RESULTS.glob("*/results.json.xz"))  # one folder per GPU (or GPUs) measured
H100, H200, H200_X2 = "nvidia-h100-80gb-hbm3", "nvidia-h200", "nvidia-h200-x2"


def path(name: str) -> Path:
    return RESULTS / name / "results.json.xz"


@cache
def committed_run(name: str):
    """The RunResults of docs/results/``name`` (shared: do not change it)."""
    from gpumemlab.bench.records import RunResults

    return RunResults.load(path(name))
