"""Input checks shared by the library functions: typed exceptions with one clear line.

InputTypeError (also a TypeError): not a GPU array, or a dtype not supported. UsageError (also a
ValueError): wrong number of dimensions, not contiguous, wrong shape. NoDeviceError: CuPy unusable.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputTypeError, NoDeviceError, UsageError


def cupy_module():
    """CuPy, or NoDeviceError when it cannot be imported (no CUDA libraries)."""
    try:
        import cupy
    except Exception as exc:  # noqa: BLE001 - ImportError or a CUDA library error raised while importing
        raise NoDeviceError(f"no CUDA device: cannot import CuPy ({type(exc).__name__}: {exc})") from None
    return cupy


_NDARRAY = None  # cupy.ndarray once CuPy has imported: the fast path of as_device_array
_ALLOWED: dict = {}  # dtypes argument -> tuple of np.dtype


def _as_cupy(x, name: str):
    """A CuPy view of anything that is not already a CuPy array (or the one-line error)."""
    global _NDARRAY
    cupy = cupy_module()
    _NDARRAY = cupy.ndarray
    if isinstance(x, np.ndarray):
        raise InputTypeError(f"{name}: a NumPy (host) array; pass a GPU array (cupy.asarray({name}))")
    if isinstance(x, cupy.ndarray):
        return x
    if hasattr(x, "__cuda_array_interface__"):
        return cupy.asarray(x)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] == 2:
        return cupy.from_dlpack(x)
    raise InputTypeError(f"{name}: expected a GPU array (CuPy, __cuda_array_interface__ or DLPack), got {type(x).__name__}")


def as_device_array(x, name: str, dtypes: tuple | None, ndim: int | None = None, contiguous: bool = True):
    """A CuPy view of ``x`` (CuPy array or anything with ``__cuda_array_interface__``/DLPack).

    Raises InputTypeError for host arrays, unsupported objects or dtypes; UsageError for the wrong
    number of dimensions or a non-contiguous input (when ``contiguous``). A CuPy array costs a type
    test and three attribute reads (the common case, on every library call).
    """
    arr = x if type(x) is _NDARRAY else _as_cupy(x, name)
    if dtypes is not None:
        allowed = _ALLOWED.get(dtypes) if isinstance(dtypes, tuple) else None
        if allowed is None:
            allowed = tuple(np.dtype(d) for d in dtypes)
            if isinstance(dtypes, tuple):
                _ALLOWED[dtypes] = allowed
        if arr.dtype not in allowed:
            names = ", ".join(str(d) for d in allowed)
            raise InputTypeError(f"{name}: dtype {arr.dtype} not supported; expected {names}")
    if ndim is not None and arr.ndim != ndim:
        raise UsageError(f"{name}: expected a {ndim}-D array, got {arr.ndim}-D with shape {arr.shape}")
    if contiguous and not arr.flags.c_contiguous:
        raise UsageError(f"{name}: must be C-contiguous (row-major); call cupy.ascontiguousarray first")
    return arr


def check_out(out, shape: tuple, dtype, name: str = "out"):
    """Validate a caller-provided output array."""
    arr = as_device_array(out, name, (dtype,), ndim=len(shape))
    if tuple(arr.shape) != tuple(shape):
        raise UsageError(f"{name}: shape {tuple(arr.shape)} != expected {tuple(shape)}")
    return arr
