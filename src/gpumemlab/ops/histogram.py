"""``gpumemlab.bincount``: NumPy's ``bincount`` (counts of each non-negative integer key) by privatization.

One pass over the keys: each block (or each warp) counts into its own histogram in shared memory and adds it into
the global one when done (seed 000's privatization), while recording the largest key and whether one was negative.
The result's length, ``max(x) + 1`` or ``minlength``, is known only after that pass: one 16-byte read back per call
(CuPy's bincount reads back its maximum and its minimum in two reductions before it counts). A key beyond the bins
the pass counted (more than ``minlength`` and the first guess, :func:`first_bins`) costs a second pass over the keys
with the bins the first one measured.
"""

from __future__ import annotations

import math
import operator
from functools import lru_cache

import numpy as np

from ..errors import InputTypeError, UsageError
from ..kernels import histogram as K
from ._checks import as_device_array, cupy_module, on_arrays_device

KEY_DTYPES = tuple(np.dtype(d) for d in K.KEY_CTYPES) + (np.dtype(np.bool_),)
FIRST_BINS = 1024  # bins counted by the first pass when neither the dtype nor minlength bounds the keys
KEYS_PER_BIN = 4  # a block adds its whole private histogram into the global one: give it at least this many keys a bin
WARP_PRIVATE_SMEM = 48 * 1024  # per-warp copies while they fit the default shared memory of a block


def first_bins(dtype: np.dtype, minlength: int) -> int:
    """Bins the first pass counts: ``minlength``, or every value of an 8-bit key, or :data:`FIRST_BINS`."""
    return max(minlength, 256 if dtype.itemsize == 1 else FIRST_BINS)


def choose(bins: int, max_shared: int) -> K.Variant | None:
    """The privatization that fits ``bins``: a copy per warp while all of them fit 48 KiB, else one per block while
    it fits the block's largest shared memory (``max_shared``); None: global atomics."""
    if K.WARP_PRIVATE.shared_bytes(bins) <= WARP_PRIVATE_SMEM:
        return K.WARP_PRIVATE
    if K.BLOCK_PRIVATE.shared_bytes(bins) <= max_shared:
        return K.BLOCK_PRIVATE
    return None


def grid_size(n: int, bins: int, vec: int, resident: int) -> int:
    """Blocks: the resident grid, fewer when a block would have under KEYS_PER_BIN keys a bin or one pack a thread."""
    return max(1, min(resident, math.ceil(n / (KEYS_PER_BIN * bins)), math.ceil(n / (K.BLOCK * vec))))


@lru_cache(maxsize=512)
def _launcher(n: int, bins: int, dtype_name: str, aligned: bool, ordinal: int):
    """The prepared launch of the pass (``hist, range, keys``): ``n`` keys into ``bins`` bins on device ``ordinal``."""
    from ..gpu import runtime

    info = runtime.device_info(ordinal)
    private = choose(bins, info["shared_per_block_optin_bytes"])
    if private is None:
        spec, shmem, vec = K.GLOBAL.spec(dtype_name), 0, 1
    else:
        variant = K.Variant(private.private, aligned)
        spec, shmem = variant.spec(dtype_name), variant.shared_bytes(bins)
        vec = K.pack(dtype_name) if aligned else 1
    kernel = runtime.get_kernel(spec)
    if shmem > runtime.DEFAULT_DYNAMIC_SMEM:
        runtime.set_max_dynamic_shared(kernel, shmem)
    resident = info["sm_count"] * max(1, runtime.max_active_blocks(kernel, K.BLOCK, shmem))
    grid = grid_size(n, bins, vec, resident)
    count = np.int32(bins) if private is not None else np.int64(bins)
    return runtime.Launcher(kernel, grid, K.BLOCK, 3, np.int64(n), count, shmem=shmem)


def _minlength(minlength) -> int:
    if isinstance(minlength, bool) or minlength is None:
        raise InputTypeError(f"minlength: expected an int >= 0, got {minlength!r}")
    try:
        value = operator.index(minlength)
    except TypeError:
        raise InputTypeError(f"minlength: expected an int >= 0, got {type(minlength).__name__}") from None
    if value < 0:
        raise UsageError(f"minlength: must not be negative, got {value}")
    return value


@on_arrays_device
def bincount(x, minlength=0):
    """Count each value of the non-negative integer keys ``x``: ``out[k]`` = how many keys equal ``k``.

    Args:
        x: a 1-D GPU array of integer keys (any integer dtype, or bool), any alignment.
        minlength: at least this many bins (``len(out) == max(minlength, x.max() + 1)``).

    Returns:
        An int64 CuPy array, as :func:`numpy.bincount` (without ``weights``) and ``cupy.bincount``.

    Raises:
        InputTypeError: not a GPU array, or not integer keys. UsageError: not 1-D, a negative key or
        ``minlength``, or a result larger than the GPU's free memory.
    """
    from ..gpu import runtime

    arr = as_device_array(x, "x", KEY_DTYPES, ndim=1, contiguous=True)
    least = _minlength(minlength)
    cupy = cupy_module()
    if arr.dtype == np.bool_:
        arr = arr.view(np.uint8)
    n = arr.size
    if n == 0:
        return cupy.zeros(least, np.int64)
    bins = first_bins(arr.dtype, least)
    ordinal = runtime.current_ordinal()
    while True:
        _fits(bins)
        buf = cupy.zeros(bins + 2, np.int64)  # the bins, then the range slots (one memset)
        launch = _launcher(n, bins, arr.dtype.name, arr.data.ptr % 16 == 0, ordinal)
        launch(buf.data.ptr, buf.data.ptr + 8 * bins, arr)
        top, negative = (int(v) for v in buf[bins:].get())
        if negative:
            raise UsageError("x: bincount needs non-negative keys; the smallest key is negative"
                             if arr.dtype.kind == "i" else "x: a key is 2^63 or more")
        length = max(top, least)
        if length <= bins:
            return buf[:length]
        bins = length  # a key the pass could not count: again, with the bins it measured


def _fits(bins: int) -> None:
    from ..gpu import runtime

    need = 8 * (bins + 2)
    free = runtime.free_memory_bytes()
    if need > free:
        raise UsageError(f"x: its largest key needs {bins:,} bins ({need / 2**30:.1f} GiB), more than the GPU's "
                         f"free memory ({free / 2**30:.1f} GiB)")
