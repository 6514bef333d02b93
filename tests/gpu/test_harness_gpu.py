"""The harness on the GPU against known answers: a spin kernel of known duration (on %globaltimer) timed by
``time_gpu`` and ``time_interleaved``, and ``check_equal_device`` / ``check_close`` on device arrays.

(Named ``*_gpu`` because tests/test_harness.py exists and the test folders are not packages. The timing tests
have "timer" in their names so that the compute-sanitizer stage of tools/gpu_check.sh leaves them out.)
"""

import numpy as np
import pytest

gpu = pytest.mark.gpu

# A test-only kernel: one thread reads the GPU's nanosecond global timer until `ns` have passed, so a launch
# lasts `ns` (plus the timer's granularity, about a microsecond or less) whatever the clocks do.
SPIN_SOURCE = r"""
extern "C" __global__ void spin_ns(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""


def test_spin_kernel_compiles_without_a_gpu():
    from gpumemlab.gpu.compile import compile_text

    mod = compile_text(SPIN_SOURCE, ["spin_ns"], "sm_90")
    assert mod.symbol_mapping["spin_ns"] == "spin_ns" and len(mod.cubin) > 0


@pytest.fixture(scope="module")
def spin():
    """spin(seconds) -> a callable that enqueues one spin kernel of that duration on CuPy's current stream."""
    from gpumemlab.gpu import runtime

    runtime.work_stream()
    kernel = runtime.load_text(SPIN_SOURCE, ["spin_ns"])["spin_ns"]

    def make(seconds: float):
        ns = np.uint64(round(seconds * 1e9))
        return lambda: runtime.launch(kernel, 1, 1, ns)

    return make


@gpu
@pytest.mark.parametrize("seconds,cold_l2", [(1e-3, False), (1e-3, True), (1e-4, False)])
def test_timer_measures_a_kernel_of_known_duration(spin, seconds, cold_l2):
    from gpumemlab.bench.timer import L2Flusher, time_gpu
    from gpumemlab.gpu import runtime

    flusher = L2Flusher(runtime.device_info()["l2_bytes"]) if cold_l2 else None
    t = time_gpu(spin(seconds), flusher=flusher)
    assert t.cold_l2 == cold_l2
    if seconds == 1e-4:
        assert t.inner >= 2  # below the 2e-4 s target sample: several calls per recorded sample
    assert abs(t.stats.median - seconds) <= 0.10 * seconds, t.stats
    assert t.stats.min >= 0.995 * seconds, t.stats  # the kernel cannot end early; the flush is not timed


@gpu
def test_interleaved_timer_gives_the_known_ratio(spin):
    from gpumemlab.bench.stats import summarize
    from gpumemlab.bench.timer import TimerConfig, time_interleaved

    stats = time_interleaved({"short": spin(1e-3), "long": spin(2e-3)}, cfg=TimerConfig(min_samples=20))
    assert stats["short"].n == stats["long"].n >= 20
    assert stats["long"].median / stats["short"].median == pytest.approx(2.0, rel=0.05)
    per_round = summarize([b / a for a, b in zip(stats["short"].samples, stats["long"].samples)])
    assert per_round.median == pytest.approx(2.0, rel=0.05)
    assert abs(stats["short"].median - 1e-3) <= 1e-4


@gpu
def test_timer_stops_on_spread_for_a_steady_kernel(spin):
    """A 1 ms spin kernel runs at a fixed duration: the spread rule ends sampling at the first batch past the
    minimums, well before the time limit, and nothing is flagged."""
    from gpumemlab.bench.session import flags_for
    from gpumemlab.bench.timer import TimerConfig, time_gpu

    cfg = TimerConfig(min_samples=10, min_time_s=0.0, max_time_s=5.0, max_rel_spread=0.01)
    t = time_gpu(spin(1e-3), cfg=cfg)
    assert (t.stop, t.stats.n) == ("spread", 10), t.stats
    assert flags_for(t, cfg, []) == []


@gpu
def test_timer_session_records_stop_flags_and_nvml_before_and_after(spin):
    """Session.measure writes why sampling stopped, the flags (none for a steady spin kernel unless NVML saw
    the clocks held down) and, where NVML is installed, a snapshot before timing and the reasons next to the one
    after."""
    from gpumemlab.bench import nvml
    from gpumemlab.bench.session import FLAG_THROTTLED, Session

    s = Session()
    rec = s.measure(experiment="t", variant="spin", params={}, run=spin(1e-3), ceiling=None, cold_l2=False)
    assert rec.time_s["stop"] == "spread" and rec.flags in ([], [FLAG_THROTTLED])
    if nvml.snapshot() is None:
        pytest.skip("no NVML (nvidia-ml-py) here")
    assert isinstance(rec.env["before"]["sm_clock_mhz"], int) and isinstance(rec.env["power_violation_ns"], int)
    assert (FLAG_THROTTLED in rec.flags) == bool(rec.env["throttle"])
    s.close()


# ------------------------------------------------------------------ verification on device arrays

@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.work_stream()
    return cupy


@gpu
def test_check_equal_device_passes_equal_arrays_only(cp):
    from gpumemlab.bench.verify import check_equal_device
    from gpumemlab.errors import VerificationError

    want = cp.arange(12, dtype=cp.float32).reshape(3, 4) + 1
    check_equal_device(want.copy(), want, what="same")
    got = want.copy()
    got[2, 1] = 0.5
    with pytest.raises(VerificationError, match=r"^w: 1 of 12 elements wrong; first at flat index 9: got 0\.5, "
                                                r"expected 10\.0$"):
        check_equal_device(got, want, what="w")
    with pytest.raises(VerificationError, match=r"^w: shape \(4, 3\) != expected \(3, 4\)$"):
        check_equal_device(want.reshape(4, 3), want, what="w")


@gpu
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_check_equal_device_never_passes_nan_even_against_nan(cp, bad):
    from gpumemlab.bench.verify import check_equal_device
    from gpumemlab.errors import VerificationError

    want = cp.ones(1000, cp.float32)
    got = want.copy()
    got[999] = bad
    with pytest.raises(VerificationError, match="1 of 1000 elements wrong; first at flat index 999"):
        check_equal_device(got, want, what="x")
    if np.isnan(bad):
        with pytest.raises(VerificationError, match="1 of 1000"):  # an unwritten NaN against a NaN reference
            check_equal_device(got, got.copy(), what="x")


@gpu
def test_check_equal_device_integers(cp):
    from gpumemlab.bench.verify import INT_POISON, check_equal_device, poison
    from gpumemlab.errors import VerificationError

    want = cp.arange(-5, 5, dtype=cp.int32)
    out = cp.empty_like(want)
    poison(out)
    out[:9] = want[:9]
    with pytest.raises(VerificationError, match=rf"1 of 10 elements wrong; first at flat index 9: got {INT_POISON}"):
        check_equal_device(out, want, what="i")
    out[9] = 4
    check_equal_device(out, want, what="i")


@gpu
def test_check_close_reads_device_arrays(cp):
    from gpumemlab.bench.verify import check_close
    from gpumemlab.errors import VerificationError

    want = np.linspace(1, 2, 33)
    got = cp.asarray(want.astype(np.float32))
    check_close(got, want, what="d", rtol=2.0**-24)
    got[32] = np.nan
    with pytest.raises(VerificationError, match=r"1 non-finite outputs \(first at \(32,\)\)"):
        check_close(got, want, what="d", rtol=1.0)
