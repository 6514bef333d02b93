"""`gpumemlab.persist_l2`: keep an array's lines in the L2 set-aside while a block of work runs.

Rule for ``hit_ratio=None`` (what the ``l2_persist`` experiment measures; run it on your GPU to check it):
an array up to ``HIT1_UP_TO`` times the set-aside gets ``hit_ratio = 1.0`` (on an H200, measured by hand with
the seed's sliding-window kernel, 1.0 beat the seed's tuned ratio at every size up to twice the set-aside);
a larger one gets ``set_aside / window bytes``, so that the lines expected to persist fill the set-aside and
no more (the seed's tuning, section 9.2.2.2).
"""

from __future__ import annotations

from ..errors import NoDeviceError, UsageError
from ._checks import as_device_array

HIT1_UP_TO = 2.0  # array bytes / set-aside up to which hit_ratio 1.0 is chosen

_active: list["PersistL2"] = []  # entered contexts, innermost last (one host thread)


def choose_hit_ratio(window_bytes: int, set_aside: int) -> float:
    """The ``hit_ratio`` persist_l2 uses when none is given (see the module's rule)."""
    if window_bytes <= 0 or set_aside <= 0:
        raise UsageError("choose_hit_ratio: window and set-aside must be positive byte counts")
    if window_bytes <= HIT1_UP_TO * set_aside:
        return 1.0
    return set_aside / window_bytes


class PersistL2:
    """The context manager :func:`persist_l2` returns; ``window`` and ``set_aside`` say what it set."""

    def __init__(self, array, hit_ratio, stream):
        self.array = as_device_array(array, "array", None)
        if hit_ratio is not None and not (isinstance(hit_ratio, (int, float)) and 0.0 < hit_ratio <= 1.0):
            raise UsageError(f"hit_ratio must be a number in (0, 1] or None, got {hit_ratio!r}")
        self.hit_ratio = hit_ratio
        self.stream = stream
        self.window = None
        self.set_aside = None
        self._saved = None

    def __enter__(self) -> "PersistL2":
        from ..gpu import l2

        if self._saved is not None:
            raise UsageError("persist_l2: this context is already active; make a new one to nest")
        reason = l2.unsupported_reason()
        if reason:
            raise NoDeviceError(f"persist_l2: {reason}")
        lim = l2.limits()
        handle = l2.stream_handle(self.stream)
        nbytes = max(1, self.array.nbytes)
        prev_limit, prev_window = l2.persisting_limit(), l2.get_window(handle)
        self.set_aside = max(prev_limit, min(nbytes, lim["max_set_aside"]))
        num_bytes = min(nbytes, lim["max_window"])
        ratio = self.hit_ratio if self.hit_ratio is not None else choose_hit_ratio(num_bytes, lim["max_set_aside"])
        self.window = l2.persisting_window(self.array.data.ptr, num_bytes, ratio)
        l2.set_persisting_limit(self.set_aside)
        try:
            l2.set_window(self.window, handle)
        except Exception:
            l2.set_persisting_limit(prev_limit)
            raise
        self._saved = (handle, prev_limit, prev_window)
        _active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        from ..gpu import l2

        if self._saved is None:
            raise UsageError("persist_l2: exit without a matching enter")
        if not _active or _active[-1] is not self:
            raise UsageError("persist_l2: contexts must exit in the reverse order they were entered")
        handle, prev_limit, prev_window = self._saved
        _active.pop()
        self._saved = None
        try:
            l2.set_window(prev_window, handle)
        finally:
            l2.set_persisting_limit(prev_limit)
            l2.reset_persisting_lines()


def persist_l2(array, *, hit_ratio: float | None = None, stream=None) -> PersistL2:
    """Mark ``array``'s bytes as persisting in L2 for the work submitted inside the ``with`` block.

    Args:
        array: a GPU array (CuPy, ``__cuda_array_interface__`` or DLPack), C-contiguous; its bytes are the
            access policy window (clamped to the device's largest window).
        hit_ratio: the fraction of accesses in the window that get the persisting property; None chooses
            by the module's rule from the array's size and the device's largest set-aside.
        stream: the stream whose window is set (CuPy, cuda.core or a raw handle); default CuPy's current.

    The set-aside (``cudaLimitPersistingL2CacheSize``) is raised to cover the array (up to the device's
    maximum), never further: a larger reserve slows the normal accesses around it (measured on an H100 with
    ncu: same L2 hit rate, much lower DRAM rate; docs/notes/l2-hit-rates-h100.md). On exit, also on an exception, the stream's previous window and the previous set-aside are
    restored and all persisting lines are reset to normal (``cudaCtxResetPersistingL2Cache``).

    Raises:
        NoDeviceError: no GPU, or one below compute capability 8.0.
        UsageError: a bad ``hit_ratio``; a context entered twice or exited out of order.

    Example::

        with gpumemlab.persist_l2(lookup_table):
            for batch in batches:
                kernel(lookup_table, batch)
    """
    return PersistL2(array, hit_ratio, stream)
