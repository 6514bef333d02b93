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
