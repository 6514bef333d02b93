"""``gpumemlab.stream_map``: a host array through a GPU function, chunk by chunk, at link speed.

The staged concurrent copy and execute of the Best Practices Guide (seed 003: copies and kernels of different
streams overlap, ``tE + tT/nStreams`` instead of ``tE + tT``) from page-locked memory (seeds 001/004: pinned
memory reaches the full PCIe rate, pageable memory does not). Chunk ``k`` goes to slot ``k % streams``:

    input of chunk k made page-locked, a few chunks ahead, by one of two routes:
        registered: its page-aligned interior is page-locked in place (cudaHostRegister) by the "pinner" thread
                    and DMAed straight from x; the partial pages at its two ends go through a small pinned buffer
        staged:     host threads copy it into a pinned staging buffer
    -> H2D on the "up" stream -> fn(chunk) on the "compute" stream -> D2H on the "down" stream into the slot's
       pinned output buffer (events chain the three; one stream per direction keeps H2D and D2H on different copy
       engines; one compute stream runs fn chunk after chunk, as the caller's own loop would)
    -> (once the D2H has completed) host threads copy it into out[k]; the pinner unregisters the input

Why two routes (docs/notes/stream_map.md): page-locking does not scale with threads (the driver serializes it), so
it is a serial resource next to the copy threads; with ``register=None`` :class:`Balance` registers the share of
chunks that makes the pinner and the copy threads finish together, from their costs per byte measured during the
call. Which route is fastest depends on the host, so the default (``register="auto"``) is the one
``gpumemlab tune host_route`` measured for this GPU and host, else the balance. ``x`` that is already page-locked is
DMAed from directly, and a page-locked ``out`` is DMAed into directly: a caller who keeps both pinned pays no host
copy at all.

Pinning memory costs about as much as copying it, so the pinned staging buffers of a successful call are kept for
the next one (at most ``STAGING_CACHE_BYTES`` per device of the call; :func:`release_staging` frees them).
Everything else (streams, device buffers, registrations, worker threads) is released on return; after an exception
from ``fn`` or Ctrl-C the staging buffers are freed too.

With ``devices=[0, 1, ...]`` one such pipeline runs per GPU, each in a host thread of its own with its own streams,
device chunks and staging buffers; chunk ``k`` goes to ``devices[k % len(devices)]`` and each writes its rows of
``out`` (the gather is in place, in order). If ``fn`` raises on one device the others stop at their next chunk, every
pipeline drains and frees what it holds, and the exception is re-raised with a note naming the chunk and device.
"""

from __future__ import annotations

import ctypes
import math
import mmap
import os
import threading
import time
import traceback
import weakref
from collections import deque
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from ..tune.host_route import register_pipeline
from ._stream_trace import Bar, Ranges

DEFAULT_CHUNK_BYTES = 64 << 20   # 64 MiB: ~1 ms per transfer on PCIe Gen5, so per-copy overhead stays < 1%
MAX_WORKERS = 16
STAGING_CACHE_BYTES = 1 << 30    # pinned staging kept between calls, per device of the call
MIN_REGISTER_BYTES = 1 << 20     # below this a chunk is staged: registering has a fixed cost per call
AHEAD = 2                        # chunks whose input is being made page-locked while one is issued
# chunks of fn queued on the GPU before the host waits: a chain of many small CuPy calls must not fill CUDA's
# launch queue, where a launch blocks (docs/notes/stream_map.md, "fn as users write it")
FN_QUEUE = 2
PAGE = mmap.PAGESIZE
_staging: list = []              # idle PinnedBuffers from earlier calls
_staging_lock = threading.Lock()  # one pipeline per device may take and return buffers at once
_live_streams = weakref.WeakSet()  # every stream a pipeline made, until it is freed (leak checks)


def release_staging() -> None:
    """Free the pinned staging buffers that stream_map keeps between calls."""
    with _staging_lock:
        while _staging:
            _staging.pop().close()


def _take_staging(nbytes: int):
    """A cached pinned buffer of ``nbytes`` .. 2 x ``nbytes``, else a new one (pinned memory is portable under
    UVA: any device's copies may use it)."""
    from ..gpu.host import host_array

    with _staging_lock:
        for i, buf in enumerate(_staging):
            if nbytes <= buf.nbytes <= 2 * nbytes:
                return _staging.pop(i)
    return host_array(nbytes, np.uint8)


def _staged(buf, dtype, shape) -> np.ndarray:
    """The first rows of a pinned staging buffer as an array of ``dtype`` and ``shape``."""
    count = math.prod(shape) * np.dtype(dtype).itemsize
    return buf.array[:count].view(dtype).reshape(shape)


def _keep_staging(buffers: list, limit: int) -> None:
    """Cache the buffers of a successful call (newest first), freeing what exceeds ``limit`` bytes."""
    with _staging_lock:
        for buf in buffers:
            _staging.insert(0, buf)
        total = 0
        for buf in list(_staging):
            total += buf.nbytes
            if total > limit:
                _staging.remove(buf)
                buf.close()


def stream_map(fn, x, *, out=None, chunk_bytes: int | None = None, streams: int | None = None,
               profile: bool = False, workers: int | None = None, register: bool | None | str = "auto",
               devices=None, progress: bool = False):
    """Apply ``fn`` to a host array chunk by chunk on the GPU; return the gathered host result.

    Args:
        fn: takes a CuPy array (a chunk of ``x``'s rows, on the GPU) and returns a CuPy array whose leading
            dimension is the chunk's. Its dtype and trailing shape are decided by the first chunk and must not
            change. It runs with one of stream_map's streams as CuPy's current stream.
        x: a host NumPy array (``numpy.memmap`` too; any strides), split along axis 0. It may be larger than
            GPU memory. A ``dask.array.Array`` gives a Dask array whose blocks each go through this pipeline on
            the worker that holds them (:mod:`gpumemlab.ops.stream_map_dask`). It must not be written while stream_map runs (its chunks may be DMAed in place);
            ``out=x`` (in place) is fine: each chunk's rows are read before they are written.
        out: a writeable host NumPy array of shape ``(len(x), *trailing)`` and the result's dtype; by default a
            new one. A C-contiguous page-locked ``out`` (``cupyx.empty_pinned``, ``cudaHostAlloc``) receives each
            chunk's D2H directly, with no host copy. If ``fn`` raises, the rows of chunks that completed before it
            are written and the others are undefined.
        chunk_bytes: bytes of ``x`` per chunk (default 64 MiB, less when GPU memory is short).
        streams: chunks in flight (default: copy engines + 1, at least 2).
        profile: also return statistics: ``(out, stats)``, the breakdown of the wall time included.
        workers: host threads that copy between ``x``/``out`` and the pinned buffers (default min(16, CPUs)).
        register: how chunks of pageable ``x`` become page-locked: False stages them (two host copies per byte);
            None registers the measured share of chunks in place (:class:`Balance`) and stages the rest; True
            registers every chunk that can be (C-contiguous, not a memmap, at least 1 MiB). "auto" (default): the
            route ``gpumemlab tune host_route`` measured fastest for this host and GPU, else None (the best route
            differs between hosts: docs/notes/stream_map.md). An ``x`` that is already page-locked is always
            DMAed in place.
        devices: GPU ordinals to spread the chunks over (round-robin), e.g. ``[0, 1]``; each gets its own streams,
            staging buffers and a share of ``workers``, and ``fn`` runs with that device current (arrays it closes
            over must be usable there). None (default): CuPy's current device only.
        progress: show a progress bar (rich, on stderr) with GB/s of ``x`` and the time left.

    Returns:
        ``out``, or ``(out, stats)`` with ``profile=True``: bytes, wall time, time each stage kept its engine
        busy (``h2d_s``, ``fn_s``, ``d2h_s``, from CUDA events), chunks per input route, the output's route
        (``out_route``: "pinned" or "staged"), the overlap bound ``max(h2d_s, fn_s, d2h_s)``, and where the
        wall went: ``fn_gpu_s`` (fn's GPU time summed over chunks), ``fn_host_s`` (host time inside fn: launches,
        allocations), ``wait_gpu_s`` (the host waiting for chunks on the GPU), ``host_in_s`` / ``host_out_s``
        (waiting for the host copies), ``route`` (the ``register`` used and where it came from).

    Raises:
        UsageError: ``x`` not a host array or empty, ``fn`` returning a non-array, a wrong leading size or a
            dtype/shape that changes between chunks, ``out`` of the wrong shape/dtype or read-only, bad sizes,
            ``devices`` not distinct ordinals of this machine's GPUs.
        Whatever ``fn`` raises, after every stream is drained and every resource freed, with a note naming the
            chunk (and the device, with ``devices``).
    """
    if type(x).__module__.split(".")[0] == "dask":
        from .stream_map_dask import stream_map_dask

        return stream_map_dask(stream_map, fn, x, chunk_bytes=chunk_bytes, streams=streams, workers=workers,
                               register=register)
    x = _check_input(x)
    if not callable(fn):
        raise UsageError(f"stream_map: fn must be callable, got {type(fn).__name__}")
    if out is not None and (not isinstance(out, np.ndarray) or out.ndim == 0 or out.shape[0] != x.shape[0]):
        shape = getattr(out, "shape", type(out).__name__)
        raise UsageError(f"stream_map: out must be a NumPy array with {x.shape[0]} rows like x, got {shape}")
    if register != "auto" and register is not None and not isinstance(register, bool):
        raise UsageError(f"stream_map: register must be \"auto\", None, True or False, got {register!r}")
    devices = _check_devices(devices)
    plan = _plan(x, chunk_bytes, streams, workers)
    devices = None if devices is None else _check_ordinals(devices)
    route = _route(register)
    with Bar(x.nbytes, bool(progress)) as bar:
        if devices is not None:
            return _spread(fn, x, out, plan, route, devices, profile, bar)
        pipe = _Pipeline(fn, x, _Output(out), plan, route, bar=bar)
        ok = False
        try:
            pipe.setup()
            result = pipe.run()
            ok = True
        finally:
            pipe.close(keep_staging=ok)
    return (result, pipe.stats()) if profile else result


@dataclass(frozen=True)
class Route:
    register: bool | None   # as stream_map's argument
    source: str             # "argument", "table" (measured for this host) or "fallback" (no measurement)


def _route(register) -> Route:
    if register != "auto":
        return Route(register, "argument")
    from ._stream_route import default_register

    chosen = default_register()  # balanced where this host was not measured: it adapts to the host during the call
    return Route(None, "fallback") if isinstance(chosen, str) else Route(chosen, "table")


# ---------------------------------------------------------------- checks and plan

def _check_devices(devices) -> list[int] | None:
    """``devices`` as a list of distinct ints (UsageError otherwise); checked against the GPUs later."""
    if devices is None:
        return None
    if not isinstance(devices, (list, tuple)) or not devices:
        raise UsageError(f"stream_map: devices must be a non-empty list of GPU ordinals, got {devices!r}")
    bad = [d for d in devices if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0]
    if bad:
        raise UsageError(f"stream_map: devices must be GPU ordinals (ints >= 0), got {bad[0]!r} in {list(devices)}")
    if len(set(devices)) != len(devices):
        raise UsageError(f"stream_map: devices must be distinct, got {list(devices)}")
    return [int(d) for d in devices]


def _check_ordinals(devices: list[int]) -> list[int]:
    from ..gpu.runtime import device_count

    count = device_count()
    missing = [d for d in devices if d >= count]
    if missing:
        raise UsageError(f"stream_map: no GPU {missing[0]} (devices {devices}): this machine has {count} "
                         f"(ordinals 0..{count - 1})")
    return devices


def _check_input(x) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        kind = type(x).__module__.split(".")[0]
        hint = " (a GPU array: call fn on it directly)" if kind == "cupy" or hasattr(x, "__cuda_array_interface__") else ""
        raise UsageError(f"stream_map: x must be a host NumPy array, not {type(x).__name__}{hint}")
    if x.ndim == 0 or x.shape[0] == 0:
        raise UsageError(f"stream_map: x must have at least one row along axis 0 (shape {x.shape})")
    if x.dtype.hasobject:
        raise UsageError(f"stream_map: x has dtype {x.dtype}; GPU chunks need a numeric dtype")
    if x.dtype.itemsize * math.prod(x.shape[1:]) == 0:
        raise UsageError(f"stream_map: the rows of x are empty (shape {x.shape})")
    return x


@dataclass(frozen=True)
class Plan:
    rows: int          # rows per chunk
    chunks: int
    streams: int
    workers: int


def _plan(x: np.ndarray, chunk_bytes, streams, workers) -> Plan:
    row_bytes = x.dtype.itemsize * math.prod(x.shape[1:])
    for name, value in (("chunk_bytes", chunk_bytes), ("streams", streams), ("workers", workers)):
        if value is not None and (not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1):
            raise UsageError(f"stream_map: {name} must be a positive integer, got {value!r}")
    from ..gpu.host import copy_engines
    from ..gpu.runtime import ensure_device, free_memory_bytes

    ensure_device()  # NoDeviceError with one line when there is no GPU
    if streams is None:
        streams = max(2, min(4, copy_engines() + 1))
    if chunk_bytes is None:
        free = free_memory_bytes()
        # each slot holds an input chunk, fn's output and fn's temporaries: keep all slots within a quarter
        chunk_bytes = max(row_bytes, min(DEFAULT_CHUNK_BYTES, free // (4 * 3 * streams)))
    rows = max(1, min(x.shape[0], int(chunk_bytes) // row_bytes))
    workers = workers or min(MAX_WORKERS, os.cpu_count() or 1)
    return Plan(rows, math.ceil(x.shape[0] / rows), int(streams), int(workers))


def _file_backed(a: np.ndarray) -> bool:
    """A view of a memory-mapped file (registering it would pin page-cache pages, or fail when read-only)."""
    while a is not None:
        if isinstance(a, (np.memmap, mmap.mmap)):
            return True
        a = getattr(a, "base", None)
    return False


def _host_mode(x: np.ndarray) -> str:
    """How a host array can meet the DMA engines: "pinned" (already page-locked: DMA in place), "register" (may be
    page-locked in place) or "stage" (through pinned buffers). Asked of ``x`` and of ``out``."""
    from ..gpu.host import pointer_attributes

    if not x.flags.c_contiguous:
        return "stage"
    ends = (x.ctypes.data, x.ctypes.data + x.nbytes - 1)
    if all(pointer_attributes(p)["memory"] == "host" for p in ends):
        return "pinned"
    return "stage" if _file_backed(x) else "register"


# ---------------------------------------------------------------- the pipeline

class Balance:
    """Which input chunks to register: the share that makes the pinner and the copy threads finish together.

    Per byte of input the pinner spends ``c_pin`` (register + unregister) on a registered chunk; the copy threads
    spend ``c_copy`` on a staged chunk and ``c_copy * out_per_in`` on every chunk's output. With a share ``p``
    registered both finish together when ``p c_pin = (1 - p + out_per_in) c_copy``. The costs are measured during
    the call (seconds per byte, the copy threads' divided by their number); until both are known, chunks alternate.
    """

    def __init__(self, workers: int):
        self.workers = workers
        self.pin_s = self.pin_bytes = self.copy_s = self.copy_bytes = 0.0
        self.out_per_in = 1.0
        self.registered = self.staged = 0   # input bytes routed so far
        self._lock = threading.Lock()

    def add_pin(self, seconds: float, nbytes: int) -> None:   # one register or one unregister
        with self._lock:
            self.pin_s += seconds
            self.pin_bytes += nbytes

    def add_copy(self, seconds: float, nbytes: int) -> None:
        with self._lock:
            self.copy_s += seconds
            self.copy_bytes += nbytes

    def share(self) -> float | None:
        """The share of input bytes to register, None while a cost is unknown."""
        with self._lock:
            if not self.pin_bytes or not self.copy_bytes:
                return None
            c_pin = 2 * self.pin_s / self.pin_bytes
            c_copy = self.copy_s / self.copy_bytes / self.workers
        return min(1.0, (1 + self.out_per_in) * c_copy / (c_pin + c_copy))

    def register_next(self, nbytes: int) -> bool:
        """Route the next eligible chunk of ``nbytes``: True to register it, False to stage it."""
        p = self.share()
        done = self.registered + self.staged
        # registered share after this chunk closest to p (half a chunk rounds up)
        go = (self.registered <= self.staged) if p is None else (self.registered + nbytes / 2 <= p * (done + nbytes))
        if go:
            self.registered += nbytes
        else:
            self.staged += nbytes
        return go


@dataclass
class _Input:
    """How chunk k's bytes reach the device: (device offset, host address, bytes) copies, once ``jobs`` are done."""
    route: str                          # "pinned", "registered" or "staged"
    copies: list
    jobs: list = field(default_factory=list)   # futures that make the host side ready
    reg: object = None                  # the Registration of a registered chunk, held until its H2D completed
    staging: object = None              # the staging buffer of a staged chunk (returned to the ring after H2D)
    edges: tuple = ()                   # (head start, head bytes, tail start, tail bytes) of a registered chunk


@dataclass
class _Slot:
    d_in: object
    edges: object                       # pinned buffer for the partial pages of a registered chunk (2 pages)
    pin_out: object = None
    chunk: int | None = None            # the chunk in flight in this slot
    rows: slice = field(default_factory=lambda: slice(0, 0))
    source: _Input | None = None        # its input, released once the chunk's copies completed
    result: object = None               # fn's output, kept alive until its D2H has completed
    events: tuple = ()                  # before H2D, after H2D, after fn, before D2H, after D2H
    fn_done: object = None              # the event after this slot's fn: the host issues at most FN_QUEUE ahead
    copy_out: list = field(default_factory=list)   # host futures writing the slot's output into `out`


class _Output:
    """The host result, made once from the first chunk's result (by whichever device has one first)."""

    def __init__(self, out):
        self.out, self.dtype, self.tail = out, None, None
        self.lock = threading.Lock()


class _Stopped(Exception):
    """Another device's pipeline failed: this one stops before its next chunk."""


class _Pipeline:
    def __init__(self, fn, x, output: _Output, plan: Plan, route: Route, chunks=None, device=None,
                 cancel=None, after=None, bar=None):
        import cupy

        from ..gpu import host, runtime

        self.fn, self.x, self.output, self.plan, self.route = fn, x, output, plan, route
        self.register = route.register
        self.bar = bar if bar is not None else Bar(0, False)
        self.ranges = Ranges(runtime.current_ordinal() if device is None else device)
        self.out = output.out
        self.chunk_ids = list(range(plan.chunks) if chunks is None else chunks)
        self.device, self.cancel, self.after = device, cancel, after  # after: an event the caller's work recorded
        self.devices_in_call = 1
        self.row_bytes = x.dtype.itemsize * math.prod(x.shape[1:])
        self.mode = _host_mode(x)
        if self.register is False and self.mode == "register":
            self.mode = "stage"
        self.origin = cupy.cuda.get_current_stream()
        self.pool = ThreadPoolExecutor(max_workers=plan.workers, thread_name_prefix="gpumemlab-stream_map")
        self.pinner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpumemlab-stream_map-pin")
        self.pin_jobs: list = []
        self.balance = Balance(plan.workers)
        self.registrations: list = []   # every Registration made, closed (again) in close()
        self.ring: list = []            # staging buffers for staged inputs not in use
        self.ring_all: list = []
        self.inputs: dict[int, _Input] = {}
        self.slots: list[_Slot] = []
        self.out_dtype = self.out_tail = None
        self.out_direct = False         # out is page-locked: each chunk's D2H lands in it, no host copy
        self.intervals = {"h2d": [], "fn": [], "d2h": []}
        self.host_s = {"in": 0.0, "out": 0.0, "pin": 0.0, "fn": 0.0, "wait_gpu": 0.0}
        self.fn_gpu_ms, self._fn_end_ms = 0.0, -math.inf
        self.fn_queue: deque = deque()  # "after fn" events of the chunks issued, oldest first
        self.routes = {"pinned": 0, "registered": 0, "staged": 0}
        self.wall_s = 0.0
        self.nslots = 0
        self.start = host.event()
        self.up = self.down = None      # every H2D / every D2H, in chunk order: one copy engine each way
        self.compute = None             # every fn, in chunk order (as the caller's own loop runs them)

    def setup(self) -> None:
        """Streams, device chunks and edge buffers, one slot at a time (close() frees what was made)."""
        import cupy

        from ..gpu.host import new_stream

        chunk_shape = (self.plan.rows, *self.x.shape[1:])
        self.up, self.down, self.compute = (new_stream() for _ in range(3))
        _live_streams.update((self.up, self.down, self.compute))
        for _ in range(min(self.plan.streams, len(self.chunk_ids))):
            slot = _Slot(None, None)
            self.slots.append(slot)
            slot.d_in = cupy.empty(chunk_shape, dtype=self.x.dtype)

    # -------------------------------------------------------------- main loop
    def run(self) -> np.ndarray:
        t0 = time.perf_counter()
        self._after_caller()
        ahead, ids = AHEAD, self.chunk_ids
        for k in ids[:ahead]:
            self.inputs[k] = self._prepare(k)
        for j, k in enumerate(ids):
            if self.cancel is not None and self.cancel.is_set():
                raise _Stopped()
            slot = self.slots[j % len(self.slots)]
            if slot.chunk is not None:
                self._retire(slot)
            source = self.inputs.pop(k)
            t = time.perf_counter()
            _wait_all(source.jobs)
            self.host_s["in"] += time.perf_counter() - t
            self._issue(slot, k, source)
            if j + ahead < len(ids):
                self.inputs[ids[j + ahead]] = self._prepare(ids[j + ahead])
        for slot in sorted((s for s in self.slots if s.chunk is not None), key=lambda s: s.chunk):
            self._retire(slot)
        for slot in self.slots:
            t = time.perf_counter()
            _wait_all(slot.copy_out)
            self.host_s["out"] += time.perf_counter() - t
        _wait_all(self.pin_jobs)  # unregistrations
        self.wall_s = time.perf_counter() - t0
        return self.out

    # -------------------------------------------------------------- inputs
    def _after_caller(self) -> None:
        """Work the caller queued before (e.g. arrays fn reads) comes first on every stream of the pipeline."""
        self.start.record(self.origin)
        for stream in self._streams():
            stream.wait_event(self.start)
            if self.after is not None:
                stream.wait_event(self.after)

    def _bounds(self, k: int) -> tuple[int, int]:
        return k * self.plan.rows, min(self.x.shape[0], (k + 1) * self.plan.rows)

    def _prepare(self, k: int) -> _Input:
        """Start making chunk k's input page-locked (registered or staged, see the module docstring)."""
        lo, hi = self._bounds(k)
        a, nbytes = self.x.ctypes.data + lo * self.row_bytes, (hi - lo) * self.row_bytes
        if self.mode == "pinned":
            return _Input("pinned", [(0, a, nbytes)])
        first, last = -(-a // PAGE) * PAGE, (a + nbytes) // PAGE * PAGE   # the page-aligned interior
        if (self.mode == "register" and nbytes >= MIN_REGISTER_BYTES and last > first
                and (self.register or self.balance.register_next(nbytes))):
            src = _Input("registered", [(first - a, first, last - first)],
                         edges=(a, first - a, last, a + nbytes - last))
            src.jobs = [self._pin(last - first, self._register_span, src, first, last - first)]
            return src
        src = _Input("staged", [])
        src.staging = self.ring.pop() if self.ring else self._new_staging()
        src.copies = [(0, src.staging.ptr, nbytes)]
        staged = _staged(src.staging, self.x.dtype, (hi - lo, *self.x.shape[1:]))
        src.jobs = self._copy(staged, self.x[lo:hi])
        return src

    def _new_staging(self):
        buf = _take_staging(self.plan.rows * self.row_bytes)
        self.ring_all.append(buf)
        return buf

    def _pin(self, nbytes: int, fn, *args):
        job = self.pinner.submit(self._timed, nbytes, fn, *args)
        self.pin_jobs.append(job)
        return job

    def _timed(self, nbytes: int, fn, *args):
        t = time.perf_counter()
        try:
            fn(*args)
        finally:
            t = time.perf_counter() - t
            self.host_s["pin"] += t  # only the pinner thread adds here
            self.balance.add_pin(t, nbytes)

    def _register_span(self, src: _Input, ptr: int, nbytes: int) -> None:
        from ..gpu.host import register_span

        src.reg = register_span(ptr, nbytes)
        self.registrations.append(src.reg)

    def _release_input(self, src: _Input) -> None:
        """Chunk's H2D has completed: unregister (on the pinner) or return the staging buffer to the ring."""
        if src.reg is not None:
            self._pin(src.reg.nbytes, src.reg.close)
        if src.staging is not None:
            self.ring.append(src.staging)

    # -------------------------------------------------------------- issue and retire
    def _issue(self, slot: _Slot, k: int, src: _Input) -> None:
        import cupy

        from ..gpu.host import event, memcpy_async

        lo, hi = self._bounds(k)
        ev = [event() for _ in range(5)]
        # H2D on `up`, fn on `compute`, D2H on `down`, chained by events: the two directions never share a copy
        # engine's queue, so chunk k+1's H2D runs during chunk k's D2H; fn runs chunk after chunk on one stream as
        # in the caller's own loop (its temporaries reuse one pool arena, its kernels keep their order). No stream
        # is held in a local here: a failing fn's traceback keeps this frame, and with it whatever it names
        ev[0].record(self.up)
        copies = list(src.copies)
        if src.route == "registered":  # the partial pages at both ends, through the slot's pinned edge buffer
            head, nhead, tail, ntail = src.edges
            if slot.edges is None:
                slot.edges = _take_staging(2 * PAGE)
            edge = slot.edges.ptr
            ctypes.memmove(edge, head, nhead)
            ctypes.memmove(edge + PAGE, tail, ntail)
            copies += [(0, edge, nhead), (tail - head, edge + PAGE, ntail)]
        with self.ranges(k, "h2d"):
            for offset, ptr, nbytes in copies:
                if nbytes:
                    memcpy_async(slot.d_in.data.ptr + offset, ptr, nbytes, self.up.ptr)
        ev[1].record(self.up)
        self.compute.wait_event(ev[1])
        self.routes[src.route] += 1
        slot.source = src
        chunk = slot.d_in[: hi - lo]
        self._bound_queue()
        self.compute.use()
        t = time.perf_counter()
        try:
            with self.ranges(k, "fn"):
                y = self.fn(chunk)
                y = self._check_result(y, k, hi - lo)
                y = cupy.ascontiguousarray(y)
        except BaseException as exc:  # Ctrl-C too
            where = "" if self.device is None else f" on device {self.device}"
            exc.add_note(f"gpumemlab.stream_map: raised while processing chunk {k} (rows {lo}:{hi} of "
                         f"{self.x.shape[0]}){where}")
            chunk = y = None
            # the traceback's frames (fn's too) hold views of our device chunks: drop their locals, keep the trace
            traceback.clear_frames(exc.__traceback__)
            raise
        finally:
            self.host_s["fn"] += time.perf_counter() - t
            self.origin.use()
        ev[2].record(self.compute)
        self.fn_queue.append(ev[2])
        if self.out_dtype is None:  # the first chunk's result decides the output
            self._make_output_buffers(y)
        _wait_all(slot.copy_out)  # the previous chunk of this slot has left the pinned output buffer
        slot.copy_out = []
        self.down.wait_event(ev[2])
        ev[3].record(self.down)
        dst = self.out.ctypes.data + lo * (y.nbytes // (hi - lo)) if self.out_direct else slot.pin_out.ptr
        with self.ranges(k, "d2h"):
            memcpy_async(dst, y.data.ptr, y.nbytes, self.down.ptr)
        ev[4].record(self.down)
        slot.chunk, slot.rows, slot.result, slot.events = k, slice(lo, hi), y, tuple(ev)

    def _bound_queue(self) -> None:
        """Wait (GIL released) until at most FN_QUEUE - 1 chunks of fn are still queued on the GPU."""
        while len(self.fn_queue) >= FN_QUEUE:
            t = time.perf_counter()
            self.fn_queue.popleft().synchronize()
            self.host_s["wait_gpu"] += time.perf_counter() - t

    def _retire(self, slot: _Slot) -> None:
        """Wait for the slot's D2H, then release its input and hand its output to the host threads."""
        import cupy

        ev = slot.events
        t = time.perf_counter()
        ev[4].synchronize()
        self.host_s["wait_gpu"] += time.perf_counter() - t
        for stage, a, b in (("h2d", 0, 1), ("fn", 1, 2), ("d2h", 3, 4)):
            self.intervals[stage].append((cupy.cuda.get_elapsed_time(self.start, ev[a]),
                                          cupy.cuda.get_elapsed_time(self.start, ev[b])))
        # fn's own GPU time: from its start (after the H2D and the previous fn) to its end event
        self.fn_gpu_ms += self.intervals["fn"][-1][1] - max(self.intervals["fn"][-1][0], self._fn_end_ms)
        self._fn_end_ms = self.intervals["fn"][-1][1]
        self._release_input(slot.source)
        r = slot.rows
        self.bar.advance((r.stop - r.start) * self.row_bytes)
        if not self.out_direct:
            src = _staged(slot.pin_out, self.out_dtype, (r.stop - r.start, *self.out_tail))
            slot.copy_out = self._copy(self.out[r], src)
        slot.chunk, slot.result, slot.source = None, None, None

    # -------------------------------------------------------------- results
    def _check_result(self, y, k: int, rows: int):
        import cupy

        if not isinstance(y, cupy.ndarray):
            raise UsageError(f"stream_map: fn must return a CuPy array, got {type(y).__name__} for chunk {k}")
        if y.ndim == 0 or y.shape[0] != rows:
            raise UsageError(f"stream_map: fn returned shape {y.shape} for a chunk of {rows} rows (chunk {k}): "
                             f"the leading dimension must be the chunk's")
        if self.out_dtype is not None and (y.dtype != self.out_dtype or tuple(y.shape[1:]) != self.out_tail):
            raise UsageError(f"stream_map: fn returned {y.dtype} {tuple(y.shape[1:])} rows for chunk {k}, but "
                             f"{self.out_dtype} {self.out_tail} for the first chunk")
        return y

    def _make_output_buffers(self, y) -> None:
        self.out_dtype, self.out_tail = y.dtype, tuple(y.shape[1:])
        with self.output.lock:
            o = self.output
            if o.dtype is not None:  # another device's first chunk made it
                if (o.dtype, o.tail) != (self.out_dtype, self.out_tail):
                    raise UsageError(f"stream_map: fn returned {self.out_dtype} {self.out_tail} rows on device "
                                     f"{self.device}, but {o.dtype} {o.tail} on another device")
            else:
                o.out = self._new_output(o.out)
                o.dtype, o.tail = self.out_dtype, self.out_tail
            self.out = o.out
        row_bytes = self.out_dtype.itemsize * math.prod(self.out_tail)
        self.out_direct = _host_mode(self.out) == "pinned"
        if self.out_direct:  # the copy threads have no output to move
            self.balance.out_per_in = 0.0
            return
        self.balance.out_per_in = row_bytes / self.row_bytes
        for slot in self.slots:
            slot.pin_out = _take_staging(self.plan.rows * row_bytes)

    def _new_output(self, out):
        want = (self.x.shape[0], *self.out_tail)
        if out is None:
            return np.empty(want, dtype=self.out_dtype)
        if not isinstance(out, np.ndarray) or out.shape != want or out.dtype != self.out_dtype:
            got = f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
            raise UsageError(f"stream_map: out must be a NumPy {self.out_dtype} array of shape {want}, got {got}")
        if not out.flags.writeable:
            raise UsageError("stream_map: out is read-only")
        return out

    # -------------------------------------------------------------- host copies
    def _copy(self, dst: np.ndarray, src: np.ndarray) -> list:
        """Copy ``src`` into ``dst`` with the worker threads (row blocks); the futures."""
        n = dst.shape[0]
        parts = min(self.plan.workers, n)
        bounds = [n * i // parts for i in range(parts + 1)]
        return [self.pool.submit(self._copy_part, dst, src, a, b) for a, b in zip(bounds, bounds[1:]) if b > a]

    def _copy_part(self, dst: np.ndarray, src: np.ndarray, a: int, b: int) -> None:
        t = time.perf_counter()
        copy_rows(dst, src, a, b)
        self.balance.add_copy(time.perf_counter() - t, dst[a:b].nbytes)

    # -------------------------------------------------------------- statistics and cleanup
    def stats(self) -> dict:
        busy = {stage: _union_ms(iv) / 1e3 for stage, iv in self.intervals.items()}
        bytes_in = self.x.nbytes
        bytes_out = 0 if self.out is None else self.out.nbytes
        return dict(bytes_in=bytes_in, bytes_out=bytes_out, chunks=len(self.chunk_ids), chunk_rows=self.plan.rows,
                    streams=self.nslots, workers=self.plan.workers, wall_s=self.wall_s,
                    h2d_s=busy["h2d"], fn_s=busy["fn"], d2h_s=busy["d2h"], fn_gpu_s=self.fn_gpu_ms / 1e3,
                    fn_host_s=self.host_s["fn"], wait_gpu_s=self.host_s["wait_gpu"],
                    route=dict(register=self.register, source=self.route.source),
                    host_in_s=self.host_s["in"], host_out_s=self.host_s["out"], pin_s=self.host_s["pin"],
                    routes=dict(self.routes), out_route="pinned" if self.out_direct else "staged",
                    register_share=self.balance.share(),
                    bound_s=max(busy.values()), gbps_in=bytes_in / self.wall_s / 1e9 if self.wall_s else None)

    def _streams(self) -> list:
        return [st for st in (self.up, self.compute, self.down) if st is not None]

    def close(self, keep_staging: bool = False) -> None:
        """Drain every stream, finish or cancel host work, unregister what was registered, free device buffers
        and threads; cache the pinned staging of a successful run, free it after a failure."""
        self.nslots = len(self.slots)
        try:
            for stream in self._streams():
                stream.synchronize()
            for slot in self.slots:
                wait(slot.copy_out)
            wait([f for src in self.inputs.values() for f in src.jobs])
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pinner.shutdown(wait=True, cancel_futures=True)
            for reg in self.registrations:  # those not unregistered yet (after a failure); close() is idempotent
                reg.close()
            staging = [b for slot in self.slots for b in (slot.edges, slot.pin_out) if b is not None] + self.ring_all
            for slot in self.slots:
                slot.d_in = slot.result = slot.source = slot.edges = slot.pin_out = None
            self.slots, self.inputs, self.ring, self.ring_all, self.registrations = [], {}, [], [], []
            self.up = self.down = self.compute = None
            self.fn_queue.clear()
            self.origin.use()
            if keep_staging:
                # every device's pipeline keeps its own share: a cache smaller than all of them together makes
                # each call of several devices page-lock new buffers (cudaHostAlloc costs about a copy's time)
                _keep_staging(staging, STAGING_CACHE_BYTES * self.devices_in_call)
            else:
                for buf in staging:
                    buf.close()
                release_staging()


# ---------------------------------------------------------------- several GPUs

def _spread(fn, x, out, plan: Plan, route: Route, devices: list[int], profile: bool, bar: Bar):
    """One pipeline per device, each in its own thread, chunks round-robin; the first failure stops them all."""
    import cupy

    from ..gpu.host import event
    from ..gpu.runtime import use_device

    n = len(devices)
    output, cancel = _Output(out), threading.Event()
    after = event(timing=False)  # the caller's queued work comes first on every device
    after.record(cupy.cuda.get_current_stream())
    share = Plan(plan.rows, plan.chunks, plan.streams, max(1, plan.workers // n))
    pipes: list = [None] * n

    def drive(i: int, device: int):
        use_device(device)  # this thread's current device
        pipe = pipes[i] = _Pipeline(fn, x, output, share, route, chunks=range(i, plan.chunks, n), device=device,
                                    cancel=cancel, after=after, bar=bar)
        pipe.devices_in_call = n
        ok = False
        try:
            pipe.setup()
            pipe.run()
            ok = True
        except BaseException:
            cancel.set()
            raise
        finally:
            pipe.close(keep_staging=ok)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="gpumemlab-stream_map-device") as pool:
        futures = [pool.submit(drive, i, d) for i, d in enumerate(devices)]
        try:
            wait(futures)
        except BaseException:  # Ctrl-C in the caller: stop every device, let each drain and free
            cancel.set()
            wait(futures)
            raise
    errors = [f.exception() for f in futures if f.exception() is not None]
    first = next((e for e in errors if not isinstance(e, _Stopped)), None) or (errors[0] if errors else None)
    if first is not None:
        release_staging()
        raise first
    wall = time.perf_counter() - t0
    if not profile:
        return output.out
    return output.out, _merged_stats([p.stats() for p in pipes], devices, wall, x.nbytes, output.out.nbytes)


def _merged_stats(per: list[dict], devices: list[int], wall: float, bytes_in: int, bytes_out: int) -> dict:
    """The stats of one call over several devices: busy times are the busiest device's, host times and chunk
    counts summed; ``per_device`` keeps each device's own."""
    merged = dict(bytes_in=bytes_in, bytes_out=bytes_out, wall_s=wall, devices=list(devices),
                  gbps_in=bytes_in / wall / 1e9 if wall else None, per_device=per)
    for key in ("h2d_s", "fn_s", "d2h_s", "bound_s"):
        merged[key] = max(p[key] for p in per)
    for key in ("chunks", "streams", "workers", "host_in_s", "host_out_s", "pin_s", "fn_gpu_s", "fn_host_s",
                "wait_gpu_s"):
        merged[key] = sum(p[key] for p in per)
    merged["chunk_rows"] = per[0]["chunk_rows"]
    merged["routes"] = {r: sum(p["routes"][r] for p in per) for r in per[0]["routes"]}
    merged["out_route"] = per[0]["out_route"]
    merged["route"] = per[0]["route"]
    return merged


def copy_rows(dst: np.ndarray, src: np.ndarray, a: int, b: int) -> None:
    d, s = dst[a:b], src[a:b]
    if d.flags.c_contiguous and s.flags.c_contiguous:
        ctypes.memmove(d.ctypes.data, s.ctypes.data, d.nbytes)  # releases the GIL, unlike a Python loop
    else:
        np.copyto(d, s)


def _wait_all(futures: list) -> None:
    for f in futures:
        f.result()  # re-raises a worker's exception


def _union_ms(intervals: list[tuple[float, float]]) -> float:
    """Total length of the union of [start, end] intervals (ms): the time a stage kept its engine busy."""
    total, end = 0.0, -math.inf
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


register_pipeline(stream_map)  # `gpumemlab tune host_route` times this function (tune/ is below ops/)
