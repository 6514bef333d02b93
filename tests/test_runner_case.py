"""suite/runner.py's hand-off of a case to the session: every field of the case reaches the measurement, and the
group a record belongs to is named by the experiment's group_by parameters."""

from __future__ import annotations

import numpy as np
import pytest

from gpumemlab.errors import VerificationError
from gpumemlab.experiments._declare import Case, Claim, Experiment, outside
from gpumemlab.suite import runner


class Session:
    def __init__(self):
        self.calls = []

    def measure(self, **kwargs):
        self.calls.append(kwargs)
        return dict(variant=kwargs["variant"])


def experiment(**kw) -> Experiment:
    return Experiment(**{**dict(name="copy", title="Copy", claims=(Claim("none", outside("a test")),),
                                cases=lambda s, p: []), **kw})


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


class GroupSession:
    """Times every case by its variant and parameters from ``times``; head-to-heads are recorded, not timed."""

    def __init__(self, times: dict):
        from contextlib import nullcontext

        self.stream, self.times, self.duels = nullcontext(), times, []

    def measure(self, *, experiment, variant, params, kind, **_):
        from gpumemlab.bench.records import Record

        return Record(experiment, variant, params, None, None, {"median": self.times[variant, params["n"]]}, None,
                      None, None, None, True, kind=kind)

    def head_to_head(self, ours, baseline, *, cold_l2, timer):
        self.duels.append((ours, baseline, cold_l2, timer))
        return dict(speedup=1.25)


def test_a_run_groups_cases_by_their_parameters_for_baselines_speedups_and_head_to_heads():
    runs = {name: (lambda: None) for name in ("naive", "fast", "lib")}
    timer = object()

    def cases(session, params):
        for n in (1, 2):  # n = 1: naive, fast (against lib, warm L2), lib; n = 2: naive, fast
            yield Case("naive", runs["naive"], None, params=dict(n=n))
            yield Case("fast", runs["fast"], None, params=dict(n=n), versus=("lib",) if n == 1 else (),
                       cold_l2=False, timer=timer)
            if n == 1:
                yield Case("lib", runs["lib"], None, params=dict(n=n), kind="baseline")

    derived = []
    exp = experiment(cases=cases, group_by=("n",), naive="naive",
                     derive=lambda records, session: derived.append((len(records), session)))
    session = GroupSession({("naive", 1): 4.0, ("fast", 1): 1.0, ("lib", 1): 2.0, ("naive", 2): 8.0,
                            ("fast", 2): 2.0})
    naive1, fast1, lib1, naive2, fast2 = runner.run_experiment(session, exp, {})
    assert [r.speedup_vs_naive for r in (naive1, fast1, lib1, naive2, fast2)] == [1.0, 4.0, 2.0, 1.0, 4.0]
    # the baseline of group n = 1 sits next to its kernels only (ratio: its time over ours)
    assert fast1.baselines == {"lib": dict(median_s=2.0, gbps=None, gflops=None, ratio=2.0)}
    assert naive1.baselines["lib"]["ratio"] == 0.5 and lib1.baselines == {} and fast2.baselines == {}
    assert session.duels == [(runs["fast"], runs["lib"], False, timer)]
    assert fast1.extra == {"head_to_head": {"lib": dict(speedup=1.25)}} and fast2.extra == {}
    assert derived == [(5, session)]


def test_a_head_to_head_outside_the_group_and_two_references_in_one_group_are_refused():
    def cases(session, params):
        yield Case("fast", lambda: None, None, params=dict(n=1), versus=("lib",))
        yield Case("lib", lambda: None, None, params=dict(n=2), kind="baseline")
    session = GroupSession({("fast", 1): 1.0, ("lib", 2): 2.0})
    with pytest.raises(ValueError, match=r"^copy: fast asks for a head-to-head with 'lib', which is not a case of "
                                         r"its group$"):
        runner.run_experiment(session, experiment(cases=cases, group_by=("n",)), {})

    def twins(session, params):
        yield Case("a", lambda: None, None, params=dict(n=1), naive=True)
        yield Case("b", lambda: None, None, params=dict(n=1), naive=True)
    session = GroupSession({("a", 1): 1.0, ("b", 1): 2.0})
    with pytest.raises(ValueError, match=r"^speedups: several 'b' records share the group \(\('n', '1'\),\); name "
                                         r"the keys$"):
        runner.run_experiment(session, experiment(cases=twins, group_by=("n",)), {})


class DeviceArray:
    """Stands for a CuPy array: on the device (it has __cuda_array_interface__), copied to the host by get()."""

    __cuda_array_interface__ = {}

    def __init__(self, values):
        self.values = np.asarray(values)

    def get(self):
        return self.values


def verify(out, expected, **tolerance):
    from gpumemlab.experiments._declare import Check

    runner.verifier(Case("vec4", lambda: None, Check(out=out, expected=expected, **tolerance)))()


def test_checks_compare_exactly_on_the_device_else_on_the_host_within_the_tolerance(monkeypatch):
    compared = []
    monkeypatch.setattr(runner, "check_equal_device", lambda got, want, *, what: compared.append((got, want, what)))
    got, want = DeviceArray([1.0, 2.0]), DeviceArray([1.0, 2.0])
    verify(lambda: got, lambda: want)  # rtol = atol = 0, both on the device: compared there
    assert compared == [(got, want, "vec4")]
    verify(lambda: got, lambda: DeviceArray([1.0, 2.0 + 1e-7]), rtol=1e-6)  # a tolerance: on the host
    verify(lambda: got, lambda: DeviceArray([1.0, 2.0 + 1e-7]), atol=1e-6)
    verify(lambda: got, np.array([1.0, 2.0]))  # exact, but the reference is on the host
    assert len(compared) == 1
    with pytest.raises(VerificationError, match=r"^vec4: 1 of 2 elements wrong; first at \(1,\)"):
        verify(lambda: got, lambda: DeviceArray([1.0, 2.1]), rtol=1e-6)


def test_a_run_hands_the_session_and_parameters_to_the_cases_and_finishes_its_last_group():
    session = GroupSession({("fast", 3): 1.0, ("lib", 3): 2.0})
    fast, lib = (lambda: None), (lambda: None)

    def cases(given, params):
        assert given is session
        yield Case("fast", fast, None, params=dict(n=params["n"]), versus=("lib",))
        yield Case("lib", lib, None, params=dict(n=params["n"]), kind="baseline")

    records = runner.run_experiment(session, experiment(cases=cases, group_by=("n",)), dict(n=3))
    assert [(r.variant, r.params) for r in records] == [("fast", dict(n=3)), ("lib", dict(n=3))]
    assert session.duels == [(fast, lib, True, None)]
