"""``gpumemlab.matmul``: C = A B in FP32 on CuPy arrays, by any rung of the seeds' ladder.

Faces over one engine: :mod:`.choice` (pure: a tuned table entry -> tiles and split-K factor), :mod:`.gemv` (the
memory-bound N = 1 and M <= 8 path), :mod:`.launch` (plans: the variant table's launch recipes, the register-blocked
launch) and the public function here (validation, then a launch prepared once per shape).

Operands in any layout (:mod:`.operands`: orders, pitches, 1-D operands and broadcast stacks read in place).
Edge cases follow NumPy: M == 0 or N == 0 gives an empty result, K == 0 gives zeros.
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
from . import choice as C
from . import operands as L
from .gemv import GemvRun, gemv_launch
from .launch import MATMUL_VARIANTS, _device, device_route, plan, rb_launcher

__all__ = ["Choice", "MATMUL_VARIANTS", "matmul", "plan", "validate"]


def _overlaps(x, y) -> bool:
    x0, y0 = x.data.ptr, y.data.ptr
    return x0 < y0 + y.nbytes and y0 < x0 + x.nbytes


_FLOAT32 = (np.float32,)


def validate(a, b, out=None, variant: str = "auto", config=None):
    """Check the arguments of :func:`matmul`; return (a, b, out-or-None, layout) with CuPy arrays and the
    :class:`.operands.Layout` of variant "auto" (None for a ladder variant).

    InputTypeError (a TypeError): not a GPU array, dtype not float32. UsageError (a ValueError): unknown
    variant, shapes that do not align or broadcast (NumPy's matmul rules), a ladder variant (without ``config``) on
    anything but 2-D C-contiguous operands, out of the wrong shape, not C-contiguous or overlapping an input, a ``config`` that is
    not a :class:`Choice` or with a variant other than "auto" / "register_blocked".
    """
    from .._checks import as_device_array, check_out

    if not isinstance(variant, str) or variant not in MATMUL_VARIANTS:
        raise UsageError(f"matmul: unknown variant {variant!r}; expected one of {', '.join(MATMUL_VARIANTS)}")
    if config is not None:
        if not isinstance(config, Choice):
            raise UsageError(f"matmul: config must be a gpumemlab.ops.matmul.Choice, not {type(config).__name__}")
        if variant not in ("auto", "register_blocked"):
            raise UsageError(f"matmul: config applies to variant 'auto' or 'register_blocked', not {variant!r}")
    ladder = variant != "auto" and config is None  # a rung (register_blocked: the chooser's tiles, never GEMV)
    a = as_device_array(a, "a", _FLOAT32, ndim=2 if ladder else None, contiguous=ladder)
    b = as_device_array(b, "b", _FLOAT32, ndim=2 if ladder else None, contiguous=ladder)
    if ladder:
        if a.shape[1] != b.shape[0]:
            raise UsageError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not align "
                             f"(a.shape[1] = {a.shape[1]} != b.shape[0] = {b.shape[0]})")
        lay, shape = None, (a.shape[0], b.shape[1])
    else:
        lay = _layout(a.shape, a.strides, b.shape, b.strides)
        if not isinstance(lay, L.Layout):  # no unit-stride side: one contiguous copy of that operand
            import cupy

            a = cupy.ascontiguousarray(a) if lay[0] else a
            b = cupy.ascontiguousarray(b) if lay[1] else b
            lay = _layout(a.shape, a.strides, b.shape, b.strides)
        shape = lay.shape
    if out is not None:
        out = check_out(out, shape, np.float32)
        if out.size and (_overlaps(out, a) or _overlaps(out, b)):
            raise UsageError("out: overlaps an input; pass a separate output array")
    return a, b, out, lay


@lru_cache(maxsize=4096)
def _layout(a_shape, a_strides, b_shape, b_strides):
    """:func:`.operands.layout` on byte strides of float32 arrays (pure, cached per shapes and strides)."""
    return L.layout(a_shape, tuple(s // 4 for s in a_strides), b_shape, tuple(s // 4 for s in b_strides))


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


@lru_cache(maxsize=4096)
def _strided_launch(lay: L.Layout, vec: int, device_name: str, config: Choice | None = None):
    """(prepared launch of the innermost batch side's products, whether C is zeroed first, products per launch, the
    tiles and split-K factor) for a :class:`.operands.Layout` read in place: the register-blocked kernel with A and B in their orders and
    pitches, the tiles the tuned table gives the same product in C order (a batch counts as a taller M)."""
    count, step_a, step_b, _ = lay.batch[-1] if lay.batch else (1, 0, 0, 0)
    per = min(count, K.MAX_GRID_Z)
    if config is None:
        entry, sms = _device()
        config = C.fill_choice(lay.m, lay.n, lay.k, per, C.choose(lay.m * per, lay.n, lay.k, entry, sms, waves=vec == 1),
                               sms)
    ops = K.Operands(lay.a.trans, lay.b.trans, lay.a.ld, lay.b.ld, per, step_a, step_b)
    launch, zero = rb_launcher(K.rb_launch(config.config, lay.m, lay.n, lay.k, vec, config.splits, ops))
    return launch, zero, per, config


def _run_strided(lay: L.Layout, a, b, out, config: Choice | None) -> None:
    """Every product of ``lay``: one launch per run of up to MAX_GRID_Z products of the innermost batch side, a
    loop over the outer sides' indices."""
    import itertools

    from ...gpu import runtime

    pa, pb, pc = a.data.ptr, b.data.ptr, out.data.ptr
    vec = 4 if L.vec4(lay, (pa, pb, pc)) else 1
    launch, zero, per, choice = _strided_launch(lay, vec, runtime.device_info()["name"], config)
    if zero:  # split-K partial tiles are added into C
        runtime.zero(out)
    count, step_a, step_b, step_c = lay.batch[-1] if lay.batch else (1, 0, 0, 0)
    outer = lay.batch[:-1]
    for index in itertools.product(*(range(c) for c, *_ in outer)):
        oa = sum(i * s for i, (_, s, _, _) in zip(index, outer))
        ob = sum(i * s for i, (_, _, s, _) in zip(index, outer))
        oc = sum(i * s for i, (_, _, _, s) in zip(index, outer))
        for z in range(0, count, per):
            run = launch
            if count - z < per:  # the last, shorter run of the innermost side
                short = L.Layout(lay.m, lay.n, lay.k, lay.a, lay.b, ((count - z, step_a, step_b, step_c),), lay.shape)
                run = _strided_launch(short, vec, runtime.device_info()["name"], choice)[0]  # same tiles and split
            run(pc + 4 * (oc + z * step_c), pa + 4 * (oa + z * step_a), pb + 4 * (ob + z * step_b))


@on_arrays_device
def matmul(a, b, out=None, variant: str = "auto", config: Choice | None = None):
    """``a @ b`` for float32 GPU arrays with NumPy's ``matmul`` rules, into ``out`` (C-contiguous) if given.

    Variant "auto" takes any layout: C- and F-ordered operands, transposed and sliced views (each read in place
    when one side has unit stride, any pitch; copied once otherwise), 1-D operands (a row vector on the left, a
    column vector on the right, dropped from the result) and stacks whose leading sides broadcast (one launch per
    run of the innermost batch side). The ladder variants take 2-D C-contiguous operands.

    Args:
        variant: "auto" (the tuned register-blocked kernel, or the GEMV kernels for N = 1 or M <= 8) or a ladder
            name (``K.AB_VARIANTS``).
        config: a :class:`Choice` (register-blocked configuration and split-K factor) to run instead of the
            tuned table's choice; "auto" and "register_blocked" only.

    Returns:
        The CuPy array of NumPy's result shape. Runs on CuPy's current stream, so it is ordered like any CuPy
        operation around it.

    NaN and Inf: each output is an IEEE sum of products, as with cuBLAS: a NaN in row i of ``a`` or
    column j of ``b`` makes the outputs of that row / column NaN; Inf times a non-zero gives a signed
    Inf, Inf times 0 and Inf - Inf give NaN (no zero of the operands is skipped).
    """
    from .._checks import cupy_module

    a, b, out, lay = validate(a, b, out, variant, config)
    if lay is None:  # a ladder rung on 2-D C-contiguous operands
        m, k = a.shape
        n = b.shape[1]
        if out is None:
            out = cupy_module().empty((m, n), dtype=np.float32)
        if m and n and k:
            plan(variant, a, b, out).run()
        elif m and n:
            out.fill(0)
        return out
    if out is None:
        out = cupy_module().empty(lay.shape, dtype=np.float32)
    if out.size == 0:
        return out
    if lay.k == 0:
        out.fill(0)
        return out
    from ...gpu import runtime

    if L.is_dense(lay) or (config is None and L.gemv_swap(lay)):
        m, n, k = lay.m, lay.n, lay.k
        if lay.a.trans:  # N = 1, A^T dense: out = b^T A^T as a 1 x M product
            m, n, a, b = 1, lay.m, b, a
        elif lay.b.trans:  # M = 1, B^T dense: out = B^T a as an N x 1 product
            m, n, a, b = lay.n, 1, b, a
        aligned = (a.data.ptr | b.data.ptr | out.data.ptr) % 16 == 0
        launch, zero = _auto_launch(m, n, k, aligned, runtime.device_info()["name"], config)
        if zero:  # split-K partial tiles are added into C
            runtime.zero(out)
        launch(out, a, b)
        return out
    _run_strided(lay, a, b, out, config)
    return out
