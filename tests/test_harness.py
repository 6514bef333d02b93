"""The measurement harness without a GPU, against known answers: check_close failing when they must
and passing at exactly the tolerance, poison and random inputs, and the timer's logic on a fake stream whose
clock only the "kernels" advance (so every duration, batch size and sample count is known in advance)."""


import numpy as np
import pytest

from gpumemlab.bench import timer, verify
from gpumemlab.bench.timer import TimerConfig, time_gpu, time_interleaved
from gpumemlab.errors import VerificationError

# ------------------------------------------------------------------ check_close


def test_check_close_passes_at_exactly_the_tolerance():
    want = np.array([2.0, -4.0])
    # allowed |got - want| = atol + rtol * |want| = 0.5 + 0.25 * (2, 4) = (1.0, 1.5), all exact in binary
    verify.check_close(np.array([3.0, -5.5]), want, what="edge", rtol=0.25, atol=0.5)
    verify.check_close(np.array([1.0, -2.5]), want, what="edge", rtol=0.25, atol=0.5)
    verify.check_close(want.copy(), want, what="exact")  # rtol = atol = 0: equality


def test_check_close_fails_one_ulp_beyond_the_tolerance():
    want = np.array([2.0, -4.0, 7.0])
    got = np.array([np.nextafter(3.0, np.inf), -4.0, 7.0])
    with pytest.raises(VerificationError, match=r"^edge: 1 of 3 elements wrong; first at \(0,\): got .*3\.0000000000000004"):
        verify.check_close(got, want, what="edge", rtol=0.25, atol=0.5)


def test_check_close_names_the_first_wrong_element_of_a_2d_array():
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = want.copy()
    got[2, 1] += 1
    got[2, 3] -= 1
    with pytest.raises(VerificationError, match=r"2 of 12 elements wrong; first at \(2, 1\): got .*10\.0.*expected .*9\.0"):
        verify.check_close(got, want, what="m", rtol=1e-6)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_close_never_passes_a_non_finite_output(bad):
    want = np.ones(5, np.float32)
    got = want.copy()
    got[3] = bad
    with pytest.raises(VerificationError, match=r"^x: 1 non-finite outputs \(first at \(3,\)\)"):
        verify.check_close(got, want, what="x", rtol=1e30, atol=1e30)  # no tolerance lets it through


def test_check_close_fails_when_the_expected_value_is_nan():
    with pytest.raises(VerificationError, match="1 of 2 elements wrong"):
        verify.check_close(np.array([1.0, 2.0]), np.array([1.0, np.nan]), what="ref", atol=1.0)


def test_check_close_wrong_shape():
    with pytest.raises(VerificationError, match=r"^s: shape \(2, 3\) != expected \(3, 2\)$"):
        verify.check_close(np.zeros((2, 3)), np.zeros((3, 2)), what="s")
    with pytest.raises(VerificationError, match="shape"):
        verify.check_close(np.zeros(6), np.zeros((6, 1)), what="s")  # same size, other shape


def test_check_close_integers_are_exact():
    want = np.array([1, -2, 3], np.int64)
    verify.check_close(np.array([1, -2, 3], np.int32), want, what="i")
    with pytest.raises(VerificationError, match=r"1 of 3 elements wrong; first at \(2,\): got .*4.*expected .*3"):
        verify.check_close(np.array([1, -2, 4], np.int32), want, what="i")
    poisoned = np.array([1, verify.INT_POISON, 3], np.int32)
    with pytest.raises(VerificationError, match=r"first at \(1,\)"):
        verify.check_close(poisoned, want, what="i")


def test_check_close_compares_float32_output_with_a_float64_reference():
    want = np.array([1 / 3, 2 / 3])
    got = want.astype(np.float32)
    verify.check_close(got, want, what="f32", rtol=2.0**-24)  # float32 rounding is within u = 2^-24 relative
    with pytest.raises(VerificationError):
        verify.check_close(got, want, what="f32")


# ------------------------------------------------------------------ poison, random inputs


@pytest.mark.parametrize("dtype,value", [(np.float32, np.nan), (np.float64, np.nan), (np.int32, verify.INT_POISON),
                                         (np.int64, verify.INT_POISON), (np.uint8, 255), (np.uint32, 2**32 - 1)])
def test_poison_fills_every_element(dtype, value):
    a = np.zeros(7, dtype)
    verify.poison(a)
    if np.isnan(value):
        assert np.isnan(a).all()
    else:
        assert (a == value).all()
    with pytest.raises(TypeError, match="unsupported dtype"):
        verify.poison(np.zeros(2, np.complex64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_random_nonzero_has_no_zeros_and_both_signs(dtype):
    x = verify.random_nonzero((100, 37), dtype, verify.rng(4))
    assert x.shape == (100, 37) and x.dtype == dtype and np.count_nonzero(x) == x.size
    mag = np.abs(x.astype(np.float64))
    if np.dtype(dtype).kind == "f":
        assert mag.min() >= 0.5 and mag.max() < 1.5
    else:
        assert mag.min() >= 1 and mag.max() <= 9
    if np.dtype(dtype).kind != "u":
        assert (x < 0).any() and (x > 0).any()


# ------------------------------------------------------------------ the timer on a fake stream


class FakeStream:
    """Stands for a WorkStream: timing events read a clock (ms, as cuda.core's event difference) that only the
    fake kernels advance, so a kernel of d ms is timed at exactly d ms."""

    def __init__(self):
        self.now_ms = 0.0
        self.calls: list[str] = []
        self.syncs = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def record_timing(self):
        return self.now_ms

    def sync(self):
        self.syncs += 1

    def kernel(self, name: str, ms: float):
        def run():
            self.now_ms += ms
            self.calls.append(name)
        return run


class FakeFlusher:
    def __init__(self):
        self.flushes = 0
        self.streams = set()

    def flush(self, stream):
        self.flushes += 1
        self.streams.add(stream)  # the flush must be ordered on the stream that is timed


def test_time_gpu_batches_short_kernels_and_reports_per_call_time():
    s = FakeStream()
    cfg = TimerConfig(warmup=2, min_samples=10, max_samples=300, min_time_s=0.01, target_sample_s=2e-4, batch=10)
    t = time_gpu(s.kernel("k", 0.05), stream=s, cfg=cfg)
    # one call takes 5e-5 s: inner = ceil(2e-4 / 5e-5) = 4 calls per sample, 2e-4 s of work per sample,
    # so 0.01 s of timed work takes 50 samples (5 batches of 10)
    assert t.inner == 4 and not t.cold_l2
    assert t.stats.n == 50
    assert t.stats.median == pytest.approx(5e-5, rel=1e-9) and t.stats.rel_spread == pytest.approx(0, abs=1e-6)
    assert len(s.calls) == 2 + 3 + 50 * 4  # warm-up, the three probe samples, the samples


def test_time_gpu_batches_from_the_fastest_probe_sample():
    """A late first probe call (0.5 ms for a 0.1 ms kernel: a hiccup of the machine) does not stop the batching:
    the fastest of the three probe samples sets the calls per sample."""
    s = FakeStream()
    late = iter([0.5])
    fast = s.kernel("k", 0.1)

    def kernel():
        s.now_ms += next(late, 0.0)
        fast()
    cfg = TimerConfig(warmup=0, min_samples=10, max_samples=300, min_time_s=0.01, target_sample_s=2e-4, batch=10)
    t = time_gpu(kernel, stream=s, cfg=cfg)
    assert t.inner == 2 and t.stats.median == pytest.approx(1e-4, rel=1e-9)


def test_time_gpu_with_a_flusher_times_one_call_per_sample_and_flushes_before_each():
    s, f = FakeStream(), FakeFlusher()
    cfg = TimerConfig(warmup=1, min_samples=10, min_time_s=0.0, batch=10)
    t = time_gpu(s.kernel("k", 0.05), stream=s, flusher=f, cfg=cfg)
    assert t.inner == 1 and t.cold_l2 and t.stats.n == 10
    assert f.flushes == 3 + 10 and f.streams == {s}  # the three probe samples and every timed sample
    assert t.stats.min == pytest.approx(5e-5, rel=1e-9) and t.stats.max == pytest.approx(5e-5, rel=1e-9)


def test_time_gpu_stops_at_min_samples_for_a_slow_kernel_and_at_max_samples_for_a_fast_one():
    slow = FakeStream()
    t = time_gpu(slow.kernel("slow", 200.0), stream=slow, cfg=TimerConfig(min_time_s=0.05, batch=10))
    assert t.stats.n == 10 and t.inner == 1 and t.stats.median == pytest.approx(0.2, rel=1e-12)
    fast = FakeStream()
    cfg = TimerConfig(min_time_s=10.0, max_time_s=20.0, max_samples=40, batch=10)
    assert time_gpu(fast.kernel("fast", 1.0), stream=fast, cfg=cfg).stats.n == 40


def test_time_interleaved_alternates_the_order_and_keeps_the_known_ratio():
    s = FakeStream()
    cfg = TimerConfig(warmup=1, min_samples=4, max_samples=300, min_time_s=0.0, batch=2)
    stats = time_interleaved({"a": s.kernel("a", 0.125), "b": s.kernel("b", 0.25)}, stream=s, cfg=cfg)
    assert s.calls == ["a", "b"] + ["a", "b", "b", "a"] * 2  # warm-up, then A B, B A, A B, B A
    assert stats["a"].n == stats["b"].n == 4
    assert stats["a"].median == pytest.approx(1.25e-4, rel=1e-12)
    assert stats["b"].median / stats["a"].median == pytest.approx(2.0, rel=1e-12)


def test_time_interleaved_flushes_before_every_timed_call():
    s, f = FakeStream(), FakeFlusher()
    cfg = TimerConfig(warmup=0, min_samples=6, min_time_s=0.0, batch=3)
    stats = time_interleaved({"a": s.kernel("a", 1.0), "b": s.kernel("b", 3.0)}, stream=s, flusher=f, cfg=cfg)
    assert f.flushes == 2 * 6 and f.streams == {s} and stats["b"].median == pytest.approx(3e-3, rel=1e-12)


@pytest.mark.parametrize("kernel_ms, target_s, inner", [
    (0.05, 2.2e-4, 5),              # 4.4 calls reach the target: 5
    (0.2 / 4.0000001, 2e-4, 4),     # 4.0000001 calls: float noise of 4, not a fifth call
    (0.00004, 2e-4, 1000),          # 5000 calls would: at most 1000
    (0.0, 2e-4, 1),                 # an empty kernel the events time at 0: one call per sample
])
def test_time_gpu_calls_per_sample(kernel_ms, target_s, inner):
    s = FakeStream()
    cfg = TimerConfig(warmup=0, min_samples=10, min_time_s=0.0, target_sample_s=target_s, batch=10)
    assert time_gpu(s.kernel("k", kernel_ms), stream=s, cfg=cfg).inner == inner


def test_time_interleaved_stops_at_the_time_limit_of_all_sides_together():
    s = FakeStream()
    cfg = TimerConfig(warmup=0, min_samples=2, max_samples=100, min_time_s=0.0, max_time_s=0.0095, batch=1,
                      max_rel_spread=0.0)
    order = []

    def kernel(name):
        run = noisy_kernel(s, [1.0, 3.0])
        return lambda: (order.append(name), run())
    # rounds of a and b at 1, 3, 1 ms each: 2, 8, then 10 ms timed in all, past the 9.5 ms limit in round 3
    stats = time_interleaved({"a": kernel("a"), "b": kernel("b")}, stream=s, cfg=cfg)
    assert stats["a"].n == stats["b"].n == 3
    assert order == ["a", "b", "b", "a", "a", "b"]  # one round per batch, the order alternating round by round


def test_timer_module_reads_events_in_milliseconds():
    # cuda.core's Event difference is in ms; the harness works in seconds
    assert timer.runtime.elapsed_s(1.0, 3.5) == 2.5e-3


# ------------------------------------------------------------------ stopping rule, flags, throttling


def noisy_kernel(stream: FakeStream, durations_ms):
    """A fake kernel whose k-th call takes durations_ms[k % len] ms."""
    calls = [0]

    def run():
        stream.now_ms += durations_ms[calls[0] % len(durations_ms)]
        calls[0] += 1
    return run


def test_time_gpu_stops_on_spread_once_the_minimums_are_met():
    s = FakeStream()
    cfg = TimerConfig(warmup=0, min_samples=10, min_time_s=0.0, max_time_s=100.0, batch=10, max_rel_spread=0.01)
    # 1.000 and 1.004 ms alternate: (p90 - p10) / median = 0.004 / 1.002 < 1%, so the first batch of 10 is enough
    t = time_gpu(noisy_kernel(s, [1.0, 1.004]), stream=s, flusher=FakeFlusher(), cfg=cfg)
    assert (t.stats.n, t.stop, t.converged) == (10, "spread", True)


def test_time_gpu_keeps_sampling_a_noisy_kernel_until_its_time_limit_and_says_so():
    s = FakeStream()
    cfg = TimerConfig(warmup=0, min_samples=10, min_time_s=0.0, max_time_s=0.1, batch=10, max_rel_spread=0.01)
    # 1 and 2 ms alternate: the spread never falls below 1%; 0.1 s of timed work is 67 calls -> 70 samples
    t = time_gpu(noisy_kernel(s, [1.0, 2.0]), stream=s, flusher=FakeFlusher(), cfg=cfg)
    assert (t.stats.n, t.stop, t.converged) == (70, "time limit", False)
    assert t.far_from_min(cfg)  # median 1.5 ms, min 1 ms


def test_time_gpu_at_max_samples_is_converged_only_if_the_spread_is_small():
    cfg = TimerConfig(warmup=0, min_samples=10, max_samples=20, min_time_s=10.0, max_time_s=20.0, batch=10)
    s = FakeStream()
    assert time_gpu(noisy_kernel(s, [1.0]), stream=s, flusher=FakeFlusher(), cfg=cfg).stop == "spread"
    s = FakeStream()
    assert time_gpu(noisy_kernel(s, [1.0, 3.0]), stream=s, flusher=FakeFlusher(), cfg=cfg).stop == "max samples"


def test_should_stop_needs_min_samples_and_min_time_before_the_spread_counts():
    from gpumemlab.bench.stats import summarize
    from gpumemlab.bench.timer import should_stop

    cfg = TimerConfig(min_samples=10, min_time_s=0.5, max_time_s=1.0, max_rel_spread=0.01)
    flat9, flat10, wide10 = summarize([1.0] * 9), summarize([1.0] * 10), summarize([1.0, 2.0] * 5)
    assert should_stop(flat9, 5.0, cfg) is None          # too few samples
    assert should_stop(flat10, 0.4, cfg) is None         # too little timed work
    assert should_stop(flat10, 0.5, cfg) == "spread"
    assert should_stop(wide10, 0.9, cfg) is None         # noisy, time left
    assert should_stop(wide10, 1.0, cfg) == "time limit"


def test_flags_for_names_each_doubt():
    from gpumemlab.bench.session import flags_for
    from gpumemlab.bench.stats import summarize
    from gpumemlab.bench.timer import Timing

    cfg = TimerConfig(far_from_min=0.05)
    clean = Timing(summarize([1.0, 1.01, 1.02]), 1, True, "spread")
    slow_median = Timing(summarize([1.0, 1.2, 1.2]), 1, True, "time limit")
    assert flags_for(clean, cfg, []) == []
    assert flags_for(clean, cfg, ["sw power cap"]) == ["throttled"]
    assert flags_for(slow_median, cfg, []) == ["median far from min", "noisy"]


def test_throttling_reads_bits_violation_counters_and_clock_drop():
    from gpumemlab.bench.nvml import throttling

    calm = dict(sm_clock_mhz=1980, throttle_reasons=0x1, power_violation_ns=5, thermal_violation_ns=0)
    assert throttling(calm, dict(calm)) == []            # GPU idle bit alone is no slowdown
    assert throttling(None, calm) == [] and throttling(calm, None) == []
    assert throttling(calm, dict(calm, throttle_reasons=0x4 | 0x40)) == ["sw power cap", "hw thermal slowdown"]
    assert throttling(calm, dict(calm, power_violation_ns=2_500_005)) == ["power violation 2.5 ms"]
    assert throttling(calm, dict(calm, sm_clock_mhz=1800)) == ["SM clock 1980 -> 1800 MHz"]
    assert throttling(calm, dict(calm, sm_clock_mhz=1900)) == []   # within 5%
    missing = dict(sm_clock_mhz=None, throttle_reasons=None, power_violation_ns=None, thermal_violation_ns=None)
    assert throttling(missing, missing) == []
