"""No run is lost: output checked first, results.json after every experiment, failures recorded, SIGTERM/SIGINT
stop in order, and `bench --resume` completes a run. All on fake experiments (tests/fake_suite.py), no GPU."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import fake_suite
from gpumemlab.report.write import prepare_out

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    fake_suite.install(monkeypatch.setattr)
    log = tmp_path / "log.txt"
    monkeypatch.setenv("FAKE_LOG", str(log))
    return log


def _load(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())


def _started(log: Path) -> list[str]:
    return [ln.split()[1] for ln in log.read_text().splitlines()] if log.exists() else []


def test_a_failing_experiment_is_recorded_and_the_others_still_run(run_cli, fakes, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_BOOM", "1")
    out = tmp_path / "out"
    code, _, err = run_cli("bench", "--out", str(out))
    assert code == 1
    d = _load(out)
    assert [r["experiment"] for r in d["results"]] == ["ok1", "slow", "ok2", "ok3"]
    assert [r["gbps"] for r in d["results"]] == [100.0, 200.0, 500.0, 600.0]
    assert d["ceilings"] == {"copy_gbps": dict(value=1000.0, unit="GB/s", how="fake")}  # the measured ceilings
    assert [r["pct_of_ceiling"] for r in d["results"]] == [10.0, 20.0, 50.0, 60.0]
    boom, bad = d["errors"]
    assert boom["experiment"] == "boom" and boom["error"] == "RuntimeError: the fake kernel crashed"
    assert "Traceback" in boom["traceback"] and "fake_suite.py" in boom["traceback"]
    assert bad == dict(experiment="bad", error="UsageError: the fake size is too large")  # ours: no traceback
    assert d["meta"]["complete"] is True and "interrupted" not in d["meta"]
    assert "error: boom: RuntimeError: the fake kernel crashed" in err
    assert (out / "report.md").is_file()


def test_results_are_on_disk_after_every_experiment(run_cli, fakes, monkeypatch, tmp_path):
    out, seen = tmp_path / "out", []
    slow = fake_suite.EXPERIMENTS["slow"]

    def peek(session, params):  # what an interrupted run would leave at this point
        seen.append([r["experiment"] for r in _load(out)["results"]])
        yield from slow.cases(session, params)
    monkeypatch.setitem(fake_suite.EXPERIMENTS, "slow", dataclasses.replace(slow, cases=peek))
    monkeypatch.setenv("FAKE_SLOW_S", "0.2")
    code, _, err = run_cli("bench", "--out", str(out), "--only", "ok1", "slow", "ok2")
    assert code == 0, err
    assert seen == [["ok1"]]
    walls = {n: e["wall_s"] for n, e in _load(out)["experiments"].items()}  # each experiment's own time
    assert set(walls) == {"ok1", "slow", "ok2"} and walls["slow"] >= 0.2 > max(walls["ok1"], walls["ok2"])
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_resume_skips_finished_experiments_and_reruns_failed_ones(run_cli, fakes, monkeypatch, tmp_path):
    out = tmp_path / "out"
    monkeypatch.setenv("FAKE_BOOM", "1")
    assert run_cli("bench", "--out", str(out))[0] == 1
    first = _load(out)
    monkeypatch.delenv("FAKE_BOOM")
    code, _, err = run_cli("bench", "--out", str(out), "--resume")
    assert code == 0, err
    d = _load(out)
    assert _started(fakes) == ["ok1", "slow", "boom", "bad", "ok2", "ok3", "boom", "bad"]
    assert sorted(r["experiment"] for r in d["results"]) == ["bad", "boom", "ok1", "ok2", "ok3", "slow"]
    assert d["errors"] == [] and d["meta"]["complete"] is True
    assert d["meta"]["resumed"] == [first["meta"]["date"]]
    assert set(d["experiments"]) == {"ok1", "slow", "boom", "bad", "ok2", "ok3"}


@pytest.mark.parametrize("first, argv, message", [
    (None, ["--resume"], None),
    ([], ["--resume", "--quick"], "--resume: the results were measured without --quick; pass the same options"),
    (["--quick"], ["--resume"], "--resume: the results were measured with --quick; pass the same options"),
])
def test_resume_refuses_what_it_cannot_continue(run_cli, fakes, tmp_path, first, argv, message):
    out = tmp_path / "out"
    if first is not None:
        assert run_cli("bench", "--out", str(out), "--only", "ok1", *first)[0] == 0
    code, _, err = run_cli("bench", "--out", str(out), *argv)
    assert code == 2 and err.count("\n") == 1
    assert err.strip() == f"gpumemlab bench: {message}" if message else "--resume: no results.json in" in err


def test_resume_on_another_gpu_is_refused(run_cli, fakes, monkeypatch, tmp_path):
    out = tmp_path / "out"
    assert run_cli("bench", "--out", str(out), "--only", "ok1")[0] == 0
    monkeypatch.setenv("FAKE_DEVICE", "OtherGPU")
    code, _, err = run_cli("bench", "--out", str(out), "--resume")
    assert code == 2 and "measured on FakeGPU, this GPU is OtherGPU" in err


def test_bad_out_is_refused_before_any_gpu_work(run_cli, fakes, monkeypatch, tmp_path):
    import gpumemlab.gpu.runtime as runtime

    def no_gpu_work():
        raise AssertionError("the device was touched before --out was checked")
    monkeypatch.setattr(runtime, "ensure_device", no_gpu_work)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for cmd in (["bench"], ["run", "ok1"]):
        code, _, err = run_cli(*cmd, "--out", str(a_file))
        assert (code, err) == (2, f"gpumemlab {cmd[0]}: --out {a_file}: is a file, not a folder\n")
        code, _, err = run_cli(*cmd, "--out", str(a_file / "sub"))
        assert code == 2 and err.startswith(f"gpumemlab {cmd[0]}: --out {a_file / 'sub'}: cannot write there (")
    assert _started(fakes) == []


@contextlib.contextmanager
def without_root():
    """Permission checks as an ordinary user sees them: root (CI's containers) writes into read-only folders, so
    under root the effective user is 'nobody' inside the block."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


def test_read_only_out_is_refused(run_cli, fakes):
    with tempfile.TemporaryDirectory() as top:  # not under tmp_path: its parents are closed to other users
        os.chmod(top, 0o755)
        ro, rw = Path(top) / "ro", Path(top) / "rw"
        ro.mkdir(mode=0o555)
        rw.mkdir()
        rw.chmod(0o777)  # mkdir's mode passes through the umask
        with without_root():
            code, _, err = run_cli("bench", "--out", str(ro))
            assert prepare_out(rw) == rw  # the same user may write beside it: the folder's mode refused it
    assert code == 2 and err == f"gpumemlab bench: --out {ro}: cannot write there (Permission denied)\n"
    assert _started(fakes) == []


# ---------------------------------------------------------------- signals (a child process over the fakes)

def _child(out: Path, log: Path, *extra: str, slow_s: float = 0.0):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), str(HERE)]), FAKE_LOG=str(log),
               FAKE_SLOW_S=str(slow_s))
    return subprocess.Popen([sys.executable, str(HERE / "fake_suite.py"), "bench", "--out", str(out), *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(log: Path, name: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while name not in _started(log):
        assert time.monotonic() < end, f"{name} never started"
        time.sleep(0.05)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_keeps_the_finished_experiments_and_resume_completes(tmp_path, sig):
    out, log = tmp_path / "out", tmp_path / "log.txt"
    child = _child(out, log, slow_s=120)
    _wait_for(log, "slow")
    child.send_signal(sig)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 128 + sig
    assert err.strip().splitlines()[-1] == (f"gpumemlab: stopped by {sig.name}; the finished experiments are in "
                                            f"{out / 'results.json'} (continue with: gpumemlab bench --resume "
                                            f"--out {out})")
    d = _load(out)
    assert [r["experiment"] for r in d["results"]] == ["ok1"]
    assert list(d["experiments"]) == ["ok1"] and d["errors"] == []
    assert d["meta"]["interrupted"] == sig.name and d["meta"]["complete"] is False

    child = _child(out, log, "--resume")
    _, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    d = _load(out)
    assert _started(log) == ["ok1", "slow", "slow", "boom", "bad", "ok2", "ok3"]  # ok1 ran once
    assert [r["experiment"] for r in d["results"]] == ["ok1", "slow", "boom", "bad", "ok2", "ok3"]
    assert d["meta"]["complete"] is True and "interrupted" not in d["meta"]


# ---------------------------------------------------------------- the real thing (lead: run on the GPU)

@pytest.mark.gpu
def test_gpu_bench_killed_after_the_first_experiment_then_resumed(tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(SRC))
    cmd = [sys.executable, "-m", "gpumemlab", "bench", "--only", "vector_copy", "offset_copy", "--quick", "--out",
           str(out)]
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 300
    while not ((out / "results.json").exists() and "vector_copy" in _load(out)["experiments"]):
        assert child.poll() is None and time.monotonic() < end, "vector_copy never finished"
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    child.communicate(timeout=120)
    d = _load(out)
    if child.returncode == 0:  # offset_copy finished before the signal landed: nothing left to resume
        pytest.skip("the run finished before SIGTERM arrived")
    assert child.returncode == 128 + signal.SIGTERM
    assert list(d["experiments"]) == ["vector_copy"] and d["meta"]["interrupted"] == "SIGTERM"
    n_vector = sum(r["experiment"] == "vector_copy" for r in d["results"])
    done = subprocess.run(cmd + ["--resume"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    d = _load(out)
    assert set(d["experiments"]) == {"vector_copy", "offset_copy"} and d["errors"] == []
    assert sum(r["experiment"] == "vector_copy" for r in d["results"]) == n_vector
    assert any(r["experiment"] == "offset_copy" for r in d["results"]) and (out / "report.md").is_file()


def test_an_experiment_this_gpu_cannot_run_is_recorded_as_skipped(run_cli, fakes, monkeypatch, tmp_path):
    out = tmp_path / "out"
    ok2 = fake_suite.EXPERIMENTS["ok2"]
    monkeypatch.setitem(fake_suite.EXPERIMENTS, "ok2", dataclasses.replace(
        ok2, requires=lambda info: f"needs compute capability 99.0, {info['name']} has 9.0"))
    code, _, err = run_cli("bench", "--out", str(out), "--only", "ok1", "ok2")
    assert code == 0, err
    d = _load(out)
    assert d["experiments"]["ok2"]["skipped"] == "needs compute capability 99.0, FakeGPU has 9.0"
    assert [r["experiment"] for r in d["results"]] == ["ok1"] and d["errors"] == []
    assert "- Not run on this GPU: needs compute capability 99.0, FakeGPU has 9.0" in (out / "report.md").read_text()


def test_findings_quote_the_raised_ceiling(run_cli, fakes, monkeypatch, tmp_path):
    """ok2 measures 500 GB/s against a 300 GB/s copy ceiling: the ceiling becomes 500 (set by ok2) and the findings
    of every experiment are computed against it, also those written before the raise (ok1: 100 / 500 = 20%)."""
    def low_ceiling(session, quick=False):
        session.ceilings = {"copy_gbps": dict(value=300.0, unit="GB/s", how="fake")}
        return session.ceilings
    monkeypatch.setattr(ceilings_module(), "measure_ceilings", low_ceiling)
    for name in ("ok1", "ok2"):
        exp = fake_suite.EXPERIMENTS[name]
        monkeypatch.setitem(fake_suite.EXPERIMENTS, name, dataclasses.replace(
            exp, findings=lambda recs: [f"{recs[0].pct_of_ceiling or 0:.0f}% of the copy ceiling"]))
    out = tmp_path / "out"
    assert run_cli("bench", "--out", str(out), "--only", "ok1", "ok2")[0] == 0
    d = _load(out)
    assert d["ceilings"]["copy_gbps"]["value"] == 200.0 * 2.5 and d["ceilings"]["copy_gbps"]["measured_as"] == 300.0
    assert d["ceilings"]["copy_gbps"]["set_by"]["experiment"] == "ok2"
    assert d["experiments"]["ok1"]["findings"] == ["20% of the copy ceiling"]
    assert d["experiments"]["ok2"]["findings"] == ["100% of the copy ceiling"]


def ceilings_module():
    import gpumemlab.suite.ceilings as ceilings

    return ceilings
