"""Workspaces of the ticket epilogues (matmul's GEMV, the split column sums): partials and zeroed uint32 tickets,
kept per device, stream and size class, never made per call.

The rule is one workspace per stream. Kernels on one stream run in order, so one set serves every call there, and
each launch leaves its tickets at 0 for the next; a call on another stream, which may run at the same time, gets its
own set, so two launches in flight never share a ticket or a partial. The per-thread default stream is one handle for
a different stream in each host thread, so its sets are per thread. (A set first made inside a CUDA graph capture
would have its zeroing captured, not run: capture after a first call outside.)
"""

from __future__ import annotations

import threading
from functools import lru_cache

from ..gpu import runtime

KEEP = 16         # workspaces kept (per device, stream, dtype and size class); older ones go back to CuPy's pool
MIN_CLASS = 1024  # elements: the smallest size class
PER_THREAD_STREAM = 2  # cudaStreamPerThread: one handle that names a different stream in each host thread


@lru_cache(maxsize=256)  # called on every ticket launch: a dict lookup instead of the arithmetic
def size_class(n: int) -> int:
    """The workspace size class for ``n`` elements: the next power of two, at least MIN_CLASS."""
    return max(MIN_CLASS, 1 << (int(n) - 1).bit_length())


def ticket_workspace(partials: int, tickets: int, dtype: str = "float32"):
    """(``dtype`` partials, zeroed uint32 tickets), at least these many, on CuPy's current stream and device."""
    _, _, current, device = runtime._launch_api()
    stream = current().ptr
    thread = threading.get_ident() if stream == PER_THREAD_STREAM else 0
    return _workspace(device(), stream, thread, dtype, size_class(partials), size_class(tickets))


@lru_cache(maxsize=KEEP)
def _workspace(device: int, stream: int, thread: int, dtype: str, partials: int, tickets: int):
    import cupy

    # made on the stream that uses it (the zeroing is ordered before its first launch); an evicted set returns to
    # CuPy's pool, which hands a block out again only on the stream it came from: after the launches that used it
    return cupy.empty(partials, dtype), cupy.zeros(tickets, cupy.uint32)
