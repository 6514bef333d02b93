"""Whether cuBLAS SGEMM runs pure FP32 here: the environment variables that turn on TF32 tensor-core math (read before
CuPy loads, so no CUDA import)."""

from __future__ import annotations

import os


def tf32_env_problem() -> str | None:
    """Why cuBLAS SGEMM would not be pure FP32 in this environment (CUPY_TF32 or NVIDIA_TF32_OVERRIDE set), or None.
    Probes call it before CuPy loads, then set CUPY_TF32=0 (:func:`require_fp32_env`)."""
    for var in ("CUPY_TF32", "NVIDIA_TF32_OVERRIDE"):
        if os.environ.get(var, "") not in ("", "0"):
            return f"{var}={os.environ[var]}: cuBLAS SGEMM would not be pure FP32; unset it"
    return None


def require_fp32_env() -> str | None:
    """:func:`tf32_env_problem`, and CUPY_TF32=0 set when there is none (before CuPy loads, for the tools)."""
    problem = tf32_env_problem()
    if problem is None:
        os.environ["CUPY_TF32"] = "0"
    return problem
