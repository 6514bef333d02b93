"""``gpumemlab.transpose``: a new contiguous transpose of a 2-D float32 / float64 / int32 GPU array.

A row or a column is a device copy. Shapes with a side below 32 take the thin kernel (both sides coalesced
without a 32-wide tile; blocks made small enough that there are two per SM). Other shapes whose both sides are
multiples of the 16-byte vector width (4 floats or ints, 2 doubles), with 16-byte aligned storage, take the
vectorized 64x64 kernel (128 x 64 tiles for 4-byte elements whose output rows start off a 32-byte sector); every
other shape takes the padded, coarsened 32x8 tile kernel. Like ``cupy.ascontiguousarray(x.T)``, but with coalesced
16-byte stores.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import UsageError
from ..gpu import runtime
from ..kernels import CTYPES
from ..kernels import transpose as K
from ._checks import as_device_array, cupy_module, on_arrays_device

DTYPES = (np.float32, np.float64, np.int32)
SECTOR = 32  # bytes: the unit of a partially written output run
INT32_MAX = 2**31 - 1


def choose_variant(rows: int, cols: int, dtype, in_ptr: int, out_ptr: int) -> K.TransposeVariant:
    """The ladder step the library uses for this shape and these addresses (pure; no GPU)."""
    ctype = CTYPES[np.dtype(dtype).name]
    w = K.VECTORIZED.width(ctype)
    aligned = in_ptr % 16 == 0 and out_ptr % 16 == 0
    if aligned and rows % w == 0 and cols % w == 0 and rows >= w and cols >= w:
        off_sector = rows * np.dtype(dtype).itemsize % SECTOR != 0  # output rows start off a 32-byte sector
        return K.LIBRARY_TALL if off_sector and ctype in K.TALL_CTYPES else K.LIBRARY_VECTORIZED
    return K.LIBRARY_FALLBACK


THIN_BLOCKS_PER_SM = 2  # the thin kernel's blocks shrink until there are this many per SM


@lru_cache(maxsize=1024)
def launch_plan(rows: int, cols: int, dtype_name: str, aligned: bool, sm_count: int):
    """(kernel spec, grid, block, shared bytes, extra arguments) on a GPU of ``sm_count`` SMs: the thin kernel when a
    side is at most ``THIN_MAX``, else the ladder step of :func:`choose_variant`."""
    ctype = CTYPES[dtype_name]
    if min(rows, cols) <= K.THIN_MAX:
        t = K.thin_launch(rows, cols, ctype, THIN_BLOCKS_PER_SM * sm_count)
        return t.spec, t.grid, K.THIN_BLOCK, t.shmem, t.args
    variant = choose_variant(rows, cols, dtype_name, 0 if aligned else 4, 0)
    return variant.spec(ctype), variant.grid(rows, cols), variant.block, 0, ()


@lru_cache(maxsize=1024)
def _prepared(rows: int, cols: int, dtype: np.dtype, aligned: bool) -> runtime.Launcher:
    """The launch of :func:`launch_plan` with its geometry and scalars packed once; a call binds ``out, x``.
    Keyed by the dtype object: ``dtype.name`` is computed in Python by NumPy, microseconds per call."""
    spec, grid, block, shmem, extra = launch_plan(rows, cols, dtype.name, aligned, runtime.device_info()["sm_count"])
    return runtime.Launcher(spec, grid, block, 2, rows, cols, *extra, shmem=shmem)


@on_arrays_device
def transpose(x):
    """Return ``x.T`` as a new C-contiguous CuPy array (``x``: 2-D, C-contiguous).

    Elements are moved bit for bit: NaN payloads (signalling NaNs too), +-Inf and -0.0 come out unchanged.
    """
    arr = as_device_array(x, "x", DTYPES, ndim=2, contiguous=True)
    rows, cols = arr.shape
    if rows > INT32_MAX or cols > INT32_MAX:
        raise UsageError(f"x: each side must be below 2^31 elements, got shape {arr.shape}")
    cupy = cupy_module()
    out = cupy.empty((cols, rows), arr.dtype)  # launches follow CuPy's current stream, like CuPy's own ops
    if arr.size == 0:
        return out
    if rows == 1 or cols == 1:  # x.T has the same bytes in the same order: a device copy
        cupy.copyto(out, arr.reshape(cols, rows))
        return out
    _prepared(rows, cols, arr.dtype, (arr.data.ptr | out.data.ptr) % 16 == 0)(out, arr)
    return out
