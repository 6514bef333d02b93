"""Host-side logic of bench/, suite/ and report/ that the GPU paths call, driven without a GPU: the host timer
(a stand-in stream and clock), the stopping rule at its boundaries, the baseline ratio, marker replacement."""

import dataclasses

import pytest

from gpumemlab.bench import timer
from gpumemlab.bench.records import Record
from gpumemlab.bench.stats import gb_per_s, gflop_per_s, summarize
from gpumemlab.bench.timer import TimerConfig, Timing, should_stop, time_host
from gpumemlab.report.readme import replace_between
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
        self.log.append("flush")


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
