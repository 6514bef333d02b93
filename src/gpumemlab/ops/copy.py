"""`gpumemlab.copy`: a device copy through the float4 copy kernel (the copy ceiling of `bench`)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import UsageError
from ..gpu import runtime
from ._checks import as_device_array, cupy_module

_VEC = 16  # bytes per float4
_BLOCK = 256


@lru_cache(maxsize=1024)
def _plan(nbytes: int, aligned: bool) -> tuple:
    """(prepared launch of the float4 kernel or None, bytes it copies, tail bytes) for one size and alignment."""
    from ..kernels import copy as K

    n_vec = nbytes // _VEC if aligned else 0
    kernel = runtime.Launcher(K.copy_vec("float4", 1), -(-n_vec // _BLOCK), _BLOCK, 2, np.int64(n_vec)) if n_vec else None
    return kernel, n_vec * _VEC, nbytes - n_vec * _VEC


def copy(x, out=None):
    """Return a contiguous copy of the GPU array ``x`` (any dtype), written by ``copy_vec<float4, 1>``.

    Bytes past the last whole 16-byte vector, and arrays whose address is not 16-byte aligned, are
    copied with cudaMemcpy. ``out``, if given, must be a C-contiguous array of the same shape and dtype.
    Bytes are moved unchanged: NaN payloads (signalling NaNs too), +-Inf and -0.0 come out bit for bit.
    """
    src = as_device_array(x, "x", None)
    if out is None:  # src is C-contiguous: empty (not empty_like, whose order handling runs in Python per call)
        dst = cupy_module().empty(src.shape, src.dtype)
    else:
        dst = as_device_array(out, "out", (src.dtype,))
        if dst.shape != src.shape:
            raise UsageError(f"out: shape {dst.shape} != x shape {src.shape}")
    if src.nbytes == 0:
        return dst
    s, d = src.data.ptr, dst.data.ptr
    kernel, head, tail = _plan(src.nbytes, (s | d) % _VEC == 0)
    if kernel:
        kernel(dst, src)
    if tail:
        (dst.data + head).copy_from_device_async(src.data + head, tail)
    return dst
