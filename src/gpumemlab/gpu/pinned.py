"""Page-locked (pinned) host buffers owned by gpumemlab, with a count of the bytes alive.

Allocated with cudaHostAlloc and released with cudaFreeHost directly (not through CuPy's pinned memory pool,
which keeps freed blocks): when a buffer is closed its memory goes back to the system, and
:func:`live_bytes` says what gpumemlab still holds, so tests can check that nothing leaks after an error.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

_lock = threading.Lock()
_live = {"bytes": 0, "buffers": 0}


def live_bytes() -> int:
    """Pinned bytes currently held by open :class:`PinnedBuffer` objects."""
    return _live["bytes"]


def live_buffers() -> int:
    return _live["buffers"]


def _account(nbytes: int, count: int) -> None:
    with _lock:
        _live["bytes"] += nbytes
        _live["buffers"] += count


class PinnedBuffer:
    """``nbytes`` of pinned host memory; ``view(dtype, shape)`` gives a NumPy array over it.

    A context manager; :meth:`close` is idempotent. ``flags``: cudaHostAlloc flags (default: portable).
    """

    def __init__(self, nbytes: int, flags: int | None = None):
        from cupy.cuda import runtime

        self.nbytes = max(int(nbytes), 1)
        self.ptr = int(runtime.hostAlloc(self.nbytes, runtime.hostAllocPortable if flags is None else flags))
        _account(self.nbytes, 1)

    def view(self, dtype, shape) -> np.ndarray:
        dtype = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        if count * dtype.itemsize > self.nbytes:
            raise ValueError(f"a {shape} {dtype} view needs {count * dtype.itemsize} bytes; the buffer has {self.nbytes}")
        raw = (ctypes.c_byte * (count * dtype.itemsize)).from_address(self.ptr)
        return np.frombuffer(raw, dtype=dtype, count=count).reshape(shape)

    def close(self) -> None:
        if self.ptr:
            from cupy.cuda import runtime

            runtime.freeHost(self.ptr)
            _account(-self.nbytes, -1)
            self.ptr = 0

    def __enter__(self) -> "PinnedBuffer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # a last resort; callers close explicitly
        try:
            self.close()
        except Exception:
            pass
