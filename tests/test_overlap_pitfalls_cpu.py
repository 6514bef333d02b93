"""stream_overlap's pitfalls (seed 003, 9.1.2) without a GPU: derive puts each pitfall next to the staged model
and the sequential time of its group, and the finding quotes them honestly."""

from __future__ import annotations

import pytest


def records():
    from test_findings_cite import _rec

    from gpumemlab.experiments.stream_overlap import PITFALLS

    common = dict(cost=2.0, iters=100, mib=256.0)
    out = [_rec("stream_overlap", v, dict(common, n_streams=1), t, 1 << 28)
           for v, t in (("H2D copy", 4e-3), ("kernel", 8e-3), ("D2H copy", 4e-3))]
    for mode, t in (("pinned", 9.2e-3), ("pageable", 12.5e-3), ("default stream", 12.1e-3)):
        out.append(_rec("stream_overlap", PITFALLS[mode], dict(common, n_streams=4), t, 1 << 28))
    return out


def test_pitfalls_are_set_against_the_staged_model_and_the_sequential_time(monkeypatch):
    from gpumemlab.experiments import registry, stream_overlap
    from gpumemlab.gpu import host

    monkeypatch.setattr(host, "copy_engines", lambda: 2)
    recs = records()
    stream_overlap.derive(recs, None)
    pinned, pageable, legacy = recs[3:]
    assert pinned.model["predicted_s"] == pytest.approx(8e-3 + 4e-3 / 4)   # tE + tT / nStreams
    assert pinned.model["sequential_s"] == pytest.approx(12e-3)
    assert pageable.extra["vs_sequential_pct"] == pytest.approx(100 * 12.5 / 12)
    found = registry()["stream_overlap"].describe(recs)["findings"]
    line = next(f for f in found if f.startswith("overlap pitfalls"))
    assert line == ("overlap pitfalls at nStreams = 4, host clock: staged, pinned, non-default streams 9.20 ms (102% "
                    "of staged tE + tT/nStreams, 77% of sequential tE + tT); staged from pageable memory 12.50 ms "
                    "(139% of staged tE + tT/nStreams, 104% of sequential tE + tT); staged on the legacy default "
                    "stream 12.10 ms (134% of staged tE + tT/nStreams, 101% of sequential tE + tT)")


def test_pitfall_findings_are_honest(monkeypatch):
    from test_findings_cite import check_run

    from gpumemlab.bench.records import RunResults
    from gpumemlab.experiments import stream_overlap
    from gpumemlab.gpu import host

    monkeypatch.setattr(host, "copy_engines", lambda: 2)
    recs = records()
    stream_overlap.derive(recs, None)
    found = check_run(RunResults(meta={}, device={}, ceilings={}, results=recs))
    assert found["stream_overlap"][1] == []
