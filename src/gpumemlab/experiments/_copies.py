"""Copies of the same bytes that several experiments measure as their ceiling or baseline."""

from __future__ import annotations

import numpy as np

from ..gpu import runtime
from ..kernels import blocks_for
from ..kernels import copy as K

BLOCK = 256


def copy_kernel_runner(session, vtype: str, unroll: int, out, src, waves: int = 0):
    """A callable that copies ``src`` into ``out`` (float32 arrays, size divisible by the vector width)."""
    width = K.VECTOR_TYPES[vtype] // 4
    n_vec = src.size // width
    grid = blocks_for(n_vec, BLOCK * unroll)
    if waves:  # a persistent grid: `waves` blocks per SM
        grid = min(grid, waves * session.sm_count)
    kernel = runtime.get_kernel(K.copy_vec(vtype, unroll))
    return lambda: runtime.launch(kernel, grid, BLOCK, out, src, np.int64(n_vec))


def memcpy_runner(out, src):
    """cudaMemcpyAsync device to device of all of ``src`` (on CuPy's current stream)."""
    nbytes = src.nbytes
    return lambda: out.data.copy_from_device_async(src.data, nbytes)
