"""The library_overhead declaration without a GPU: derived microseconds per call and the finding sentences,
from records built here (the numbers are inputs of this test, not measurements)."""

from gpumemlab.bench.records import Record
from gpumemlab.experiments import registry


def _rec(variant, kind, median_s, h2h=None):
    params = dict(function="sum", calls=200, shapes="4096", dims=[[4096]])
    extra = {"head_to_head": {"cupy.sum": h2h}} if h2h else {}
    return Record(experiment="library_overhead", variant=variant, params=params, bytes=None, flops=None,
                  time_s=dict(median=median_s, min=median_s * 0.9, max=median_s * 1.5, n=20), gbps=None, gflops=None,
                  pct_of_ceiling=None, ceiling=None, verified=True, kind=kind, extra=extra)


def test_derive_and_findings_state_us_per_call_and_the_verdict():
    exp = registry()["library_overhead"]
    h2h = dict(speedup=1.6, p10=1.5, p90=1.7, rounds=30, ours_median_s=1.5e-3, baseline_median_s=2.4e-3)
    recs = [_rec("gpumemlab.sum", "kernel", 2e-3, h2h), _rec("cupy.sum", "baseline", 4e-3)]
    exp.derive(recs, None)
    assert recs[0].extra["us_per_call"] == 10.0 and recs[1].extra["us_per_call"] == 20.0
    assert recs[0].extra["us_per_call_min_max"] == [9.0, 15.0]
    assert [(r.extra["side"], r.extra["interleaved_us_per_call"]) for r in recs] == [
        ("gpumemlab", 1.5e-3 / 200 * 1e6), ("CuPy's equivalent", 2.4e-3 / 200 * 1e6)]
    # the interleaved bursts are the comparison; each side alone is stated, never compared (taken at other moments)
    assert list(exp.findings(recs)) == [
        "sum (4096): gpumemlab.sum 7.5 us/call, cupy.sum 12.0 us/call (medians of bursts of 200 calls, the two "
        "alternating, CUDA events)",
        "gpumemlab.sum vs cupy.sum, interleaved samples: 160.0% of its speed (p10-p90 150.0-170.0%, 30 rounds): faster",
        "gpumemlab.sum's burst costs 10.0 us/call on the host clock against 7.5 us/call between CUDA events: calls "
        "return before their GPU work runs, so a burst does not pay host work + GPU time + a synchronization per call",
        "sum, each timed alone (host clock, bursts back to back, not interleaved): gpumemlab.sum 10.0 us/call "
        "(min 9.0), cupy.sum 20.0 us/call (min 18.0)"]


def test_findings_without_interleaved_medians_state_each_side_alone():
    """Records from before the head-to-head kept its medians: the verdict and each side alone, nothing invented."""
    exp = registry()["library_overhead"]
    recs = [_rec("gpumemlab.sum", "kernel", 2e-3, dict(speedup=0.9, p10=0.8, p90=1.1, rounds=12)),
            _rec("cupy.sum", "baseline", 4e-3)]
    exp.derive(recs, None)
    assert not any("interleaved_us_per_call" in r.extra for r in recs)
    assert list(exp.findings(recs)) == [
        "gpumemlab.sum vs cupy.sum, interleaved samples: 90.0% of its speed (p10-p90 80.0-110.0%, 12 rounds): "
        "a tie within the noise",
        "sum, each timed alone (host clock, bursts back to back, not interleaved): gpumemlab.sum 10.0 us/call "
        "(min 9.0), cupy.sum 20.0 us/call (min 18.0)"]


def test_the_declaration_times_each_function_against_its_cupy_equivalent():
    exp = registry()["library_overhead"]
    assert exp.group_by == ("function",)
    assert exp.params["functions"] == ["matmul", "sum", "transpose", "copy", "sample2d"]
    assert any(c.from_seed for c in exp.claims) and any(not c.from_seed for c in exp.claims)


def test_library_names_are_looked_up_once_then_plain_module_attributes():
    """gpumemlab's lazy names (PEP 562 __getattr__) bind themselves on first use: the hook (an import_module and a
    getattr, about a microsecond) is not paid on every gpumemlab.sum(...) call."""
    import subprocess
    import sys

    code = ("import gpumemlab, gpumemlab.ops.reduce as r; assert 'sum' not in vars(gpumemlab); f = gpumemlab.sum; "
            "assert vars(gpumemlab)['sum'] is f is r.sum; print(gpumemlab.sum is f)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr


def test_the_plot_draws_the_interleaved_us_per_call_of_both_sides(tmp_path, monkeypatch):
    """The declared plot: us per call of gpumemlab and of CuPy's equivalent per function (the interleaved medians),
    not the empty GB/s bars of a record without bytes; an experiment with nothing to draw gets no PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.axes

    from gpumemlab.bench.records import RunResults
    from gpumemlab.report import plots

    exp = registry()["library_overhead"]
    h2h = dict(speedup=1.6, p10=1.5, p90=1.7, rounds=30, ours_median_s=1.5e-3, baseline_median_s=2.4e-3)
    recs = [_rec("gpumemlab.sum", "kernel", 2e-3, h2h), _rec("cupy.sum", "baseline", 4e-3)]
    exp.derive(recs, None)
    info = dict(title=exp.title, plot=exp.plot.__dict__)
    drawn = []
    real = matplotlib.axes.Axes.plot
    monkeypatch.setattr(matplotlib.axes.Axes, "plot",
                        lambda ax, x, y, *a, **kw: drawn.append((kw["label"], list(x), list(y))) or real(ax, x, y, *a, **kw))
    res = RunResults(meta={}, device={}, ceilings={}, results=recs, experiments={"library_overhead": info})
    assert plots.write_plots(res, tmp_path) == {"library_overhead": "library_overhead.png"}
    assert drawn == [("gpumemlab", ["sum"], [1.5e-3 / 200 * 1e6]), ("CuPy's equivalent", ["sum"], [2.4e-3 / 200 * 1e6])]
    for r in recs:
        r.extra.clear()
    drawn.clear()
    for experiments in ({"library_overhead": info}, {"library_overhead": {"title": "t"}}):  # declared plot, bars
        bare = RunResults(meta={}, device={}, ceilings={}, results=recs, experiments=experiments)
        assert plots.write_plots(bare, tmp_path / "none") == {} and drawn == []
