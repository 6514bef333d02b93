"""Observations that kernels leave for the host's next call: a page of mapped host memory, one row of counters per
key (e.g. a coordinate buffer), written by a kernel and read by the host with no sync.

A row holds what the latest launch that finished wrote, or ``UNSEEN`` before any did. The host reads it while later
work may still be queued, so a row can be stale (or belong to the key that held the row before); whatever is chosen
from it must not change results, only how the work is laid out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

UNSEEN = 0xFFFFFFFF  # a counter no launch has written yet


class Board:
    """Rows of uint32 counters that kernels write at ``device_ptr`` and the host reads in ``counters``, handed out
    per key, least recently used first. ``row(key)`` -> (host view, device address, calls): the view holds what
    kernels wrote there last; ``calls`` counts the key's requests since it got the row (1 on the first). :meth:`mapped`
    allocates one in mapped host memory."""

    def __init__(self, counters: np.ndarray, device_ptr: int, owner=None):
        self.counters, self.device_ptr, self._owner = counters, int(device_ptr), owner
        self.counters.fill(UNSEEN)
        self._rows = [(counters[i], self.device_ptr + i * counters.strides[0]) for i in range(len(counters))]
        self._keys: OrderedDict = OrderedDict()
        self._lock = threading.Lock()  # calls from several threads hand rows out one at a time

    @classmethod
    def mapped(cls, rows: int, width: int) -> "Board":
        from .host import HostArray

        mem = HostArray((rows, width), np.uint32, "mapped", counted=False)  # a cache: not the caller's memory
        return cls(mem.array, mem.device_ptr, mem)

    def row(self, key) -> tuple[np.ndarray, int, int]:
        keys = self._keys
        with self._lock:
            i, calls = keys.pop(key, (None, 0))
            if i is None:
                if len(keys) < len(self._rows):
                    i = len(keys)
                else:  # the least recently used key gives its row up
                    i, _ = keys.popitem(last=False)[1]
                self._rows[i][0].fill(UNSEEN)
            keys[key] = (i, calls + 1)
        view, addr = self._rows[i]
        return view, addr, calls + 1

    def close(self) -> None:
        self._keys.clear()
        if self._owner is not None:
            self._owner.close()


def seen(counts: np.ndarray) -> list[int] | None:
    """The counters as ints, or None while any is still ``UNSEEN``."""
    values = counts.tolist()
    return None if UNSEEN in values else values
