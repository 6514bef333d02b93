"""`gpumemlab.persist_l2`: keep an array's lines in the L2 set-aside while a block of work runs.

How ``hit_ratio=None`` is chosen (:func:`measured_policy`):

- Measured: on a device with an entry in ``kernels/tuned/l2_persist.json`` (written by ``gpumemlab tune l2_persist
  --install``; an entry of the same chip under another name is borrowed, as for matmul's table), the setting chosen
  at the measured table size nearest in log space to the array's bytes: "no window" (nothing is set: the device as
  found was fastest, or no window beat it beyond the final round's p10-p90 spread), "set-aside sized" (the limit
  raised to the array, hitRatio min(1, set-aside / window)) or "set-aside as found" (no limit change, hitRatio
  min(1, limit as found / window)).
- Rule, without an entry: "set-aside sized".
"""

from __future__ import annotations

import math
from functools import cache

from ..errors import NoDeviceError, UsageError
from ..gpu.l2 import AS_FOUND, NONE, SIZED
from ..kernels import KERNEL_DIR
from ._checks import as_device_array

TUNED_PATH = KERNEL_DIR / "tuned" / "l2_persist.json"

_active: list["PersistL2"] = []  # entered contexts, innermost last (one host thread)


def rule_hit_ratio(window_bytes: int, set_aside: int) -> float:
    """The hitRatio that lets the persisting lines fill the set-aside and no more: min(1, set-aside / window)."""
    if window_bytes <= 0 or set_aside <= 0:
        raise UsageError("rule_hit_ratio: window and set-aside must be positive byte counts")
    return min(1.0, set_aside / window_bytes)


def decide(entry: dict, shape: str) -> str:
    """The setting persist_l2 takes at ``shape`` of a tuned entry: the chosen point's policy when it is a window
    that beat the baseline beyond the noise (its p90 below the baseline's p10, same round), else "no window"."""
    chosen = entry["chosen"].get(shape)
    if not chosen or chosen["params"].get("policy") in (None, NONE):
        return NONE
    rnd = chosen["round"]
    point = next((p for p in entry["points"] if p["shape"] == shape and p["round"] == rnd
                  and p["name"] == chosen["name"] and p.get("verified")), None)
    base = next((b for b in entry["baseline"]["points"] if b["shape"] == shape and b["round"] == rnd), None)
    if point is None or base is None or not point["p90_s"] < base["p10_s"]:
        return NONE
    return chosen["params"]["policy"]


@cache
def measured_table() -> dict:
    """{device name: entry} of kernels/tuned/l2_persist.json ({} if absent or unreadable); each entry keeps
    ``device`` and ``choices``: [(table bytes, policy)] ascending, one per table size (:func:`decide` at each
    stream size; a window only where every stream size measured took the same one)."""
    from ..tune.table import read_devices

    out = {}
    for name, e in read_devices(TUNED_PATH, "l2_persist").items():
        by_table: dict[float, set] = {}
        try:
            for shape in e["chosen"]:  # TABLE:STREAM in MiB
                by_table.setdefault(float(shape.split(":")[0]) * 2**20, set()).add(decide(e, shape))
        except (AttributeError, KeyError, TypeError, ValueError):  # a hand-damaged or older entry: as if absent
            continue
        # persist_l2 does not know the stream beside the array: a window only where it won with every stream measured
        choices = sorted((size, next(iter(d)) if len(d) == 1 else NONE) for size, d in by_table.items())
        if choices:
            out[name] = dict(device=e["device"], choices=choices)
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


def measured_policy(nbytes: int, device: dict | None = None, table: dict | None = None) -> tuple[str, str]:
    """(setting, source) for an array of ``nbytes``: the measured choice at the nearest table size (log space; the
    smaller on a tie), source "measured:<device name of the entry>"; without an entry ("set-aside sized", "rule")."""
    if nbytes <= 0:
        raise UsageError("measured_policy: the array must have a positive byte count")
    e = measured_entry(device, table) if device else None
    if e is None:
        return SIZED, "rule"
    policy = min(e["choices"], key=lambda c: abs(math.log(nbytes / c[0])))[1]
    return policy, f"measured:{e.get('borrowed_from', e['device']['name'])}"


class PersistL2:
    """The context manager :func:`persist_l2` returns. ``policy`` is the setting ("no window", "set-aside sized",
    "set-aside as found"), ``window`` and ``set_aside`` say what it set, ``hit_ratio`` the ratio in the window and
    ``hit_ratio_source`` who chose: "given" (the caller), "measured:<device>" (the device whose measured entry
    decided) or "rule" (see the module's docstring)."""

    def __init__(self, array, hit_ratio, stream):
        if hit_ratio is not None and (isinstance(hit_ratio, bool) or not isinstance(hit_ratio, (int, float))
                                      or not 0.0 < hit_ratio <= 1.0):
            raise UsageError(f"hit_ratio must be a number in (0, 1] or None, got {hit_ratio!r}")
        self.array = as_device_array(array, "array", None)
        from ..gpu.runtime import current_ordinal

        here = current_ordinal()
        if self.array.data.device_id != here:  # the window and set-aside are the current device's
            raise UsageError(f"array: on device {self.array.data.device_id} while device {here} is current; "
                             f"use persist_l2 under `with cupy.cuda.Device({self.array.data.device_id}):`")
        self.requested = hit_ratio
        self.hit_ratio = hit_ratio
        self.hit_ratio_source = None if hit_ratio is None else "given"
        self.policy = None
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
        num_bytes = min(nbytes, lim["max_window"])
        if self.requested is None:
            policy, source = measured_policy(nbytes, runtime.device_info())
        else:
            policy, source = SIZED, "given"
        if policy == AS_FOUND and prev_limit == 0:
            policy = NONE  # no set-aside to put the window in
        self.policy, self.hit_ratio_source = policy, source
        if policy == NONE:  # nothing to set: the device as found
            self.window, self.set_aside, self.hit_ratio = None, prev_limit, None
            self._saved = (handle, None, None)
            _active.append(self)
            return self
        self.set_aside = prev_limit if policy == AS_FOUND else max(prev_limit, min(nbytes, lim["max_set_aside"]))
        ratio = self.requested if self.requested is not None else rule_hit_ratio(num_bytes, self.set_aside)
        self.window = l2.persisting_window(self.array.data.ptr, num_bytes, ratio)
        self.hit_ratio = ratio
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
        if prev_limit is None:  # "no window": nothing was set
            return
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
        hit_ratio: the fraction of accesses in the window that get the persisting property (the set-aside then
            sized to the array). None chooses the setting `gpumemlab tune l2_persist` measured fastest on this
            device (its chip) for the nearest table size - which may be no window at all, the device as found -
            else the set-aside sized to the array with hitRatio min(1, set-aside / window); the module's
            docstring has both. The context's ``policy`` says which setting and ``hit_ratio_source`` who chose.
        stream: the stream whose window is set (CuPy, cuda.core or a raw handle); default CuPy's current.

    The set-aside (``cudaLimitPersistingL2CacheSize``) is raised to cover the array (up to the device's
    maximum), never further: a larger reserve slows the normal accesses around it (measured on an H100 with
    ncu: same L2 hit rate, much lower DRAM rate; docs/notes/l2-hit-rates-h100.md). On exit, also on an
    exception, the stream's previous window and the previous set-aside are restored and all persisting lines
    are reset to normal (``cudaCtxResetPersistingL2Cache``).

    With "no window" chosen the context sets and restores nothing (``window`` is None, ``hit_ratio`` None).

    Raises:
        NoDeviceError: no GPU, or one below compute capability 8.0.
        UsageError: a bad ``hit_ratio``; a context entered twice or exited out of order.

    Example::

        with gpumemlab.persist_l2(lookup_table):
            for batch in batches:
                kernel(lookup_table, batch)
    """
    return PersistL2(array, hit_ratio, stream)
