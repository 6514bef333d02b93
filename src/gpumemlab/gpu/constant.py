"""``__constant__`` variables of loaded kernels: find a symbol and write it (cudaMemcpyToSymbol)."""

from __future__ import annotations

import numpy as np

from ..kernels import KernelSpec
from . import runtime
from .runtime import _check


def symbol(spec: KernelSpec, name: str) -> tuple[int, int]:
    """(device address, bytes) of the module-scope variable ``name`` in the module holding ``spec``."""
    from cuda.bindings import driver

    kernel = runtime.get_kernel(spec)
    h = kernel.handle
    if isinstance(h, driver.CUkernel):
        lib = _check(driver.cuKernelGetLibrary(h), "cuKernelGetLibrary")
        ptr, size = _check(driver.cuLibraryGetGlobal(lib, name.encode()), f"cuLibraryGetGlobal({name})")
    else:
        mod = _check(driver.cuFuncGetModule(h), "cuFuncGetModule")
        ptr, size = _check(driver.cuModuleGetGlobal(mod, name.encode()), f"cuModuleGetGlobal({name})")
    return int(ptr), int(size)


def write_symbol(spec: KernelSpec, name: str, values) -> None:
    """Copy the host array ``values`` to the start of ``name`` on CuPy's current stream.

    ``runtime.get_kernel`` loads each spec as a module of its own: write the symbol for every spec that reads it.
    """
    from cuda.bindings import driver

    host = np.ascontiguousarray(values)
    ptr, size = symbol(spec, name)
    if host.nbytes > size:
        raise ValueError(f"{name}: {host.nbytes} bytes do not fit its {size} bytes")
    # a pageable source is staged before the call returns, so `host` may be dropped afterwards
    _check(driver.cuMemcpyHtoDAsync(driver.CUdeviceptr(ptr), host.ctypes.data, host.nbytes,
                                    driver.CUstream(runtime.current_stream_handle())), "cuMemcpyHtoDAsync")
