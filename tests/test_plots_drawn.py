"""What each plot of report/plots.py shows: lines per series along the declared axes from zero with the ceiling
drawn inside, or a bar per record; and which experiments get no picture (figures captured instead of written)."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_rgba

from gpumemlab.bench.records import Record, RunResults
from gpumemlab.report import plots


def rec(experiment, variant, n, gbps=None, gflops=None, kind="kernel", **params):
    return Record(experiment, variant, dict(n=n, **params), None, None, {"median": 1.0}, gbps, gflops, None,
                  "copy_gbps", True, kind=kind)


class Steps:
    def __init__(self):
        self.steps = []

    def step(self, label):
        self.steps.append(label)


@pytest.fixture
def drawn(monkeypatch):
    figures = {}
    monkeypatch.setattr(plots, "save_png", lambda fig, path: figures.__setitem__(path.name, fig))
    return figures


def test_lines_per_series_from_zero_with_the_ceiling_inside(drawn, tmp_path):
    recs = [rec("copy", "vec4", 4096, 80.0), rec("copy", "vec4", 1024, 40.0), rec("copy", "naive", 1024, 20.0),
            rec("copy", "naive", 2048, None)]  # no rate: not a point
    res = RunResults(meta={}, device={}, ceilings={"copy_gbps": dict(value=100.0, unit="GB/s")}, results=recs,
                     experiments={"copy": dict(title="Copy", plot=dict(x="n", y="gbps", series="variant", logx=True,
                                                                          title=""))})
    steps = Steps()
    open_before = plt.get_fignums()
    assert plots.write_plots(res, tmp_path, steps) == {"copy": "copy.png"}
    assert steps.steps == ["plot of copy"] and plt.get_fignums() == open_before
    ax, = drawn["copy.png"].axes
    vec4, naive, ceiling = ax.get_lines()
    assert (list(vec4.get_xdata()), list(vec4.get_ydata()), vec4.get_label()) == ([1024, 4096], [40.0, 80.0], "vec4")
    assert (list(naive.get_xdata()), list(naive.get_ydata()), naive.get_label()) == ([1024], [20.0], "naive")
    assert list(ceiling.get_ydata()) == [100.0, 100.0] and ceiling.get_label() == "ceiling: copy_gbps"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["vec4", "naive", "ceiling: copy_gbps"]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("n", "GB/s (read + write)", "Copy")
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    assert ax.get_ylim() == (0, 105.0)  # the ceiling stays inside the axes, 5% below the top
    assert (vec4.get_marker(), ceiling.get_linestyle(), ceiling.get_color()) == ("o", "--", "grey")


def test_a_derived_field_against_the_most_used_ceiling_from_zero(drawn, tmp_path):
    recs = [rec("scan", "warp", 1, 10.0), rec("scan", "block", 1, 12.0), rec("scan", "lib", 1, 30.0)]
    for r, ratio, ceiling in zip(recs, (2.0, 3.0, 1.0), ("read_gbps", "read_gbps", "copy_gbps")):
        r.extra["ratio"], r.ceiling = ratio, ceiling
    plot = dict(x="n", y="ratio", series="variant", logx=False, title="Scan speed")
    rates = [Record("rate", r.variant, r.params, None, None, {"median": 1.0}, r.gbps, None, None, r.ceiling, True)
             for r in recs]
    res = RunResults(meta={}, device={}, ceilings={"copy_gbps": dict(value=100.0, unit="GB/s"),
                                                   "read_gbps": dict(value=50.0, unit="GB/s")}, results=recs + rates,
                     experiments={"scan": dict(title="Scan", plot=plot), "rate": dict(title="Rate", plot=dict(
                         plot, y="gbps", title=""))})
    assert plots.write_plots(res, tmp_path) == {"scan": "scan.png", "rate": "rate.png"}
    ax, = drawn["scan.png"].axes
    assert [list(line.get_ydata()) for line in ax.get_lines()] == [[2.0], [3.0], [1.0]]  # from extra
    assert (ax.get_ylabel(), ax.get_title(), ax.get_ylim()[0]) == ("ratio", "Scan speed", 0)
    rate, = drawn["rate.png"].axes
    assert rate.get_lines()[-1].get_label() == "ceiling: read_gbps"  # two of the three records' ceiling
    assert rate.get_title() == "Rate"


def test_a_bar_per_record_by_its_variant_and_parameters(drawn, tmp_path):
    recs = [rec("mm", "tiled", 64, gflops=50.0, tile=16, vec=4), rec("mm", "cuBLAS", 64, gflops=70.0, kind="baseline"),
            rec("mm", "naive", 64, gflops=None, mib=4)]
    res = RunResults(meta={}, device={}, ceilings={}, results=recs, experiments={"mm": dict(title="Matmul")})
    assert plots.write_plots(res, tmp_path) == {"mm": "mm.png"}
    ax, = drawn["mm.png"].axes
    bars = ax.patches
    assert [b.get_width() for b in bars] == [50.0, 70.0, 0]
    assert [b.get_facecolor() for b in bars] == [to_rgba("#3366aa"), to_rgba("#999999"), to_rgba("#3366aa")]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["tiled\ntile=16,vec=4", "cuBLAS\n", "naive\n"]
    assert ax.yaxis_inverted() and ax.get_xlabel() == "GFLOP/s" and ax.get_title() == "Matmul"


def test_no_picture_for_nothing_to_draw(drawn, tmp_path):
    res = RunResults(meta={}, device={}, ceilings={}, results=[rec("old", "v", 1, 5.0), rec("rate", "v", 1)],
                     experiments={"none": dict(title="no records"),
                                  "old": dict(title="a field plotted since", plot=dict(x="n", y="us_per_call",
                                                                                        series="variant")),
                                  "rate": dict(title="no rate"), "drawn": {}})
    res.results.append(rec("drawn", "v", 1, 5.0))
    steps = Steps()
    assert plots.write_plots(res, tmp_path, steps) == {"drawn": "drawn.png"} and list(drawn) == ["drawn.png"]
    assert steps.steps == ["plot of none", "plot of old", "plot of rate", "plot of drawn"]
    assert drawn["drawn.png"].axes[0].get_title() == "drawn"  # no title: the experiment's name


def _style(ax):
    """What a reader of the PNG sees of an axes' styling: title size, legend text size, grid opacity."""
    legend = ax.get_legend()
    return (ax.title.get_fontsize(), legend and {t.get_fontsize() for t in legend.get_texts()},
            {g.get_alpha() for g in ax.xaxis.get_gridlines() + ax.yaxis.get_gridlines()})


def test_line_plot_style_and_a_long_title_wrapped_at_80_columns(drawn, tmp_path):
    long_title = "a" * 75 + " bcdef"  # 81 columns: one line at 81, two at 80, the first broken at 70
    res = RunResults(meta={}, device={}, ceilings={"copy_gbps": dict(value=100.0, unit="GB/s")},
                     results=[rec("copy", "vec4", 1024, 40.0), rec("copy", "vec4", 2048, 60.0)],
                     experiments={"copy": dict(title="Copy", plot=dict(x="n", y="gbps", series="variant",
                                                                          title=long_title))})
    with matplotlib.rc_context({"font.size": 8}):  # the report's sizes, not the user's matplotlibrc default
        plots.write_plots(res, tmp_path)
    fig = drawn["copy.png"]
    ax, = fig.axes
    vec4, ceiling = ax.get_lines()
    assert tuple(fig.get_size_inches()) == (7, 4)
    assert ax.get_title() == "a" * 75 + "\nbcdef"
    assert _style(ax) == (10, {7}, {0.3})
    assert (vec4.get_markersize(), ceiling.get_linewidth()) == (3, 1)


def test_bar_chart_style_and_an_untitled_line_plot_named_by_its_experiment(drawn, tmp_path):
    bar_title = "b" * 75 + " cdefg"
    res = RunResults(meta={}, device={}, ceilings={},
                     results=[rec("mm", "tiled", 64, gflops=50.0, tile=16), rec("scan", "warp", 1, 10.0)],
                     experiments={"mm": dict(title=bar_title),
                                  "scan": dict(plot=dict(x="n", y="gbps", series="variant"))})
    with matplotlib.rc_context({"font.size": 8}):
        assert plots.write_plots(res, tmp_path) == {"mm": "mm.png", "scan": "scan.png"}
    ax, = drawn["mm.png"].axes
    assert ax.get_title() == "b" * 75 + "\ncdefg"
    assert _style(ax) == (10, None, {0.3})
    assert {t.get_fontsize() for t in ax.get_yticklabels()} == {6}
    assert drawn["scan.png"].axes[0].get_title() == "scan"  # no title anywhere: the experiment's name


def test_a_timeline_named_by_its_experiment_then_the_next_experiment_s_plot(drawn, monkeypatch, tmp_path):
    from gpumemlab.report import timeline

    monkeypatch.setattr(timeline, "save_png", lambda fig, path: drawn.__setitem__(path.name, fig))
    traced = rec("overlap", "copy + kernel", 1)
    traced.extra["timeline"] = [dict(stream=0, op="H2D", start_ms=0.0, end_ms=1.0)]
    res = RunResults(meta={}, device={}, ceilings={}, results=[traced, rec("copy", "vec4", 1024, 40.0)],
                     experiments={"overlap": dict(plot=dict(kind="timeline")),
                                  "copy": dict(title="Copy", plot=dict(x="n", y="gbps", series="variant"))})
    assert plots.write_plots(res, tmp_path) == {"overlap": "overlap.png", "copy": "copy.png"}
    assert drawn["overlap.png"].axes[0].get_title() == "overlap\ncopy + kernel ()"


def test_the_ceiling_drawn_is_the_one_most_records_name():
    recs = [rec("copy", v, 1, 10.0) for v in ("a", "b", "c")]
    for r, ceiling in zip(recs, ("copy_gbps", "read_gbps", "copy_gbps")):
        r.ceiling = ceiling
    res = RunResults(meta={}, device={}, ceilings={"copy_gbps": dict(value=100.0, unit="GB/s"),
                                                   "read_gbps": dict(value=50.0, unit="GB/s")}, results=recs,
                     experiments={})
    assert plots.plot_ceiling(res, recs, dict(y="gbps")) == ("copy_gbps", 100.0)
