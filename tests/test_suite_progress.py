"""run_suite's progress bar, drawn into a recording rich Console over the GPU-free fakes: what it shows (the text the
session reports, completed/total with the ceilings as one step, elapsed time, ETA), that no console draws nothing,
and that the ceilings are measured as the run was asked (quick or not) and the session is closed."""

import io

import pytest
from rich.console import Console

import fake_suite
from gpumemlab.suite import run


@pytest.fixture
def fakes(monkeypatch):
    import gpumemlab.bench.session as session_module
    import gpumemlab.suite.ceilings as ceilings

    fake_suite.install(monkeypatch.setattr)
    sessions, asked = [], []

    def make(quick):
        sessions.append(fake_suite.FakeSession(quick))
        return sessions[-1]

    def measure(session, quick=False):
        asked.append(quick)
        session.progress("ceilings: " + "copy " * 40)  # longer than the bar's description
        return fake_suite.fake_ceilings(session, quick)

    monkeypatch.setattr(session_module, "Session", make)
    monkeypatch.setattr(ceilings, "measure_ceilings", measure)
    return sessions, asked


def _console():
    return Console(file=io.StringIO(), width=200, force_terminal=False, color_system=None, record=True)


@pytest.mark.parametrize("quick", [True, False])
def test_the_bar_counts_the_ceilings_and_each_experiment_and_shows_time_and_eta(fakes, quick):
    sessions, asked = fakes
    console = _console()
    exps = [fake_suite.EXPERIMENTS[n] for n in ("ok1", "ok2")]
    res = run.run_suite(exps, lambda exp: {}, quick=quick, command="gpumemlab bench", progress_console=console)
    assert res.meta["complete"] and asked == [quick]
    assert [s.closed for s in sessions] == [True]
    last = console.export_text().strip().splitlines()[-1]
    description = ("ceilings: " + "copy " * 40)[:90]
    assert last.startswith(description) and last[90] == " "  # cut at 90 characters
    assert " 3/3 " in last and " ETA " in last  # two experiments + the ceilings, all done
    assert "━━━━" in last and last.count("0:00:0") == 2  # the bar, the time elapsed and the time remaining


def test_the_bar_starts_as_ceilings_until_the_session_reports(fakes, monkeypatch):
    import gpumemlab.suite.ceilings as ceilings

    monkeypatch.setattr(ceilings, "measure_ceilings", fake_suite.fake_ceilings)
    console = _console()
    run.run_suite([fake_suite.EXPERIMENTS["ok1"]], lambda exp: {}, quick=True, command="gpumemlab bench",
                  progress_console=console)
    assert console.export_text().strip().splitlines()[-1].startswith("ceilings ")


def test_without_a_console_nothing_is_drawn(fakes, capsys):
    res = run.run_suite([fake_suite.EXPERIMENTS["ok1"]], lambda exp: {}, quick=True, command="gpumemlab bench")
    assert res.meta["complete"]
    assert capsys.readouterr() == ("", "")


def test_a_signal_while_the_stopped_run_saves_is_dropped_and_the_run_still_returns(fakes, monkeypatch):
    import os
    import signal

    saves = []

    def save_under_fire(res, out, started):  # every save is hit by a SIGTERM, the stopped run's last one too
        saves.append(res.meta.get("interrupted"))
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(run, "_checkpoint", save_under_fire)
    try:
        res = run.run_suite([fake_suite.EXPERIMENTS[n] for n in ("ok1", "ok2")], lambda exp: {}, quick=True,
                            command="gpumemlab bench")
    except run.Stopped as stop:  # a BaseException: uncaught it would stop pytest itself
        pytest.fail(f"the second signal escaped run_suite: {stop!r}")
    assert res.meta["interrupted"] == "SIGTERM" and not res.meta["complete"]
    assert saves == [None, "SIGTERM"]  # after ok1 (then stopped), and the stopped run's save
    assert [r.experiment for r in res.results] == ["ok1"]
