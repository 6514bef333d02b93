"""tools/break_and_check.py: its table matches the code (every snippet exactly once, every test node collects),
its edits fail loudly when stale, and its verdicts come out right on real runs, caught and not caught."""

import subprocess
import sys
from pathlib import Path

import pytest
from tool_modules import load_tool

ROOT = Path(__file__).resolve().parents[1]
bc = load_tool("break_and_check")


@pytest.mark.parametrize("sabotage", bc.SABOTAGES, ids=lambda s: s.name)
def test_every_snippet_occurs_exactly_once_in_its_file(sabotage):
    assert sabotage.edits and sabotage.tests and sabotage.weak.strip() and sabotage.what.strip()
    for e in sabotage.edits:
        assert e.path.split("/")[0] in ("src", "tests") and e.old != e.new, e
        assert (ROOT / e.path).read_text().count(e.old) == 1, (e.path, e.old)
    bc.check_snippets(ROOT, sabotage.edits)
    for node in sabotage.tests:
        assert (ROOT / node.split("::")[0]).is_file(), node


def test_names_are_unique_and_every_sabotage_runs_without_a_gpu_or_on_one():
    names = [s.name for s in bc.SABOTAGES]
    assert len(set(names)) == len(names) and bc.RUNTIME_IMPORT not in names
    cpu = {s.name for s in bc.SABOTAGES if s.nodes(cpu_only=True)}
    assert {"probe-swallows-errors", "check-close-ignores-nan", "findings-raise"} <= cpu
    assert "copy-out-skips-copy" not in cpu
    timer = next(s for s in bc.SABOTAGES if s.name == "timer-divides-by-batch")
    assert timer.nodes(cpu_only=True) == timer.tests[:1] and timer.nodes(cpu_only=False) == timer.tests


def test_every_test_node_collects():
    """Each node id names exactly one collected test (a renamed test or parameter would make every run error)."""
    nodes = list(dict.fromkeys(n for s in bc.SABOTAGES for n in s.tests))
    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *nodes],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    collected = [ln for ln in p.stdout.splitlines() if "::" in ln]
    assert collected == nodes


def test_apply_edits_a_copy_and_fails_loudly_on_a_stale_snippet(tmp_path):
    (tmp_path / "src").mkdir()
    f = tmp_path / "src" / "k.cu"
    f.write_text("a = 1;\nb = 1;\nb = 1;\n")
    bc.apply(tmp_path, [bc.Edit("src/k.cu", "a = 1;", "a = 2;")])
    assert f.read_text() == "a = 2;\nb = 1;\nb = 1;\n"
    with pytest.raises(bc.SabotageError, match=r"^src/k.cu: snippet found 2 times \(want exactly 1\): 'b = 1;'$"):
        bc.apply(tmp_path, [bc.Edit("src/k.cu", "b = 1;", "b = 0;")])
    with pytest.raises(bc.SabotageError, match=r"snippet found 0 times .*'c = 1;'"):
        bc.apply(tmp_path, [bc.Edit("src/k.cu", "a = 2;", "a = 3;"), bc.Edit("src/k.cu", "c = 1;", "")])
    assert f.read_text() == "a = 2;\nb = 1;\nb = 1;\n"  # all snippets are checked before the first write
    with pytest.raises(bc.SabotageError, match=r"^src/gone.py: no such file$"):
        bc.apply(tmp_path, [bc.Edit("src/gone.py", "x", "y")])


NODES = ("t.py::a", "t.py::b")


@pytest.mark.parametrize("control,broken,want", [
    ({"t.py::a": "passed", "t.py::b": "passed"}, {"t.py::a": "failed", "t.py::b": "failed"}, bc.CAUGHT),
    ({"t.py::a": "passed", "t.py::b": "passed"}, {"t.py::a": "failed", "t.py::b": "passed"},
     "NOT CAUGHT: 1 of 2 passed"),
    ({"t.py::a": "passed", "t.py::b": "passed"}, {"t.py::a": "failed", "t.py::b": "error"},
     "NO EVIDENCE: error (not a test failure)"),
    ({"t.py::a": "passed", "t.py::b": "passed"}, {"t.py::a": "failed"}, "NO EVIDENCE: not run (not a test failure)"),
    ({"t.py::a": "passed", "t.py::b": "skipped"}, {"t.py::a": "failed", "t.py::b": "failed"},
     "NO EVIDENCE: control did not pass"),
])
def test_verdicts(control, broken, want):
    run = lambda d: bc.Run(1 if "failed" in d.values() else 0, {n: (o, "m") for n, o in d.items()})  # noqa: E731
    assert bc.verdict(run(control), run(broken), NODES) == want


def test_verdicts_that_are_no_evidence():
    ok = bc.Run(0, {n: ("passed", "") for n in NODES})
    assert bc.verdict(ok, bc.Run(None), NODES) == "NO EVIDENCE: timed out"
    assert bc.verdict(ok, bc.Run(4, tail="ERROR: not found: t.py::b"), NODES) == \
        "NO EVIDENCE: pytest exit 4 (ERROR: not found: t.py::b)"
    no_build = bc.Run(1, {n: ("failed", "gpumemlab.errors.CompileError: nvrtc: error") for n in NODES})
    assert bc.verdict(ok, no_build, NODES) == "NO EVIDENCE: the sabotage does not compile"
    assert bc.verdict(bc.Run(None), None, NODES) == "NO EVIDENCE: control did not pass"


def test_a_real_sabotage_is_caught_and_a_harmless_edit_is_not(tmp_path):
    """End to end on this machine: copies, PYTHONPATH, pytest and its junit report, one control for both."""
    real = next(s for s in bc.SABOTAGES if s.name == "ceiling-not-raised")
    harmless = bc.Sabotage("comment-only", "none", "a comment changes",
                           (bc.Edit("src/gpumemlab/suite/ceilings.py", "# what the ceiling measurement itself gave",
                                    "# changed"),), real.tests)
    rows = bc.check([real, harmless], cpu_only=True, timeout=120, work=tmp_path / "w", cache=tmp_path / "c",
                    log=lambda msg: None)
    assert [r[2] for r in rows] == ["1 passed", "1 passed"]
    assert rows[0][3].startswith("1 failed: assert (1000.0 == 1060.0)") and rows[0][4] == bc.CAUGHT
    assert rows[1][3] == "1 passed" and rows[1][4] == "NOT CAUGHT: 1 of 1 passed"
    assert "ceiling-not-raised: `src/gpumemlab/suite/ceilings.py`" in bc.render(rows, [real, harmless])


def test_cli_refuses_unknown_names_and_gpu_only_choices_without_a_gpu(capsys):
    with pytest.raises(SystemExit) as exc:
        bc.main(["--only", "no-such-sabotage"])
    assert exc.value.code == 2 and "unknown sabotage no-such-sabotage; known: probe-swallows-errors" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        bc.main(["--cpu-only", "--only", "copy-out-skips-copy", bc.RUNTIME_IMPORT])
    assert exc.value.code == 2 and "nothing to run without a GPU" in capsys.readouterr().err
