#!/usr/bin/env python3
"""Where runtime.Launcher's time per launch goes above a bare cuLaunchKernel: the launch alone (CUfunction object or int,
geometry unpacked or spelled out), then with the stream lookup, the device lookup, the lock, the slot writes and the
error check added one by one, and the Launcher itself; 10,000 launches of one small copy kernel per sample, 7 rounds.

    PYTHONPATH=src python3 tools/launcher_breakdown.py
"""
import threading
import time


def main() -> None:
    import cupy
    import numpy as np
    from cuda.bindings import driver

    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import copy as K

    runtime.work_stream()
    spec = K.copy_vec("float4", 1); n = 1024
    src = cupy.arange(n, dtype=cupy.float32) + 1; dst = cupy.empty(n, cupy.float32)
    grid = 1; n_vec = np.int64(n // 4)
    L = runtime.Launcher(spec, grid, 256, 2, n_vec)
    L(dst, src)
    func = L._funcs[0]; fint = int(func)
    params = L._params; dims = L._dims; ptrs = L._ptrs
    cur = cupy.cuda.get_current_stream; dev = cupy.cuda.runtime.getDevice
    lock = threading.Lock(); ok = driver.CUresult.CUDA_SUCCESS
    cu = driver.cuLaunchKernel
    h = cur().ptr
    def raw_obj(): cu(func, *dims, 0, h, params, 0)
    def raw_int(): cu(fint, *dims, 0, h, params, 0)
    def raw_int_expl(): cu(fint, 1, 1, 1, 256, 1, 1, 0, h, params, 0)
    def with_stream(): cu(fint, *dims, 0, cur().ptr, params, 0)
    def with_dev(): dev(); cu(fint, *dims, 0, cur().ptr, params, 0)
    def with_lock():
        with lock: cu(fint, *dims, 0, cur().ptr, params, 0)
    def with_slots():
        with lock:
            ptrs[0] = dst.data.ptr; ptrs[1] = src.data.ptr
            cu(fint, *dims, 0, cur().ptr, params, 0)
    def with_check():
        with lock:
            ptrs[0] = dst.data.ptr; ptrs[1] = src.data.ptr
            err, = cu(fint, *dims, 0, cur().ptr, params, 0)
        if err != ok: raise RuntimeError
    def launcher(): L(dst, src)
    def dataptr(): dst.data.ptr; src.data.ptr
    fns = dict(raw_obj=raw_obj, raw_int=raw_int, raw_int_expl=raw_int_expl, with_stream=with_stream, with_dev=with_dev,
               with_lock=with_lock, with_slots=with_slots, with_check=with_check, launcher=launcher, dataptr=dataptr)
    res = {k: [] for k in fns}
    for r in range(7):
        for k, f in fns.items():
            for _ in range(200): f()
            cupy.cuda.Device().synchronize(); t = time.perf_counter()
            for _ in range(10000): f()
            cupy.cuda.Device().synchronize(); res[k].append((time.perf_counter() - t) / 10000 * 1e6)
    for k, v in res.items(): print(f"{k:14s} median {sorted(v)[3]:.2f} us  min {min(v):.2f}")


if __name__ == "__main__":
    main()
