"""Host memory and host-device copies: pinned, write-combined, mapped, registered and pitched memory,
pointer attributes (UVA), async 1-D/2-D copies, side streams with fork/join, copy engines and the PCIe link.

Every allocation is an object that frees itself on ``close()`` / at the end of a ``with`` block (also when the
block raises); :func:`live_bytes` counts what is still held, so tests can check that nothing leaks.
CuPy's runtime wraps most calls; cuda.bindings' driver API fills the gaps (pitched allocation, device pointers
of mapped memory).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ..errors import GpumemlabError, UsageError
from . import runtime

HOST_KINDS = ("pinned", "write_combined", "mapped")
_ALLOC_FLAGS = {"pinned": 0, "write_combined": 4, "mapped": 2}   # cudaHostAllocDefault / WriteCombined / Mapped
_REGISTER_MAPPED = 2                                              # cudaHostRegisterMapped
MEMORY_TYPES = ("unregistered", "host", "device", "managed")      # cudaMemoryType 0..3
MEMCPY_DEFAULT = 4                                                # cudaMemcpyDefault: direction from UVA

_live = {"pinned": 0, "write_combined": 0, "mapped": 0, "registered": 0, "pitched": 0}


def live_bytes() -> dict:
    """Bytes held right now by this module's allocations, per kind (leak checks)."""
    return dict(_live)


def _cuda_error(what: str, exc: Exception) -> GpumemlabError:
    return GpumemlabError(f"{what} failed: {exc}")


def _nbytes(shape, dtype) -> tuple[tuple, np.dtype, int]:
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise UsageError(f"negative dimension in shape {shape}")
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if n == 0:
        raise UsageError(f"cannot allocate an empty host buffer (shape {shape})")
    return shape, dtype, n


def _view(ptr: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = (ctypes.c_byte * nbytes).from_address(ptr)
    return np.frombuffer(raw, dtype=dtype).reshape(shape)


def _device_pointer_of_host(ptr: int) -> int:
    """cudaHostGetDevicePointer: the device address of mapped or registered host memory."""
    from cuda.bindings import driver

    return int(runtime._check(driver.cuMemHostGetDevicePointer(ptr, 0), "cuMemHostGetDevicePointer"))


class _Held:
    """Something that frees itself once: ``close()``, ``with``, or garbage collection as a last resort."""

    _kind = ""
    _bytes = 0
    _open = False

    def _hold(self, kind: str, nbytes: int, counted: bool = True) -> None:
        self._kind, self._bytes, self._open = kind, (nbytes if counted else 0), True
        _live[kind] += self._bytes

    def close(self) -> None:
        if self._open:
            self._open = False
            _live[self._kind] -= self._bytes
            self._release()

    def _release(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        return not self._open

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: CUDA may already be gone
            pass


class HostArray(_Held):
    """Page-locked host memory from cudaHostAlloc, seen as a NumPy array (``.array``).

    ``kind``: "pinned" (cudaHostAllocDefault), "write_combined" (cudaHostAllocWriteCombined: fast for the
    GPU to read over PCIe, very slow for the CPU to read) or "mapped" (cudaHostAllocMapped: kernels may read
    it in place through ``device_ptr``, zero copy). ``.array`` must not be used after ``close()``. ``counted``:
    whether :func:`live_bytes` counts it (False for the library's own long-lived buffers, which leak checks of the
    caller's allocations must not see).
    """

    def __init__(self, shape, dtype=np.float32, kind: str = "pinned", counted: bool = True):
        if kind not in HOST_KINDS:
            raise UsageError(f"unknown host memory kind {kind!r}; kinds: {', '.join(HOST_KINDS)}")
        shape, dtype, nbytes = _nbytes(shape, dtype)
        if kind == "mapped" and not runtime.device_info()["can_map_host_memory"]:
            raise GpumemlabError("this GPU cannot map host memory (canMapHostMemory = 0)")
        import cupy

        try:
            self.ptr = int(cupy.cuda.runtime.hostAlloc(nbytes, _ALLOC_FLAGS[kind]))
        except cupy.cuda.runtime.CUDARuntimeError as exc:
            raise _cuda_error(f"cudaHostAlloc of {nbytes} bytes ({kind})", exc) from None
        self._hold(kind, nbytes, counted)
        self.kind, self.nbytes = kind, nbytes
        self.array = _view(self.ptr, shape, dtype)
        self.device_ptr = _device_pointer_of_host(self.ptr) if kind == "mapped" else None

    def _release(self) -> None:
        import cupy

        self.array = None
        cupy.cuda.runtime.freeHost(self.ptr)


def host_array(shape, dtype=np.float32, kind: str = "pinned") -> HostArray:
    """Allocate page-locked host memory of ``kind`` (see :class:`HostArray`)."""
    return HostArray(shape, dtype, kind)


class Registration(_Held):
    """cudaHostRegister of an existing NumPy array (page-locks it in place); unregisters on ``close()``.

    ``mapped``: also map it for kernels (cudaHostRegisterMapped); ``device_ptr`` is then its device address.
    """

    def __init__(self, array: np.ndarray, mapped: bool = False):
        if not isinstance(array, np.ndarray):
            raise UsageError(f"cudaHostRegister needs a NumPy array, not {type(array).__name__}")
        if not array.flags.c_contiguous or array.nbytes == 0:
            raise UsageError("cudaHostRegister needs a non-empty C-contiguous array")
        self.array = array
        self._register(int(array.ctypes.data), int(array.nbytes), _REGISTER_MAPPED if mapped else 0)
        self.device_ptr = _device_pointer_of_host(self.ptr) if mapped else None

    @classmethod
    def span(cls, ptr: int, nbytes: int) -> "Registration":
        """Page-lock ``nbytes`` at address ``ptr`` (memory the caller keeps alive until ``close()``)."""
        if ptr <= 0 or nbytes <= 0:
            raise UsageError(f"cudaHostRegister needs an address and a size > 0, got {ptr:#x}, {nbytes}")
        reg = cls.__new__(cls)
        reg.array, reg.device_ptr = None, None
        reg._register(int(ptr), int(nbytes), 0)
        return reg

    def _register(self, ptr: int, nbytes: int, flags: int) -> None:
        import cupy

        self.ptr, self.nbytes = ptr, nbytes
        try:
            cupy.cuda.runtime.hostRegister(ptr, nbytes, flags)
        except cupy.cuda.runtime.CUDARuntimeError as exc:
            raise _cuda_error(f"cudaHostRegister of {nbytes} bytes", exc) from None
        self._hold("registered", nbytes)

    def _release(self) -> None:
        import cupy

        cupy.cuda.runtime.hostUnregister(self.ptr)


def register(array: np.ndarray, mapped: bool = False) -> Registration:
    """Page-lock ``array`` in place (cudaHostRegister); use as ``with register(a): ...``."""
    return Registration(array, mapped)


def register_span(ptr: int, nbytes: int) -> Registration:
    """Page-lock the bytes ``ptr .. ptr + nbytes`` in place (part of an array the caller keeps alive)."""
    return Registration.span(ptr, nbytes)


class PitchedArray(_Held):
    """A 2-D device array from cudaMallocPitch: each row starts at a multiple of ``pitch`` bytes.

    ``cupy()`` views it as a (rows, cols) CuPy array with strides (pitch, itemsize) (valid until ``close()``).
    """

    def __init__(self, rows: int, cols: int, dtype=np.float32):
        shape, dtype, _ = _nbytes((rows, cols), dtype)
        from cuda.bindings import driver

        runtime.ensure_device()
        elem = 4 if dtype.itemsize <= 4 else 8 if dtype.itemsize <= 8 else 16  # the driver accepts 4, 8, 16
        try:
            ptr, pitch = runtime._check(driver.cuMemAllocPitch(shape[1] * dtype.itemsize, shape[0], elem),
                                        "cudaMallocPitch")
        except RuntimeError as exc:
            raise GpumemlabError(f"{exc} ({rows} x {cols} {dtype})") from None
        self.ptr, self.pitch = int(ptr), int(pitch)
        self.rows, self.cols, self.dtype = shape[0], shape[1], dtype
        self.nbytes = self.pitch * self.rows
        self._hold("pitched", self.nbytes)

    @property
    def row_bytes(self) -> int:
        return self.cols * self.dtype.itemsize

    def cupy(self):
        import cupy

        if self.closed:
            raise GpumemlabError("pitched array used after close()")
        mem = cupy.cuda.UnownedMemory(self.ptr, self.nbytes, self)
        return cupy.ndarray((self.rows, self.cols), self.dtype, cupy.cuda.MemoryPointer(mem, 0),
                            strides=(self.pitch, self.dtype.itemsize))

    def _release(self) -> None:
        from cuda.bindings import driver

        runtime._check(driver.cuMemFree(self.ptr), "cuMemFree")


def pitched(rows: int, cols: int, dtype=np.float32) -> PitchedArray:
    """cudaMallocPitch of ``rows`` rows of ``cols`` elements (see :class:`PitchedArray`)."""
    return PitchedArray(rows, cols, dtype)


# ---------------------------------------------------------------- pointers (UVA)

def address(x) -> int:
    """The address of a NumPy array, a CuPy/CAI array, one of this module's objects or an int."""
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, np.ndarray):
        return int(x.ctypes.data)
    if isinstance(x, (HostArray, Registration, PitchedArray)):
        if x.closed:
            raise GpumemlabError(f"{type(x).__name__} used after close()")
        return x.ptr
    return runtime.device_pointer(x)


def _size(x) -> int | None:
    if isinstance(x, (int, np.integer)):
        return None
    return int(x.nbytes) if hasattr(x, "nbytes") else None


def pointer_attributes(x) -> dict:
    """cudaPointerGetAttributes: which memory an address is in ("unregistered" pageable host memory, "host"
    page-locked, "device", "managed"), its device, and its device and host addresses (None where it has none)."""
    import cupy

    runtime.ensure_device()
    try:
        a = cupy.cuda.runtime.pointerGetAttributes(address(x))
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        raise _cuda_error("cudaPointerGetAttributes", exc) from None
    memory = MEMORY_TYPES[a.type] if 0 <= a.type < len(MEMORY_TYPES) else f"type {a.type}"
    return dict(memory=memory, device=int(a.device), device_pointer=int(a.devicePointer) or None,
                host_pointer=int(a.hostPointer) or None)


# ---------------------------------------------------------------- copies

def _stream_ptr(stream) -> int:
    import cupy

    if stream is None:
        return int(cupy.cuda.get_current_stream().ptr)
    if isinstance(stream, runtime.WorkStream):
        return stream.handle
    return int(stream.ptr)


def copy_async(dst, src, nbytes: int | None = None, stream=None) -> None:
    """cudaMemcpyAsync with cudaMemcpyDefault (UVA finds the direction) on ``stream`` (default: CuPy's current).

    ``nbytes`` defaults to the smaller of the two sizes; a size larger than either side raises UsageError.
    Copies from pageable NumPy memory are staged by the driver and return only once the source was read.
    """
    sizes = [s for s in (_size(dst), _size(src)) if s is not None]
    if nbytes is None:
        if not sizes:
            raise UsageError("copy_async between raw addresses needs nbytes")
        nbytes = min(sizes)
    if nbytes < 0 or any(nbytes > s for s in sizes):
        raise UsageError(f"copy of {nbytes} bytes does not fit: sizes are {sizes}")
    import cupy

    cupy.cuda.runtime.memcpyAsync(address(dst), address(src), int(nbytes), MEMCPY_DEFAULT, _stream_ptr(stream))


def memcpy_async(dst: int, src: int, nbytes: int, stream_ptr: int) -> None:
    """cudaMemcpyAsync (cudaMemcpyDefault) between raw addresses on a raw stream handle, without copy_async's
    checks: the loops that time many copies measure the copy, not Python."""
    import cupy

    cupy.cuda.runtime.memcpyAsync(dst, src, nbytes, MEMCPY_DEFAULT, stream_ptr)


def memset_async(ptr: int, value: int, nbytes: int, stream=None) -> None:
    """cudaMemsetAsync of ``nbytes`` bytes at device address ``ptr`` on ``stream`` (default: CuPy's current)."""
    import cupy

    cupy.cuda.runtime.memsetAsync(ptr, value, nbytes, _stream_ptr(stream))


def copy_2d_async(dst, dst_pitch: int, src, src_pitch: int, width_bytes: int, height: int, stream=None) -> None:
    """cudaMemcpy2DAsync (cudaMemcpyDefault): ``height`` rows of ``width_bytes``, row starts ``*_pitch`` apart."""
    if width_bytes <= 0 or height <= 0:
        raise UsageError(f"2-D copy of {width_bytes} bytes x {height} rows: both must be > 0")
    if width_bytes > dst_pitch or width_bytes > src_pitch:
        raise UsageError(f"2-D copy: row width {width_bytes} exceeds a pitch ({dst_pitch}, {src_pitch})")
    span = lambda pitch: pitch * (height - 1) + width_bytes  # noqa: E731 - bytes the last row ends at
    for x, pitch in ((dst, dst_pitch), (src, src_pitch)):
        if _size(x) is not None and span(pitch) > _size(x):
            raise UsageError(f"2-D copy: {height} rows of pitch {pitch} need {span(pitch)} bytes, "
                             f"the buffer has {_size(x)}")
    import cupy

    cupy.cuda.runtime.memcpy2DAsync(address(dst), int(dst_pitch), address(src), int(src_pitch), int(width_bytes),
                                    int(height), MEMCPY_DEFAULT, _stream_ptr(stream))


# ---------------------------------------------------------------- streams, events

_side: list = []


def side_streams(n: int) -> list:
    """``n`` non-blocking CuPy streams, created once and reused (the staged copies of seed 003)."""
    import cupy

    if n < 1:
        raise UsageError(f"need at least one stream, not {n}")
    runtime.ensure_device()
    while len(_side) < n:
        _side.append(cupy.cuda.Stream(non_blocking=True))
    return _side[:n]


def new_stream():
    """A new non-blocking CuPy stream, the caller's own (side_streams shares its streams)."""
    import cupy

    return cupy.cuda.Stream(non_blocking=True)


def event(timing: bool = True):
    """A new CuPy event, not yet recorded; ``timing=False`` for one that only orders streams (cheaper to record)."""
    import cupy

    return cupy.cuda.Event(disable_timing=not timing)


def fork(streams) -> None:
    """Make ``streams`` wait for the work enqueued so far on CuPy's current stream."""
    import cupy

    ev = cupy.cuda.Event(disable_timing=True)
    ev.record(cupy.cuda.get_current_stream())
    for s in streams:
        s.wait_event(ev)


def join(streams) -> None:
    """Make CuPy's current stream wait for everything enqueued on ``streams``, so its events bracket them."""
    import cupy

    current = cupy.cuda.get_current_stream()
    for s in streams:
        ev = cupy.cuda.Event(disable_timing=True)
        ev.record(s)
        current.wait_event(ev)


def timing_event(stream=None):
    """Record a timing event on ``stream`` (default: CuPy's current stream)."""
    import cupy

    ev = cupy.cuda.Event()
    ev.record(stream if stream is not None else cupy.cuda.get_current_stream())
    return ev


def seconds_between(start, end) -> float:
    import cupy

    return float(cupy.cuda.get_elapsed_time(start, end)) / 1e3


def run_on_stream(stream, fn) -> None:
    """Call ``fn()`` with ``stream`` as CuPy's current stream (so launches and copies inside go there)."""
    import cupy

    previous = cupy.cuda.get_current_stream()
    stream.use()
    try:
        fn()
    finally:
        previous.use()


def synchronize() -> None:
    runtime.synchronize()


def synchronize_device(ordinal: int) -> None:
    """Wait for every stream of device ``ordinal`` (cudaDeviceSynchronize there), whichever device is current."""
    import cupy

    cupy.cuda.Device(ordinal).synchronize()


def legacy_stream():
    """CUDA's legacy default stream (it orders with every blocking stream of the device)."""
    import cupy

    return cupy.cuda.Stream.null


# ---------------------------------------------------------------- the device's side of the link

def copy_engines() -> int:
    """asyncEngineCount: copies that can run at once with kernels (1: one direction, 2+: both)."""
    return int(runtime.device_info()["copy_engines"])


@dataclass(frozen=True)
class Link:
    generation: int
    width: int
    max_generation: int
    max_width: int
    gbps: float      # one direction, from the maximum generation and width (model.overlap.pcie_gbps)


def pcie_link() -> Link | None:
    """The GPU's PCIe link from NVML (nvidia-ml-py), or None when NVML is missing or says nothing."""
    from ..model.overlap import pcie_gbps

    try:
        import pynvml as nv

        nv.nvmlInit()
        bus = runtime.device_info().get("pci_bus_id")
        dev = nv.nvmlDeviceGetHandleByPciBusId(bus) if bus else nv.nvmlDeviceGetHandleByIndex(0)
        cur_gen, cur_width = nv.nvmlDeviceGetCurrPcieLinkGeneration(dev), nv.nvmlDeviceGetCurrPcieLinkWidth(dev)
        gen, width = nv.nvmlDeviceGetMaxPcieLinkGeneration(dev), nv.nvmlDeviceGetMaxPcieLinkWidth(dev)
        return Link(int(cur_gen), int(cur_width), int(gen), int(width), pcie_gbps(int(gen), int(width)))
    except Exception:  # no nvidia-ml-py, no permission, a link NVML cannot describe: the ceiling is unknown
        return None
