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
