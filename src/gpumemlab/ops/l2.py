"""`gpumemlab.persist_l2`: keep an array's lines in the L2 set-aside while a block of work runs.

How ``hit_ratio=None`` is chosen (:func:`choose_hit_ratio`):

- Measured: on a device with an entry in ``kernels/tuned/l2_persist.json`` (written by ``tools/l2_table.py``
  from the ``l2_persist`` experiment of a committed run; an entry of the same chip under another name is
  borrowed, as for matmul's table), the decision measured at the region / set-aside ratio nearest in log space
  to this window / set-aside ratio: hitRatio 1.0, or the seed's tuned rule (set-aside / window) where it beat
  1.0 beyond the noise. Beyond the measured ratios the nearest end's decision holds. A borrowed entry may come
  from a GPU with another L2 size (an H200 borrows the H100's): the decisions are per ratio to the set-aside.
- Rule, without an entry: an array up to ``HIT1_UP_TO`` times the set-aside gets ``hit_ratio = 1.0``; a larger
  one gets ``set_aside / window bytes``, so that the lines expected to persist fill the set-aside and no more
  (the seed's tuning, section 9.2.2.2).
"""

from __future__ import annotations

import math
from functools import cache

from ..errors import NoDeviceError, UsageError
from ..kernels import KERNEL_DIR
from . import _checks
from ._checks import as_device_array

HIT1_UP_TO = 2.0  # array bytes / set-aside up to which the rule chooses hit_ratio 1.0
TUNED_PATH = KERNEL_DIR / "tuned" / "l2_persist.json"
HIT1, TUNED = "hit_ratio 1.0", "tuned hit_ratio"  # the l2_persist experiment's two windows, a table's decisions

_active: list["PersistL2"] = []  # entered contexts, innermost last (one host thread)


def _check_sizes(window_bytes: int, set_aside: int) -> None:
    if window_bytes <= 0 or set_aside <= 0:
        raise UsageError("choose_hit_ratio: window and set-aside must be positive byte counts")


def rule_hit_ratio(window_bytes: int, set_aside: int) -> float:
    """The ``hit_ratio`` of the rule used without a measured entry (see the module's docstring)."""
    _check_sizes(window_bytes, set_aside)
    if window_bytes <= HIT1_UP_TO * set_aside:
        return 1.0
    return set_aside / window_bytes


@cache
def measured_table() -> dict:
    """{device name: entry} of kernels/tuned/l2_persist.json ({} if absent or unreadable); each entry keeps
    ``device`` and ``decisions``: [(region / set-aside ratio, policy)] ascending, policy HIT1 or TUNED."""
    from ..tune.table import read_devices

    out = {}
    for name, e in read_devices(TUNED_PATH, "l2_persist").items():
        try:
            decisions = sorted((float(s), d["policy"]) for s, d in e.get("decisions", {}).items()
                               if d.get("policy") in (HIT1, TUNED) and float(s) > 0)
        except (AttributeError, TypeError, ValueError):  # a hand-damaged entry: as if absent
            continue
        if decisions:
            out[name] = dict(device=e["device"], decisions=decisions)
    return out


def measured_entry(device: dict, table: dict | None = None) -> dict | None:
    """The entry measured on this device name; else one of the same compute capability and SM count (the same
    chip, e.g. H100 SXM and H200), marked ``borrowed_from``; else None."""
    table = measured_table() if table is None else table
    if device["name"] in table:
        return table[device["name"]]
    for name, e in sorted(table.items()):
        d = e["device"]
        if list(d.get("cc", [])) == list(device.get("cc", [])) and d.get("sm_count") == device.get("sm_count"):
            return dict(e, borrowed_from=name)
    return None


def nearest_policy(ratio: float, decisions: list) -> str:
    """The policy of the measured ratio nearest to ``ratio`` in log space (the smaller one on a tie)."""
    return min(decisions, key=lambda d: abs(math.log(ratio / d[0])))[1]


def choose_hit_ratio(window_bytes: int, set_aside: int, device: dict | None = None,
                     table: dict | None = None) -> tuple[float, str]:
    """(hit_ratio, source) for a window of ``window_bytes`` with the device's largest set-aside ``set_aside``:
    source "measured:<device name of the entry>" or "rule" (without an entry for ``device``, or with none given)."""
    _check_sizes(window_bytes, set_aside)
    e = measured_entry(device, table) if device else None
    if e is None:
        return rule_hit_ratio(window_bytes, set_aside), "rule"
    policy = nearest_policy(window_bytes / set_aside, e["decisions"])
    ratio = 1.0 if policy == HIT1 else min(1.0, set_aside / window_bytes)
    return ratio, f"measured:{e.get('borrowed_from', e['device']['name'])}"


class PersistL2:
    """The context manager :func:`persist_l2` returns. ``window`` and ``set_aside`` say what it set,
    ``hit_ratio`` the ratio in the window and ``hit_ratio_source`` who chose it: "given" (the caller),
    "measured:<device>" (the device whose measured entry decided) or "rule" (see the module's docstring)."""

    def __init__(self, array, hit_ratio, stream):
        if hit_ratio is not None and (isinstance(hit_ratio, bool) or not isinstance(hit_ratio, (int, float))
                                      or not 0.0 < hit_ratio <= 1.0):
            raise UsageError(f"hit_ratio must be a number in (0, 1] or None, got {hit_ratio!r}")
        self.array = as_device_array(array, "array", None)
        here = _checks.cupy_module().cuda.runtime.getDevice()
        if self.array.data.device_id != here:  # the window and set-aside are the current device's
            raise UsageError(f"array: on device {self.array.data.device_id} while device {here} is current; "
                             f"use persist_l2 under `with cupy.cuda.Device({self.array.data.device_id}):`")
        self.requested = hit_ratio
        self.hit_ratio = hit_ratio
        self.hit_ratio_source = None if hit_ratio is None else "given"
        self.stream = stream
        self.window = None
        self.set_aside = None
        self._saved = None

    def __enter__(self) -> "PersistL2":
        from ..gpu import l2, runtime

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
        if self.requested is None:
            ratio, source = choose_hit_ratio(num_bytes, lim["max_set_aside"], runtime.device_info())
        else:
            ratio, source = self.requested, "given"
        self.window = l2.persisting_window(self.array.data.ptr, num_bytes, ratio)
        self.hit_ratio, self.hit_ratio_source = ratio, source
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
            from the window / largest set-aside ratio: by what the ``l2_persist`` experiment measured on this
            device (its chip) when ``kernels/tuned/l2_persist.json`` has an entry for it, else by a fixed rule
            (1.0 up to ``HIT1_UP_TO`` x the set-aside, then set-aside / window); the module's docstring has both.
            The context's ``hit_ratio_source`` says which decided.
        stream: the stream whose window is set (CuPy, cuda.core or a raw handle); default CuPy's current.

    The set-aside (``cudaLimitPersistingL2CacheSize``) is raised to cover the array (up to the device's
    maximum), never further: a larger reserve slows the normal accesses around it (measured on an H100 with
    ncu: same L2 hit rate, much lower DRAM rate; docs/notes/l2-hit-rates-h100.md). On exit, also on an
    exception, the stream's previous window and the previous set-aside are restored and all persisting lines
    are reset to normal (``cudaCtxResetPersistingL2Cache``).

    A measured "tuned" decision carries over the experiment's hitRatio rule (set-aside / region), not its window:
    the experiment's tuned window spans min(region, set-aside) bytes, this one the whole array.

    Raises:
        NoDeviceError: no GPU, or one below compute capability 8.0.
        UsageError: a bad ``hit_ratio``; a context entered twice or exited out of order.

    Example::

        with gpumemlab.persist_l2(lookup_table):
            for batch in batches:
                kernel(lookup_table, batch)
    """
    return PersistL2(array, hit_ratio, stream)
