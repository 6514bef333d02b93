"""Plans of ``gpumemlab.matmul``: the launches of one variant on fixed operands, which the experiments time
(operands already in the variant's layout) and the public function runs.

Every ladder rung is launched from its row of ``kernels.matmul.VARIANTS`` (block, arguments, layout of B) by one
launcher; the register-blocked kernel from :func:`kernels.matmul.rb_launch` with the chooser's configuration
(:mod:`.choice`), the GEMV kernels from :func:`.gemv.gemv_launch`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Callable

from ...errors import UsageError
from ...kernels import KernelSpec
from ...kernels import matmul as K
from . import choice as C
from .gemv import GemvRun, gemv_launch

MAX_GRID_Y = 65535
MATMUL_VARIANTS = ("auto",) + K.AB_VARIANTS


@dataclass
class Plan:
    """Launches for one variant on fixed operands: ``run()`` enqueues everything the variant does
    (for transposed_b: transpose + multiply); ``parts`` names the pieces (timed separately)."""

    variant: str
    run: Callable[[], None]
    parts: dict[str, Callable[[], None]] = field(default_factory=dict)
    config: K.RBConfig | None = None
    vec: int | None = None
    splits: int = 1
    keep: tuple = ()  # scratch and prepared operands the launches use


def aligned16(*arrays) -> bool:
    return all(x.data.ptr % 16 == 0 for x in arrays)


def _device() -> tuple[dict | None, int]:
    from ...gpu import runtime

    device = runtime.device_info()
    return C.tuned_entry(device), int(device["sm_count"])


def device_route(m: int, n: int, k: int, aligned: bool) -> C.Route:
    """:func:`.choice.route` with this device's tuned entry."""
    return C.route(m, n, k, aligned, *_device())


# ---------------------------------------------------------------- the register-blocked SGEMM

_SMEM_SET: set = set()


def allow_smem(kernel, spec: KernelSpec, nbytes: int) -> None:
    """Opt ``kernel`` in to ``nbytes`` of dynamic shared memory (once per spec) when that is above 48 KiB."""
    from ...gpu import runtime

    if nbytes > 48 * 1024 and spec not in _SMEM_SET:
        runtime.set_max_dynamic_shared(kernel, nbytes)
        _SMEM_SET.add(spec)


def rb_launcher(g: K.RBLaunch):
    """(a prepared launch of ``out, a, b`` for :class:`kernels.matmul.RBLaunch` ``g``, whether C is zeroed first)."""
    from ...gpu import runtime

    kernel = runtime.get_kernel(g.spec)
    allow_smem(kernel, g.spec, g.smem)
    return runtime.Launcher(kernel, g.grid, g.threads, 3, *g.scalars, shmem=g.smem), g.splits > 1


def register_blocked_plan(a, b, out, config: K.RBConfig | None = None, vec: int | None = None,
                          splits: int | None = None) -> Plan:
    """The register-blocked kernel on these operands: ``config`` (None: the chooser's), ``vec`` 4 (N, K multiples
    of 4, 16-byte aligned) or 1, ``splits`` split-K slices added into C (zeroed first)."""
    from ...gpu import runtime

    m, k = a.shape
    n = b.shape[1]
    fast = n % 4 == 0 and k % 4 == 0 and aligned16(a, b, out)
    if config is None:
        choice = C.choose(m, n, k, *_device(), waves=not fast)  # as the route decides
        config, splits = choice.config, (choice.splits if splits is None else splits)
    vec = vec or (4 if fast else 1)
    if vec == 4 and not fast:
        raise UsageError("register_blocked vec=4 needs N % 4 == 0, K % 4 == 0 and 16-byte aligned arrays")
    g = K.rb_launch(config, m, n, k, vec, splits or 1)
    launch, zero = rb_launcher(g)

    def zero_then_launch():  # split-K partial tiles are added into C
        runtime.zero(out)
        launch(out, a, b)

    return Plan("register_blocked", zero_then_launch if zero else (lambda: launch(out, a, b)), config=config, vec=vec,
                splits=g.splits)


def gemv_plan(a, b, out, sms: int | None = None) -> Plan:
    """The plan of :func:`.gemv.gemv_launch` for these operands."""
    from ...gpu import runtime

    m, k = a.shape
    n = b.shape[1]
    if sms is None:
        sms = int(runtime.device_info()["sm_count"])
    g = gemv_launch(m, n, k, aligned16(a, b) if n == 1 else aligned16(a, b, out), sms)
    run = GemvRun(g)
    return Plan("gemv", lambda: run(out, a, b), vec=g.vec, splits=g.splits)


# ---------------------------------------------------------------- the ladder: recipes from the variant table

def _grid2d(variant: str, nx: int, ny: int, block: tuple[int, int], per_x: int = 1) -> tuple[int, int]:
    gx = max(1, math.ceil(nx / (block[0] * per_x)))
    gy = max(1, math.ceil(ny / block[1]))
    if gy > MAX_GRID_Y:
        raise UsageError(f"matmul: {variant} launches a 2-D grid with {gy} rows of blocks (limit {MAX_GRID_Y}); "
                         "use variant='auto'")
    return gx, gy


def column_major(b):
    """B (K x N, row-major) stored column-major: an N x K row-major array (the untimed layout change)."""
    import cupy

    return cupy.ascontiguousarray(b.T)


def _launcher(variant: str, spec: KernelSpec, block, nx: int, ny: int, args: tuple, per_x: int = 1):
    """One launch over an ``nx`` by ``ny`` grid of ``block``s with these arguments (the recipe's, resolved)."""
    from ...gpu import runtime

    kernel = runtime.get_kernel(spec)
    grid = _grid2d(variant, nx, ny, block, per_x)
    return lambda: runtime.launch(kernel, grid, block, *args)


def ladder_plan(variant: str, a, b, out) -> Plan:
    """A ladder rung's plan from its recipe: B brought to the rung's layout (column-major: untimed; transposed_b:
    the transpose is the plan's first part), then one launch over N x M (C = A A^T: M x M)."""
    import cupy

    v = K.VARIANTS[variant]
    m, k = a.shape
    n = m if v.op == "aat" else b.shape[1]
    if v.k32 and (k != K.TILE_DIM or m % K.TILE_DIM or n % K.TILE_DIM):
        raise UsageError(f"matmul: {variant} (Best Practices 9.2.3, w = 32) needs K == 32 and M, N multiples "
                         f"of 32; got M={m}, N={n}, K={k}")
    values = dict(out=out, a=a, b=b, m=m, n=n, k=k)
    parts = {}
    if v.layout == "col":
        values["b"] = column_major(b)
    elif v.layout == "bt":  # Bt = B^T by the seed's transpose, then the column-major multiply on Bt
        values["bt"] = cupy.empty((n, k), dtype=cupy.float32)
        parts["transpose"] = _launcher(variant, K.TRANSPOSE, K.TRANSPOSE_BLOCK, k, n,
                                       tuple(values[x] for x in K.TRANSPOSE_ARGS))
        values["b"] = values["bt"]
    multiply = _launcher(variant, v.spec, v.block, n, m, tuple(values[x] for x in v.args), v.coarse)
    keep = (values["b"],) if v.layout != "row" else ()
    if not parts:
        return Plan(variant, multiply, keep=keep)
    parts["multiply"] = multiply

    def both():
        for step in parts.values():
            step()

    return Plan(variant, both, parts=parts, keep=keep)


def plan(variant: str, a, b, out, config: C.Choice | K.RBConfig | None = None) -> Plan:
    """A plan for ``out = a @ b`` (``op == "aat"``: ``out = a @ a.T``, ``b`` ignored); ``config``: the
    register-blocked configuration (and split-K factor) to run instead of the chooser's.

    Operands must already be validated (float32, C-contiguous, matching shapes, M, N, K >= 1).
    """
    if isinstance(config, K.RBConfig):
        config = C.Choice(config)
    if variant == "auto" and config is None:
        m, k = a.shape
        n = b.shape[1]
        if C.is_gemv(m, n):
            return gemv_plan(a, b, out)  # a matrix-vector (or few-row) product: memory-bound, no tile to fill
        r = device_route(m, n, k, aligned16(a, b, out))
        return register_blocked_plan(a, b, out, r.choice.config, splits=r.choice.splits)
    if variant in ("auto", "register_blocked"):
        return register_blocked_plan(a, b, out, config.config if config else None,
                                     splits=config.splits if config else None)
    if variant not in K.VARIANTS:
        raise UsageError(f"matmul: unknown variant {variant!r}; expected one of "
                         f"{', '.join(MATMUL_VARIANTS + K.AAT_VARIANTS)}")
    return ladder_plan(variant, a, b, out)
