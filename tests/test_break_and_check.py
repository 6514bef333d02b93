"""tools/break_and_check.py, run as developers run it: its table matches the code (every snippet exactly once, every
test node collects), bad choices are one line and exit 2, and a real sabotage is caught end to end."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "break_and_check.py"


def _run(*args, timeout=600):
    return subprocess.run([sys.executable, str(TOOL), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_the_table_is_current():
    p = _run("--check")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().endswith("test nodes: every snippet found once, every node collects")


def test_bad_choices_are_one_line_and_exit_2():
    p = _run("--only", "no-such-sabotage")
    assert p.returncode == 2 and "unknown sabotage no-such-sabotage; known: probe-swallows-errors" in p.stderr
    p = _run("--cpu-only", "--only", "copy-out-skips-copy", "runtime-import-broken")
    assert p.returncode == 2 and "nothing to run without a GPU" in p.stderr


def test_a_real_sabotage_is_caught(tmp_path):
    """End to end on this machine: a copy, PYTHONPATH, pytest and its junit report, the control first."""
    out = tmp_path / "table.md"
    p = _run("--cpu-only", "--only", "ceiling-not-raised", "--timeout", "120", "--out", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    row = next(ln for ln in out.read_text().splitlines() if ln.startswith("| **ceiling-not-raised**"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[2] == "1 passed" and cells[3].startswith("1 failed: AssertionError: assert False is True")
    assert cells[4] == "fails as it must"
