"""Tuning family ``host_route``: which route stream_map takes for pageable host memory on this host and GPU.

The space is stream_map's ``register`` (staged / registered / balanced); the problem is a pageable float32 array
through ``x * 2 + 1`` into a new ``out`` each call, as a user's first call runs (the new ``out``'s first-touch
faults included); the baseline is pinned H2D of the same bytes (``ratio_to_baseline``: the share of the link the
route reaches). The best route depends on the host (its memcpy rate, how the driver page-locks, huge pages), not
only on the GPU, so each shape names the host it was measured on (:func:`host_signature`) and stream_map's default
(:func:`chosen_register`) reads the entry of this GPU's name and this host.
"""

from __future__ import annotations

import functools
import os
import platform
import re

import numpy as np

from ..bench.timer import TimerConfig
from ..errors import UsageError
from .space import Point, Space

ROUTES = {"staged": False, "registered": True, "balanced": None}   # route name -> stream_map's register=
DEFAULT_MIB = 256   # four of stream_map's 64 MiB chunks: enough for the balance to settle, ~0.1 s a call
# stream_map itself: ops/ is above tune/, so the pipeline hands itself down when it loads (register_pipeline)
_pipeline = None


def register_pipeline(fn) -> None:
    global _pipeline
    _pipeline = fn


def _stream_map():
    if _pipeline is None:
        raise UsageError("host_route times gpumemlab.stream_map: import gpumemlab.ops.stream_map first")
    return _pipeline


def host_signature() -> str:
    """The CPU model, CPU count and memory of this host: what decides the route next to the GPU."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        mem = 0
    return f"{model}, {os.cpu_count()} CPUs, {mem:.0f} GiB"


def parse_size(text: str) -> str:
    """``256``, ``256MiB`` or an already canonical shape -> ``"256 MiB on <host signature>"``."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:MiB)?\s*(?:on .*)?", str(text))
    if not m or int(m.group(1)) < 1:
        raise UsageError(f"host_route size {text!r}: expected MiB of host data, e.g. 256 or 256MiB")
    return f"{int(m.group(1))} MiB on {host_signature()}"


def _nbytes(shape: str) -> int:
    return int(shape.split()[0]) << 20


def _problem(shape: str):
    import cupy

    from .families import Problem

    n = _nbytes(shape) // 4
    x = (np.random.default_rng(7).random(n, dtype=np.float32) + 0.5)
    answer = cupy.asarray(x).astype(cupy.float64) * 2 + 1
    return Problem(shape, dict(x=x, out=[None]), answer, 1e-6)  # float32 rounding of x * 2 + 1: <= 2^-24


def _light(c):
    return c * 2 + 1


def _runner(problem, point: Point):
    import cupy

    from .families import Runner

    stream_map, data, register = _stream_map(), problem.data, ROUTES[point.params["route"]]
    _odd_cases(point.params["route"])

    def run():
        data["out"][0] = stream_map(_light, data["x"], register=register)  # a new out: the user's first call

    def result():
        return cupy.asarray(data["out"][0])

    def poison():
        if data["out"][0] is not None:
            data["out"][0][:] = np.nan
    return Runner(run, result, poison)


def _pinned_h2d(problem):
    import cupy

    from ..gpu.host import host_array, memcpy_async
    from .families import Runner

    x = problem.data["x"]
    pinned = host_array(x.shape, x.dtype)
    pinned.array[:] = x
    dev = cupy.empty(x.shape, cupy.float32)

    def run():
        memcpy_async(dev.data.ptr, pinned.ptr, x.nbytes, cupy.cuda.get_current_stream().ptr)

    def result():  # the copy, through fn on the GPU, to compare with the same answer
        return _light(dev.astype(cupy.float64))

    def poison():
        dev.fill(np.nan)
    return Runner(run, result, poison)


def _odd_cases(route: str) -> None:
    """Odd sizes through the route: rows not a multiple of the chunk, unaligned starts, one row (in the tuning
    process: the route launches no kernel of its own that could break a context, so no child process is needed)."""
    from ..errors import VerificationError

    stream_map = _stream_map()
    for n, chunk in ((1, 4), (1_000_003, (1 << 20) + 12), (3_000_001, 1 << 20)):
        base = np.random.default_rng(n).random(n + 1, dtype=np.float32)
        x = base[1:]
        got = stream_map(_light, x, register=ROUTES[route], chunk_bytes=chunk)
        want = x * np.float32(2) + np.float32(1)
        if not np.array_equal(got, want):
            raise VerificationError(f"host_route {route}: {int((got != want).sum())} of {n} values wrong")


@functools.cache
def family():
    """The family's declaration, built on first use (``FAMILY``, read by :func:`.families.get`)."""
    from .families import Family

    return Family(
        name="host_route",
        about="stream_map's route for pageable host memory per GPU name and host, written by `gpumemlab tune "
              "host_route --install` (measured: never edit by hand; rerun the command on the host instead)",
        metric="gbps", baseline="pinned H2D (cudaMemcpyAsync)", sources=(),
        space=Space(params=dict(route=list(ROUTES))),
        shapes=(str(DEFAULT_MIB),), parse_shape=parse_size, work=lambda shape: float(_nbytes(shape)),
        bytes_needed=lambda shape: 4 * _nbytes(shape), context=lambda shape, device: {},
        problem=_problem, runner=_runner, baseline_runner=_pinned_h2d,
        label=lambda p: p["route"], check_key=lambda p: "stream_map", check=lambda key, device: None,
        reference=dict(route="balanced"), top=3,
        screen_timer=TimerConfig(warmup=1, min_samples=3, min_time_s=0.0, max_time_s=0.3, batch=3),
        final_timer=TimerConfig(warmup=1, min_samples=5, min_time_s=0.0, max_time_s=0.6, batch=5))



def chosen_register(entry: dict | None) -> bool | None | str:
    """stream_map's ``register`` from a device entry of the tuned table: the route chosen at this host's largest
    measured size; "none" when the entry has nothing for this host."""
    if not entry:
        return "none"
    mine = f" on {host_signature()}"
    sizes = [s for s in entry.get("chosen", {}) if s.endswith(mine)]
    if not sizes:
        return "none"
    best = entry["chosen"][max(sizes, key=_nbytes)]
    return ROUTES.get(best["params"].get("route"), "none")


def __getattr__(name: str):
    if name == "FAMILY":  # the registry's name for the declaration, built lazily
        return family()
    raise AttributeError(name)
