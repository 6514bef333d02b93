"""``gpumemlab.sum``: a deterministic two-pass reduction of float32 / float64 / int32 GPU arrays.

One launch of ``reduce7`` (configuration ``kernels.reduce.LIBRARY``): a persistent grid of
``blocks_per_sm x SMs`` blocks; each block reads an even, contiguous share of 16-byte vectors with
several loads in flight per thread and writes one partial; the last block to finish (an integer
ticket) adds the partials in block order. Small inputs (<= ``SINGLE_PASS_MAX`` elements) take one
block (``reduce_final``). No floating-point atomics: for a fixed size, dtype and device the result is
bitwise reproducible.

Result dtype follows NumPy: float32 -> float32 (float32 accumulation), float64 -> float64,
int32 -> int64 (exact; 64-bit accumulation).

Accuracy (floating point): the additions form a tree of depth ``h`` (:func:`tree_depth`); the
computed sum ``s^`` of ``x`` satisfies ``|s^ - s| <= gamma_h * sum(|x|)`` with ``gamma_h = h*u/(1-h*u)``
and ``u`` the unit roundoff (2^-24 for float32). For 2^28 float32 on a 132-SM GPU ``h`` is ~100, a bound
of ~6e-6 of ``sum(|x|)``; sequential summation would allow ``2^28 * u``, i.e. 16.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..kernels import reduce as K
from ._checks import as_device_array, check_out

DTYPES = (np.float32, np.float64, np.int32)
SINGLE_PASS_MAX = 16384  # elements: below this one block is faster than two launches
VECTOR_BYTES = 16


@dataclass(frozen=True)
class SumPlan:
    """The launch configuration of one sum; ``grid == 0`` means the single-block pass alone."""

    n: int
    itemsize: int
    grid: int
    block: int = K.BLOCK
    unroll: int = K.LIBRARY_UNROLL
    final_block: int = K.FINAL_BLOCK  # threads that add the partials (reduce_final), or BLOCK for reduce7

    @property
    def width(self) -> int:
        return VECTOR_BYTES // self.itemsize


def plan(n: int, itemsize: int, sm_count: int, blocks_per_sm: int, unroll: int = K.LIBRARY_UNROLL,
         final_block: int = K.BLOCK) -> SumPlan:
    """Pure function of the size and the device: the same inputs always give the same grid."""
    if n <= SINGLE_PASS_MAX:
        return SumPlan(n, itemsize, 0, unroll=unroll)
    width = VECTOR_BYTES // itemsize
    tiles = math.ceil(n / (width * K.BLOCK * unroll))  # one unrolled batch of the whole block
    return SumPlan(n, itemsize, max(1, min(sm_count * blocks_per_sm, tiles)), unroll=unroll,
                   final_block=final_block)


def tree_depth(p: SumPlan) -> int:
    """Longest chain of roundings any element goes through (an upper bound)."""
    if p.grid == 0:
        return math.ceil(p.n / K.FINAL_BLOCK) + int(math.log2(K.FINAL_BLOCK))
    nv = p.n // p.width + 1
    per_block = math.ceil(math.ceil(nv / 32) / p.grid) * 32
    batches = math.ceil(per_block / (p.block * p.unroll))
    thread = 2 + batches + (p.unroll - 1) + int(math.log2(p.width * p.unroll))
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
def _specs(dtype_name: str):
    ctype, acc, acc_dtype = K.CTYPES[dtype_name]
    return K.library_spec(ctype, acc), K.reduce_final(ctype, acc), np.dtype(acc_dtype)


@cache
def _ticket(stream_handle: int):
    """The zeroed completion counter of reduce7 for one stream (each launch leaves it at 0 again)."""
    import cupy

    return cupy.zeros(1, np.uint32)


@cache
def _blocks_per_sm(spec) -> int:
    from ..gpu import runtime

    return max(1, runtime.max_active_blocks(spec, K.BLOCK))


def device_plan(n: int, dtype) -> SumPlan:
    """The plan :func:`sum` uses on this device for ``n`` elements of ``dtype``."""
    from ..gpu import runtime

    first, _, _ = _specs(np.dtype(dtype).name)
    return plan(n, np.dtype(dtype).itemsize, runtime.device_info()["sm_count"], _blocks_per_sm(first))


def error_bound(x) -> float:
    """Absolute error bound of ``sum(x)`` on this device: ``gamma_h * sum(|x|)`` (0 for int32)."""
    arr = as_device_array(x, "x", DTYPES, contiguous=True)
    if arr.dtype.kind != "f" or arr.size == 0:
        return 0.0
    import cupy

    abs_sum = float(cupy.abs(arr).sum(dtype=np.float64))
    return relative_bound(device_plan(arr.size, arr.dtype), arr.dtype) * abs_sum


def sum(x, out=None):  # noqa: A001 - the public name mirrors numpy.sum
    """Sum of all elements of a contiguous float32/float64/int32 GPU array, as a 0-d CuPy array.

    ``out``: optional 0-d CuPy array of the result dtype (float32, float64 or int64) to write into.
    """
    import cupy

    from ..gpu import runtime

    arr = as_device_array(x, "x", DTYPES, contiguous=True)
    kernel, single, acc_dtype = _specs(arr.dtype.name)
    out = check_out(out, (), acc_dtype) if out is not None else None
    # Launches follow CuPy's current stream, so the sum is ordered like any CuPy operation.
    out = cupy.empty((), acc_dtype) if out is None else out
    n = int(arr.size)
    if n == 0:
        out.fill(0)
        return out
    p = device_plan(n, arr.dtype)
    if p.grid == 0:
        runtime.launch(single, 1, K.FINAL_BLOCK, out, arr, np.int64(n))
        return out
    partial = cupy.empty(p.grid, acc_dtype)
    runtime.launch(kernel, p.grid, p.block, out, partial, _ticket(runtime.current_stream_handle()), arr, np.int64(n))
    return out
