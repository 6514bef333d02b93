"""Input checks shared by the library functions: typed exceptions with one clear line.

InputTypeError (also a TypeError): not a GPU array, or a dtype not supported. UsageError (also a
ValueError): wrong number of dimensions, not contiguous, wrong shape. NoDeviceError: CuPy unusable.
"""

from __future__ import annotations

import functools

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


_DLPACK_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged: device memory (kDLCUDAHost, pinned host memory, is not)


def device_of(a) -> int | None:
    """The ordinal of the GPU holding array ``a`` (CuPy, DLPack, ``__cuda_array_interface__``, or an object with an
    int ``device_id`` such as ArrayImage); None for anything that is not device memory."""
    if _NDARRAY is not None and isinstance(a, _NDARRAY):
        return a.data.device_id
    dev = getattr(a, "device_id", None)
    if type(dev) is int:
        return dev
    dlpack = getattr(a, "__dlpack_device__", None)
    if dlpack is not None:
        try:
            kind, ordinal = dlpack()
        except Exception:  # noqa: BLE001 - an object that cannot say: not ours to judge here
            return None
        return int(ordinal) if int(kind) in _DLPACK_CUDA else None
    cai = getattr(a, "__cuda_array_interface__", None)
    if isinstance(cai, dict) and cai.get("data") and cai["data"][0]:
        from ..gpu.host import pointer_attributes

        return pointer_attributes(int(cai["data"][0]))["device"]
    return None


def _foreign_device(args, kwargs) -> int | None:
    """None when every GPU array among the arguments is on the current device; else the one device they share
    (UsageError naming the devices when they are on several)."""
    nd = _NDARRAY
    here = None
    for a in (args if not kwargs else (*args, *kwargs.values())):
        d = a.data.device_id if type(a) is nd else None if a is None or type(a) in _PLAIN else device_of(a)
        if d is None:
            continue
        if here is None:
            here = _GET_DEVICE()
        if d != here:
            break
    else:
        return None
    found = sorted({d for a in (*args, *kwargs.values()) if (d := device_of(a)) is not None})
    if len(found) > 1:
        raise UsageError(f"arrays on devices {', '.join(map(str, found))}: pass arrays of one device "
                         "(cupy.asarray(x) under `with cupy.cuda.Device(n):` copies one over)")
    return found[0]


_PLAIN = frozenset((int, float, bool, str, tuple, list, dict))


def on_arrays_device(fn):
    """Run ``fn`` on the device its GPU arrays live on, which may not be the current one (PyTorch's rule; CuPy
    raises instead). A launch on the current device with another device's pointers would be an illegal address
    that leaves the process's CUDA context unusable. Arrays on several devices: UsageError."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if _GET_DEVICE is None:
            _bind()
        # the common call: CuPy arrays, and plain values (axis=, None) by keyword, read inline (a function call costs
        # ~0.1 us)
        nd, here = _NDARRAY, None
        for a in (args if not kwargs else (*args, *kwargs.values())):
            t = type(a)
            if t is not nd:
                if a is None or t in _PLAIN:
                    continue
                break
            if here is None:
                here = _GET_DEVICE()
            if a.data.device_id != here:
                break
        else:
            return fn(*args, **kwargs)
        dev = _foreign_device(args, kwargs)
        if dev is None:
            return fn(*args, **kwargs)
        from ..gpu.peer import on_device

        with on_device(dev):
            return fn(*args, **kwargs)

    return call


_GET_DEVICE = None  # cudaGetDevice, bound on the first call


def _bind() -> None:
    global _NDARRAY, _GET_DEVICE
    cupy = cupy_module()
    _NDARRAY = _NDARRAY or cupy.ndarray
    from ..gpu.runtime import device_getter

    _GET_DEVICE = device_getter()


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
            dtype_error(name, arr.dtype, allowed)
    if ndim is not None and arr.ndim != ndim:
        raise UsageError(f"{name}: expected a {ndim}-D array, got {arr.ndim}-D with shape {arr.shape}")
    if contiguous and not arr.flags.c_contiguous:
        raise UsageError(f"{name}: must be C-contiguous (row-major); call cupy.ascontiguousarray first")
    return arr


def dtype_error(name: str, dtype, allowed) -> None:
    """Raise the one-line InputTypeError for a dtype not among ``allowed``."""
    names = ", ".join(str(np.dtype(d)) for d in allowed)
    raise InputTypeError(f"{name}: dtype {dtype} not supported; expected {names}")


def check_out(out, shape: tuple, dtype, name: str = "out"):
    """Validate a caller-provided output array."""
    arr = as_device_array(out, name, (dtype,), ndim=len(shape))
    if tuple(arr.shape) != tuple(shape):
        raise UsageError(f"{name}: shape {tuple(arr.shape)} != expected {tuple(shape)}")
    return arr
