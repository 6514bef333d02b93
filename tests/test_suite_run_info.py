"""What run_suite keeps of each experiment (over the fakes of tests/fake_suite.py): the parameters it was given
reach its cases, and its declaration is recorded beside the time it took, or beside why this GPU skipped it."""

from __future__ import annotations

import dataclasses

import fake_suite
from gpumemlab.experiments import Case


def test_params_reach_the_cases_and_each_declaration_is_kept(monkeypatch):
    fake_suite.install(monkeypatch.setattr)
    from gpumemlab.suite.run import run_suite

    given = []

    def cases(session, params):
        given.append(params)
        yield Case("v", lambda: None, None, params=dict(n=1))

    ran = dataclasses.replace(fake_suite.EXPERIMENTS["ok1"], cases=cases)
    skipped = dataclasses.replace(fake_suite.EXPERIMENTS["ok2"], requires=lambda device: "needs a newer GPU")
    res = run_suite([ran, skipped], lambda exp: dict(n=[7]), quick=True, command="gpumemlab bench")
    assert given == [dict(n=[7])]
    assert res.experiments["ok1"]["title"] == "fake ok1" and res.experiments["ok1"]["wall_s"] >= 0
    assert res.experiments["ok2"] == dict(skipped.describe(), skipped="needs a newer GPU")
    assert res.experiments["ok2"]["title"] == "fake ok2"


def test_the_run_s_meta_names_the_command_device_timer_and_versions(monkeypatch):
    import importlib.metadata as md
    from datetime import datetime

    from gpumemlab.gpu import compile as gpu_compile
    from gpumemlab.suite import run

    fake_suite.install(monkeypatch.setattr)
    monkeypatch.setattr(gpu_compile, "nvrtc_version", lambda: (12, 8))
    installed = {"numpy": "2.1.0", "cuda-core": "0.3.0"}

    def version(pkg):
        if pkg not in installed:
            raise md.PackageNotFoundError(pkg)
        return installed[pkg]

    monkeypatch.setattr(md, "version", version)
    res = run.run_suite([fake_suite.EXPERIMENTS["ok1"]], lambda exp: {}, quick=True, command="gpumemlab bench --quick")
    meta = res.meta
    assert datetime.fromisoformat(meta.pop("date")).utcoffset().total_seconds() == 0  # UTC, stated
    assert 0 <= meta.pop("wall_s") < 60
    from gpumemlab import __version__

    assert meta == dict(command="gpumemlab bench --quick", version=__version__, quick=True, complete=True,
                        versions={"cuda-core": "0.3.0", "cuda-bindings": None, "cupy-cuda13x": None, "numpy": "2.1.0",
                                  "nvrtc": "12.8"},
                        timer={"warmup": 1}, device={"ordinal": None, "name": "FakeGPU", "pci_bus_id": None})
    assert res.experiments["ok1"]["title"] == "fake ok1"
    monkeypatch.setattr(gpu_compile, "nvrtc_version", lambda: 1 / 0)  # no NVRTC: no version, the run goes on
    assert run._versions()["nvrtc"] is None


def test_a_resumed_run_on_a_chosen_gpu_adds_the_date_it_resumed(monkeypatch):
    import gpumemlab.bench.session as session_module
    from gpumemlab.bench.records import RunResults
    from gpumemlab.gpu import runtime
    from gpumemlab.suite import run

    fake_suite.install(monkeypatch.setattr)
    used, sessions = [], []
    monkeypatch.setattr(runtime, "use_device", used.append)
    monkeypatch.setattr(session_module, "Session", lambda quick: sessions.append(quick) or fake_suite.FakeSession(quick))
    prev = RunResults(meta=dict(quick=True, date="2026-01-02T00:00:00+00:00", resumed=["2026-01-01T00:00:00+00:00"]),
                      device=dict(fake_suite.DEVICE), ceilings={}, results=[])
    res = run.run_suite([fake_suite.EXPERIMENTS["ok1"]], lambda exp: {}, quick=True, command="gpumemlab bench",
                        resume=prev, device=1)
    assert res.meta["resumed"] == ["2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00"]
    assert (used, sessions) == ([1], [True])


def test_signals_are_left_to_their_owner_outside_the_main_thread():
    import signal
    import threading

    from gpumemlab.suite import run

    before, errors = signal.getsignal(signal.SIGTERM), []

    def body():
        try:
            with run.StopOnSignals() as stop:
                assert stop.old == {}
        except Exception as exc:  # noqa: BLE001 - reported to the main thread
            errors.append(exc)

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert errors == [] and signal.getsignal(signal.SIGTERM) == before
