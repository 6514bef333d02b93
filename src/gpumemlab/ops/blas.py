"""cuBLAS SGEMM (pure FP32, TF32 off) on row-major CuPy arrays: the baseline our matmul is judged by."""

from __future__ import annotations


import numpy as np

from ..gpu.fp32 import tf32_env_problem

CUBLAS_DEFAULT_MATH = 0  # cublasMath_t: FP32 SGEMM without TF32 tensor-core math


def tf32_disabled() -> None:
    """Set CuPy's cuBLAS handle to default (non-TF32) math; refuse a TF32 override."""
    import cupy
    from cupy_backends.cuda.libs import cublas

    problem = tf32_env_problem()
    if problem is not None and "NVIDIA_TF32_OVERRIDE" in problem:  # CUPY_TF32 only steers CuPy's own matmul
        raise RuntimeError(problem)
    cublas.setMathMode(cupy.cuda.device.get_cublas_handle(), CUBLAS_DEFAULT_MATH)


def cublas_sgemm(a, b, c) -> None:
    """c = a @ b for C-contiguous float32 (M,K) x (K,N) on CuPy's current stream."""
    import cupy
    from cupy_backends.cuda.libs import cublas

    m, k = a.shape
    n = b.shape[1]
    handle = cupy.cuda.device.get_cublas_handle()
    cublas.setStream(handle, cupy.cuda.get_current_stream().ptr)
    one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
    # Row-major C = A B is column-major C^T = B^T A^T: swap the operands, no transposes.
    cublas.sgemm(handle, 0, 0, n, m, k, one.ctypes.data, b.data.ptr, n, a.data.ptr, k,
                 zero.ctypes.data, c.data.ptr, n)
