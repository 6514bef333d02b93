"""Device, module loading, launches, streams and events (cuda.core, cuda.bindings where it lacks).

Arrays are CuPy's; work runs on one :class:`WorkStream` whose CuPy view lets library calls
(baselines, memsets, references) share the stream that the events time.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from dataclasses import dataclass, field, replace
from functools import cache

import numpy as np

from ..errors import CudaStackError, NoDeviceError, UsageError
from ..kernels import KernelSpec
from . import compile as _compile
from .compile import INSTALL_HINT


def _check(result, what: str):
    """cuda.bindings calls return (err, *values); raise on error, return the values."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        from cuda.bindings import driver

        name = driver.cuGetErrorName(err)[1]
        name = name.decode() if isinstance(name, bytes) else str(err)
        raise RuntimeError(f"{what} failed: {name}")
    return values[0] if len(values) == 1 else tuple(values)


CUDA_PACKAGES = ("cuda", "cuda.bindings", "cuda.core")  # a ModuleNotFoundError naming one: not installed
# cuInit results that mean "no GPU here" (the stub libcuda of a CUDA toolkit: no real driver); any other is an error
NO_DEVICE = ("CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_STUB_LIBRARY")


@cache
def _init() -> int:
    """cuInit and the device count; NoDeviceError with one line when the packages, the driver or a GPU is missing."""
    try:
        from cuda.bindings import driver
        from cuda.core import Device  # noqa: F401 - its absence is the same one-line error
    except ModuleNotFoundError as exc:
        if exc.name not in CUDA_PACKAGES:  # installed, but something it imports is missing
            raise CudaStackError(f"the CUDA Python packages are installed but fail to import ({exc})") from exc
        raise NoDeviceError(f"no CUDA device: cannot import the CUDA Python packages ({exc}); {INSTALL_HINT}") from None
    except Exception as exc:  # noqa: BLE001 - a broken wheel or library: an error, not "no GPU"
        raise CudaStackError(f"the CUDA Python packages are installed but fail to import "
                             f"({type(exc).__name__}: {exc})") from exc
    try:
        err, = driver.cuInit(0)
    except Exception as exc:  # libcuda.so not found
        raise NoDeviceError(f"no CUDA device: no NVIDIA driver ({exc})") from None
    name = getattr(err, "name", str(err))  # the CUresult's name, read without another driver call
    if name in NO_DEVICE:
        raise NoDeviceError(f"no CUDA device: cuInit says {name}")
    if int(err) != 0:
        raise CudaStackError(f"cuInit failed: {name} (a driver or GPU problem, not a missing GPU)")
    err, count = driver.cuDeviceGetCount()
    if int(err) != 0 or count == 0:
        raise NoDeviceError("no CUDA device: the driver reports no GPU")
    return int(count)


def device_count() -> int:
    """GPUs the driver reports (NoDeviceError when there is none)."""
    return _init()


def current_ordinal() -> int:
    """CuPy's current device (per thread): the device every experiment and library call runs on."""
    _init()
    try:
        import cupy
    except ModuleNotFoundError as exc:
        if exc.name != "cupy":
            raise CudaStackError(f"CuPy is installed but fails to import ({exc})") from exc
        return 0  # the analyzer's light install: only device 0 is reachable
    except Exception as exc:  # noqa: BLE001 - installed but broken (a missing CUDA library): an error
        raise CudaStackError(f"CuPy is installed but fails to import ({type(exc).__name__}: {exc})") from exc
    return int(cupy.cuda.runtime.getDevice())


def device_getter():
    """cudaGetDevice as CuPy's bare callable: for the per-call device check of library calls, where a Python layer
    around it would cost host time on every call (current_ordinal checks the CUDA stack first)."""
    import cupy

    return cupy.cuda.runtime.getDevice


def ensure_device():
    """Return the cuda.core Device of CuPy's current device, made current; NoDeviceError with one line if none."""
    return _device(current_ordinal())


@cache
def _device(ordinal: int):
    from cuda.core import Device

    dev = Device(ordinal)
    dev.set_current()  # its primary context, the one CuPy's cudaSetDevice made current
    return dev


def use_device(ordinal: int) -> None:
    """Make ``ordinal`` CuPy's current device for this thread (UsageError naming the valid ordinals)."""
    check_ordinal(ordinal)
    import cupy

    cupy.cuda.Device(ordinal).use()
    _device(ordinal)


def check_ordinal(ordinal, what: str = "device") -> int:
    """``ordinal`` if it is a GPU of this machine, else UsageError in one line."""
    count = device_count()
    if isinstance(ordinal, bool) or not isinstance(ordinal, (int, np.integer)) or not 0 <= ordinal < count:
        raise UsageError(f"bad {what} {ordinal!r}: this machine has {count} GPU{'s' if count > 1 else ''} "
                         f"(ordinals 0..{count - 1})")
    return int(ordinal)


def has_device() -> bool:
    try:
        ensure_device()
        return True
    except NoDeviceError:
        return False


def _attr(name: str, ordinal: int) -> int:
    from cuda.bindings import driver

    enum = getattr(driver.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
    return int(_check(driver.cuDeviceGetAttribute(enum, ordinal), f"cuDeviceGetAttribute({name})"))


def attribute(name: str, ordinal: int | None = None) -> int:
    """``CU_DEVICE_ATTRIBUTE_<name>`` of a device (default: the current one)."""
    ensure_device()
    return _attr(name, current_ordinal() if ordinal is None else check_ordinal(ordinal))


def device_info(ordinal: int | None = None) -> dict:
    """Properties of a device (default: the current one) that the experiments and the model need."""
    return _device_info(current_ordinal() if ordinal is None else check_ordinal(ordinal))


def _pci_bus_id(dev, ordinal: int) -> str | None:
    bus = getattr(dev, "pci_bus_id", None)
    if bus:
        return str(bus)
    from cuda.bindings import driver

    err, raw = driver.cuDeviceGetPCIBusId(32, ordinal)
    text = raw.decode() if isinstance(raw, (bytes, bytearray)) else str(raw)
    return text.rstrip("\x00") if int(err) == 0 else None


@cache
def _device_info(ordinal: int) -> dict:
    _init()  # first: one clear line when the CUDA packages are missing
    from cuda.bindings import driver
    from cuda.core import Device

    dev = Device(ordinal)
    major, minor = dev.compute_capability
    total = int(_check(driver.cuDeviceTotalMem(ordinal), "cuDeviceTotalMem"))
    a = lambda name: _attr(name, ordinal)  # noqa: E731
    return dict(
        name=dev.name,
        ordinal=ordinal,
        cc=[int(major), int(minor)],
        arch=f"sm_{major}{minor}",
        sm_count=a("MULTIPROCESSOR_COUNT"),
        l2_bytes=a("L2_CACHE_SIZE"),
        persisting_l2_max_bytes=a("MAX_PERSISTING_L2_CACHE_SIZE"),
        access_policy_max_window_bytes=a("MAX_ACCESS_POLICY_WINDOW_SIZE"),
        copy_engines=a("ASYNC_ENGINE_COUNT"),
        can_map_host_memory=bool(a("CAN_MAP_HOST_MEMORY")),
        integrated=bool(a("INTEGRATED")),
        sm_clock_khz=a("CLOCK_RATE"),
        memory_clock_khz=a("MEMORY_CLOCK_RATE"),
        memory_bus_width_bits=a("GLOBAL_MEMORY_BUS_WIDTH"),
        total_memory_bytes=total,
        shared_per_sm_bytes=a("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
        shared_per_block_optin_bytes=a("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        registers_per_sm=a("MAX_REGISTERS_PER_MULTIPROCESSOR"),
        max_threads_per_sm=a("MAX_THREADS_PER_MULTIPROCESSOR"),
        max_blocks_per_sm=a("MAX_BLOCKS_PER_MULTIPROCESSOR"),
        ecc_enabled=bool(a("ECC_ENABLED")),
        pci_bus_id=_pci_bus_id(dev, ordinal),
        device_count=device_count(),
        driver_version=int(_check(driver.cuDriverGetVersion(), "cuDriverGetVersion")),
        nvrtc_version=list(_compile.nvrtc_version()),
    )


def current_device_name() -> str | None:
    """The GPU's name from the driver, or None when there is no usable GPU."""
    try:
        return device_info()["name"]
    except Exception:  # no driver, no GPU, missing CUDA packages: the caller says "unknown"
        return None


def device_arch() -> str:
    return device_info()["arch"]


def free_memory_bytes() -> int:
    from cuda.bindings import driver

    ensure_device()
    free, _total = _check(driver.cuMemGetInfo(), "cuMemGetInfo")
    return int(free)


# ---------------------------------------------------------------- modules and kernels

@cache
def _load_cubin(cubin: bytes, mapping_items: tuple, ordinal: int):
    """One ObjectCode per device: modules load into the context that is current when a kernel is first taken."""
    from cuda.core import ObjectCode

    _device(ordinal)
    # cuda.core 1.2.0 wants the mangled names as bytes (as NVRTC returns them)
    return ObjectCode.from_cubin(cubin, symbol_mapping={k: v.encode() for k, v in mapping_items})


def get_kernel(spec: KernelSpec):
    """The loaded cuda.core Kernel for a catalog spec, compiled for this device (cached)."""
    ordinal = current_ordinal()
    return _get_kernel_cached(spec, device_info(ordinal)["arch"], ordinal)


@cache
def _get_kernel_cached(spec: KernelSpec, arch: str, ordinal: int):
    mod, _usage = _compile.compile_specs([spec], arch)[spec]
    obj = _load_cubin(mod.cubin, tuple(sorted(mod.symbol_mapping.items())), ordinal)
    return obj.get_kernel(spec.name)


def load_text(text: str, names: list[str], options: tuple = ()) -> dict:
    """Compile generated source for this device and return {name: Kernel}."""
    ordinal = current_ordinal()
    mod = _compile.compile_text(text, names, device_info(ordinal)["arch"], options)
    obj = _load_cubin(mod.cubin, tuple(sorted(mod.symbol_mapping.items())), ordinal)
    return {n: obj.get_kernel(n) for n in names}


def set_max_dynamic_shared(kernel, nbytes: int) -> None:
    """Let a kernel use more than 48 KiB of dynamic shared memory."""
    from cuda.bindings import driver

    attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    _check(driver.cuFuncSetAttribute(_func_handle(kernel), attr, int(nbytes)), "cuFuncSetAttribute")


def _func_handle(kernel):
    """A CUfunction for a cuda.core Kernel (whose handle may be a CUkernel of a library)."""
    from cuda.bindings import driver

    h = kernel.handle
    if isinstance(h, driver.CUkernel):
        return _check(driver.cuKernelGetFunction(h), "cuKernelGetFunction")
    return h


def max_active_blocks(spec_or_kernel, block_threads: int, dynamic_smem: int = 0) -> int:
    """The driver's occupancy answer (cudaOccupancyMaxActiveBlocksPerMultiprocessor)."""
    from cuda.bindings import driver

    kernel = get_kernel(spec_or_kernel) if isinstance(spec_or_kernel, KernelSpec) else spec_or_kernel
    return int(_check(driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        _func_handle(kernel), int(block_threads), int(dynamic_smem)), "cuOccupancyMaxActiveBlocksPerMultiprocessor"))


L1_KEPT_CARVEOUT_PCT = 8  # shared-memory carveout of an l1_kept_cap copy: the smallest the driver rounds a cap to


def l1_kept_cap(spec: KernelSpec, block_threads: int, blocks_per_sm: int) -> tuple[KernelSpec, int] | None:
    """(spec of a copy of ``spec``'s kernel, dynamic shared bytes) that lets only ``blocks_per_sm`` blocks of
    ``block_threads`` reside per SM while keeping L1: the copy (its own module, so the original keeps its settings)
    prefers the smallest shared-memory carveout, and the request is the smallest that caps it. None where no request
    gives that cap. Unused shared memory as an occupancy cap: a request alone, without the carveout, takes the L1 that
    gathers hit in."""
    return _l1_kept_cap(spec, int(block_threads), int(blocks_per_sm), current_ordinal())


@cache
def _l1_kept_cap(spec: KernelSpec, block_threads: int, blocks_per_sm: int, ordinal: int):
    from cuda.bindings import driver

    copy = replace(spec, defines=tuple(spec.defines) + (("GML_L1_KEPT_COPY", "1"),))
    kernel = get_kernel(copy)
    attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
    _check(driver.cuFuncSetAttribute(_func_handle(kernel), attr, L1_KEPT_CARVEOUT_PCT), "cuFuncSetAttribute")
    for smem in range(256, 48 * 1024, 256):
        got = max_active_blocks(kernel, block_threads, smem)
        if got <= blocks_per_sm:
            return (copy, smem) if got == blocks_per_sm else None
    return None


# ---------------------------------------------------------------- arguments and launch
#
# The launch route is cuda.bindings' cuLaunchKernel with a prepared ``void**``: faster than cuda.core's launch and
# CuPy's RawModule on the same cubin (docs/notes/sample2d.md, "Where a small call's 11 us goes").
# Every argument travels in an 8-byte slot (our kernels take pointers and scalars of at most 8 bytes); the
# driver copies the values during the call, so a buffer is reused at once, under a lock against other threads.

_NUMPY_SLOT = {np.int32: "i4x", np.uint32: "I4x", np.int64: "q", np.uint64: "Q", np.float32: "f4x", np.float64: "d"}
_CTYPES_SLOT = {ctypes.c_int32: "i4x", ctypes.c_uint32: "I4x", ctypes.c_int64: "q", ctypes.c_uint64: "Q",
                ctypes.c_float: "f4x", ctypes.c_double: "d"}
_ARRAY_TYPES: set = set()  # cupy.ndarray once CuPy is imported: its pointer is .data.ptr
_INT32 = (-(2**31), 2**31)
_LOCK = threading.Lock()  # guards the shared argument buffers from fill to cuLaunchKernel


def _slot(a) -> tuple[str, object]:
    """(struct format of one 8-byte slot, value): arrays -> device pointers, Python scalars -> 32-bit."""
    t = type(a)
    if t in _ARRAY_TYPES:
        return "Q", a.data.ptr
    fmt = _NUMPY_SLOT.get(t)
    if fmt is not None:
        return fmt, a
    if t is int:
        if not _INT32[0] <= a < _INT32[1]:
            raise OverflowError(f"kernel argument {a} does not fit int32; pass np.int64 explicitly")
        return "i4x", a
    if t is bool:
        return "i4x", int(a)
    if t is float:
        return "f4x", a
    fmt = _CTYPES_SLOT.get(t)
    if fmt is not None:
        return fmt, a.value
    if isinstance(a, (np.generic, ctypes._SimpleCData)):  # other scalars (int16, bool_, ...): bytes, zero-padded
        raw = a.tobytes() if isinstance(a, np.generic) else bytes(a)
        if len(raw) > 8:
            raise TypeError(f"kernel argument {a!r} is wider than 8 bytes")
        return f"{len(raw)}s{8 - len(raw)}x", raw
    return "Q", device_pointer(a)


def device_pointer(a) -> int:
    """Address of a device array: CuPy arrays, anything with __cuda_array_interface__, raw ints."""
    data = getattr(a, "data", None)
    if data is not None and hasattr(data, "ptr"):
        return int(data.ptr)
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    if hasattr(a, "ptr"):
        return int(a.ptr)
    raise TypeError(f"cannot pass {type(a).__name__} as a kernel argument")


def _dims(x) -> tuple:
    """(x, y, z) of a grid or block given as an int or a 1- to 3-sequence."""
    if type(x) is int:
        return x, 1, 1
    if isinstance(x, np.integer):
        return int(x), 1, 1
    n = len(x)
    if n == 2:
        return int(x[0]), int(x[1]), 1
    if n == 1:
        return int(x[0]), 1, 1
    if n == 3:
        return int(x[0]), int(x[1]), int(x[2])
    raise ValueError(f"launch dimensions must be an int or 1 to 3 ints, got {x!r}")


def _buffers(n: int):
    """(value bytes, void** address) for ``n`` slots; shared: fill and launch under ``_LOCK``."""
    b = _BUFFERS.get(n)
    if b is None:
        b = _BUFFERS[n] = _own_buffers(n)
    return b


_BUFFERS: dict = {}
_FUNCTIONS: dict = {}  # (KernelSpec or id(Kernel), device) -> (CUfunction, the Kernel: keeps its module and id alive)


def _function(kernel, ordinal: int):
    """The CUfunction of a cuda.core Kernel or a catalog KernelSpec in device ``ordinal``'s context (looked up once)."""
    key = (kernel if type(kernel) is KernelSpec else id(kernel), ordinal)
    hit = _FUNCTIONS.get(key)
    if hit is None:
        k = get_kernel(kernel) if isinstance(kernel, KernelSpec) else kernel
        hit = _FUNCTIONS[key] = (_func_handle(k), k)
    return hit[0]


DEFAULT_DYNAMIC_SMEM = 48 * 1024  # what a kernel may take without cudaFuncAttributeMaxDynamicSharedMemorySize

_CU = []  # [cuLaunchKernel, CUDA_SUCCESS, cupy.cuda.get_current_stream, cudaGetDevice] after the first launch


def _launch_api():
    if not _CU:
        import cupy
        from cuda.bindings import driver

        ensure_device()
        _ARRAY_TYPES.add(cupy.ndarray)
        _CU.extend((driver.cuLaunchKernel, driver.CUresult.CUDA_SUCCESS, cupy.cuda.get_current_stream,
                    cupy.cuda.runtime.getDevice))
    return _CU


def _failed(err, dims, shmem: int):
    g, b = dims[:3], dims[3:]
    _check((err,), f"cuLaunchKernel(grid={g}, block={b}, shmem={int(shmem)})")


def launch(kernel, grid, block, *args, shmem: int = 0, stream: "WorkStream | None" = None) -> None:
    """Launch a Kernel (or a KernelSpec) on ``stream``, by default CuPy's current stream.

    Following CuPy's current stream orders our kernels with the CuPy work around them (inputs,
    references, ``.get()``) without any explicit synchronization.
    """
    fmt, values = "<", []
    for a in args:  # bad arguments fail here, before any CUDA call
        f, v = _slot(a)
        fmt += f
        values.append(v)
    dims = _dims(grid) + _dims(block)
    cu_launch, ok, current, device = _CU or _launch_api()
    func = _function(kernel, device())
    handle = stream.handle if stream is not None else current().ptr
    with _LOCK:
        buf, params, _ = _buffers(len(args))
        struct.pack_into(fmt, buf, 0, *values)
        err, = cu_launch(func, *dims, shmem, handle, params, 0)
    if err != ok:
        _failed(err, dims, shmem)


class Launcher:
    """One kernel with its geometry and arguments packed once; a call passes the CuPy arrays whose pointers change
    from call to call (written into the prepared buffer at their positions) and launches on CuPy's current stream,
    in the current device's context (one CUfunction per device, looked up once).

    ``Launcher(kernel, grid, block, n_arrays, *scalars)``: the first ``n_arrays`` arguments vary, the scalars
    follow. :meth:`over` packs every argument and names the positions that vary.
    """

    __slots__ = ("_funcs", "_kernel", "_dims", "_shmem", "_values", "_ptrs", "_params", "_keep", "_at")

    def __init__(self, kernel, grid, block, n_arrays: int, *scalars, shmem: int = 0):
        _launch_api()
        self._pack(kernel, grid, block, [("Q", 0)] * n_arrays + [_slot(s) for s in scalars], range(n_arrays), shmem)

    @classmethod
    def over(cls, kernel, grid, block, args, varying, shmem: int = 0) -> "Launcher":
        """Every argument of ``args`` packed now (arrays as their addresses); a call replaces the slots at the
        positions ``varying``, in that order."""
        _launch_api()
        self = cls.__new__(cls)
        self._pack(kernel, grid, block, [_slot(a) for a in args], varying, shmem)
        return self

    def _pack(self, kernel, grid, block, slots: list, varying, shmem: int) -> None:
        n = len(slots)
        self._values, self._params, self._keep = _own_buffers(n)
        struct.pack_into("<" + "".join(f for f, _ in slots), self._values, 0, *[v for _, v in slots])
        self._ptrs = (ctypes.c_uint64 * max(n, 1)).from_buffer(self._values)
        self._at = tuple(varying)
        self._funcs = {}
        self._kernel = kernel
        self._dims = _dims(grid) + _dims(block)
        self._shmem = int(shmem)

    def _resolve(self, ordinal: int):
        """The CUfunction in device ``ordinal``'s context, opted in there to its dynamic shared memory above the
        default 48 KiB (the opt-in is per context: one made on another device does not carry over)."""
        func = _function(self._kernel, ordinal)
        if self._shmem > DEFAULT_DYNAMIC_SMEM:
            from cuda.bindings import driver

            attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _check(driver.cuFuncSetAttribute(func, attr, self._shmem), "cuFuncSetAttribute")
        return func

    def __call__(self, *arrays) -> None:
        """Launch with these arrays' addresses (or raw 64-bit addresses, as ints) in the varying slots, in order
        (extra ones are ignored)."""
        cu_launch, ok, current, device = _CU
        handle = current().ptr
        ordinal = device()
        func = self._funcs.get(ordinal)
        if func is None:
            func = self._funcs[ordinal] = self._resolve(ordinal)
        with _LOCK:
            ptrs = self._ptrs
            for i, a in zip(self._at, arrays):
                ptrs[i] = a if type(a) is int else a.data.ptr
            err, = cu_launch(func, *self._dims, self._shmem, handle, self._params, 0)
        if err != ok:
            _failed(err, self._dims, self._shmem)


def _own_buffers(n: int):
    """(value bytes, void** address or 0 without arguments, the void** array to keep alive)."""
    values = ctypes.create_string_buffer(8 * max(n, 1))
    ptrs = (ctypes.c_void_p * max(n, 1))(*[ctypes.addressof(values) + 8 * i for i in range(n)])
    return values, ctypes.addressof(ptrs) if n else 0, ptrs


def current_stream_handle() -> int:
    return int((_CU or _launch_api())[2]().ptr)


def zero(a) -> None:
    """Zero the bytes of device array ``a`` on CuPy's current stream (cudaMemsetAsync, ordered like a launch)."""
    import cupy

    cupy.cuda.runtime.memsetAsync(a.data.ptr, 0, a.nbytes, current_stream_handle())


def current_stream():
    """A cuda.core Stream for CuPy's current stream (cached per handle)."""
    return _core_stream(current_stream_handle())


@cache
def _core_stream(handle: int):  # a non-owning wrapper: the stream's owner (CuPy) destroys it
    from cuda.core import Stream

    ensure_device()
    if handle == 0:
        from cuda.core import LEGACY_DEFAULT_STREAM

        return LEGACY_DEFAULT_STREAM
    return Stream.from_handle(handle)


# ---------------------------------------------------------------- streams and events

@dataclass
class WorkStream:
    """A cuda.core stream plus its CuPy view, so both kinds of work land on one stream."""

    core: object
    cupy: object
    _restore: list = field(default_factory=list, repr=False)

    def __enter__(self) -> "WorkStream":
        """Make this CuPy's current stream for the block. Unlike ``with cupy_stream:``, which
        restores the null stream on exit, this restores whatever stream was current before."""
        import cupy

        self._restore.append(cupy.cuda.get_current_stream())
        self.cupy.use()
        return self

    def __exit__(self, *exc) -> None:
        self._restore.pop().use()

    def record_timing(self):
        from cuda.core import EventOptions

        return self.core.record(options=EventOptions(timing_enabled=True))

    def sync(self) -> None:
        self.core.sync()

    @property
    def handle(self) -> int:
        return int(self.core.handle)


def work_stream() -> WorkStream:
    """The stream gpumemlab works on (one per device), made CuPy's current stream for this thread.

    CuPy owns it (a blocking stream, so stray work on the legacy default stream stays ordered) and
    cuda.core wraps its handle for launches and timing events.
    """
    ws = _work_stream(current_ordinal())
    ws.cupy.use()  # CuPy calls and runtime.launch (which follows CuPy's current stream) share it
    return ws


@cache
def _work_stream(ordinal: int) -> WorkStream:
    return new_stream()


def new_stream() -> WorkStream:
    import cupy
    from cuda.core import Stream

    ensure_device()
    cp_stream = cupy.cuda.Stream(non_blocking=False)
    return WorkStream(Stream.from_handle(int(cp_stream.ptr)), cp_stream)


def elapsed_s(start, end) -> float:
    """Seconds between two recorded timing events (cuda.core gives milliseconds)."""
    return float(end - start) / 1e3


def synchronize() -> None:
    ensure_device().sync()
