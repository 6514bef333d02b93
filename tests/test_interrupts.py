"""A stopped run leaves the state it found or one that `bench --resume` completes: signals at several points of a
run (in-process over the fakes of tests/fake_suite.py), and a real process killed while it writes results.json."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fake_suite

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
ALL = ["ok1", "slow", "boom", "bad", "ok2", "ok3"]


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    fake_suite.install(monkeypatch.setattr)
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "log.txt"))
    return tmp_path / "log.txt"


def _load(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())


def _experiments(out: Path) -> list[str]:
    return [r["experiment"] for r in _load(out)["results"]]


def _resume_completes(run_cli, out: Path) -> None:
    code, _, err = run_cli("bench", "--out", str(out), "--resume")
    assert code == 0, err
    d = _load(out)
    assert _experiments(out) == ALL and d["meta"]["complete"] is True and "interrupted" not in d["meta"]
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left


def _term_self():
    os.kill(os.getpid(), signal.SIGTERM)


def test_sigterm_while_results_json_is_written_waits_for_the_write(run_cli, fakes, monkeypatch, tmp_path):
    """The signal lands inside the first checkpoint (after ok1): the file is written whole, then the run stops."""
    from gpumemlab.bench.records import RunResults

    real, calls = RunResults.save, []

    def save(self, path):
        calls.append(path)
        if len(calls) == 1:
            _term_self()
        real(self, path)
    monkeypatch.setattr(RunResults, "save", save)
    out = tmp_path / "out"
    code, _, err = run_cli("bench", "--out", str(out))
    assert code == 128 + signal.SIGTERM and "stopped by SIGTERM; the finished experiments are in" in err
    assert _experiments(out) == ["ok1"] and _load(out)["meta"]["interrupted"] == "SIGTERM"
    monkeypatch.setattr(RunResults, "save", real)
    _resume_completes(run_cli, out)


def test_sigterm_while_the_ceilings_are_measured_leaves_a_resumable_run(run_cli, fakes, monkeypatch, tmp_path):
    import gpumemlab.suite.ceilings as ceilings

    def measure(session, quick=False):
        _term_self()
        return fake_suite.fake_ceilings(session, quick)
    monkeypatch.setattr(ceilings, "measure_ceilings", measure)
    out = tmp_path / "out"
    code, _, err = run_cli("bench", "--out", str(out))
    assert code == 128 + signal.SIGTERM
    assert err.strip().endswith(f"stopped by SIGTERM; no experiment had finished; the ceilings are in "
                                f"{out / 'results.json'} (continue with: gpumemlab bench --resume --out {out})")
    assert _experiments(out) == [] and _load(out)["meta"]["complete"] is False
    monkeypatch.setattr(ceilings, "measure_ceilings", fake_suite.fake_ceilings)
    _resume_completes(run_cli, out)


def test_a_second_signal_while_the_stopped_run_saves_is_the_same_request(run_cli, fakes, monkeypatch, tmp_path):
    from gpumemlab.bench.records import RunResults

    real, calls = RunResults.save, []

    def save(self, path):
        calls.append(path)
        if len(calls) in (1, 2):  # the first checkpoint, then again in the save of the stopped run
            _term_self()
        real(self, path)
    monkeypatch.setattr(RunResults, "save", save)
    out = tmp_path / "out"
    assert run_cli("bench", "--out", str(out))[0] == 128 + signal.SIGTERM
    assert len(calls) == 2 and _experiments(out) == ["ok1"]
    monkeypatch.setattr(RunResults, "save", real)
    _resume_completes(run_cli, out)


def test_sigterm_while_the_report_renders_keeps_the_complete_results(run_cli, fakes, monkeypatch, tmp_path):
    import gpumemlab.report.write as write

    def render(res, plots):
        _term_self()
        return "never written"
    monkeypatch.setattr(write, "render", render)
    out = tmp_path / "out"
    code, _, err = run_cli("bench", "--out", str(out))
    assert code == 128 + signal.SIGTERM
    assert err.strip().splitlines()[-1] == (f"gpumemlab: stopped by SIGTERM while writing the report; "
                                            f"{out / 'results.json'} is complete (render it with: gpumemlab report "
                                            f"{out / 'results.json'})")
    assert _load(out)["meta"]["complete"] is True and sorted(p.name for p in out.iterdir()) == ["results.json"]
    monkeypatch.setattr(write, "render", __import__("gpumemlab.report.markdown", fromlist=["render"]).render)
    code, _, err = run_cli("report", str(out / "results.json"))
    assert code == 0 and (out / "report.md").is_file()


def test_a_signal_before_anything_ran_or_a_refused_resume_leaves_no_folder(run_cli, fakes, monkeypatch, tmp_path):
    import gpumemlab.bench.session as session

    class Interrupted(fake_suite.FakeSession):
        def __init__(self, quick=False):
            _term_self()
            super().__init__(quick)
    monkeypatch.setattr(session, "Session", Interrupted)
    out = tmp_path / "out"
    code, _, err = run_cli("bench", "--out", str(out))
    assert (code, err) == (128 + signal.SIGTERM, "gpumemlab bench: stopped by SIGTERM\n")
    assert not out.exists()  # the folder this run created is gone again: the state it found
    code, _, err = run_cli("bench", "--out", str(out), "--resume")
    assert code == 2 and err == f"gpumemlab bench: --resume: no results.json in {out} to continue\n"
    assert not out.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    assert run_cli("bench", "--out", str(kept), "--resume")[0] == 2 and kept.is_dir()  # not ours to remove


# ---------------------------------------------------------------- a real process, killed while it writes

CHILD = """
import os, sys, time
sys.path.insert(0, {tests!r})
import fake_suite
fake_suite.install(setattr)
real, count, at = os.fsync, [0], int(os.environ["SLOW_FSYNC_AT"])
def slow(fd):  # the at-th fsync (2k-1: the k-th save's data) says so in a file and takes a while
    count[0] += 1
    if count[0] == at:
        open(os.environ["SLOW_FSYNC_MARKER"], "w").close()
        time.sleep(1.0)
    real(fd)
os.fsync = slow
from gpumemlab.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("sig, save", [(signal.SIGTERM, 1), (signal.SIGKILL, 1), (signal.SIGKILL, 2)])
def test_a_bench_killed_while_writing_results_json_can_be_resumed(run_cli, fakes, tmp_path, sig, save):
    out, marker = tmp_path / "out", tmp_path / "writing"
    env = dict(os.environ, PYTHONPATH=str(SRC), SLOW_FSYNC_AT=str(2 * save - 1), SLOW_FSYNC_MARKER=str(marker))
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(tests=str(HERE)), "bench", "--out", str(out)],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None and time.monotonic() < end, child.communicate()
        time.sleep(0.02)
    child.send_signal(sig)
    _, err = child.communicate(timeout=60)
    assert child.returncode == (128 + sig if sig == signal.SIGTERM else -sig), err
    done = {1: ["ok1"], 2: ["ok1", "slow"]}[save]
    if sig == signal.SIGTERM:  # the write in progress finishes, then the run stops
        assert _experiments(out) == done and not [p for p in out.iterdir() if p.name.startswith(".")]
    elif save == 1:  # killed inside the first write: no results.json yet, only the half-written file
        assert [p.name.startswith(".results.json.") for p in out.iterdir()] == [True]
    else:  # killed inside a later write: the previous results.json, whole
        assert _experiments(out) == done[:-1]
    _resume_completes(run_cli, out)
