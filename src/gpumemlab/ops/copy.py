"""`gpumemlab.copy`: a device copy through the float4 copy kernel (the copy ceiling of `bench`)."""

from __future__ import annotations

import numpy as np

from ..errors import UsageError
from ._checks import as_device_array

_VEC = 16  # bytes per float4


def copy(x, out=None):
    """Return a contiguous copy of the GPU array ``x`` (any dtype), written by ``copy_vec<float4, 1>``.

    Bytes past the last whole 16-byte vector, and arrays whose address is not 16-byte aligned, are
    copied with cudaMemcpy. ``out``, if given, must be a C-contiguous array of the same shape and dtype.
    Bytes are moved unchanged: NaN payloads (signalling NaNs too), +-Inf and -0.0 come out bit for bit.
    """
    import cupy

    from ..gpu import runtime
    from ..kernels import copy as K

    src = as_device_array(x, "x", None)
    if out is None:
        dst = cupy.empty_like(src)
    else:
        dst = as_device_array(out, "out", (src.dtype,))
        if dst.shape != src.shape:
            raise UsageError(f"out: shape {dst.shape} != x shape {src.shape}")
    if src.nbytes == 0:
        return dst
    n_vec = src.nbytes // _VEC
    aligned = src.data.ptr % _VEC == 0 and dst.data.ptr % _VEC == 0
    if not aligned:
        n_vec = 0
    if n_vec:
        grid = -(-n_vec // 256)
        runtime.launch(K.copy_vec("float4", 1), grid, 256, dst, src, np.int64(n_vec))
    tail = src.nbytes - n_vec * _VEC
    if tail:
        (dst.data + n_vec * _VEC).copy_from_device_async(src.data + n_vec * _VEC, tail)
    return dst
