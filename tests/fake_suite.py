"""A GPU-free stand-in for the suite's device layer: fake experiments, session and ceilings.

``install(patch)`` swaps them in (``patch(obj, name, value)``: pytest's ``monkeypatch.setattr`` in-process,
``setattr`` in the child that ``python fake_suite.py ARGS`` starts for the signal tests). Experiments:

* ``ok1``, ``ok2``, ``ok3``: one record each (gbps = 100 x their number);
* ``slow``: sleeps ``FAKE_SLOW_S`` seconds (default 0) - the signal tests kill the run there;
* ``boom``: raises RuntimeError while ``FAKE_BOOM`` is set; ``bad``: raises UsageError likewise.

Every experiment appends ``started NAME`` to the file ``FAKE_LOG`` (if set) when it starts, so a test can
count runs and wait for one to begin.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from gpumemlab.bench.records import Record
from gpumemlab.errors import UsageError
from contextlib import nullcontext

from gpumemlab.experiments import Case, Claim, Experiment, outside

DEVICE = dict(name="FakeGPU", arch="sm_90", cc=[9, 0], sm_count=4)


def _log(name: str) -> None:
    if os.environ.get("FAKE_LOG"):
        with open(os.environ["FAKE_LOG"], "a") as fh:
            fh.write(f"started {name}\n")


def _record(name: str, number: int) -> Record:
    return Record(experiment=name, variant="v", params=dict(n=number), bytes=8, flops=None,
                  time_s=dict(median=1e-3, samples=[1e-3]), gbps=100.0 * number, gflops=None, pct_of_ceiling=None,
                  ceiling="copy_gbps", verified=True)


def _experiment(name: str, number: int, order: int) -> Experiment:
    def cases(session, params):
        _log(name)
        if name == "slow":
            time.sleep(float(os.environ.get("FAKE_SLOW_S", "0")))
        if name == "boom" and os.environ.get("FAKE_BOOM"):
            raise RuntimeError("the fake kernel crashed")
        if name == "bad" and os.environ.get("FAKE_BOOM"):
            raise UsageError("the fake size is too large")
        yield Case("v", lambda: None, None, params=dict(n=number))
    return Experiment(name=name, title=f"fake {name}", claims=(Claim("none", outside("a fake")),), cases=cases,
                      params=dict(n=[1]), order=order)


EXPERIMENTS = {e.name: e for e in (_experiment(n, i + 1, i) for i, n in
                                   enumerate(("ok1", "slow", "boom", "bad", "ok2", "ok3")))}


class FakeSession:
    def __init__(self, quick: bool = False):
        self.quick = quick
        self.device = dict(DEVICE, name=os.environ.get("FAKE_DEVICE", DEVICE["name"]))
        self.ceilings, self.records, self.progress = {}, [], None
        self.timer = SimpleNamespace(warmup=1)
        self.stream = nullcontext()
        self.closed = False

    def measure(self, *, experiment: str, params: dict, **_):
        rec = _record(experiment, params["n"])
        self.records.append(rec)
        return rec

    def close(self) -> None:
        self.closed = True


def fake_ceilings(session, quick=False):
    session.ceilings = {"copy_gbps": dict(value=1000.0, unit="GB/s", how="fake")}  # a new dict, as the real one
    return session.ceilings


def install(patch) -> None:
    import gpumemlab.suite.ceilings as ceilings
    import gpumemlab.bench.session as session
    import gpumemlab.experiments as experiments
    import gpumemlab.gpu.runtime as runtime

    patch(runtime, "ensure_device", lambda: None)
    patch(session, "Session", FakeSession)
    patch(ceilings, "measure_ceilings", fake_ceilings)
    patch(experiments, "registry", lambda: dict(EXPERIMENTS))


if __name__ == "__main__":  # the child of the signal tests: gpumemlab's CLI over the fakes
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    install(setattr)
    from gpumemlab.cli import main

    sys.exit(main(sys.argv[1:]))
