"""`gpumemlab.copy`: a device copy by cudaMemcpyAsync on CuPy's current stream.

The driver's device-to-device copy runs as fast as the suite's float4 copy kernel (`copy_vec<float4, 1>`, the copy
ceiling of `bench`) from 256 MiB up and sooner below, and costs less host time per call than a kernel launch from
Python (docs/notes/reduce_transpose.md).
"""

from __future__ import annotations

from ..errors import UsageError
from ._checks import as_device_array, cupy_module, on_arrays_device


@on_arrays_device
def copy(x, out=None):
    """Return a contiguous copy of the GPU array ``x`` (any dtype), or write it into ``out``.

    ``out``, if given, must be a C-contiguous array of the same shape and dtype. Bytes are moved unchanged: NaN
    payloads (signalling NaNs too), +-Inf and -0.0 come out bit for bit. Any alignment.
    """
    src = as_device_array(x, "x", None)
    if out is None:  # src is C-contiguous: empty (not empty_like, whose order handling runs in Python per call)
        dst = cupy_module().empty(src.shape, src.dtype)
    else:
        dst = as_device_array(out, "out", (src.dtype,))
        if dst.shape != src.shape:
            raise UsageError(f"out: shape {dst.shape} != x shape {src.shape}")
    if src.nbytes:
        dst.data.copy_from_device_async(src.data, src.nbytes)
    return dst
