"""`gpumemlab.copy`: a C-contiguous copy of any GPU array view.

A view that folds to one contiguous run (:mod:`._layout`) is copied by cudaMemcpyAsync on CuPy's current stream: the
driver's device-to-device copy runs as fast as the suite's float4 copy kernel (`copy_vec<float4, 1>`, the copy
ceiling of `bench`) from 256 MiB up and sooner below, and costs less host time per call than a kernel launch from
Python (docs/notes/reduce_transpose.md). Strided views are read in place by the transpose's kernels (the identity
permutation of :func:`gpumemlab.transpose`).
"""

from __future__ import annotations

from ._checks import on_arrays_device
from .transpose import moved


@on_arrays_device
def copy(x, out=None):
    """Return a C-contiguous copy of the GPU array ``x``, or write it into ``out``.

    ``x``: any dtype of 1, 2, 4, 8 or 16 bytes (as :func:`gpumemlab.transpose`), any strides (sliced, stepped,
    reversed, broadcast views). ``out``, if given, must be a C-contiguous array of ``x``'s shape and dtype. Bytes are
    moved unchanged: NaN payloads (signalling NaNs too), +-Inf and -0.0 come out bit for bit. Any alignment.
    """
    return moved(x, "copy", out)
