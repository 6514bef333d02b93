"""Pages of a host array the kernel has not backed yet: advise huge pages, populate ahead of a copy.

A new ``out`` (``np.empty``) is backed lazily: the first write to each page traps into the kernel, which zeroes
the page. Writing a chunk with memmove takes one such fault per page (4 KiB, or 2 MiB where transparent huge pages
apply); ``madvise(MADV_POPULATE_WRITE)`` (Linux 5.14) backs a whole range in one call instead. Measured per host
by the stream_map experiment's "host memcpy" baselines (docs/notes/stream_map.md, "pageable: where 6.2 GB/s went").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os

import numpy as np

MADV_HUGEPAGE = 14
MADV_POPULATE_WRITE = 23
PAGE = mmap.PAGESIZE
_libc = None


def _madvise(addr: int, nbytes: int, advice: int) -> bool:
    """madvise over the whole pages inside ``addr .. addr + nbytes``; False where the kernel refuses."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    first, last = -(-addr // PAGE) * PAGE, (addr + nbytes) // PAGE * PAGE
    if last <= first:
        return True
    return _libc.madvise(first, last - first, advice) == 0


def advise_huge(a: np.ndarray) -> bool:
    """Ask for transparent huge pages over ``a`` (honoured when THP is "madvise" or "always")."""
    return os.name == "posix" and _madvise(a.ctypes.data, a.nbytes, MADV_HUGEPAGE)


def populate(a: np.ndarray) -> bool:
    """Back every page of the C-contiguous ``a`` now, in one call (False: not supported here; the copy faults)."""
    return os.name == "posix" and _madvise(a.ctypes.data, a.nbytes, MADV_POPULATE_WRITE)


def thp_mode() -> str | None:
    """The host's transparent huge page setting ("always", "madvise", "never"), None where unknown."""
    try:
        text = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        return None
    return next((w[1:-1] for w in text.split() if w.startswith("[")), None)
