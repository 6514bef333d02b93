"""Rendering a report from results.json alone (no GPU): tables, plots, re-render round trip."""

import json

from gpumemlab.bench.records import Record, RunResults
from gpumemlab.bench.stats import summarize
from gpumemlab.cli import main


def _record(exp, variant, offset, median, nbytes=8_000_000, **kw):
    stats = summarize([median, median * 1.01, median * 0.99]).to_dict()
    return Record(experiment=exp, variant=variant, params=dict(offset=offset, n=1_000_000), bytes=nbytes, flops=None,
                  time_s=stats, gbps=nbytes / median / 1e9, gflops=None, pct_of_ceiling=50.0, ceiling="copy_gbps",
                  verified=True, **kw)


def _results():
    recs = [_record("offset_copy", "offset_copy", o, 1e-3 * (1 + (o % 8 != 0) * 0.25)) for o in range(0, 33, 4)]
    recs.append(_record("vector_copy", "cudaMemcpy D2D", 0, 1e-3, kind="baseline"))
    return RunResults(
        meta=dict(command="gpumemlab bench", date="2026-01-01T00:00:00+00:00", version="0.1.0", wall_s=12.0),
        device=dict(name="Test GPU", cc=[9, 0], sm_count=132, l2_bytes=50 * 2**20, total_memory_bytes=80 * 2**30),
        ceilings={"copy_gbps": dict(value=16.0, unit="GB/s", how="test")},
        results=recs,
        experiments={"offset_copy": dict(title="Misaligned", seed="003", seed_claim="4/5 when misaligned",
                                         modern_note="flat", plot=dict(x="offset", y="gbps", series="variant",
                                                                       logx=False, title="")),
                     "vector_copy": dict(title="Copies", seed="004", seed_claim="match memcpy", plot=None)})


def test_report_rerenders_from_json(tmp_path, capsys):
    res = _results()
    res.save(tmp_path / "results.json")
    assert main(["report", str(tmp_path / "results.json")]) == 0
    md = (tmp_path / "report.md").read_text()
    assert "Test GPU (compute capability 9.0, 132 SMs, 50 MiB L2, 80 GiB)" in md
    assert "| copy_gbps | 16.0 GB/s | test |" in md
    assert "The seed reported: 4/5 when misaligned" in md and "Why it differs on modern GPUs: flat" in md
    assert "cudaMemcpy D2D (baseline)" in md
    assert "![offset_copy](offset_copy.png)" in md
    png = (tmp_path / "offset_copy.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "vector_copy.png").exists()


def test_results_round_trip_keeps_raw_samples(tmp_path):
    res = _results()
    res.save(tmp_path / "r.json")
    back = RunResults.load(tmp_path / "r.json")
    assert [r.to_dict() for r in back.results] == [r.to_dict() for r in res.results]
    raw = json.loads((tmp_path / "r.json").read_text())
    first = raw["results"][0]
    for key in ("experiment", "variant", "params", "bytes", "flops", "time_s", "gbps", "gflops", "pct_of_ceiling",
                "verified", "baselines"):
        assert key in first
    assert len(first["time_s"]["samples"]) == 3 and first["time_s"]["median"] == 1e-3


def test_speedups_are_per_group_and_refuse_ambiguous_baselines():
    import pytest

    from gpumemlab.suite.runner import speedups

    recs = [_record("e", v, o, t) for v, o, t in (("naive", 0, 4e-3), ("fast", 0, 1e-3),
                                                   ("naive", 8, 2e-3), ("fast", 8, 1e-3))]
    speedups(recs, naive="naive", keys=("offset",))
    assert [r.speedup_vs_naive for r in recs] == [1.0, 4.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="several 'naive' records share the group"):
        speedups(recs, naive="naive")


def test_report_prints_each_claim_with_its_source(tmp_path):
    from gpumemlab.experiments import get
    from gpumemlab.report.markdown import render

    res = _results()
    res.experiments["reduce"] = get("reduce").describe()
    res.results.append(_record("reduce", "cupy.sum", 0, 1e-3, kind="baseline"))
    md = render(res)
    assert ("- The seed reported (seed 004, vendor guide, reduce / reduce1 / reduce2): reduce0's interleaved "
            "addressing makes warps diverge") in md
    assert "- Outside reference (Mark Harris, 'Optimizing Parallel Reduction in CUDA' (NVIDIA)): " in md
    assert "~30x over reduce0 on a G80" not in md.split("Outside reference")[0]  # not presented as seed text
    assert "- Seed: 003" in md  # a run written before claims had sources still renders
    assert "Run time of the experiment" not in md  # runs before wall_s was recorded say nothing
    res.experiments["reduce"]["wall_s"] = 12.4
    assert "- Run time of the experiment: 12 s (checks, warm-up and timing)" in render(res).splitlines()


def test_plots_draw_the_ceiling_their_records_use_inside_the_axes(tmp_path, monkeypatch):
    """The dashed line is the ceiling the plotted records are compared with, and the y axis reaches it."""
    import matplotlib.axes

    from gpumemlab.report import plots

    res = _results()
    res.ceilings["pcie_gbps"] = dict(value=63.0, unit="GB/s", how="test")
    res.ceilings["sgemm_gflops"] = dict(value=500.0, unit="GFLOP/s", how="test")
    offset = [r for r in res.results if r.experiment == "offset_copy"]
    gb = dict(x="offset", y="gbps", series="variant")
    assert plots.plot_ceiling(res, offset, gb) == ("copy_gbps", 16.0)
    assert plots.plot_ceiling(res, offset, None) is None                        # bar charts: no line
    assert plots.plot_ceiling(res, offset, dict(gb, y="pct_of_ceiling")) is None  # not in the ceiling's unit
    for r in offset[:5]:
        r.ceiling = "pcie_gbps"  # most records now name the link: its line, not the copy ceiling's
    assert plots.plot_ceiling(res, offset, gb) == ("pcie_gbps", 63.0)
    for r in offset:
        r.ceiling = "sgemm_gflops"
    assert plots.plot_ceiling(res, offset, gb) is None  # a GFLOP/s ceiling on a GB/s axis is not drawn
    assert plots.plot_ceiling(res, offset, dict(gb, y="gflops")) == ("sgemm_gflops", 500.0)

    for r in offset:
        r.ceiling = "copy_gbps"
    limits = []
    real = matplotlib.axes.Axes.axhline

    def spy(ax, y, *a, **kw):  # record where the line is and the final axis range
        line = real(ax, y, *a, **kw)
        limits.append((y, ax))
        return line
    monkeypatch.setattr(matplotlib.axes.Axes, "axhline", spy)
    res.ceilings["copy_gbps"]["value"] = 1000.0  # far above every record (8-10 GB/s)
    plots.write_plots(res, tmp_path)
    (y, ax), = limits
    assert y == 1000.0 and ax.get_ylim()[0] == 0 and ax.get_ylim()[1] >= 1000.0


def test_flags_round_trip_and_show_in_the_report_and_version_1_files_still_read(tmp_path):
    res = _results()
    res.results[1].flags = ["median far from min", "throttled"]
    res.save(tmp_path / "results.json")
    back = RunResults.load(tmp_path / "results.json")
    assert json.loads((tmp_path / "results.json").read_text())["schema"] == 2
    assert back.results[1].flags == ["median far from min", "throttled"] and back.results[0].flags == []
    assert main(["report", str(tmp_path / "results.json")]) == 0
    md = (tmp_path / "report.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| offset_copy |")]
    assert rows[1].endswith("| yes | median far from min, throttled |") and rows[0].endswith("| yes | - |")
    assert "'throttled' - NVML saw the clocks held down" in md
    old = json.loads((tmp_path / "results.json").read_text())
    old["schema"] = 1
    for r in old["results"]:
        del r["flags"]
    (tmp_path / "v1.json").write_text(json.dumps(old))
    assert [r.flags for r in RunResults.load(tmp_path / "v1.json").results] == [[]] * len(old["results"])
