"""suite/runner.py's hand-off of a case to the session: every field of the case reaches the measurement, and the
group a record belongs to is named by the experiment's group_by parameters."""

from __future__ import annotations

from gpumemlab.experiments._declare import Case, Claim, Experiment, outside
from gpumemlab.suite import runner


class Session:
    def __init__(self):
        self.calls = []

    def measure(self, **kwargs):
        self.calls.append(kwargs)
        return dict(variant=kwargs["variant"])


def experiment(**kw) -> Experiment:
    return Experiment(name="copy", title="Copy", claims=(Claim("none", outside("a test")),), cases=lambda s, p: [],
                      **kw)


def test_measure_case_passes_every_field_of_the_case_to_the_session():
    run, check, timer, after = (lambda: None), (lambda: None), object(), []
    case = Case("vec4", run, check, params=dict(n=4), reads=16, writes=16, flops=8, kind="baseline", ceiling="read_gbps",
                cold_l2=False, model=dict(sectors_per_request=4), extra=dict(k=1), notes="a note", timer=timer,
                clock="host", after=after.append)
    session = Session()
    rec = runner.measure_case(session, experiment(), case)
    assert session.calls == [dict(experiment="copy", variant="vec4", params=dict(n=4), run=run, bytes=32, flops=8,
                                  verify=check, cold_l2=False, ceiling="read_gbps", kind="baseline",
                                  model=dict(sectors_per_request=4), notes="a note", extra=dict(k=1), timer=timer,
                                  clock="host")]
    assert after == [rec] == [dict(variant="vec4")]  # the case's after() sees the record


def test_group_key_names_each_group_by_parameter_even_when_absent():
    exp = experiment(group_by=("n", "dtype"))
    assert runner.group_key(exp, dict(n=4, stride=2)) == (("n", "4"), ("dtype", "None"))
    assert runner.group_key(exp, dict(n=4, dtype="float32")) == (("n", "4"), ("dtype", "'float32'"))
