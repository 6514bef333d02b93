"""compare's tie rule: B against A is a tie when lo <= 1 <= hi (lo = A's low end / B's high end, hi = A's high end /
B's low end), i.e. when the two spreads overlap, touching included; outside it the median ratio decides."""

from __future__ import annotations

import os

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpumemlab.bench.records import Record
from gpumemlab.report.compare import compare_records


def rec(lo: float, median: float, hi: float, spread="p10-p90") -> Record:
    keys = ("p10", "p90") if spread == "p10-p90" else ("min", "max")
    t = dict(median=median, p10=lo, p90=hi, min=lo, max=hi)
    t.update(dict(zip(keys, (lo, hi))))
    return Record("e", "k", dict(n=1), 8, None, t, None, None, None, None, True)


@pytest.mark.parametrize("a, b, verdict", [
    ((2.0, 3.0, 4.0), (1.0, 1.5, 2.0), "tie"),            # lo = 2/2 = 1 exactly: the spreads touch
    ((2.0, 3.0, 4.0), (1.0, 1.5, 1.9999999), "faster"),    # lo just above 1: B is faster beyond the noise
    ((1.0, 1.5, 2.0), (2.0, 3.0, 4.0), "tie"),            # hi = 2/2 = 1 exactly
    ((1.0, 1.5, 2.0), (2.0000001, 3.0, 4.0), "slower"),    # hi just below 1
    ((1.0, 1.0, 1.0), (1.0, 1.0, 1.0), "tie"),            # lo = hi = 1: no spread, equal
    ((1.0, 1.0, 1.0), (1.0, 1.0, 1.0000001), "tie"),
    ((1.0000001, 1.0000001, 1.0000001), (1.0, 1.0, 1.0), "faster"),  # no spread, unequal: never a tie
    ((0.9, 1.0, 5.0), (1.0, 3.0, 3.1), "tie"),             # ratio 0.33, but the spreads overlap
])
@pytest.mark.parametrize("spread", ["p10-p90", "min-max"])
def test_the_tie_rule_at_its_boundaries(a, b, verdict, spread):
    m = compare_records(rec(*a, spread), rec(*b, spread), spread)
    assert m.verdict == verdict
    assert (m.ratio, m.ratio_lo, m.ratio_hi) == (a[1] / b[1], a[0] / b[2], a[2] / b[0])


def examples(n: int) -> int:
    return max(10, int(n * float(os.environ.get("HYPOTHESIS_SCALE", "1"))))


# integer-valued times: a quotient of unequal integers below 2^20 never rounds to exactly 1
spreads = st.lists(st.integers(1, 1 << 20), min_size=3, max_size=3).map(sorted).map(lambda v: tuple(map(float, v)))


@settings(max_examples=examples(500), deadline=None)
@given(spreads, spreads)
def test_a_tie_is_exactly_an_overlap_of_the_spreads(a, b):
    m = compare_records(rec(*a), rec(*b))
    overlap = a[0] <= b[2] and b[0] <= a[2]
    assert (m.verdict == "tie") == overlap
    if not overlap:
        assert m.verdict == ("faster" if a[1] > b[1] else "slower")  # then the medians are ordered too


@settings(max_examples=examples(300), deadline=None)
@given(spreads, spreads, st.integers(-20, 20))
def test_swapping_the_runs_mirrors_the_verdict_and_a_common_scale_keeps_it(a, b, e):
    ab, ba = compare_records(rec(*a), rec(*b)), compare_records(rec(*b), rec(*a))
    mirror = {"faster": "slower", "slower": "faster", "tie": "tie"}
    assert ba.verdict == mirror[ab.verdict]
    assert ab.ratio * ba.ratio == pytest.approx(1.0, rel=1e-15)
    s = 2.0 ** e  # a power of two scales every time exactly
    scaled = compare_records(rec(*(x * s for x in a)), rec(*(x * s for x in b)))
    assert (scaled.verdict, scaled.ratio, scaled.ratio_lo, scaled.ratio_hi) == (ab.verdict, ab.ratio, ab.ratio_lo,
                                                                                  ab.ratio_hi)


@settings(max_examples=examples(200), deadline=None)
@given(spreads, st.floats(1.0, 4.0))
def test_a_record_against_itself_slowed_within_its_spread_is_a_tie(a, f):
    """B = A with every time multiplied by f: a tie while f <= A's p90 / p10, a loss beyond it."""
    lo, med, hi = a
    assume(lo < hi)
    b = rec(lo * f, med * f, hi * f)
    m = compare_records(rec(*a), b)
    assert m.verdict == ("tie" if lo * f <= hi else "slower")
