"""bincount and the privatization kernels on the GPU: exact counts against NumPy for every key dtype, odd sizes,
misaligned keys, a second pass, the errors; each experiment variant on each key distribution."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gpumemlab.errors import UsageError

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.ensure_device()
    return cupy


DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"]


def host_keys(n: int, high: int, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(n) < 0.3
    return rng.integers(0, high, n).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 1000, 1000003])
def test_bincount_equals_numpy(cp, dtype, n):
    import gpumemlab

    high = {1: 100, 2: 3000}.get(np.dtype(dtype).itemsize, 5000)  # above the first pass's bins for 16-bit+ keys
    host = host_keys(n, high, dtype, n)
    for x, h in ((cp.asarray(host), host), (cp.asarray(host)[1:], host[1:])):  # aligned and 1 element off
        if h.size == 0:
            continue
        got = gpumemlab.bincount(x)
        assert got.dtype == np.int64 and np.array_equal(got.get(), np.bincount(h))
        wide = gpumemlab.bincount(x, minlength=int(h.max()) + 17)
        assert np.array_equal(wide.get(), np.bincount(h, minlength=int(h.max()) + 17))


def test_bincount_of_nothing_and_the_largest_int8(cp):
    import gpumemlab

    assert gpumemlab.bincount(cp.empty(0, cp.int32)).size == 0
    assert np.array_equal(gpumemlab.bincount(cp.empty(0, cp.int32), minlength=3).get(), [0, 0, 0])
    x = np.array([127, 0, 127], np.int8)
    assert np.array_equal(gpumemlab.bincount(cp.asarray(x)).get(), np.bincount(x))


@pytest.mark.parametrize("dtype, bad, text", [
    ("int32", -1, "x: bincount needs non-negative keys"),
    ("int8", -128, "x: bincount needs non-negative keys"),
    ("int64", -(2**63), "x: bincount needs non-negative keys"),
    ("uint64", 2**63, "x: a key is 2^63 or more"),
])
def test_bincount_refuses_negative_keys(cp, dtype, bad, text):
    import gpumemlab

    x = cp.asarray(np.array([3, bad, 5] * 1000, dtype=dtype))
    with pytest.raises(UsageError, match="^" + re.escape(text)):
        gpumemlab.bincount(x)


def test_bincount_refuses_a_key_that_needs_more_than_memory(cp):
    import gpumemlab

    with pytest.raises(UsageError, match=r"^x: its largest key needs .* more than the GPU's free memory"):
        gpumemlab.bincount(cp.asarray(np.array([1, 2**62], np.int64)))


def test_bincount_refuses_2d_and_float(cp):
    import gpumemlab
    from gpumemlab.errors import InputTypeError

    with pytest.raises(UsageError, match=r"^x: expected a 1-D array"):
        gpumemlab.bincount(cp.zeros((2, 2), cp.int32))
    with pytest.raises(InputTypeError, match=r"^x: dtype float32 not supported"):
        gpumemlab.bincount(cp.zeros(4, cp.float32))


@pytest.mark.parametrize("bins", [256, 4096, 20000])
@pytest.mark.parametrize("distribution", ["uniform", "skewed", "constant"])
def test_every_variant_counts_exactly(cp, bins, distribution):
    from gpumemlab.experiments.histogram import kernel_run, keys
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import histogram as K
    from gpumemlab.ops.histogram import choose

    n = (1 << 20) + 3
    x = keys(n, bins, distribution, 11)
    want = cp.bincount(x, minlength=bins).get()
    top = int(x.max()) + 1
    for variant in K.LADDER:
        if variant.private == "warp" and choose(bins, 1 << 30) != K.WARP_PRIVATE:
            continue  # the per-warp copies of 20000 bins do not fit a block
        buf = cp.full(bins + 2, -7, cp.int64)  # poisoned: run() zeroes it
        kernel_run(variant, x, bins, buf, 2 * runtime.device_info()["sm_count"])[0]()
        got = buf.get()
        assert np.array_equal(got[:bins], want), variant.label
        assert list(got[bins:]) == [top, 0], variant.label
