"""The GPU tests' output checks (tests/gpu/_checks.py) on NumPy arrays, without a GPU: each accepts a correctly
rounded result and rejects one wrong, unwritten or out-of-bounds element."""

import numpy as np
import pytest

import _checks as C


def _operands(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    sign = lambda s: np.where(rng.random(s) < 0.5, -1.0, 1.0)  # noqa: E731
    a = (sign((m, k)) * (0.5 + rng.random((m, k)))).astype(np.float32)
    b = (sign((k, n)) * (0.5 + rng.random((k, n)))).astype(np.float32)
    return a, b


def test_gamma_is_n_u_over_one_minus_n_u():
    u = 2.0**-24
    assert C.gamma(1000, np.float32) == 1000 * u / (1 - 1000 * u)
    assert C.gamma(0, np.float32) == u / (1 - u)  # n < 1 counts as one rounding
    with pytest.raises(AssertionError, match="undefined for float32"):
        C.gamma(1 << 24, np.float32)


def test_poison_values_and_poisoned_arrays():
    assert np.isnan(C.poison_value(np.float32)) and C.poison_value(np.int32) == -0x5A5A5A5A
    assert C.poison_value(np.uint8) == 255 and C.poison_value(np.int8) == -128
    a = C.poisoned(np, (2, 3), np.int64)
    assert a.shape == (2, 3) and (a == -0x5A5A5A5A).all()
    f = C.poisoned(np, 3, np.float32, finite=True)
    assert (f == np.float32(-1.2345678e37)).all()
    C.expect_poison(f, "finite", finite=True)
    f[1] = np.nan  # a NaN where the finite poison was: written
    with pytest.raises(AssertionError, match=r"first at \(1,\): got nan"):
        C.expect_poison(f, "finite", finite=True)
    with pytest.raises(TypeError, match="no poison for complex64"):
        C.poison_value(np.complex64)


def test_matmul_check_takes_a_float32_product_and_rejects_one_missing_term():
    a, b = _operands(120, 77, 301)
    c = a @ b  # float32 BLAS, any order
    C.expect_matmul(c, a, b, "float32 product")
    C.expect_matmul(a @ a.T, a, None, "A A^T")
    wrong = c.copy()
    wrong[119, 76] -= a[119, 5] * b[5, 76]  # one term of 301 missing in the last corner
    with pytest.raises(AssertionError, match=r"^one term: 1 of 9240 elements wrong; first at \(119, 76\)"):
        C.expect_matmul(wrong, a, b, "one term")
    wrong = c.copy()
    wrong[0, 0] = np.nan
    with pytest.raises(AssertionError, match=r"1 of 9240 elements wrong; first at \(0, 0\): got nan"):
        C.expect_matmul(wrong, a, b, "unwritten")
    with pytest.raises(AssertionError, match=r"shape \(77, 120\) != expected \(120, 77\)"):
        C.expect_matmul(c.T, a, b, "transposed")


def test_matmul_bound_is_per_element_not_a_norm():
    """A product of the float64 result rounded to float32 passes; the same error on one element of a row with small
    |A||B| fails while the Frobenius-norm error stays about 1e-6 of ||A|| ||B||."""
    a, b = _operands(64, 64, 64, seed=3)
    a[7] *= 1e-3  # row 7: |A||B| a thousandth of the others
    c = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    C.expect_matmul(c, a, b, "rounded")
    bound7 = C.gamma(64, np.float32) * (np.abs(a[7]).astype(np.float64) @ np.abs(b[:, 3]))
    c[7, 3] += np.float32(4 * bound7)
    with pytest.raises(AssertionError, match=r"first at \(7, 3\)"):
        C.expect_matmul(c, a, b, "row 7")


def test_matmul_check_rejects_tf32_rounded_inputs():
    a, b = _operands(16, 16, 4096, seed=4)  # deep k: the elementwise worst-case bound alone passes TF32 here

    def tf32(x):
        return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)

    c = tf32(a) @ tf32(b)
    with pytest.raises(AssertionError, match=r"^tf32: \|\|C - C64\|\| / \|\|C64\|\| = .*not FP32 accuracy"):
        C.expect_matmul(c, a, b, "tf32")


def test_sum_check_any_order_and_one_term_off():
    a, _ = _operands(7, 1, 1001, seed=1)  # the bound, about 0.06 here, is below the smallest term (0.5)
    s = a.sum(axis=1)  # float32 pairwise
    C.expect_sum(s, a, axis=1)
    C.expect_sum(np.float32(a.ravel().sum()), a)
    C.expect_sum(np.cumsum(a, axis=1, dtype=np.float32)[:, -1], a, axis=1)  # sequential order, the worst case
    s[3] += np.float32(0.5)  # less than the smallest term
    with pytest.raises(AssertionError, match=r"^rows: 1 of 7 elements wrong; first at \(3,\)"):
        C.expect_sum(s, a, axis=1, what="rows")


def test_mean_check_within_a_few_roundings():
    x, _ = _operands(4, 1, 1000, seed=2)
    m = x.mean(axis=1, dtype=np.float32)
    C.expect_sum(m, x, axis=1, mean=True, keepdims=False)
    one_term_short = (x[:, 1:].sum(axis=1, dtype=np.float64) / 1000).astype(np.float32)
    with pytest.raises(AssertionError, match="4 of 4 elements wrong"):
        C.expect_sum(one_term_short, x, axis=1, mean=True)
    # the bound of a mean of 1000 float32 terms: 6e-5 of mean|x|, well below one term's share (0.5 / 1000)
    off = m.copy()
    off[2] += np.float32(2e-4)
    with pytest.raises(AssertionError, match=r"first at \(2,\)"):
        C.expect_sum(off, x, axis=1, mean=True)


def test_integer_valued_float_sums_are_exact_and_their_means_within_three_roundings():
    x = np.tile(np.array([3, -7, 9, -1, 5], np.float32), (3, 2000))  # row sums exact in float32
    C.expect_sum(x.sum(axis=1), x, axis=1, exact_sums=True)
    with pytest.raises(AssertionError, match=r"first at \(1,\): got 17999.0, expected 18000.0"):
        C.expect_sum(x.sum(axis=1) - np.array([0, 1, 0], np.float32), x, axis=1, exact_sums=True)
    m = x.mean(axis=1, dtype=np.float32)
    C.expect_sum(m, x, axis=1, mean=True, exact_sums=True)
    with pytest.raises(AssertionError, match="3 of 3 elements wrong"):  # one term of 10000 missing
        C.expect_sum((x[:, 1:].sum(axis=1) / 10_000).astype(np.float32), x, axis=1, mean=True, exact_sums=True)
    with pytest.raises(AssertionError, match="partial sums not exact"):
        C.expect_sum(np.float32(0), np.full(1 << 22, 5, np.float32), exact_sums=True)


def test_integer_sums_are_exact():
    x = np.arange(-50, 50, dtype=np.int32).reshape(10, 10)
    C.expect_sum(x.sum(axis=0), x, axis=0)
    C.expect_sum(x.sum(axis=(0, 1), keepdims=True), x, axis=(0, 1), keepdims=True)
    with pytest.raises(AssertionError, match=r"first at \(4,\): got -11, expected -10"):
        C.expect_sum(x.sum(axis=0) - (np.arange(10) == 4), x, axis=0)


def test_equal_rejects_nan_and_the_poison():
    want = np.arange(6, dtype=np.float32)
    C.expect_equal(want.copy(), want, "same")
    got = want.copy()
    got[5] = np.nan
    with pytest.raises(AssertionError, match=r"first at \(5,\): got nan, expected 5.0"):
        C.expect_equal(got, want, "nan")
    ints = np.arange(4, dtype=np.int32)
    with pytest.raises(AssertionError, match="got -1515870810"):
        C.expect_equal(np.where(ints == 2, C.INT_POISON, ints), ints, "poison")


def test_tail_and_untouched_regions_keep_their_poison():
    buf = C.poisoned(np, 10, np.float32)
    buf[:7] = 1.0
    C.expect_tail(buf, 7, "buf")
    buf[8] = 0.0  # one element past the written region
    with pytest.raises(AssertionError, match=r"^buf \(must keep its poison\): 1 of 3 elements wrong; first at \(1,\)"):
        C.expect_tail(buf, 7, "buf")
    ints = C.poisoned(np, (3, 4), np.int32)
    ints[:, :2] = 5
    C.expect_poison(ints, "cols", (slice(None), slice(2, None)))
    ints[2, 3] = 0
    with pytest.raises(AssertionError, match=r"first at \(2, 1\)"):
        C.expect_poison(ints, "cols", (slice(None), slice(2, None)))


def test_run_poisoned_poisons_before_every_call():
    out = np.zeros(4, np.float32)
    seen = []
    C.run_poisoned(out, lambda: seen.append(np.isnan(out).all()))
    out[:] = 1.0
    C.run_poisoned(out, lambda: seen.append(np.isnan(out).all()))
    assert seen == [True, True]


def test_texture_sample_check_per_element():
    from gpumemlab.experiments.texture import reference_sample

    rng = np.random.default_rng(0)
    host = (rng.random((20, 30)) + 0.5).astype(np.float32)
    rc = np.stack([rng.uniform(-2, 21, 400), rng.uniform(-2, 31, 400)], -1).astype(np.float32)
    want = reference_sample(host, rc, "clamp", True)
    # weights rounded to 8 fractional bits, as the texture unit does
    q = np.floor(rc.astype(np.float64)) + np.round((rc - np.floor(rc)) * 256) / 256
    C.expect_texture_sample(reference_sample(host, q, "clamp", True).astype(np.float32), host, rc, "clamp", True, "8-bit")
    off = want.astype(np.float32)
    off[17] += np.float32(0.02)  # within a global 0.03, beyond this point's own bound
    with pytest.raises(AssertionError, match=r"first at \(17,\)"):
        C.expect_texture_sample(off, host, rc, "clamp", True, "off")
    near = reference_sample(host, rc, "clamp", False).astype(np.float32)
    C.expect_texture_sample(near, host, rc, "clamp", False, "nearest")
    near[3] = reference_sample(host, rc[3] + [3.0, 0.0], "clamp", False)  # three rows away: another texel
    with pytest.raises(AssertionError, match=r"first at \(3,\)"):
        C.expect_texture_sample(near, host, rc, "clamp", False, "nearest")
