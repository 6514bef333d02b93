"""Correctness before timing: random non-zero inputs, poisoned outputs, NaN never passes."""

from __future__ import annotations

import numpy as np

from ..errors import VerificationError

INT_POISON = -0x5A5A5A5A  # an int sentinel no test input produces


def rng(seed: int | None = None) -> np.random.Generator:
    return np.random.default_rng(seed)


def random_nonzero(shape, dtype, gen: np.random.Generator | None = None) -> np.ndarray:
    """Host data with no zeros: floats with |x| in [0.5, 1.5) and random sign; ints in +-[1, 9]."""
    gen = gen or rng()
    dtype = np.dtype(dtype)
    shape = (shape,) if np.isscalar(shape) else tuple(shape)
    sign = np.where(gen.random(shape) < 0.5, -1, 1)
    if dtype.kind == "f":
        return (sign * (0.5 + gen.random(shape))).astype(dtype)
    if dtype.kind in "iu":
        mag = gen.integers(1, 10, size=shape)
        return (mag if dtype.kind == "u" else sign * mag).astype(dtype)
    raise TypeError(f"random_nonzero: unsupported dtype {dtype}")


def poison(arr) -> None:
    """Fill a device or host array so that any element the kernel does not write is detected."""
    if arr.dtype.kind == "f":
        arr.fill(np.nan)
    elif arr.dtype.kind in "iu":
        arr.fill(INT_POISON if arr.dtype.kind == "i" else np.iinfo(arr.dtype).max)
    else:
        raise TypeError(f"poison: unsupported dtype {arr.dtype}")


def to_host(a) -> np.ndarray:
    get = getattr(a, "get", None)
    return np.asarray(get() if callable(get) else a)


BLOCK = 1 << 24  # elements compared at a time: gigabyte results are checked without gigabyte temporaries


def check_close(actual, expected, *, what: str, rtol: float = 0.0, atol=0.0) -> None:
    """Raise VerificationError unless ``actual`` matches ``expected`` elementwise (NaN fails).

    ``atol`` may be an array broadcast against ``expected`` (one tolerance per element)."""
    got = to_host(actual)
    want = np.asarray(expected)
    if got.shape != want.shape:
        raise VerificationError(f"{what}: shape {got.shape} != expected {want.shape}")
    flat_got, flat_want = got.reshape(-1), want.reshape(-1)
    tol = np.asarray(atol, dtype=np.float64)
    tol = tol if tol.ndim == 0 else np.broadcast_to(tol, want.shape).reshape(-1)
    if got.dtype.kind == "f":
        bad, first = _scan(flat_got.size, lambda lo, hi: ~np.isfinite(flat_got[lo:hi]))
        if bad:
            raise VerificationError(f"{what}: {bad} non-finite outputs (first at {_index(first, got.shape)}): "
                                    f"unwritten or wrong")
    exact = got.dtype.kind in "iu" and want.dtype.kind in "iu"

    def wrong(lo: int, hi: int) -> np.ndarray:
        g, w = flat_got[lo:hi], flat_want[lo:hi]
        if exact:
            return g != w
        w64 = w.astype(np.float64)
        return ~(np.abs(g.astype(np.float64) - w64) <= (tol if tol.ndim == 0 else tol[lo:hi]) + rtol * np.abs(w64))
    bad, first = _scan(flat_got.size, wrong)
    if bad:
        idx = _index(first, got.shape)
        raise VerificationError(f"{what}: {bad} of {got.size} elements wrong; first at {idx}: "
                                f"got {got[idx]!r}, expected {want[idx]!r}")


def _scan(size: int, flags) -> tuple[int, int | None]:
    """Count the elements ``flags(lo, hi)`` marks, block by block, and the flat index of the first one."""
    count, first = 0, None
    for lo in range(0, size, BLOCK):
        f = flags(lo, min(size, lo + BLOCK))
        n = int(np.count_nonzero(f))
        if n and first is None:
            first = lo + int(np.argmax(f))
        count += n
    return count, first


def _index(flat: int, shape) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


# ---------------------------------------------------------------- per-element error bounds (Higham, "Accuracy and
# Stability of Numerical Algorithms", 2nd ed., 3.1 and 4.2): any order of n floating-point operations on the terms

def gamma(n: int, dtype) -> float:
    """gamma_n = n u / (1 - n u), u = eps / 2 of ``dtype``: the relative error of n roundings."""
    nu = n * float(np.finfo(dtype).eps) / 2
    if nu >= 1:
        raise ValueError(f"gamma({n}) undefined for {np.dtype(dtype).name}: n u >= 1")
    return nu / (1 - nu)


def matmul_bound(a, b, dtype=np.float32, xp=np):
    """|C - A B| <= gamma_k |A| |B| elementwise, for C = A B (k = A's columns) computed in ``dtype`` in any order
    of its k products and additions (split-K, atomics, FMA included): the bound, in float64 (``xp``: numpy or
    cupy, the module of ``a`` and ``b``)."""
    k = a.shape[-1]
    return gamma(max(k, 1), dtype) * (xp.abs(a.astype(xp.float64)) @ xp.abs(b.astype(xp.float64)))


def sum_bound(x, axis=None, dtype=np.float32, mean: bool = False, xp=np):
    """|s - sum x| <= gamma_(n-1) sum |x| for s a sum of n terms of ``dtype`` in any order (a tree, splits, atomics);
    one more rounding for a mean's division, whose bound is then divided by n. Float64, shaped like the sum."""
    a = xp.abs(xp.asarray(x).astype(xp.float64))
    n = a.size if axis is None else int(np.prod([a.shape[i] for i in np.atleast_1d(axis)]))
    total = a.sum(axis=axis)
    if mean:
        return gamma(max(n, 1), dtype) * total / max(n, 1)
    return gamma(max(n - 1, 1), dtype) * total


def check_within(actual, expected, bound, *, what: str) -> None:
    """check_close with one absolute bound per element (``bound`` broadcast against ``expected``); NaN fails."""
    check_close(actual, expected, what=what, atol=to_host(bound))


def device_random_nonzero(shape, dtype, seed: int = 0):
    """Like :func:`random_nonzero`, generated on the GPU (for working sets of gigabytes)."""
    import cupy

    dtype = np.dtype(dtype)
    g = cupy.random.default_rng(seed)
    if dtype.kind == "f":
        mag = g.random(shape, dtype=np.float32 if dtype == np.float32 else np.float64) + 0.5
        sign = g.random(shape, dtype=np.float32) < 0.5
        return cupy.where(sign, -mag, mag).astype(dtype, copy=False)
    if dtype.kind in "iu":
        mag = g.integers(1, 10, size=shape, dtype=np.int32)
        if dtype.kind == "i":
            mag = cupy.where(g.random(shape, dtype=np.float32) < 0.5, -mag, mag)
        return mag.astype(dtype, copy=False)
    raise TypeError(f"device_random_nonzero: unsupported dtype {dtype}")


def check_equal_device(actual, expected, *, what: str) -> None:
    """Exact equality checked on the GPU (no host copy of a large result); NaN fails."""
    import cupy

    if actual.shape != expected.shape:
        raise VerificationError(f"{what}: shape {actual.shape} != expected {expected.shape}")
    bad = actual != expected  # NaN != anything, so unwritten (poisoned) floats fail here
    nbad = int(cupy.count_nonzero(bad))
    if nbad:
        first = int(cupy.argmax(bad.ravel()))
        raise VerificationError(f"{what}: {nbad} of {actual.size} elements wrong; first at flat index {first}: "
                                f"got {actual.ravel()[first].item()!r}, expected {expected.ravel()[first].item()!r}")
