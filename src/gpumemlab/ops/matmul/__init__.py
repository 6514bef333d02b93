"""``gpumemlab.matmul``: C = A B in FP32 on CuPy arrays, by any rung of the seeds' ladder.

Faces over one engine: :mod:`.choice` (pure: a tuned table entry -> tiles and split-K factor), :mod:`.gemv` (the
memory-bound N = 1 and M <= 8 path), :mod:`.launch` (plans: the variant table's launch recipes, the register-blocked
launch) and the public function here (validation, then a launch prepared once per shape).

Edge cases follow NumPy: M == 0 or N == 0 gives an empty (M, N) result, K == 0 gives zeros.
``variant="auto"`` runs the GEMV kernels for N = 1 or M <= 8 and otherwise ``register_blocked`` with the
configuration chosen from this device's tuned table (``kernels/tuned/matmul.json``, written by ``gpumemlab tune
matmul``; an entry of the same chip under another name is borrowed) or a default one.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...errors import UsageError
from ...kernels import matmul as K
from .._checks import on_arrays_device
from .choice import Choice
from .gemv import GemvRun, gemv_launch
from .launch import MATMUL_VARIANTS, device_route, plan, rb_launcher

__all__ = ["Choice", "MATMUL_VARIANTS", "matmul", "plan", "validate"]


def _overlaps(x, y) -> bool:
    x0, y0 = x.data.ptr, y.data.ptr
    return x0 < y0 + y.nbytes and y0 < x0 + x.nbytes


_FLOAT32 = (np.float32,)


def validate(a, b, out=None, variant: str = "auto", config=None):
    """Check the arguments of :func:`matmul`; return (a, b, out-or-None) as CuPy arrays.

    InputTypeError (a TypeError): not a GPU array, dtype not float32. UsageError (a ValueError): unknown
    variant, not 2-D, inner dimensions differ, not C-contiguous, out of the wrong shape or overlapping an input,
    a ``config`` that is not a :class:`Choice` or with a variant other than "auto" / "register_blocked".
    """
    from .._checks import as_device_array, check_out

    if not isinstance(variant, str) or variant not in MATMUL_VARIANTS:
        raise UsageError(f"matmul: unknown variant {variant!r}; expected one of {', '.join(MATMUL_VARIANTS)}")
    if config is not None:
        if not isinstance(config, Choice):
            raise UsageError(f"matmul: config must be a gpumemlab.ops.matmul.Choice, not {type(config).__name__}")
        if variant not in ("auto", "register_blocked"):
            raise UsageError(f"matmul: config applies to variant 'auto' or 'register_blocked', not {variant!r}")
    a = as_device_array(a, "a", _FLOAT32, ndim=2)
    b = as_device_array(b, "b", _FLOAT32, ndim=2)
    if a.shape[1] != b.shape[0]:
        raise UsageError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not align "
                         f"(a.shape[1] = {a.shape[1]} != b.shape[0] = {b.shape[0]})")
    if out is not None:
        out = check_out(out, (a.shape[0], b.shape[1]), np.float32)
        if out.size and (_overlaps(out, a) or _overlaps(out, b)):
            raise UsageError("out: overlaps an input; pass a separate output array")
    return a, b, out


@lru_cache(maxsize=4096)
def _auto_launch(m: int, n: int, k: int, aligned: bool, device_name: str, config: Choice | None = None):
    """(prepared launch of ``out, a, b``, whether C is zeroed first) for variant "auto", once per shape, alignment
    class, device and explicit configuration; each call then only writes its pointers."""
    from ...gpu import runtime

    if config is None:
        r = device_route(m, n, k, aligned)
        if r.kind == "gemv":  # memory-bound: a warp per row of A (N = 1), or columns of B shared by M <= 8 rows
            return GemvRun(gemv_launch(m, n, k, aligned, int(runtime.device_info()["sm_count"]))), False
        config, vec = r.choice, (1 if r.kind == "scalar" else 4)
    else:
        vec = 4 if aligned and n % 4 == 0 and k % 4 == 0 else 1
    return rb_launcher(K.rb_launch(config.config, m, n, k, vec, config.splits))


@on_arrays_device
def matmul(a, b, out=None, variant: str = "auto", config: Choice | None = None):
    """``a @ b`` for float32 GPU arrays (M x K times K x N, row-major), into ``out`` if given.

    Args:
        variant: "auto" (the tuned register-blocked kernel, or the GEMV kernels for N = 1 or M <= 8) or a ladder
            name (``K.AB_VARIANTS``).
        config: a :class:`Choice` (register-blocked configuration and split-K factor) to run instead of the
            tuned table's choice; "auto" and "register_blocked" only.

    Returns:
        The (M, N) CuPy array. Runs on CuPy's current stream, so it is ordered like any CuPy operation around it.

    NaN and Inf: each output is an IEEE sum of products, as with cuBLAS: a NaN in row i of ``a`` or
    column j of ``b`` makes the outputs of that row / column NaN; Inf times a non-zero gives a signed
    Inf, Inf times 0 and Inf - Inf give NaN (no zero of the operands is skipped).
    """
    from .._checks import cupy_module

    a, b, out = validate(a, b, out, variant, config)
    m, k = a.shape
    n = b.shape[1]
    if out is None:
        out = cupy_module().empty((m, n), dtype=np.float32)
    if m == 0 or n == 0:
        return out
    if k == 0:
        out.fill(0)
        return out
    if variant == "auto" or config is not None:  # prepared once per shape; the call binds this call's arrays
        from ...gpu import runtime

        aligned = (a.data.ptr | b.data.ptr | out.data.ptr) % 16 == 0
        launch, zero = _auto_launch(m, n, k, aligned, runtime.device_info()["name"], config)
        if zero:  # split-K partial tiles are added into C
            runtime.zero(out)
        launch(out, a, b)
    else:
        plan(variant, a, b, out).run()
    return out
