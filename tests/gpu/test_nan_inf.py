"""NaN and Inf inputs for every public function, against references that do not use our kernels.

sum: IEEE / NumPy propagation (a NaN -> NaN, +Inf and -Inf -> NaN, one sign of Inf -> that Inf, float32
overflow -> Inf). matmul: each output is an IEEE sum of products, so the rows of A and columns of B that touch a
NaN give NaN, Inf times a non-zero gives a signed Inf, Inf - Inf and Inf * 0 give NaN (reference: the products
formed elementwise in float64 on the host, no BLAS). transpose and copy move bits: NaN payloads (signalling ones
too), +-Inf and -0.0 come out bit for bit.
"""

import _checks as C
import numpy as np
import pytest

pytestmark = pytest.mark.gpu

UINT = {4: np.uint32, 8: np.uint64}
# quiet NaN, a negative NaN with a payload, a signalling NaN with a payload, +Inf, -Inf, -0.0
SPECIAL_BITS = {np.float32: [0x7FC00000, 0xFFC00001, 0x7FA5A5A5, 0x7F800000, 0xFF800000, 0x80000000],
                np.float64: [0x7FF8000000000000, 0xFFF8000000000001, 0x7FF4A5A5A5A5A5A5, 0x7FF0000000000000,
                             0xFFF0000000000000, 0x8000000000000000]}


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.work_stream()
    return cupy


def host(shape, dtype, seed=0):
    from gpumemlab.bench.verify import random_nonzero

    return random_nonzero(shape, dtype, np.random.default_rng(seed))


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(UINT[a.dtype.itemsize])


def with_specials(shape, dtype, seed=0) -> np.ndarray:
    """Random non-zero data with every special value at the first, last and some scattered positions."""
    x = host(shape, dtype, seed)
    flat = bits(x.reshape(-1))
    specials = np.array(SPECIAL_BITS[dtype], dtype=UINT[np.dtype(dtype).itemsize])
    pos = np.random.default_rng(seed + 1).choice(flat.size, size=min(flat.size, 4 * specials.size), replace=False)
    pos[:2] = [0, flat.size - 1] if flat.size > 1 else [0, 0]
    flat[pos] = np.resize(specials, pos.size)
    return x


# ------------------------------------------------------------------ transpose and copy: bit for bit

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 128), (33, 65), (1, 37), (4097, 31)])  # vectorized and fallback kernels
def test_transpose_moves_nan_and_inf_bit_for_bit(cp, dtype, shape):
    import gpumemlab

    x = with_specials(shape, dtype, seed=sum(shape))
    got = gpumemlab.transpose(cp.asarray(x)).get()
    np.testing.assert_array_equal(bits(got), bits(np.ascontiguousarray(x.T)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [6, 1001, 100_003])  # the float4 kernel plus a cudaMemcpy tail (none for 6 doubles)
@pytest.mark.parametrize("offset", [0, 1])          # offset 1: a view off 16-byte alignment, the cudaMemcpy path
@pytest.mark.parametrize("into", ["new", "out"])
def test_copy_moves_nan_and_inf_bit_for_bit(cp, dtype, n, offset, into):
    import gpumemlab

    x = with_specials(n + offset, dtype, seed=n)
    src = cp.asarray(x)[offset:]
    if into == "out":  # a finite poison: an unwritten element cannot pass for a NaN of the input
        out = C.poisoned(cp, n + offset + 3, dtype, finite=True)
        got = gpumemlab.copy(src, out=out[offset:offset + n])
        assert got.data.ptr == out[offset:].data.ptr
        C.expect_poison(out[:offset], "before the out view", finite=True)
        C.expect_poison(out[offset + n:], "past the out view", finite=True)
    else:
        got = gpumemlab.copy(src)
    np.testing.assert_array_equal(bits(got.get()), bits(x[offset:]))


# ------------------------------------------------------------------ sum: IEEE propagation, as NumPy

SUM_SIZES = [1, 1000, 16_384, 16_385, 100_003, (1 << 20) + 9]  # single block up to 16384, then reduce7


def _sum_case(x: np.ndarray, case: str, where: np.ndarray) -> None:
    if case == "nan":
        x[where[0]] = np.nan
    elif case == "nan_payload":
        bits(x)[where[0]] = SPECIAL_BITS[x.dtype.type][2]
    elif case == "+inf":
        x[where] = np.inf
    elif case == "-inf":
        x[where] = -np.inf
    elif case == "+inf_and_-inf":
        x[where[0]], x[where[-1]] = np.inf, -np.inf
    elif case == "nan_and_inf":
        x[where[0]], x[where[-1]] = np.inf, np.nan
    elif case == "overflow":  # finite inputs whose float32 sum overflows
        x[where] = np.finfo(x.dtype).max / 2 * 1.5


SUM_CASES = [(n, case) for n in SUM_SIZES
             for case in ("nan", "nan_payload", "+inf", "-inf", "+inf_and_-inf", "nan_and_inf", "overflow")
             if n > 1 or case in ("nan", "nan_payload", "+inf", "-inf")]  # the last three need two elements


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n,case", SUM_CASES)
@pytest.mark.parametrize("at", ["first", "last", "spread"])
def test_sum_propagates_nan_and_inf_like_numpy(cp, dtype, n, case, at):
    import gpumemlab

    offset = 1  # misaligned: the head and tail elements of the vector pass get specials too
    base = host(n + offset, dtype, seed=n)
    x = base[offset:]
    where = {"first": np.array([0, 1]), "last": np.array([n - 2, n - 1]),
             "spread": np.linspace(0, n - 1, 5).astype(np.int64)}[at]
    where = np.unique(np.clip(where, 0, n - 1))  # distinct positions: two-value cases never overwrite one
    _sum_case(x, case, where)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.sum(dtype=dtype)  # NumPy, accumulating in the input dtype as gpumemlab.sum does
    assert not np.isfinite(want), "the case must make the sum non-finite"
    out = cp.full((), 1.0, dtype)  # a finite sentinel: a kernel that writes nothing leaves 1.0
    got = gpumemlab.sum(cp.asarray(base)[offset:], out=out).get()
    if np.isnan(want):
        assert np.isnan(got), (case, got)
    else:
        assert got == want, (case, got, want)  # the same signed Inf


# ------------------------------------------------------------------ matmul: IEEE sums of products

def ieee_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = A B with every product formed elementwise in float64 (no BLAS: no zero skipping, no reordering tricks)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return (a.astype(np.float64)[:, :, None] * b.astype(np.float64)[None, :, :]).sum(axis=1)


def check_against_ieee(got: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    want = ieee_product(a, b)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])  # same positions, same signs
    assert not np.isinf(got[~inf]).any()
    fin = np.isfinite(want)
    # |fl(a.b) - a.b| <= gamma_k |a|.|b| (Higham, Accuracy and Stability, eq. 3.5), any summation order
    clean = lambda m: np.where(np.isfinite(m), np.abs(m), 0).astype(np.float64)  # noqa: E731
    bound = C.gamma(a.shape[1], np.float32) * (clean(a) @ clean(b))
    C.expect_within(got[fin], want[fin], bound[fin], "finite outputs")


def matmul_operands(m, n, k, seed, case):
    a, b = host((m, k), np.float32, seed), host((k, n), np.float32, seed + 1)
    if case == "nan":
        a[m // 2, k // 3] = np.nan
        b[k - 1, n - 1] = np.nan
    elif case == "inf":
        a[0, k - 1] = np.inf
        b[0, n // 2] = -np.inf
    elif case == "inf_minus_inf":  # one row meets +Inf and -Inf in the same dot products
        a[m - 1, 0], a[m - 1, k - 1] = np.inf, np.inf
        b[0, :] = np.abs(b[0, :])
        b[k - 1, : n // 2] = -np.abs(b[k - 1, : n // 2])
    elif case == "inf_times_zero":
        a[1 % m, 2 % k] = -np.inf
        b[2 % k, :: 3] = 0.0
    return a, b


MATMUL_CASES = ["nan", "inf", "inf_minus_inf", "inf_times_zero"]


def _ab_variants():
    from gpumemlab.kernels.matmul import AB_VARIANTS

    return ("auto",) + AB_VARIANTS


@pytest.mark.parametrize("case", MATMUL_CASES)
@pytest.mark.parametrize("variant", _ab_variants())
def test_matmul_every_variant_propagates_nan_and_inf(cp, case, variant):
    import gpumemlab

    a, b = matmul_operands(64, 96, 32, seed=7, case=case)  # K = 32, M, N multiples of 32: every variant runs
    out = C.poisoned(cp, (64, 96), cp.float32, finite=True)  # finite: an unwritten element never passes for a NaN
    gpumemlab.matmul(cp.asarray(a), cp.asarray(b), out=out, variant=variant)
    check_against_ieee(out.get(), a, b)


@pytest.mark.parametrize("case", MATMUL_CASES)
@pytest.mark.parametrize("shape,vec,splits", [((70, 90, 110), None, None), ((1, 5, 3), None, None),
                                              ((136, 72, 1000), 4, 2), ((67, 45, 777), 1, 3)])
def test_matmul_odd_shapes_and_split_k_propagate_nan_and_inf(cp, case, shape, vec, splits):
    """Edge tiles (padding must not turn Inf into NaN or drop a NaN) and split-K (partials added into C)."""
    from gpumemlab.ops.matmul import launch as ops

    m, n, k = shape
    a, b = matmul_operands(m, n, k, seed=m, case=case)
    ad, bd = cp.asarray(a), cp.asarray(b)
    out = C.poisoned(cp, (m, n), cp.float32, finite=True)
    if splits is None:
        import gpumemlab

        gpumemlab.matmul(ad, bd, out=out)
    else:
        ops.register_blocked_plan(ad, bd, out, vec=vec, splits=splits).run()
    check_against_ieee(out.get(), a, b)
