"""CPU tests of the host-side work: the overlap and PCIe models by hand, the size sweeps and "reaches 90%"
arithmetic, the timeline plot, and the five experiment declarations."""

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model.overlap import pcie_gbps, sequential_time, staged_time

HOST_EXPERIMENTS = ("transfer_bandwidth", "transfer_batching", "stream_overlap", "zero_copy", "pitched_copy")


@pytest.mark.parametrize("t_exec, t_transfer, n, want", [
    (4.0, 2.0, 4, 4.0 + 2.0 / 4),    # tE >= tT: tE + tT/nStreams
    (2.0, 4.0, 4, 4.0 + 2.0 / 4),    # tT > tE: tT + tE/nStreams
    (3.0, 3.0, 3, 3.0 + 3.0 / 3),
    (5.0, 1.0, 1, 6.0),              # one stream: the sequential tE + tT
    (1.0, 8.0, 16, 8.0 + 1.0 / 16),
])
def test_staged_time_is_the_seed_formula(t_exec, t_transfer, n, want):
    assert staged_time([t_exec, t_transfer], n) == pytest.approx(want, rel=1e-15)
    assert staged_time([t_exec, t_transfer], 1) == sequential_time(t_exec, t_transfer) == t_exec + t_transfer


def test_staged_time_three_stages():
    assert staged_time([1.0, 4.0, 2.0], 2) == pytest.approx(4.0 + (1.0 + 2.0) / 2)
    assert staged_time([1.0, 4.0, 2.0], 1) == pytest.approx(7.0)


@pytest.mark.parametrize("bad, match", [
    (dict(stages=[1.0], n_streams=0), "n_streams"),
    (dict(stages=[1.0], n_streams=2.5), "n_streams"),
    (dict(stages=[1.0], n_streams=True), "n_streams"),
    (dict(stages=[-1.0], n_streams=2), "stage time"),
    (dict(stages=[], n_streams=2), "at least one stage"),
])
def test_staged_time_rejects_bad_input(bad, match):
    with pytest.raises(UsageError, match=match):
        staged_time(**bad)


def test_pcie_rates_by_hand():
    assert pcie_gbps(1, 16) == pytest.approx(2.5 * 0.8 * 16 / 8)            # 4.0 GB/s: the seed's Gen1 x16
    assert pcie_gbps(2, 16) == pytest.approx(8.0)
    assert pcie_gbps(3, 16) == pytest.approx(8 * 128 / 130 * 2)             # 15.75: the seed's "16 GB/s"
    assert pcie_gbps(5, 16) == pytest.approx(32 * 128 / 130 * 2)            # 63.0
    assert pcie_gbps(4, 8) == pytest.approx(pcie_gbps(4, 16) / 2)
    with pytest.raises(UsageError, match="generation"):
        pcie_gbps(7, 16)
    with pytest.raises(UsageError, match="width"):
        pcie_gbps(4, 3)


def test_log_sizes_and_labels():
    from gpumemlab.experiments._transfers import log_sizes, size_label

    assert log_sizes(4096, 1 << 20) == [4096, 16384, 65536, 262144, 1 << 20]
    assert log_sizes(4096, 64 << 20, 16) == [4096, 65536, 1 << 20, 16 << 20, 64 << 20]
    assert log_sizes(1024, 1024) == [1024]
    with pytest.raises(ValueError):
        log_sizes(0, 10)
    assert [size_label(s) for s in (4096, 3 << 20, 1 << 30, 1000)] == ["4 KiB", "3 MiB", "1 GiB", "1000 B"]


class R:
    def __init__(self, nbytes, gbps):
        self.params, self.gbps = dict(bytes=nbytes), gbps


def test_fraction_size():
    from gpumemlab.experiments._transfers import fraction_size

    recs = [R(1 << 10, 1.0), R(1 << 20, 40.0), R(1 << 24, 45.5), R(1 << 30, 50.0)]
    assert fraction_size(recs, 50.0) == 1 << 24          # 45.5 >= 0.9 * 50
    assert fraction_size(recs, 50.0, 0.8) == 1 << 20     # 40 >= 0.8 * 50
    assert fraction_size(recs, 100.0) is None


def test_expected_pointer_types():
    from gpumemlab.experiments.zero_copy import expected_pointers

    want = expected_pointers()
    assert want["pageable"] == "unregistered" and want["device"] == "device"
    assert {want[k] for k in ("pinned", "registered", "mapped", "mapped_device_pointer")} == {"host"}


def test_busy_map_reference_by_hand():
    import numpy as np

    from gpumemlab.experiments.stream_overlap import C, busy_expected

    x = np.array([0.5, 1.5, -1.0], np.float32)
    ref = x.astype(np.float64)
    for _ in range(7):  # the kernel's recurrence, in float64
        ref = ref * C + (1 - C)
    np.testing.assert_allclose(busy_expected(x, 7), ref, rtol=0, atol=1e-12)


def test_row_model_aligned_vs_packed():
    from gpumemlab.experiments.pitched_copy import largest_power_of_two, row_model

    assert row_model(1024)["sectors_per_request"] == 4   # pitched: row 1 starts at 4096 B
    assert row_model(1001)["sectors_per_request"] == 5   # packed: row 1 starts at 4004 B, straddles a sector
    assert largest_power_of_two(4608) == 512 and largest_power_of_two(4096) == 4096


def _seg(stream, op, start, end):
    return dict(stream=stream, op=op, start_ms=start, end_ms=end)


def test_timeline_bars_and_plot(tmp_path):
    from gpumemlab.bench.records import Record
    from gpumemlab.report.timeline import bars, traced, write_timeline

    tl = [_seg(1, "H2D", 0.5, 1.0), _seg(0, "kernel", 0.5, 2.0), _seg(0, "H2D", 0.0, 0.5)]
    assert bars(tl) == {0: [(0.0, 0.5, "H2D"), (0.5, 1.5, "kernel")], 1: [(0.5, 0.5, "H2D")]}
    with pytest.raises(ValueError, match="ends before it starts"):
        bars([_seg(0, "D2H", 2.0, 1.0)])
    plain = Record("stream_overlap", "H2D copy", {}, None, None, {"median": 1.0}, None, None, None, None, True)
    rec = Record("stream_overlap", "copy + kernel", dict(n_streams=2), None, None, {"median": 1.0}, None, None,
                 None, None, True, extra=dict(timeline=tl))
    assert traced([plain, rec]) is rec and traced([plain]) is None
    out = tmp_path / "t.png"
    assert write_timeline("stream_overlap", {"plot": {"title": "x"}}, [plain, rec], out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not write_timeline("stream_overlap", {}, [plain], tmp_path / "none.png")
    assert not (tmp_path / "none.png").exists()


def _drawn_timeline(monkeypatch, info: dict, timeline: list[dict], **params):
    """The figure write_timeline draws for a record of ``timeline`` (captured instead of written)."""
    from gpumemlab.bench.records import Record
    from gpumemlab.report import timeline as tl_module

    drawn = []
    monkeypatch.setattr(tl_module, "save_png", lambda fig, path: drawn.append((fig, path)))
    rec = Record("stream_overlap", "copy + kernel", params, None, None, {"median": 1.0}, None, None, None, None, True,
                 extra=dict(timeline=timeline))
    assert tl_module.write_timeline("stream_overlap", info, [rec], "t.png")
    (fig, path), = drawn
    assert path == "t.png"
    return fig


def test_timeline_draws_each_op_at_its_time_on_its_stream_s_row(monkeypatch):
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    from gpumemlab.report.timeline import COLORS

    open_before = plt.get_fignums()
    tl = [_seg(1, "H2D", 0.5, 1.0), _seg(0, "kernel", 0.5, 2.0), _seg(0, "H2D", 0.0, 0.5), _seg(2, "memset", 1.0, 1.25)]
    fig = _drawn_timeline(monkeypatch, {"title": "Overlap", "plot": {"title": "Copy and execute"}}, tl,
                          n_streams=3, cost=4, iters=2, n=1024)
    assert plt.get_fignums() == open_before  # the figure is closed once written
    ax, = fig.axes
    drawn = [(*(round(v, 9) for v in (p.get_x(), p.get_width(), p.get_y() + p.get_height() / 2, p.get_height())),
              p.get_facecolor()) for p in ax.patches]  # left, width, row centre, height, colour
    assert drawn == [(0.0, 0.5, 0, 0.6, to_rgba(COLORS["H2D"])), (0.5, 1.5, 0, 0.6, to_rgba(COLORS["kernel"])),
                     (0.5, 0.5, 1, 0.6, to_rgba(COLORS["H2D"])), (1.0, 0.25, 2, 0.6, to_rgba("#888888"))]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["H2D", "kernel", "memset"]  # each op once
    assert list(ax.get_yticks()) == [0, 1, 2] and ax.yaxis_inverted()  # stream 0 on top
    assert [t.get_text() for t in ax.get_yticklabels()] == ["stream 0", "stream 1", "stream 2"]
    assert ax.get_xlabel() == "ms from the first event"
    assert ax.get_title() == "Copy and execute\ncopy + kernel (n_streams=3, cost=4, iters=2)"
    assert all(g.get_visible() for g in ax.xaxis.get_gridlines())
    assert not any(g.get_visible() for g in ax.yaxis.get_gridlines())
    one_row = _drawn_timeline(monkeypatch, {}, tl[1:2])
    assert fig.get_size_inches()[1] - one_row.get_size_inches()[1] == pytest.approx(2 * 0.45)  # a row per stream
    assert one_row.axes[0].get_title() == "stream_overlap\ncopy + kernel ()"


def test_timeline_title_falls_back_to_the_experiment_s_title(monkeypatch):
    fig = _drawn_timeline(monkeypatch, {"title": "Overlap", "plot": {"title": ""}}, [_seg(0, "H2D", 0.0, 1.0)],
                          cost=1)
    assert fig.axes[0].get_title() == "Overlap\ncopy + kernel (cost=1)"


def test_timeline_style(monkeypatch):
    fig = _drawn_timeline(monkeypatch, {}, [_seg(0, "H2D", 0.0, 1.0), _seg(1, "kernel", 0.5, 2.0)])
    ax, = fig.axes
    legend = ax.get_legend()
    assert tuple(fig.get_size_inches()) == pytest.approx((8, 1.2 + 2 * 0.45))  # 8 inches wide, a row per stream
    assert ax.title.get_fontsize() == 9 and {t.get_fontsize() for t in legend.get_texts()} == {7}
    assert legend._loc == 4  # matplotlib's code of "lower right", where no bar starts
    assert {g.get_alpha() for g in ax.xaxis.get_gridlines()} == {0.3}


def test_timeline_hook_in_write_plots(tmp_path):
    from gpumemlab.bench.records import Record, RunResults
    from gpumemlab.report.plots import write_plots

    rec = Record("stream_overlap", "copy + kernel", dict(n_streams=1), None, None, {"median": 1.0}, None, None,
                 None, None, True, extra=dict(timeline=[_seg(0, "H2D", 0.0, 1.0)]))
    info = dict(title="t", plot=dict(x="ms", y="stream", series="variant", logx=False, title="", kind="timeline"))
    res = RunResults(meta={}, device={}, ceilings={}, results=[rec], experiments={"stream_overlap": info})
    assert write_plots(res, tmp_path) == {"stream_overlap": "stream_overlap.png"}


@pytest.mark.parametrize("name", HOST_EXPERIMENTS)
def test_declarations(name):
    from gpumemlab import experiments

    exp = experiments.get(name)
    assert exp.claims and any(c.from_seed for c in exp.claims)
    assert exp.plot is not None and exp.findings is not None
    d = exp.describe()
    assert d["plot"]["kind"] == ("timeline" if name == "stream_overlap" else "xy")


def test_param_overrides_are_typed():
    from gpumemlab import experiments

    exp = experiments.get("stream_overlap")
    p = experiments.parse_params(exp, ["streams=1,3", "cost=0.25,4"])
    assert p["streams"] == [1, 3] and p["cost"] == [0.25, 4.0]
    with pytest.raises(UsageError, match="no parameter"):
        experiments.parse_params(exp, ["nstreams=2"])


def test_host_layer_argument_checks_without_a_gpu():
    """The checks that run before any CUDA call raise UsageError on any machine."""
    import numpy as np

    from gpumemlab.gpu import host

    with pytest.raises(UsageError, match="unknown host memory kind"):
        host.host_array(16, np.float32, "locked")
    with pytest.raises(UsageError, match="empty"):
        host.host_array((4, 0))
    with pytest.raises(UsageError, match="negative"):
        host.host_array((-1, 4))
    with pytest.raises(UsageError, match="C-contiguous"):
        host.register(np.zeros((4, 4))[:, ::2])
    with pytest.raises(UsageError, match="exceeds a pitch"):
        host.copy_2d_async(0, 16, 0, 64, 32, 2)
    with pytest.raises(UsageError, match="both must be > 0"):
        host.copy_2d_async(0, 16, 0, 64, 0, 2)
    with pytest.raises(UsageError, match="does not fit"):
        host.copy_async(np.zeros(2), np.zeros(4), 32)
    with pytest.raises(UsageError, match="at least one stream"):
        host.side_streams(0)
    assert host.live_bytes() == dict(pinned=0, write_combined=0, mapped=0, registered=0, pitched=0)
