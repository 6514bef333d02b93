"""The per-element error bounds of bench/verify.py that the GPU tests check kernels with (no GPU): float32 results
computed in other orders stay within them, one wrong element does not."""

from __future__ import annotations

import numpy as np
import pytest

from gpumemlab.bench.verify import check_within, gamma, matmul_bound, random_nonzero, sum_bound
from gpumemlab.errors import VerificationError

U32 = 2.0**-24


def test_gamma_is_n_u_over_one_minus_n_u():
    assert gamma(1, np.float32) == U32 / (1 - U32)
    assert gamma(1023, np.float32) == 1023 * U32 / (1 - 1023 * U32)
    assert gamma(10, np.float64) == 10 * 2.0**-53 / (1 - 10 * 2.0**-53)
    with pytest.raises(ValueError, match="n u >= 1"):
        gamma(1 << 24, np.float32)


def sequential_matmul(a, b):
    """C = A B in float32, one product and one addition at a time (k order): the order a naive kernel uses."""
    c = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for p in range(a.shape[1]):
        c = (c + a[:, p:p + 1] * b[p:p + 1, :]).astype(np.float32)
    return c


@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (7, 5, 300), (40, 30, 1023)])
def test_float32_products_in_two_orders_are_within_the_matmul_bound(m, n, k):
    gen = np.random.default_rng(k)
    a, b = random_nonzero((m, k), np.float32, gen), random_nonzero((k, n), np.float32, gen)
    want, bound = a.astype(np.float64) @ b, matmul_bound(a, b)
    assert bound.shape == (m, n) and (bound > 0).all()
    for got in (a @ b, sequential_matmul(a, b)):  # BLAS order and k order
        check_within(got, want, bound, what="float32 product")


def test_one_missing_term_in_one_corner_is_beyond_the_matmul_bound():
    gen = np.random.default_rng(5)
    a, b = random_nonzero((40, 1023), np.float32, gen), random_nonzero((1023, 30), np.float32, gen)
    got = a @ b
    got[39, 29] -= a[39, 7] * b[7, 29]  # at least 0.25 off; the bound there is about 0.06
    with pytest.raises(VerificationError, match=r"1 of 1200 elements wrong; first at \(39, 29\)"):
        check_within(got, a.astype(np.float64) @ b, matmul_bound(a, b), what="one term missing")


@pytest.mark.parametrize("shape, axis", [((100_003,), None), ((300, 257), 0), ((3, 5001), 1), ((4, 6, 8), (0, 2))])
@pytest.mark.parametrize("mean", [False, True])
def test_float32_sums_in_two_orders_are_within_the_sum_bound(shape, axis, mean):
    x = random_nonzero(shape, np.float32, np.random.default_rng(1))
    want = x.astype(np.float64).mean(axis=axis) if mean else x.astype(np.float64).sum(axis=axis)
    bound = sum_bound(x, axis, mean=mean)
    assert np.shape(bound) == np.shape(want)
    n = x.size // max(np.size(want), 1)
    pairwise = x.mean(axis=axis, dtype=np.float32) if mean else x.sum(axis=axis, dtype=np.float32)
    axes = tuple(range(x.ndim)) if axis is None else tuple(np.atleast_1d(axis))
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = x.transpose(kept + list(axes)).reshape(np.shape(want) + (n,))  # the reduced sides last
    sequential = np.zeros(np.shape(want), np.float32)
    for i in range(n):  # one addition at a time: the worst order for rounding
        sequential = (sequential + moved[..., i]).astype(np.float32)
    if mean:
        sequential = (sequential / np.float32(n)).astype(np.float32)
    for got in (pairwise, sequential):
        check_within(got, want, bound, what="float32 sum")


def test_a_sum_missing_one_element_is_beyond_the_sum_bound():
    """At n = 1000 the bound is about 0.06 and each element at least 0.5; it grows as n^2 u, so large sums are
    checked on integer-valued inputs, exactly (tests/gpu/test_lean_path.py)."""
    x = random_nonzero((1000,), np.float32, np.random.default_rng(2))
    assert sum_bound(x) < 0.5
    with pytest.raises(VerificationError, match="1 of 1 elements wrong"):
        check_within(np.float32(x[1:].sum()), x.astype(np.float64).sum(), sum_bound(x), what="one element missing")


def test_nan_is_never_within_a_bound():
    with pytest.raises(VerificationError, match="non-finite"):
        check_within(np.array([1.0, np.nan], np.float32), np.array([1.0, 2.0]), np.array([1e9, 1e9]), what="poison")
