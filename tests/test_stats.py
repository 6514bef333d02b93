import math

import numpy as np
import pytest

from gpumemlab.bench.stats import gb_per_s, quantile, summarize


def test_summary_of_known_samples():
    s = summarize([3.0, 1.0, 2.0, 10.0, 4.0])
    assert (s.median, s.min, s.max, s.n) == (3.0, 1.0, 10.0, 5)
    assert s.mean == pytest.approx(4.0)
    assert s.p10 == pytest.approx(1.4) and s.p90 == pytest.approx(7.6)
    assert s.rel_spread == pytest.approx((7.6 - 1.4) / 3.0)
    assert s.samples == (3.0, 1.0, 2.0, 10.0, 4.0)  # raw order kept


@pytest.mark.parametrize("q", [0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
def test_quantile_matches_numpy(q):
    vals = sorted(np.random.default_rng(3).random(17).tolist())
    assert quantile(vals, q) == pytest.approx(float(np.quantile(vals, q)))


def test_even_count_median_and_single_sample():
    assert summarize([1.0, 2.0, 3.0, 4.0]).median == 2.5
    one = summarize([5.0])
    assert (one.median, one.stdev, one.rel_spread) == (5.0, 0.0, 0.0)


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [1.0, -1.0], [math.inf]])
def test_bad_samples_raise(bad):
    with pytest.raises(ValueError):
        summarize(bad)


def test_bandwidth_units():
    assert gb_per_s(2e9, 0.5) == 4.0


def test_summary_of_an_even_sample_by_hand():
    # sorted: 1 2 3 4 5 9 (n = 6); median = (3 + 4) / 2 = 3.5; mean = 24 / 6 = 4
    # p10: position (6 - 1) * 0.1 = 0.5 -> 1 + 0.5 * (2 - 1) = 1.5; p90: position 4.5 -> 5 + 0.5 * (9 - 5) = 7
    # rel_spread = (7 - 1.5) / 3.5 = 11 / 7; stdev: squared deviations 9 4 1 0 1 25 = 40, / (6 - 1) -> sqrt(8)
    s = summarize([5.0, 1.0, 4.0, 2.0, 3.0, 9.0])
    assert (s.median, s.min, s.max, s.mean, s.p10, s.p90, s.n) == (3.5, 1.0, 9.0, 4.0, 1.5, 7.0, 6)
    assert s.rel_spread == pytest.approx(11 / 7, rel=1e-15)
    assert s.stdev == pytest.approx(math.sqrt(8), rel=1e-15)
    assert s.to_dict()["samples"] == [5.0, 1.0, 4.0, 2.0, 3.0, 9.0]


def test_one_outlier_moves_max_but_not_the_spread():
    # 20 samples at 1.0 and one at 100: p10 = p90 = median = 1 (positions 2 and 18 of 0..20 are both 1.0)
    s = summarize([1.0] * 20 + [100.0])
    assert (s.median, s.p10, s.p90, s.rel_spread, s.max) == (1.0, 1.0, 1.0, 0.0, 100.0)


def test_samples_keep_the_event_timers_precision():
    """A float32 of milliseconds (CUDA events) survives the 7 significant digits; a float64's extra digits do not."""
    ms = np.float32(0.28191998600959778)
    (kept,) = summarize([float(ms) / 1000]).samples
    assert kept == 0.00028192 and np.float32(kept * 1000) == ms
    assert summarize([1.23456789e-5]).samples == (1.234568e-5,)


def test_zero_median_has_zero_spread():
    assert summarize([0.0, 0.0, 0.0]).rel_spread == 0.0


@pytest.mark.parametrize("seed,n", [(0, 2), (1, 7), (2, 10), (3, 301)])
def test_summary_matches_numpy(seed, n):
    raw = np.random.default_rng(seed).lognormal(size=n)
    s = summarize(raw)
    x = np.array([float(f"{v:.7g}") for v in raw])  # the statistics are those of the samples as stored
    assert list(s.samples) == x.tolist() and np.abs(x / raw - 1).max() <= 5e-7
    p10, p50, p90 = np.percentile(x, [10, 50, 90], method="linear")
    assert s.median == pytest.approx(p50, rel=1e-14)
    assert (s.p10, s.p90) == (pytest.approx(p10, rel=1e-14), pytest.approx(p90, rel=1e-14))
    assert s.mean == pytest.approx(x.mean(), rel=1e-14) and s.stdev == pytest.approx(x.std(ddof=1), rel=1e-12)
    assert s.rel_spread == pytest.approx((p90 - p10) / p50, rel=1e-13)


@pytest.mark.parametrize("q", [-0.01, 1.01])
def test_quantile_outside_zero_one_raises(q):
    with pytest.raises(ValueError, match="outside"):
        quantile([1.0, 2.0], q)
    with pytest.raises(ValueError, match="no samples"):
        quantile([], 0.5)
