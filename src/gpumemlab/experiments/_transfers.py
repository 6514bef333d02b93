"""Helpers shared by the host-device transfer experiments: host buffers of every kind, copy runners with their
checks, size sweeps and the "reaches X% of the best" arithmetic of their findings."""

from __future__ import annotations

import math
from contextlib import ExitStack

import numpy as np

from ..bench.verify import check_equal_device, device_random_nonzero, poison
from ..errors import VerificationError
from ..gpu import host

MEMORIES = ("pageable", "pinned", "registered", "write_combined")
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


def log_sizes(lo: int, hi: int, factor: int = 4) -> list[int]:
    """lo, lo*factor, ... up to hi (bytes), hi included when the steps miss it."""
    if lo <= 0 or hi < lo or factor < 2:
        raise ValueError(f"bad size sweep {lo}..{hi} x{factor}")
    out = [lo * factor**k for k in range(int(math.log(hi / lo, factor) + 1e-9) + 1)]
    return out if out[-1] == hi else out + [hi]


REACH = 0.9  # "reaches 90% of the best from <size>": the fraction the findings report


def _unit(nbytes: int) -> tuple[str, int]:
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if nbytes >= scale and nbytes % scale == 0:
            return unit, scale
    return "B", 1


def size_label(nbytes: int) -> str:
    unit, scale = _unit(nbytes)
    return f"{nbytes // scale} {unit}"


def quoted_size(rec, key: str = "bytes"):
    """size_label of ``rec.params[key]`` as a Finding whose figure is quoted from the record."""
    from ._cite import field, q, sentence

    unit, scale = _unit(rec.params[key])
    return sentence(q(field(rec, "params", key) * (1 / scale), ".0f"), f" {unit}")


def host_buffer(stack: ExitStack, memory: str, n: int, dtype=np.int32) -> np.ndarray:
    """A host array of ``n`` elements in ``memory`` (one of MEMORIES), freed when ``stack`` closes."""
    if memory == "pageable":
        return np.empty(n, dtype)
    if memory == "registered":
        a = np.zeros(n, dtype)  # touched first: registration pins pages that exist
        stack.enter_context(host.register(a))
        return a
    return stack.enter_context(host.host_array(n, dtype, memory)).array


def reference(n: int, seed: int, dtype=np.int32):
    """Random non-zero device data: the bytes every transfer moves and is checked against."""
    return device_random_nonzero(n, dtype, seed)


def copier(dst, src, nbytes: int):
    """One cudaMemcpyAsync (cudaMemcpyDefault) of ``nbytes`` on CuPy's current stream."""
    return lambda: host.copy_async(dst, src, nbytes)


def check_device(out, want, what: str) -> None:
    check_equal_device(out, want, what=what)


def d2h_check(run, host_out: np.ndarray, want, scratch, what: str):
    """Poison the host destination, run, copy it back to the device and compare there: no CPU read of the
    buffer (reading write-combined memory from the CPU is very slow) and no host-side compare of a GiB."""
    def verify():
        poison(host_out)
        run()
        host.copy_async(scratch, host_out, host_out.nbytes)
        check_equal_device(scratch, want, what=what)
    return verify


def fraction_size(records, best_gbps: float, fraction: float = REACH):
    """The smallest ``params['bytes']`` whose record reaches ``fraction`` of ``best_gbps`` (None if none)."""
    hits = sorted(r.params["bytes"] for r in records if r.gbps and r.gbps >= fraction * best_gbps)
    return hits[0] if hits else None


def require_equal(got, want, what: str) -> None:
    if got != want:
        raise VerificationError(f"{what}: got {got!r}, expected {want!r}")


def check_close_device(got, want, atol: float, what: str) -> None:
    """|got - want| <= atol everywhere, on the GPU (NaN fails: every comparison with NaN is false)."""
    import cupy

    ok = cupy.abs(got.astype(cupy.float64) - want) <= atol
    bad = int(ok.size - cupy.count_nonzero(ok))
    if bad:
        first = int(cupy.argmin(ok.ravel()))
        raise VerificationError(f"{what}: {bad} of {ok.size} elements off by more than {atol:g}; first at flat "
                                f"index {first}: got {got.ravel()[first].item()!r}, "
                                f"expected {want.ravel()[first].item()!r}")
