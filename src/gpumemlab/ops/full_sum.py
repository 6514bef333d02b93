"""The whole-array sum behind ``gpumemlab.sum(x)``: a deterministic two-pass reduction of float32 / float64 /
int32 GPU arrays, its plan and its error bound; shared by :mod:`.reduce` and :mod:`.reduce_axis`.

One launch of ``reduce7`` (configuration ``kernels.reduce.LIBRARY``): a grid of ``waves x blocks_per_sm x
SMs`` blocks; each block reads its share of 16-byte vectors (an even contiguous share, or strip-mined
tiles) with several loads in flight per thread and writes one partial; the last block to finish (an
integer ticket) adds the partials in block order. Small inputs (<= ``SINGLE_PASS_MAX`` elements) take one
block (``reduce_final``). No floating-point atomics: for a fixed size, dtype and device the result is
bitwise reproducible.

Result dtype follows NumPy: float32 -> float32 (float32 accumulation), float64 -> float64,
int32 -> int64 (exact; 64-bit accumulation).

Accuracy (floating point): the additions form a tree of depth ``h`` (:func:`tree_depth`); the
computed sum ``s^`` of ``x`` satisfies ``|s^ - s| <= gamma_h * sum(|x|)`` with ``gamma_h = h*u/(1-h*u)``
and ``u`` the unit roundoff (2^-24 for float32). For 2^28 float32 on a 132-SM GPU ``h`` is ~100 or less, a
bound of ~6e-6 of ``sum(|x|)``; sequential summation would allow ``2^28 * u``, i.e. 16.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from ..kernels import CTYPES as CT
from ..kernels import reduce as K
from . import _workspace as W

DTYPES = (np.float32, np.float64, np.int32)
SINGLE_PASS_MAX = 16384  # elements: below this one block is faster than two launches
VECTOR_BYTES = 16


@dataclass(frozen=True)
class SumPlan:
    """The launch configuration of one sum; ``grid == 0`` means the single-block pass alone."""

    n: int
    itemsize: int
    grid: int
    block: int = K.LIBRARY.block
    unroll: int = K.LIBRARY.unroll
    final_block: int = K.LIBRARY.block  # threads that add the partials: reduce7's block, or reduce_final's
    mapping: int = K.LIBRARY.mapping

    @property
    def width(self) -> int:
        return VECTOR_BYTES // self.itemsize


def plan(n: int, itemsize: int, sm_count: int, blocks_per_sm: int, config: K.VecConfig = K.LIBRARY) -> SumPlan:
    """Pure function of the size, the device and the configuration: the same inputs always give the same grid.

    ``blocks_per_sm``: how many blocks of ``config`` fit on one SM; the grid is ``config.waves`` times the GPU's
    worth of them, or fewer when the input has fewer tiles (``block x unroll`` vectors each).
    """
    if n <= SINGLE_PASS_MAX:
        return SumPlan(n, itemsize, 0, block=config.block, unroll=config.unroll, mapping=config.mapping)
    width = VECTOR_BYTES // itemsize
    tiles = math.ceil(n / (width * config.block * config.unroll))
    grid = max(1, min(sm_count * blocks_per_sm * config.waves, tiles))
    final_block = config.block if config.kernel == "reduce7" else K.FINAL_BLOCK
    return SumPlan(n, itemsize, grid, config.block, config.unroll, final_block, config.mapping)


def tree_depth(p: SumPlan) -> int:
    """Longest chain of roundings any element goes through (an upper bound)."""
    if p.grid == 0:
        return math.ceil(p.n / K.FINAL_BLOCK) + int(math.log2(K.FINAL_BLOCK))
    nv = p.n // p.width + 1
    tile = p.block * p.unroll
    if p.mapping == 0:  # an even, contiguous share per block (multiples of 32 vectors)
        batches = math.ceil(math.ceil(math.ceil(nv / 32) / p.grid) * 32 / tile)
    else:               # strip-mined tiles, plus the partial last tile
        batches = math.ceil(nv / tile / p.grid) + 1
    thread = 2 + batches + p.unroll + int(math.log2(p.width * p.unroll))  # head/tail, batches, partial batch, tree
    final = math.ceil(p.grid / p.final_block) + int(math.log2(p.final_block))
    return thread + int(math.log2(p.block)) + final


def unit_roundoff(dtype) -> float:
    return float(np.finfo(dtype).eps) / 2


def relative_bound(p: SumPlan, dtype) -> float:
    """Bound on |sum^ - sum| / sum(|x|) for a floating-point dtype (0 for integers: exact)."""
    if np.dtype(dtype).kind != "f":
        return 0.0
    hu = tree_depth(p) * unit_roundoff(dtype)
    return hu / (1.0 - hu)


@cache
def _specs(dtype_name: str, acc_name: str | None = None):
    ctype, acc, acc_dtype = K.CTYPES[dtype_name]
    if acc_name is not None:
        acc, acc_dtype = CT[acc_name], acc_name
    return K.library_spec(ctype, acc), K.reduce_final(ctype, acc), np.dtype(acc_dtype)


@cache
def blocks_per_sm(spec, block: int) -> int:
    from ..gpu import runtime

    return max(1, runtime.max_active_blocks(spec, block))


def device_plan(n: int, dtype, config: K.VecConfig = K.LIBRARY) -> SumPlan:
    """The plan :func:`sum` uses on this device for ``n`` elements of ``dtype`` (``config``: another one)."""
    return _device_plan(int(n), np.dtype(dtype).name, config)


@lru_cache(maxsize=256)
def _device_plan(n: int, dtype_name: str, config: K.VecConfig) -> SumPlan:
    from ..gpu import runtime

    ctype, acc, _ = K.CTYPES[dtype_name]
    return plan(n, np.dtype(dtype_name).itemsize, runtime.device_info()["sm_count"],
                blocks_per_sm(config.spec(ctype, acc), config.block), config)


def full_sum_launch(n: int, dtype_name: str, acc_name: str):
    """``launch(src, out)``: all ``n`` elements of a contiguous ``src`` into the 0-d ``out`` (reduce7 with its
    partials and ticket on the launching stream, or one block for small inputs), geometry prepared once."""
    from ..gpu import runtime

    kernel, single, acc_dtype = _specs(dtype_name, acc_name)
    p = device_plan(n, dtype_name)
    if p.grid == 0:
        one_block = runtime.Launcher(single, 1, K.FINAL_BLOCK, 2, np.int64(n))
        return lambda src, out: one_block(out, src)
    reduce7 = runtime.Launcher(kernel, p.grid, p.block, 4, np.int64(n))
    # per-block partials and a completion ticket (each launch leaves it at 0) of this device, stream and thread
    sizes = (p.grid, 1, acc_dtype.name)

    def launch(src, out):
        reduce7(out, *W.ticket_workspace(*sizes), src)
    return launch
