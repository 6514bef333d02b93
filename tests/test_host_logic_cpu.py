"""Host-side logic of bench/, suite/ and report/ that the GPU paths call, driven without a GPU: the host timer
(a stand-in stream and clock), the stopping rule at its boundaries, the baseline ratio, marker replacement."""

import dataclasses
import math
import sys
import types

import numpy as np
import pytest

from gpumemlab.bench import nvml, peers, records, timer, verify
from gpumemlab.bench import session as session_module
from gpumemlab.bench.records import Record, RunResults
from gpumemlab.bench.session import Session
from gpumemlab.bench.stats import gb_per_s, gflop_per_s, summarize
from gpumemlab.bench.timer import TimerConfig, Timing, should_stop, time_host
from gpumemlab.errors import GpumemlabError, UsageError, VerificationError
from gpumemlab.gpu import runtime
from gpumemlab.report import compare, readme, timeline, write
from gpumemlab.report import csv as csv_report
from gpumemlab.report.readme import replace_between
from gpumemlab.suite import ceilings, merge, runner
from gpumemlab.suite.runner import attach_baseline


class SyncStream:
    """Counts the host's synchronizations; entered as the work stream."""

    def __init__(self, log: list):
        self.log = log

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def sync(self):
        self.log.append("sync")


class LogFlusher:
    def __init__(self, log: list):
        self.log = log

    def flush(self, stream):
        self.log.append("flush" if isinstance(stream, SyncStream) else f"flush of {stream!r}")


def stepping_clock(monkeypatch, durations_s):
    """perf_counter advances by durations_s[k % len] inside the k-th timed call of fn (and not elsewhere)."""
    now = [0.0]
    calls = [0]

    def fn():
        now[0] += durations_s[calls[0] % len(durations_s)]
        calls[0] += 1
    monkeypatch.setattr(timer.time, "perf_counter", lambda: now[0])
    return fn, calls


def test_time_host_warms_up_then_samples_until_the_spread_is_small(monkeypatch):
    log: list = []
    fn, calls = stepping_clock(monkeypatch, [0.01])
    cfg = TimerConfig(warmup=3, min_samples=4, max_samples=50, min_time_s=0.0, max_time_s=10.0)
    t = time_host(fn, stream=SyncStream(log), cfg=cfg)
    assert (t.stats.n, t.inner, t.cold_l2, t.stop) == (4, 1, False, "spread")
    assert t.stats.median == pytest.approx(0.01)
    assert calls[0] == 3 + 4          # warm-up calls are not sampled
    assert log == ["sync"] * 5        # one after the warm-up, one after each timed call


def test_time_host_flushes_before_each_sample_and_stops_at_the_time_limit(monkeypatch):
    log: list = []
    fn, calls = stepping_clock(monkeypatch, [0.1, 0.3])
    cfg = TimerConfig(warmup=0, min_samples=2, max_samples=50, min_time_s=0.0, max_time_s=1.0, max_rel_spread=0.01)
    t = time_host(fn, stream=SyncStream(log), flusher=LogFlusher(log), cfg=cfg)
    # 0.1 + 0.3 + 0.1 + 0.3 + 0.1 + 0.3 = 1.2 s >= 1.0 s after 6 samples; 4 samples are 0.8 s
    assert (t.stats.n, t.cold_l2, t.stop) == (6, True, "time limit")
    assert (t.stats.min, t.stats.max) == (pytest.approx(0.1), pytest.approx(0.3))
    assert log[:4] == ["sync", "flush", "sync", "sync"]
    assert log.count("flush") == 6 and log.count("sync") == 1 + 2 * 6


def test_time_host_at_max_samples(monkeypatch):
    fn, _ = stepping_clock(monkeypatch, [0.1, 0.3])
    cfg = TimerConfig(warmup=0, min_samples=2, max_samples=3, min_time_s=100.0, max_time_s=200.0)
    t = time_host(fn, stream=SyncStream([]), cfg=cfg)
    assert (t.stats.n, t.stop) == (3, "max samples")


@pytest.mark.parametrize("spread, expected", [(0.01, "spread"), (0.0101, "max samples")])
def test_should_stop_at_max_samples_compares_the_spread_inclusively(spread, expected):
    cfg = TimerConfig(min_samples=2, max_samples=3, min_time_s=10.0, max_time_s=20.0, max_rel_spread=0.01)
    stats = dataclasses.replace(summarize([1.0] * 3), rel_spread=spread)
    assert should_stop(stats, 0.0, cfg) == expected
    # below max_samples, with the minimums met, the same spreads decide between "spread" and sampling on
    below = dataclasses.replace(stats, n=2)
    assert should_stop(below, 15.0, cfg) == ("spread" if expected == "spread" else None)
    assert should_stop(below, 20.0, cfg) == expected.replace("max samples", "time limit")


def test_far_from_min_is_strictly_above_the_threshold():
    cfg = TimerConfig(far_from_min=0.25)
    at = Timing(summarize([1.0, 1.25, 1.25]), 1, True)
    above = Timing(summarize([1.0, 1.26, 1.26]), 1, True)
    assert not at.far_from_min(cfg)
    assert above.far_from_min(cfg)


def test_throughput_units():
    assert gflop_per_s(6e9, 2.0) == 3.0
    assert gb_per_s(6e9, 3.0) == 2.0


def record(variant: str, median_s: float, gflops=None, gbps=None) -> Record:
    return Record(experiment="e", variant=variant, params={}, bytes=None, flops=None, time_s={"median": median_s},
                  gbps=gbps, gflops=gflops, pct_of_ceiling=None, ceiling=None, verified=True)


def test_attach_baseline_ratio_from_gflops_else_from_time():
    base = record("cuBLAS", 2.0, gflops=40.0, gbps=5.0)
    ours = [record("tiled", 4.0, gflops=10.0), record("copy", 0.5), record("empty", 0.0)]
    attach_baseline(ours, base)
    assert ours[0].baselines == {"cuBLAS": dict(median_s=2.0, gbps=5.0, gflops=40.0, ratio=0.25)}
    assert ours[1].baselines == {"cuBLAS": dict(median_s=2.0, gbps=5.0, gflops=40.0, ratio=4.0)}
    assert ours[2].baselines == {"cuBLAS": dict(median_s=2.0, gbps=5.0, gflops=40.0)}  # no time: no ratio
    timed_only = record("memcpy", 1.0)
    attach_baseline(ours[:1], timed_only)
    assert ours[0].baselines["memcpy"] == dict(median_s=1.0, gbps=None, gflops=None, ratio=0.25)


def test_replace_between_keeps_both_markers_and_puts_the_body_on_its_own_lines():
    text = "head <!-- a -->old\nstuff<!-- b --> tail"
    assert replace_between(text, ("<!-- a -->", "<!-- b -->"), "new") == "head <!-- a -->\nnew\n<!-- b --> tail"
    with pytest.raises(ValueError):
        replace_between(text, ("<!-- x -->", "<!-- b -->"), "new")


def record_with(variant: str, **params) -> Record:
    r = record(variant, 1.0)
    r.params = params
    return r


def p2p(direction: str, nbytes: int, gbps, variant: str = "CE peer on", experiment: str = "p2p") -> Record:
    r = record(variant, 1.0, gbps=gbps)
    r.experiment, r.params = experiment, dict(direction=direction, bytes=nbytes)
    return r


def run_of(*records) -> RunResults:
    return RunResults(meta={}, device={}, ceilings={}, results=list(records))


def test_peer_rates_from_a_p2p_run_take_the_largest_size_of_the_copy_engine_with_peer_access():
    res = run_of(p2p("0->1", 1 << 20, 10.0), p2p("0->1", 1 << 30, 40.0), p2p("1->0", 1 << 30, 41.0),
                 p2p("both", 1 << 30, 70.0), p2p("0->1", 1 << 31, 99.0, variant="CE peer off"),
                 p2p("0->1", 1 << 31, 98.0, experiment="transfer_bandwidth"), p2p("1->0", 1 << 31, None))
    assert peers.from_results(res) == {"0->1": 40.0, "1->0": 41.0, "both": 70.0}
    assert peers.from_results(run_of(p2p("0->1", 1 << 30, 40.0, variant="SM peer on"))) == {}


@pytest.fixture
def two_gpus(monkeypatch):
    """Two GPUs, peer access 0->1 only; the link and copy functions are stand-ins that say what they were asked."""
    monkeypatch.setattr(peers.runtime, "device_count", lambda: 2)
    monkeypatch.setattr(peers.runtime, "device_info", lambda d: {"name": f"GPU{d}"})
    monkeypatch.setattr(peers.peer, "peer_matrix", lambda n: [[a < b for b in range(n)] for a in range(n)])
    monkeypatch.setattr(peers.nvml, "pair_link", lambda a, b: f"link {a}-{b}")
    monkeypatch.setattr(peers, "copy_gbps", lambda a, b: 10.0 * a + b)


def test_topology_measures_each_pair_with_peer_access(two_gpus):
    info = peers.topology()
    assert info == dict(count=2, names=["GPU0", "GPU1"], peer_access=[[False, True], [False, False]],
                        links={"0-1": "link 0-1"}, copy_gbps={"0->1": 1.0},
                        copy_source=f"measured now: cudaMemcpyPeerAsync of {peers.QUICK_BYTES >> 20} MiB, "
                                    "peer access on")


def test_topology_reads_a_run_or_measures_nothing(two_gpus):
    info = peers.topology(run_of(p2p("0->1", 1 << 30, 40.0)))
    assert (info["copy_gbps"], info["copy_source"]) == ({"0->1": 40.0}, "the p2p run's records (copy engine, peer on)")
    info = peers.topology(measure=False)
    assert (info["copy_gbps"], info["copy_source"]) == ({}, None)


def test_topology_of_one_gpu_has_no_pairs(monkeypatch, two_gpus):
    monkeypatch.setattr(peers.runtime, "device_count", lambda: 1)
    info = peers.topology()
    assert (info["count"], info["names"], info["links"], info["copy_gbps"], info["copy_source"]) == (
        1, ["GPU0"], {}, {}, None)


def session_on(device: dict, quick: bool = False, progress=None) -> Session:
    """A Session without __post_init__ (which opens the GPU): the sizing helpers read only these fields."""
    s = Session.__new__(Session)
    s.device, s.quick, s.progress = device, quick, progress
    return s


def test_session_sizes_from_the_device(monkeypatch):
    s = session_on({"l2_bytes": 50 << 20, "sm_count": 132})
    assert (s.l2_bytes, s.sm_count, s.dram_bytes(), s.dram_bytes(3.5)) == (50 << 20, 132, 400 << 20, 175 << 20)
    assert session_on({"l2_bytes": 50 << 20}, quick=True).dram_bytes(8.0) == 100 << 20
    monkeypatch.setattr(session_module.runtime, "free_memory_bytes", lambda: 10 << 30)
    assert s.fit_elements(1000, 4.0, "x") == 1000
    assert s.fit_elements(10 << 30, 4.0, "x") == int(0.6 * (10 << 30) / 4.0)
    assert s.fit_elements(10 << 30, 4.0, "x", share=0.5) == (10 << 30) // 8
    assert s.fit_elements(7, 5 << 30, "x", share=0.5) == 1  # room for exactly one element
    with pytest.raises(GpumemlabError, match=r"^big: not enough free GPU memory \(10.0 GiB free\)$"):
        s.fit_elements(1, 20 << 30, "big")


def test_session_say_reaches_the_progress_callback_only_when_set():
    said: list = []
    session_on({}, progress=said.append).say("hello")
    session_on({}).say("nobody listens")
    assert said == ["hello"]


def test_ceiling_entry():
    assert ceilings._entry(3.5, "GB/s", "copy") == {"value": 3.5, "unit": "GB/s", "how": "copy"}


class DeviceArray:
    """Stands for a CuPy array: it has the CUDA array interface and copies to the host with get()."""

    __cuda_array_interface__ = {}

    def __init__(self, values):
        self.values = np.asarray(values)

    def get(self):
        return self.values.copy()


def test_runner_tells_device_from_host_arrays_and_copies_to_the_host(monkeypatch):
    on = DeviceArray([1.0, 2.0])
    assert runner._on_device(on) and not runner._on_device(np.zeros(2)) and not runner._on_device(3.0)
    assert runner._host(on).tolist() == [1.0, 2.0]
    assert runner._host([1, 2]).tolist() == [1, 2] and runner._host(0.5).tolist() == 0.5

    class NotCallableGet:
        get = 7
    plain = NotCallableGet()
    assert runner._host(plain).item() is plain  # a "get" that is no method is not a device copy


def test_runner_all_finite_on_the_host_and_through_cupy_on_the_device(monkeypatch):
    fake_cupy = types.ModuleType("cupy")
    fake_cupy.isfinite = lambda a: np.isfinite(a.values)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    assert runner._all_finite(np.array([1.0, 2.0])) is True
    assert runner._all_finite(np.array([1.0, np.nan])) is False
    assert runner._all_finite(np.array([np.inf])) is False
    assert runner._all_finite(DeviceArray([1.0, 2.0])) is True
    assert runner._all_finite(DeviceArray([1.0, -np.inf])) is False


def test_provenance_keeps_the_entries_a_run_merged_in_and_lists_its_own_measurements_last():
    earlier = [dict(experiments=["a", "b", "z"], command="cmd-1", date="d1", ceilings={"copy_gbps": 1}),
               dict(experiments=["c"], command="cmd-2", date="d2")]
    run = RunResults(meta=dict(command="cmd-0", date="d0", merged_runs=earlier), device={},
                     ceilings={"read_gbps": {"value": 2.0}}, results=[])
    assert merge.provenance(run, ["b", "a", "d", "e"], own=True) == [
        dict(experiments=["a", "b"], command="cmd-1", date="d1", ceilings={"copy_gbps": 1}),
        dict(experiments=["d", "e"], command="cmd-0", date="d0", ceilings={"read_gbps": {"value": 2.0}})]
    assert merge.provenance(run, ["c", "d"], own=False) == [dict(experiments=["c"], command="cmd-2", date="d2")]
    assert earlier[0]["experiments"] == ["a", "b", "z"]  # the run's own entries are not changed
    plain = RunResults(meta=dict(command="cmd-9"), device={}, ceilings={}, results=[])
    assert merge.provenance(plain, ["x"], own=True) == [dict(experiments=["x"], command="cmd-9", date=None,
                                                              ceilings={})]
    assert merge.provenance(plain, ["x"], own=False) == []
    no_list = RunResults(meta=dict(merged_runs=[dict(command="old")]), device={}, ceilings={}, results=[])
    assert merge.provenance(no_list, ["x"], own=False) == []


def test_readme_update_rewrites_the_marked_sections_only(tmp_path, monkeypatch, capsys):
    from gpumemlab.experiments import registry

    (tmp_path / "docs/results/gpu").mkdir(parents=True)
    marks = lambda m: f"{m[0]}\nold\n{m[1]}"  # noqa: E731
    (tmp_path / "README.md").write_text(f"intro\n{marks(readme.HEADLINES)}\nend\n")
    (tmp_path / "docs/results/README.md").write_text(f"a\n{marks(readme.COVERAGE)}\nb\n{marks(readme.RESULTS)}\nc\n")
    run = RunResults(meta=dict(command="gpumemlab bench", date="2026-01-02", wall_s=12.0),
                     device={"name": "Stand-in GPU"}, ceilings={}, results=[record("v", 1.0)],
                     experiments={"e": dict(title="E", findings=["v: 3.0 GB/s"])})
    run.save(tmp_path / "docs/results/gpu/results.json")
    source = "docs/results/gpu/results.json"
    monkeypatch.chdir(tmp_path)
    coverage = readme.coverage(list(registry().values()))
    assert readme.main([]) == 0  # coverage only
    assert (tmp_path / "docs/results/README.md").read_text() == \
        f"a\n{readme.COVERAGE[0]}\n{coverage}\n{readme.COVERAGE[1]}\nb\n{marks(readme.RESULTS)}\nc\n"
    assert capsys.readouterr().err == "wrote docs/results/README.md\n"
    assert readme.update(source, tmp_path) == [tmp_path / "README.md", tmp_path / "docs/results/README.md"]
    assert (tmp_path / "README.md").read_text() == \
        f"intro\n{readme.HEADLINES[0]}\n{readme.headlines(run, source)}\n{readme.HEADLINES[1]}\nend\n"
    assert (tmp_path / "docs/results/README.md").read_text() == (
        f"a\n{readme.COVERAGE[0]}\n{coverage}\n{readme.COVERAGE[1]}\nb\n"
        f"{readme.RESULTS[0]}\n{readme.table(run, source)}\n{readme.RESULTS[1]}\nc\n")
    assert "Stand-in GPU" in readme.headlines(run, source) and "| `e` |" in readme.table(run, source)
    assert readme.main([source]) == 0
    assert capsys.readouterr().err == "wrote README.md\nwrote docs/results/README.md\n"
    assert readme.main(["-h"]) == 2
    assert capsys.readouterr().err == "usage: python -m gpumemlab.report.readme [docs/results/DEVICE/results.json.xz]\n"
    assert readme.main([source, source]) == 2
    assert capsys.readouterr().err.startswith("usage: ")
    assert readme.main(["missing.json"]) == 2
    assert capsys.readouterr().err.startswith("gpumemlab.report.readme: ")


def test_bus_ids_from_cuda_and_nvml_compare_equal():
    assert nvml._bus(b"00000000:1B:00.0") == "0000:1b:00.0"
    assert nvml._bus(" 00000020:1B:00.0 ") == "0020:1b:00.0"
    assert nvml._bus("0000:1b:00.0") == "0000:1b:00.0"
    assert nvml._bus("Not-A-Bus") == "not-a-bus"  # any other form is kept, lower-cased


def test_throttling_reads_both_snapshots_and_both_violation_counters():
    calm = dict(sm_clock_mhz=2000, throttle_reasons=0, power_violation_ns=1_000_000, thermal_violation_ns=7)
    assert nvml.throttling(dict(calm, throttle_reasons=0x8), calm) == ["hw slowdown"]
    assert nvml.throttling(dict(calm, throttle_reasons=None), dict(calm, throttle_reasons=0x80)) == ["hw power brake"]
    assert nvml.throttling(calm, dict(calm, thermal_violation_ns=1_050_008)) == ["thermal violation 1.1 ms"]
    assert nvml.throttling(calm, dict(calm, power_violation_ns=2_050_001)) == ["power violation 1.1 ms"]
    assert nvml.throttling(calm, dict(calm, sm_clock_mhz=1900)) == []  # exactly 5% lower: not a drop
    assert nvml.throttling(calm, dict(calm, sm_clock_mhz=1899)) == ["SM clock 2000 -> 1899 MHz"]


def test_csv_rows_end_in_a_newline_and_the_folder_is_created(tmp_path):
    res = run_of(record("a", 1.0), record("b", 2.0))
    text = csv_report.render(res)
    assert "\r" not in text and text.count("\n") == 3 and text.startswith(",".join(csv_report.COLUMNS) + "\n")
    path = csv_report.write_csv(res, tmp_path / "new" / "nested")
    assert path == tmp_path / "new" / "nested" / "report.csv" and path.read_text() == text


def test_timeline_accepts_an_op_of_zero_length_and_refuses_one_that_ends_first():
    seg = dict(stream=1, op="H2D", start_ms=2.0, end_ms=2.0)
    assert timeline.bars([seg]) == {1: [(2.0, 0.0, "H2D")]}
    with pytest.raises(ValueError, match=r"^timeline: H2D on stream 1 ends before it starts$"):
        timeline.bars([dict(seg, end_ms=1.5)])


def test_pair_comparison_failures_are_strictly_below_the_threshold():
    def match(ratio, verdict):
        return compare.Match("e", "v", {}, "kernel", 1, 1, 1, 1, 1, 1, ratio, ratio, ratio, verdict)
    cmp = compare.PairComparison(a=None, b=None, spread="p10-p90", ignore=(),
                                 matches=[match(0.9, "slower"), match(0.8, "slower"), match(0.5, "tie")])
    assert [m.ratio for m in cmp.failures(0.9)] == [0.8]


def test_write_error_reasons():
    assert write._why(OSError(13, "Permission denied")) == "Permission denied"
    assert write._why(OSError("plain")) == "plain"
    assert write._why(ValueError("embedded null byte")) == "a NUL character in the name"


def test_host_rng_is_seeded():
    assert verify.rng(5).integers(0, 1 << 30, 4).tolist() == np.random.default_rng(5).integers(0, 1 << 30, 4).tolist()


def test_headline_cuts_at_the_last_clause_boundary_before_the_limit():
    n = readme.HEADLINE_CHARS
    exact = "1" * n
    assert readme.headline(["no number", exact]) == exact
    assert readme.headline(["2" * (n + 1)]) == "2" * n + " ..."          # no boundary: cut at the limit
    assert readme.headline([", " + "3" * n]) == (", " + "3" * n)[:n] + " ..."  # a boundary at 0 is none
    assert readme.headline(["4, " + "5" * n]) == "4 ..."
    assert readme.headline([f"6; {'7' * 50}, {'8' * n}"]) == f"6; {'7' * 50} ..."


def test_headlines_and_table_of_a_run_without_names_or_merged_runs():
    run = RunResults(meta=dict(command="c", date="d"), device={}, ceilings={}, results=[],
                     experiments={"e": dict(findings=["x | y 1"])})
    text = readme.headlines(run, "docs/results/gpu/results.json")
    assert text.startswith("One number per experiment on an **?** (d), generated by ")
    assert "| [`e`](docs/results/gpu/report.md#e-) | x / y 1 |" in text
    merged = RunResults(meta=dict(command="c", date="d", merged_runs=[{}, {}]), device={"name": "G"}, ceilings={},
                        results=[], experiments={})
    assert readme.headlines(merged, "r.json").startswith("One number per experiment on an **G** (d, records of 3 runs)")
    merged.meta["merged_runs"] = [{}]
    assert readme.headlines(merged, "r.json").startswith("One number per experiment on an **G** (d, records of 2 runs)")
    single = RunResults(meta=dict(command="c", date="d", merged_runs=[]), device={"name": "G"}, ceilings={},
                        results=[], experiments={})
    assert readme.headlines(single, "r.json").startswith("One number per experiment on an **G** (d), generated")


def test_readme_rows_of_an_experiment_without_declared_claims():
    run = RunResults(meta={}, device={}, ceilings={}, results=[record("v", 1.0)],
                     experiments={"e": dict(seed_claim="a | claim", seed="seed 001, s"), "f": {}})
    assert list(readme.rows(run)) == [("`e`", "seed 001, s", "a | claim", "-", 1), ("`f`", "-", "", "-", 0)]
    text = readme.table(run, "r.json")
    assert "| `e` | seed 001, s | a / claim | - | 1 |" in text and "\n\nCeilings measured in the same run: " in text
    run.experiments = {"e": dict(skipped="one GPU"), "f": dict(skipped="no NVLink")}
    lines = readme.table(run, "r.json").splitlines()
    assert "Skipped by this run: `e` (one GPU); `f` (no NVLink)." in lines
    missing = lines.index(next(x for x in lines if x.startswith("Not in this run (added to the suite after it): ")))
    assert lines[missing - 1] == ""


def test_speedups_need_a_naive_time_and_a_positive_time():
    naive, fast, untimed = record("naive", 2.0), record("fast", 0.5), record("untimed", 0.0)
    runner.speedups([naive, fast, untimed], "naive")
    assert (naive.speedup_vs_naive, fast.speedup_vs_naive, untimed.speedup_vs_naive) == (1.0, 4.0, None)
    zero = record("naive", 0.0)
    other = record("fast", 0.5)
    runner.speedups([zero, other], "naive")
    assert other.speedup_vs_naive is None
    with pytest.raises(ValueError, match=r"^speedups: several 'naive' records share the group \(\); name the keys$"):
        runner.speedups([naive, record("naive", 1.0)], "naive")
    with pytest.raises(ValueError, match=r"share the group \(\('n', '4'\),\); name the keys$"):
        runner.speedups([record_with("naive", n=4), record_with("naive", n=4)], "naive", keys=("n",))


class FakeNvml:
    """NVML's NVLink queries, link by link: state, version code, remote type and bus id; a missing entry raises as
    NVML does for a link it does not know. ``speed``: the common speed field in MB/s (None: not supported)."""

    NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON = 99

    def __init__(self, links: dict, speed=None, speed_status=0, max_links=None):
        self.links, self.speed, self.speed_status = links, speed, speed_status
        if max_links is not None:  # older nvidia-ml-py lacks the constant: 18 links are asked
            self.NVML_NVLINK_MAX_LINKS = max_links

    def _get(self, link, key):
        value = self.links[link][key]
        if isinstance(value, Exception):
            raise value
        return value

    def nvmlDeviceGetNvLinkState(self, dev, link):
        return self._get(link, "state") if dev == "dev" else 0

    def nvmlDeviceGetNvLinkVersion(self, dev, link):
        return self._get(link, "version") if dev == "dev" else 0

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, dev, link):
        return self._get(link, "kind") if dev == "dev" else nvml.REMOTE_SWITCH

    def nvmlDeviceGetNvLinkRemotePciInfo_v2(self, dev, link):
        return types.SimpleNamespace(busId=self._get(link, "bus") if dev == "dev" else "0:0:0")

    def nvmlDeviceGetFieldValues(self, dev, fields):
        assert dev == "dev" and fields == [99]
        if self.speed is None:
            raise RuntimeError("no such field")
        return [types.SimpleNamespace(nvmlReturn=self.speed_status, value=types.SimpleNamespace(uiVal=self.speed))]


def link(state=1, version=6, kind=nvml.REMOTE_GPU, bus=b"00000000:2A:00.0"):
    return dict(state=state, version=version, kind=kind, bus=bus)


def test_nvlinks_reads_each_active_link_and_survives_what_nvml_does_not_know(monkeypatch):
    nv = FakeNvml({0: link(), 1: link(state=0), 2: link(version=RuntimeError("bad link")),
                   3: link(kind=RuntimeError("old driver"), version=7), 4: link(kind=nvml.REMOTE_SWITCH, version=42),
                   5: link(bus=RuntimeError("no pci info")), 6: link()}, max_links=6)  # link 6 is past the last
    monkeypatch.setattr(nvml, "_handle", lambda ordinal=None: (nv, "dev") if ordinal == 3 else None)
    assert [x["gbps"] for x in nvml.nvlinks(3)] == [26.5625, 53.125, None, 26.5625]  # no speed field: the version's
    nv.speed = 25000
    monkeypatch.setattr(nvml, "_handle", lambda ordinal=None: (nv, "dev") if ordinal == 3 else None)
    assert nvml.nvlinks(3) == [
        dict(link=0, version="4.0", gbps=25.0, remote="0000:2a:00.0"),
        dict(link=3, version="5.0", gbps=25.0, remote="0000:2a:00.0"),
        dict(link=4, version="(NVML code 42)", gbps=25.0, remote="switch"),
        dict(link=5, version="4.0", gbps=25.0, remote="unknown")]
    assert nvml.nvlinks(0) is None
    nv.links = {}  # no link answers (NVLink unsupported)
    assert nvml.nvlinks(3) == []
    nv = FakeNvml({17: link(), 18: link()})
    monkeypatch.setattr(nvml, "_handle", lambda ordinal=None: (nv, "dev"))
    assert [x["link"] for x in nvml.nvlinks(0)] == [17]


def test_link_rate_from_the_speed_field_else_the_version_s():
    assert nvml._link_gbps(FakeNvml({}, speed=26562), "dev", 25.0) == 26.562
    assert nvml._link_gbps(FakeNvml({}, speed=0), "dev", 25.0) == 25.0
    assert nvml._link_gbps(FakeNvml({}, speed=26562, speed_status=3), "dev", 25.0) == 25.0
    assert nvml._link_gbps(FakeNvml({}), "dev", None) is None


def test_pair_link_takes_the_side_with_fewer_links_to_the_other(monkeypatch):
    buses = {0: "0000:1B:00.0", 1: "00000000:2A:00.0"}
    monkeypatch.setattr(runtime, "device_info", lambda o: {"pci_bus_id": buses[o]})
    sides = {0: [dict(link=i, version="4.0", gbps=25.0, remote="0000:2a:00.0") for i in range(3)]
             + [dict(link=9, version="4.0", gbps=25.0, remote="0000:77:00.0")],
             1: [dict(link=i, version="4.0", gbps=25.0, remote="0000:1b:00.0") for i in range(2)]}
    monkeypatch.setattr(nvml, "nvlinks", lambda o: sides[o])
    assert nvml.pair_link(0, 1) == dict(type="NVLink", links=2, version="4.0", gbps=50.0,
                                        how="NVML: 2 active NVLink 4.0 links (direct) x 25.0 GB/s per direction")
    assert nvml.pair_link(1, 0)["links"] == 2
    sides[1] = [dict(link=i, version="3.0", gbps=None, remote="switch") for i in range(4)]
    assert nvml.pair_link(1, 0) == dict(type="NVLink", links=3, version="4.0", gbps=75.0,
                                        how="NVML: 3 active NVLink 4.0 links (direct) x 25.0 GB/s per direction")
    sides[0] = sides[1][:3]
    assert nvml.pair_link(0, 1) == dict(type="NVLink", links=3, version="3.0", gbps=None,
                                        how="NVML: 3 active NVLink 3.0 links (NVSwitch) x ? GB/s per direction")
    sides[1] = [dict(link=i, version=v, gbps=25.0, remote="switch") for i, v in enumerate(("3.0", "4.0"))]
    sides[0] = [dict(link=i, version=v, gbps=20.0, remote="switch") for i, v in enumerate(("4.0", "3.0"))]
    assert nvml.pair_link(0, 1) == dict(type="NVLink", links=2, version="4.0", gbps=40.0,  # a tie: the first side
                                        how="NVML: 2 active NVLink 4.0 links (NVSwitch) x 20.0 GB/s per direction")
    sides[1] = [dict(link=i, version="3.0", gbps=None, remote="switch") for i in range(4)]
    sides[0] = [dict(sides[1][0], gbps=20.0), sides[1][1]]
    assert nvml.pair_link(0, 1)["gbps"] is None  # one link without a rate: no sum
    assert nvml.pair_link(0, 1)["how"].endswith("x 20.0 GB/s per direction")
    sides[0] = []
    assert nvml.pair_link(0, 1) == dict(type="PCIe", links=0, version=None, gbps=None,
                                        how="no NVLink between them (NVML)")
    sides[0] = None
    assert nvml.pair_link(0, 1)["how"] == nvml.pair_link(1, 0)["how"] == "NVML not available"


def test_check_close_per_element_tolerance_and_exact_integers(monkeypatch):
    want = np.array([[1.0, 2.0], [3.0, 4.0]])
    got = want + np.array([[0.5, 0.0], [0.0, 0.25]])
    verify.check_close(got, want, what="t", atol=np.array([[0.5, 0.0], [0.0, 0.25]]))
    verify.check_close(got, want, what="t", atol=np.array([0.5, 0.25]))  # broadcast over rows
    with pytest.raises(VerificationError, match=r"^t: 1 of 4 elements wrong; first at \(1, 1\): got np\.float64\(4\.25\), expected np\.float64\(4\.0\)$"):
        verify.check_close(got, want, what="t", atol=np.array([0.5, 0.2]))
    verify.check_close(np.float32(1.0) + want, want + 1, what="t")  # float32 against float64: compared in float64
    big = np.array([2**53 + 1], dtype=np.int64)
    with pytest.raises(VerificationError, match=r"^i: 1 of 1 elements wrong"):  # equal as float64, not as integers
        verify.check_close(big, big - 1, what="i", atol=0.0)
    verify.check_close(np.array([3], dtype=np.uint8), np.array([3.4]), what="m", atol=0.5)  # mixed: by tolerance
    with pytest.raises(VerificationError, match=r"^m: 1 of 1 elements wrong"):
        verify.check_close(np.array([3.4]), np.array([3], dtype=np.uint8), what="m", atol=0.3)
    monkeypatch.setattr(verify, "BLOCK", 3)  # several blocks: counts add up, the first is the first overall
    wrong = np.arange(8.0)
    wrong[[4, 6, 7]] += 1
    with pytest.raises(VerificationError, match=r"^b: 3 of 8 elements wrong; first at \(4,\): got np\.float64\(5\.0\), expected np\.float64\(4\.0\)$"):
        verify.check_close(wrong, np.arange(8.0), what="b")
    unwritten = np.arange(8.0)
    unwritten[[5, 7]] = np.nan
    with pytest.raises(VerificationError, match=r"^n: 2 non-finite outputs \(first at \(5,\)\)"):
        verify.check_close(unwritten, np.arange(8.0), what="n")
    assert verify._scan(8, lambda lo, hi: np.arange(lo, hi) % 4 == 1) == (2, 1)
    verify.check_close(np.arange(8.0) + 0.5, np.arange(8.0), what="p", atol=np.full(8, 0.5))  # per element, blocks


def test_to_host_copies_device_arrays_only():
    assert verify.to_host(DeviceArray([1, 2])).tolist() == [1, 2]
    assert verify.to_host([3, 4]).tolist() == [3, 4]

    class NotCallableGet:
        get = 7
    plain = NotCallableGet()
    assert verify.to_host(plain).item() is plain


def test_random_nonzero_shapes_ranges_and_seeding():
    x = verify.random_nonzero(1000, np.float32, np.random.default_rng(1))
    assert x.shape == (1000,) and x.dtype == np.float32
    assert 0.5 <= np.abs(x).min() and np.abs(x).max() < 1.5 and (x < 0).any() and (x > 0).any()
    assert len(set(np.abs(x).tolist())) > 900  # one magnitude per element
    again = verify.random_nonzero(1000, np.float32, np.random.default_rng(1))
    assert np.array_equal(x, again)
    assert not np.array_equal(x, verify.random_nonzero(1000, np.float32))  # no generator: a fresh one
    i = verify.random_nonzero((20, 50), np.int16, np.random.default_rng(2))
    assert i.shape == (20, 50) and i.dtype == np.int16 and set(np.abs(i).ravel()) == set(range(1, 10))
    u = verify.random_nonzero([400], np.uint32, np.random.default_rng(3))
    assert set(u.tolist()) == set(range(1, 10))
    with pytest.raises(TypeError, match=r"^random_nonzero: unsupported dtype bool$"):
        verify.random_nonzero(3, np.bool_)


def test_sum_bound_over_all_and_over_an_axis():
    x = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=np.float32)
    assert verify.sum_bound(x) == verify.gamma(5, np.float32) * 21.0
    assert verify.sum_bound(x, axis=1).tolist() == (verify.gamma(2, np.float32) * np.array([6.0, 15.0])).tolist()
    assert verify.sum_bound(x, axis=(0, 1)) == verify.gamma(5, np.float32) * 21.0
    assert verify.sum_bound(x, axis=0, mean=True).tolist() == (
        verify.gamma(2, np.float32) * np.array([5.0, 7.0, 9.0]) / 2).tolist()
    assert verify.sum_bound(x[:, :1], axis=1, mean=True).tolist() == [verify.gamma(1, np.float32) * 1.0,
                                                                      verify.gamma(1, np.float32) * 4.0]
    big = np.array([1e30, 1e30], dtype=np.float32)
    assert verify.sum_bound(big) == verify.gamma(1, np.float32) * 2 * float(big[0])
    with pytest.raises(ValueError, match=r"^gamma\(16777216\) undefined for float32: n u >= 1$"):
        verify.gamma(1 << 24, np.float32)


def test_replace_between_takes_the_first_of_each_marker():
    assert replace_between("<a>1<a>2<b>3<b>", ("<a>", "<b>"), "n") == "<a>\nn\n<b>3<b>"


def test_coverage_names_a_cite_without_a_section_whole():
    from gpumemlab.experiments._declare import SEEDS

    seed = next(iter(SEEDS))
    claim = types.SimpleNamespace(from_seed=True, source=types.SimpleNamespace(seed=seed, cite="the whole seed"))
    text = readme.coverage([types.SimpleNamespace(name="x", claims=[claim])])
    assert f"| {seed} | the whole seed | `x` |" in text.splitlines()


def test_comparison_keys_spreads_and_verdict_counts():
    assert compare._key_dict(("e", "v", (("n", "4"), ("dtype", '"float32"')))) == dict(
        experiment="e", variant="v", params=dict(n=4, dtype="float32"))
    assert compare._spread(2.0, 1.5, 3.0) == "-25.0/+50.0%"

    def match(verdict, ratio=1.0):
        return compare.Match("e", "v", {}, "kernel", 1, 1, 1, 1, 1, 1, ratio, ratio, ratio, verdict)
    cmp = compare.PairComparison(a=None, b=None, spread="p10-p90", ignore=(),
                                 matches=[match("faster", 2.0), match("faster", 2.0), match("slower", 0.5)])
    summary = cmp.summary()["e"]
    assert (summary["matched"], summary["faster"], summary["slower"], summary["tie"]) == (3, 2, 1, 0)


def test_merge_of_no_runs_is_a_usage_error():
    with pytest.raises(UsageError, match=r"^merge: no runs given$"):
        merge.merge_runs([])


def test_comparison_json_names_each_run_its_ceilings_and_unmatched_records():
    meta = dict(date="d", version="1", command="c", quick=False, versions={"numpy": "2"}, other="x",
                merged_runs=[dict(experiments=["e"], command="c0", date="d0", ceilings={})])
    a = compare.Run("A", "a/results.json", RunResults(meta=meta, device={"name": "G", "sm_count": 2, "uuid": "u"},
                                                      ceilings={"copy_gbps": {"value": 2.0, "unit": "GB/s"}}, results=[]))
    b = compare.Run("B", "b/results.json", RunResults(meta={}, device={}, results=[],
                                                      ceilings={"read_gbps": {"value": 3.0, "unit": "GB/s"}}))
    info = compare._run_info(a)
    assert info == dict(label="A", path="a/results.json",
                        device={k: {"name": "G", "sm_count": 2}.get(k) for k in compare.DEVICE_FIELDS},
                        meta=dict(date="d", version="1", command="c", quick=False), versions={"numpy": "2"},
                        merged_runs=[dict(experiments=["e"], command="c0", date="d0")])
    assert compare._run_info(b)["versions"] == {} and compare._run_info(b)["merged_runs"] == []
    assert compare._ceiling_rows([a, b]) == [dict(ceiling="copy_gbps", unit="GB/s", values=[2.0, None]),
                                             dict(ceiling="read_gbps", unit="GB/s", values=[None, 3.0])]
    key = ("e", "v", (("n", "1"),))
    cmp = compare.PairComparison(a=a, b=b, spread="p10-p90", ignore=("seed",), matches=[], only_a=[key], only_b=[])
    assert cmp.to_dict() == dict(a=info, b=compare._run_info(b), spread="p10-p90", ignore=["seed"],
                                 ceilings=compare._ceiling_rows([a, b]), summary={}, matches=[],
                                 only_a=[dict(experiment="e", variant="v", params={"n": 1})], only_b=[])


@pytest.mark.parametrize("times, problem", [
    (dict(median=1.0, samples=[0.0, 3]), None),
    (dict(median=-1.0), "w: field 'median' is -1.0: expected a number > 0"),
    (dict(median=1.0, samples=[1.0, -2.0]), "w: samples[1] is -2.0: expected a number >= 0"),
    (dict(median=1.0, samples=[math.inf]), "w: samples[0] is inf: expected a finite number"),
    (dict(median=1.0, samples=[True]), "w: samples[0] is boolean, expected number"),
    (dict(median=1.0, samples=["x"]), "w: samples[0] is string, expected number"),
])
def test_record_times_are_checked_sample_by_sample(times, problem):
    assert records._check_times(times, "w") == problem


def test_summary_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match=r"^no samples to summarize$"):
        summarize([])
    with pytest.raises(ValueError, match=r"^timing samples must be finite and non-negative$"):
        summarize([1.0, -1.0])
