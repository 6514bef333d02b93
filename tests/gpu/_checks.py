"""How every GPU test checks a kernel's output (one helper, not copies): the output poisoned before every call, every
element compared with an independent reference computed in float64 (integers: exactly) within that element's own
error bound, and what lies beyond the written region compared with the poison it was given.

Bounds (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 3.1 and 4.2), with u the unit roundoff of
the accumulation precision and gamma_n = n u / (1 - n u):
  - a sum of n terms, in any order (tree, splits, atomics): |s - s64| <= gamma_(n-1) sum|x|;
  - each element of a product of k-term dot products:        |C - C64| <= gamma_k (|A| @ |B|);
  - a mean: the sum's bound divided by n, plus the roundings of the division (and of n itself): gamma_(n+2).
The float64 reference has its own error, gamma of the same n in float64, added to the bound. The inputs of the
tests are non-zero and of mixed sign, so a missing, doubled or misplaced term is far outside these bounds.

Works on NumPy and CuPy arrays alike (a CuPy input keeps the reference and the comparison on the GPU)."""

from __future__ import annotations

import numpy as np

INT_POISON = -0x5A5A5A5A  # no test input is this value


def array_module(*arrays):
    """cupy if any of ``arrays`` is a CuPy array, else numpy."""
    for a in arrays:
        if type(a).__module__.split(".")[0] == "cupy":
            import cupy

            return cupy
    return np


def gamma(n: int, dtype) -> float:
    """gamma_n = n u / (1 - n u) for u = eps / 2 of ``dtype`` (n >= 1)."""
    nu = max(int(n), 1) * float(np.finfo(dtype).eps) / 2
    assert nu < 1, f"gamma({n}) undefined for {np.dtype(dtype).name}"
    return nu / (1 - nu)


FINITE_POISON = -1.2345678e37  # for outputs that may rightly be NaN: no test's output is this finite value


def poison_value(dtype, finite: bool = False):
    """NaN for floats (``finite``: FINITE_POISON, for outputs that may rightly be NaN), INT_POISON for signed
    integers, the largest value for unsigned ones."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return dtype.type(FINITE_POISON) if finite else np.nan
    if dtype.kind == "i":
        return INT_POISON if dtype.itemsize >= 4 else np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    raise TypeError(f"no poison for {dtype}")


def poison(*arrays, finite: bool = False) -> None:
    """Fill each array with its dtype's poison: an element a kernel leaves unwritten then shows."""
    for a in arrays:
        a.fill(poison_value(a.dtype, finite))


def poisoned(xp, shape, dtype, finite: bool = False):
    """A new array of ``shape`` filled with poison (an ``out=`` for the call under test)."""
    a = xp.empty(shape, dtype)
    poison(a, finite=finite)
    return a


def _host(a) -> np.ndarray:
    get = getattr(a, "get", None)
    return np.asarray(get() if callable(get) else a)


def _fail(what: str, bad, got, want, bound=None) -> None:
    xp = array_module(bad)
    nbad = int(xp.count_nonzero(bad))
    if not nbad:
        return
    shape = bad.shape
    flat = int(xp.argmax(bad.ravel()))
    idx = tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()

    def at(a):
        return None if a is None else _host(a if np.ndim(a) == 0 else a[idx] if np.shape(a) == shape else
                                             np.broadcast_to(_host(a), shape)[idx]).item()
    extra = "" if bound is None else f" +- {at(bound):.3g}"
    raise AssertionError(f"{what}: {nbad} of {bad.size} elements wrong; first at {idx}: got {at(got)!r}, "
                         f"expected {at(want)!r}{extra}")


def _same_shape(got, want, what: str) -> None:
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)} != expected {tuple(want.shape)}"


def expect_equal(got, want, what: str) -> None:
    """Every element equal (a poison value never equals a written one: NaN != NaN; the integer poison is chosen
    outside the inputs' values)."""
    xp = array_module(got, want)
    got, want = xp.asarray(got), xp.asarray(want)
    _same_shape(got, want, what)
    _fail(what, ~(got == want), got, want)


def expect_within(got, want, bound, what: str) -> None:
    """|got - want| <= bound element by element (``bound`` broadcast against ``want``); NaN or inf never passes."""
    xp = array_module(got, want, bound)
    got, want = xp.asarray(got), xp.asarray(want)
    _same_shape(got, want, what)
    g = got.astype(xp.float64)
    ok = xp.isfinite(g) & (xp.abs(g - want) <= xp.asarray(bound))  # NaN compares False
    _fail(what, ~ok, got, want, bound)


NARROWED_INPUTS = 2.0**-13  # ||C - C64|| / ||C64||: FP32 sums of random signs stay far below; TF32 inputs near 3e-4


def expect_matmul(got, a, b=None, what: str = "matmul", acc=np.float32) -> None:
    """C = A B (B None: A A^T) element by element against C64 computed in float64: |C - C64| <= gamma_k |A| @ |B|
    for k-term dot products accumulated in ``acc``. Inputs rounded to a narrower format first (TF32: 2^-11) stay
    inside that worst-case bound for large k, so the typical error is bounded too (NARROWED_INPUTS)."""
    xp = array_module(got, a, b)
    a64 = xp.asarray(a).astype(xp.float64)
    b64 = a64.T if b is None else xp.asarray(b).astype(xp.float64)
    k = a64.shape[1]
    want = a64 @ b64
    bound = (gamma(k, acc) + gamma(k, np.float64)) * (xp.abs(a64) @ xp.abs(b64))
    expect_within(got, want, bound, what)
    if want.size and acc == np.float32:
        rel = float(xp.linalg.norm(xp.asarray(got).astype(xp.float64) - want)) / (float(xp.linalg.norm(want)) or 1.0)
        assert rel <= NARROWED_INPUTS, f"{what}: ||C - C64|| / ||C64|| = {rel:.3e}: not FP32 accuracy (narrowed inputs?)"


def _terms(shape, axis) -> int:
    if axis is None:
        return int(np.prod(shape))
    return int(np.prod([shape[i] for i in np.atleast_1d(axis)]))


def expect_sum(got, x, axis=None, what: str = "sum", acc=None, mean: bool = False, keepdims: bool = False,
               exact_sums: bool = False) -> None:
    """A sum (or mean) of ``x`` along ``axis``: integers exactly (int64); floats element by element within
    gamma_(n-1) sum|x| of the float64 sum (a mean: gamma_(n+2) sum|x| / n), ``acc`` the accumulation precision
    (default: x's dtype). ``exact_sums``: integer-valued floats whose partial sums are all exact in ``acc`` (below
    2^24 for float32): the sum must equal the float64 one, a mean be within its division's roundings, gamma_3 |mean|
    (a worst-case bound of a large sum could not promise to catch one wrong term)."""
    xp = array_module(got, x)
    x = xp.asarray(x)
    n = _terms(x.shape, axis)
    if x.dtype.kind in "iub" and not mean:
        expect_equal(got, x.astype(xp.int64).sum(axis=axis, keepdims=keepdims), what)
        return
    acc = np.dtype(acc or (x.dtype if x.dtype.kind == "f" else np.float64))
    x64 = x.astype(xp.float64)
    total = x64.sum(axis=axis, keepdims=keepdims)
    spread = xp.abs(x64).sum(axis=axis, keepdims=keepdims)
    if exact_sums:
        assert (float(spread.max()) if spread.size else 0.0) < 2.0 ** (np.finfo(acc).nmant + 1), f"{what}: partial sums not exact"
        if mean:
            expect_within(got, total / max(n, 1), gamma(3, acc) * xp.abs(total / max(n, 1)), what)
        else:
            expect_equal(got, total, what)
        return
    if mean:
        want, bound = total / max(n, 1), (gamma(n + 2, acc) + gamma(n + 2, np.float64)) * spread / max(n, 1)
    else:
        want, bound = total, (gamma(n - 1, acc) + gamma(n - 1, np.float64)) * spread
    expect_within(got, want, bound, what)


def expect_poison(a, what: str, where=None, finite: bool = False) -> None:
    """Every element of ``a`` (or of ``a[where]``: a slice, an index or a mask) still holds its dtype's poison
    (``finite``: the finite one): nothing was written there."""
    xp = array_module(a)
    part = xp.asarray(a if where is None else a[where])
    value = poison_value(part.dtype, finite)
    kept = xp.isnan(part) if part.dtype.kind == "f" and not finite else part == value
    _fail(f"{what} (must keep its poison)", ~kept, part, xp.full(part.shape, value, part.dtype))


def expect_tail(buf, written: int, what: str) -> None:
    """``buf`` viewed flat: its first ``written`` elements were the call's to write, every later one keeps the
    poison."""
    expect_poison(buf.reshape(-1), what, slice(int(written), None))


def run_poisoned(out, call, *outs):
    """Poison ``out`` (and any more ``outs``), then ``call()``: for every call, repeated same-shape calls included,
    so that a call that writes nothing cannot pass on the previous call's correct result."""
    poison(out, *outs)
    return call()


TEXTURE_WEIGHT = 1.0 / 256  # the texture unit's filtering weights: 8 fractional bits (CUDA Programming Guide, F.2)


def expect_texture_sample(got, host, rc, address: str, linear: bool, what: str) -> None:
    """A texture unit's 2-D sampling of ``host`` at (row, col) points ``rc``, element by element against the float64
    reference (gpumemlab.experiments.texture.reference_sample). Linear: within (2 w + 2 w^2) of the spread of the
    four texels blended (w = TEXTURE_WEIGHT: each weight off by less than w), plus float32 rounding. Nearest: the
    reference's texel, or for a point within 1.5 w of a tie, a texel that a coordinate that far off picks."""
    from gpumemlab.experiments.texture import reference_sample

    got = _host(got).astype(np.float64)
    rc = _host(rc).astype(np.float64)
    assert got.shape == rc.shape[:-1], f"{what}: shape {got.shape} != expected {rc.shape[:-1]}"
    if linear:
        base = np.floor(rc)
        texels = np.stack([reference_sample(host, base + [dr, dc], address, False) for dr in (0, 1) for dc in (0, 1)])
        spread = texels.max(axis=0) - texels.min(axis=0)
        want = reference_sample(host, rc, address, True)
        bound = (2 * TEXTURE_WEIGHT + 2 * TEXTURE_WEIGHT**2) * spread + 4 * 2.0**-24 * np.abs(texels).max(axis=0)
        expect_within(got, want, bound, what)
        return
    step = 1.5 * TEXTURE_WEIGHT
    picks = np.stack([reference_sample(host, rc + [dr * step, dc * step], address, False)
                      for dr in (-1, 0, 1) for dc in (-1, 0, 1)])
    ok = (picks == got).any(axis=0)
    _fail(what, ~ok, got, picks[4])
