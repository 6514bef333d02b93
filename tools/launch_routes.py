"""Host cost per call of the kernel launch routes and of the library's public functions, on tiny inputs.

Usage: PYTHONPATH=src python tools/launch_routes.py [--functions-only] [--json FILE]

Routes (the same cubin, ``copy_vec<float4, 1>`` on 1024 floats): cuda.core's ``launch`` with a LaunchConfig per
call (gpumemlab's route before the lean path), ``runtime.launch`` (cuLaunchKernel with the arguments packed per
call), ``runtime.Launcher`` (geometry and scalars prepared once, pointers written per call), cuLaunchKernel with the
argument buffer prepared once (through cuda.bindings, and through ctypes straight into libcuda), and CuPy's RawModule
loading the same cubin.
Functions: gpumemlab.matmul/sum/transpose/copy and their CuPy equivalents. Each entry: wall time of ``CALLS``
back-to-back calls (then a synchronize) / ``CALLS``, ``ROUNDS`` rounds with the entries interleaved (order
reversed every other round); median, min and max in microseconds. Results are checked before timing.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

CALLS = 2000
ROUNDS = 11


def per_call_us(fns: dict, calls: int = CALLS, rounds: int = ROUNDS) -> dict:
    import cupy

    for fn in fns.values():  # warm-up: compilation, caches, memory pool
        for _ in range(20):
            fn()
    cupy.cuda.get_current_stream().synchronize()
    samples = {name: [] for name in fns}
    for r in range(rounds):
        for name in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
            fn = fns[name]
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            cupy.cuda.get_current_stream().synchronize()
            samples[name].append((time.perf_counter() - t0) / calls * 1e6)
    return {n: dict(median=statistics.median(s), min=min(s), max=max(s), samples=s) for n, s in samples.items()}


def routes() -> dict:
    import cupy
    from cuda.bindings import driver
    from cuda.core import LaunchConfig
    from cuda.core import launch as core_launch

    from gpumemlab.gpu import compile as C
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import copy as K

    spec = K.copy_vec("float4", 1)
    n = 1024
    src = cupy.arange(n, dtype=cupy.float32) + 1
    dst = cupy.full(n, np.nan, cupy.float32)
    n_vec = np.int64(n // 4)
    grid = (n // 4 + 255) // 256
    kernel = runtime.get_kernel(spec)
    func = runtime._func_handle(kernel)
    stream = cupy.cuda.get_current_stream()
    core_stream = runtime.current_stream()

    def core():
        cfg = LaunchConfig(grid=(grid,), block=(256,), shmem_size=0)
        core_launch(core_stream, cfg, kernel, np.uint64(dst.data.ptr), np.uint64(src.data.ptr), n_vec)

    def packed():
        runtime.launch(spec, grid, 256, dst, src, n_vec)

    launcher = runtime.Launcher(spec, grid, 256, 2, n_vec)

    def prepared_per_shape():
        launcher(dst, src)

    values = (ctypes.c_uint64 * 3)(dst.data.ptr, src.data.ptr, int(n_vec))
    params = (ctypes.c_void_p * 3)(*[ctypes.addressof(values) + 8 * i for i in range(3)])
    params_addr = ctypes.addressof(params)
    fn_int = int(func)

    def prepared():
        driver.cuLaunchKernel(fn_int, grid, 1, 1, 256, 1, 1, 0, stream.ptr, params_addr, 0)

    libcuda = ctypes.CDLL("libcuda.so.1")  # the driver's own entry point: no Python binding in between
    cu_launch = libcuda.cuLaunchKernel
    cu_launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    cu_launch.restype = ctypes.c_int

    def prepared_ctypes():
        err = cu_launch(fn_int, grid, 1, 1, 256, 1, 1, 0, stream.ptr, params_addr, None)
        if err:
            raise RuntimeError(f"cuLaunchKernel: {err}")

    mod, _ = C.compile_specs([spec], runtime.device_arch())[spec]
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(mod.cubin)
    raw = cupy.RawModule(path=f.name).get_function(dict(mod.symbol_mapping)[spec.name])
    os.unlink(f.name)

    def cupy_raw():
        raw((grid,), (256,), (dst, src, n_vec))

    fns = {"cuda.core launch (LaunchConfig per call)": core, "runtime.launch (cuLaunchKernel, packed per call)": packed,
           "runtime.Launcher (prepared per shape, pointers per call)": prepared_per_shape,
           "cuLaunchKernel (arguments prepared once)": prepared,
           "cuLaunchKernel through ctypes (arguments prepared once)": prepared_ctypes, "cupy.RawModule function": cupy_raw}
    for name, fn in fns.items():  # each route must copy the array
        dst.fill(np.nan)
        fn()
        assert bool((dst == src).all()), name
    return per_call_us(fns)


def functions() -> dict:
    import cupy

    import gpumemlab

    g = cupy.random.default_rng(7)
    a, b = g.random((64, 64), dtype=np.float32) + 0.5, g.random((64, 64), dtype=np.float32) + 0.5
    x1 = g.random(4096, dtype=np.float32) + 0.5
    x2 = g.random((64, 64), dtype=np.float32) + 0.5
    pairs = {"matmul 64^3": (lambda: gpumemlab.matmul(a, b), lambda: cupy.matmul(a, b)),
             "sum 4096": (lambda: gpumemlab.sum(x1), lambda: cupy.sum(x1)),
             "transpose 64x64": (lambda: gpumemlab.transpose(x2), lambda: cupy.ascontiguousarray(x2.T)),
             "copy 4096": (lambda: gpumemlab.copy(x1), lambda: x1.copy())}
    for name, (ours, theirs) in pairs.items():
        np.testing.assert_allclose(cupy.asnumpy(ours()), cupy.asnumpy(theirs()), rtol=1e-5, err_msg=name)
    fns = {}
    for name, (ours, theirs) in pairs.items():
        fns[f"gpumemlab {name}"] = ours
        fns[f"cupy {name}"] = theirs
    return per_call_us(fns, calls=500)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--functions-only", action="store_true", help="skip the launch routes (for an older tree)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    from gpumemlab.gpu import runtime

    runtime.work_stream()  # the library's stream, current for CuPy, as the suite runs
    out = {"device": runtime.device_info()["name"], "functions": functions()}
    if not args.functions_only:
        out["routes"] = routes()
    for part in ("routes", "functions"):
        for name, s in out.get(part, {}).items():
            print(f"{part:9s} {name:58s} median {s['median']:7.2f} us  (min {s['min']:.2f}, max {s['max']:.2f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
