"""Host-side costs behind stream_map (issue 10): cudaHostRegister / cudaHostUnregister throughput of chunks of a
large pageable NumPy array with several threads at once, copies from/to registered chunks, threaded host memcpy
into pinned memory, and the register flags. Prints one JSON document (and writes it to the path in argv[1]).

    PYTHONPATH=src python3 tools/measure_host_register.py out.json [gib] [driver]

``driver``: only the driver's own pageable copies (cudaMemcpyAsync from/to pageable memory, no staging of ours)
issued from 1..16 threads at once, each on its own stream: does the driver's internal staging scale with threads?
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import cupy
import numpy as np
from cupy.cuda import runtime as rt

PORTABLE, MAPPED, READ_ONLY = 1, 2, 8   # cudaHostRegister flags
MiB = 1 << 20


def touched(nbytes: int) -> np.ndarray:
    a = np.empty(nbytes, np.uint8)
    a[:] = 1  # fault every page in: the user's array exists before stream_map sees it
    return a


def chunks_of(a: np.ndarray, chunk: int, page: int):
    """Page-aligned interiors of consecutive chunks (what stream_map registers)."""
    base = a.ctypes.data
    out = []
    for lo in range(0, a.nbytes, chunk):
        s = -(-(base + lo) // page) * page
        e = (base + min(a.nbytes, lo + chunk)) // page * page
        if e > s:
            out.append((s, e - s))
    return out


def timed_pool(fn, items, threads: int) -> float:
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda _: rt.getDevice(), range(threads)))  # every thread has its context first
        t = time.perf_counter()
        list(pool.map(fn, items))
        return time.perf_counter() - t


def register_rates(a, chunk, threads, flags=0, reps=3):
    regs = chunks_of(a, chunk, os.sysconf("SC_PAGE_SIZE"))
    nbytes = sum(n for _, n in regs)
    r, u = [], []
    for _ in range(reps):
        r.append(nbytes / timed_pool(lambda pn: rt.hostRegister(pn[0], pn[1], flags), regs, threads) / 1e9)
        u.append(nbytes / timed_pool(lambda pn: rt.hostUnregister(pn[0]), regs, threads) / 1e9)
    return dict(register_gbps=statistics.median(r), unregister_gbps=statistics.median(u), samples_register=r,
                samples_unregister=u)


def copy_rate(dst_ptr, src_ptr, nbytes, kind, reps=10):
    s = cupy.cuda.Stream(non_blocking=True)
    e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
    rt.memcpyAsync(dst_ptr, src_ptr, nbytes, kind, s.ptr)
    s.synchronize()
    out = []
    for _ in range(reps):
        e0.record(s)
        rt.memcpyAsync(dst_ptr, src_ptr, nbytes, kind, s.ptr)
        e1.record(s)
        e1.synchronize()
        out.append(nbytes / (cupy.cuda.get_elapsed_time(e0, e1) / 1e3) / 1e9)
    return statistics.median(out)


def threaded_memmove(dst, src, threads, reps=5):
    import ctypes

    n = src.nbytes
    bounds = [n * i // threads for i in range(threads + 1)]
    parts = list(zip(bounds, bounds[1:]))
    out = []
    for _ in range(reps):
        t = timed_pool(lambda ab: ctypes.memmove(dst.ctypes.data + ab[0], src.ctypes.data + ab[0], ab[1] - ab[0]),
                       parts, threads)
        out.append(n / t / 1e9)
    return statistics.median(out)


def pageable_driver_rates(a, chunk=64 * MiB, reps=3) -> list[dict]:
    """H2D from and D2H into pageable ``a`` by cudaMemcpyAsync, chunks shared among 1..16 threads (own streams)."""
    d = cupy.empty(a.nbytes, np.uint8)
    offs = list(range(0, a.nbytes, chunk))
    rows = []
    for threads in (1, 2, 4, 8, 16):
        streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(threads)]
        for name, kind, dst, src in (("h2d", rt.memcpyHostToDevice, d.data.ptr, a.ctypes.data),
                                     ("d2h", rt.memcpyDeviceToHost, a.ctypes.data, d.data.ptr)):
            def part(t):
                s = streams[t]
                for o in offs[t::threads]:
                    rt.memcpyAsync(dst + o, src + o, min(chunk, a.nbytes - o), kind, s.ptr)
                s.synchronize()
            rates = [a.nbytes / timed_pool(part, range(threads), threads) / 1e9 for _ in range(reps)]
            rows.append(dict(direction=name, threads=threads, gbps=statistics.median(rates), samples=rates))
            print("pageable driver", name, threads, round(statistics.median(rates), 1), flush=True)
    del d
    return rows


def main():
    path = sys.argv[1]
    gib = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
    if sys.argv[3:] == ["driver"]:
        a = touched(int(gib * 2**30))
        res = {"device": rt.getDeviceProperties(0)["name"].decode(), "cpus": os.cpu_count(),
               "pageable_driver": pageable_driver_rates(a)}
        json.dump(res, open(path, "w"), indent=1)
        return
    res = {"device": rt.getDeviceProperties(0)["name"].decode(), "cpus": os.cpu_count(),
           "page": os.sysconf("SC_PAGE_SIZE")}
    for f in ("enabled", "defrag"):
        try:
            res[f"thp_{f}"] = open(f"/sys/kernel/mm/transparent_hugepage/{f}").read().strip()
        except OSError:
            pass
    try:
        res["numpy_madvise_hugepage"] = bool(np._core.multiarray._get_madvise_hugepage())
    except Exception as exc:
        res["numpy_madvise_hugepage"] = repr(exc)
    try:
        res["readonly_register_supported"] = rt.deviceGetAttribute(113, 0)  # cudaDevAttrHostRegisterReadOnlySupported
    except Exception as exc:
        res["readonly_register_supported"] = repr(exc)
    meminfo = lambda: {l.split(":")[0]: l.split(":")[1].strip() for l in open("/proc/meminfo")
                       if l.startswith(("MemTotal", "MemAvailable", "AnonHugePages"))}
    res["meminfo_before"] = meminfo()
    a = touched(int(gib * 2**30))
    res["meminfo_after_x"] = meminfo()
    res["register"] = []
    for chunk in (16, 64, 256):
        for threads in (1, 2, 4, 8, 16):
            r = register_rates(a, chunk * MiB, threads)
            res["register"].append(dict(chunk_mib=chunk, threads=threads, **r))
            print(chunk, threads, round(r["register_gbps"], 1), round(r["unregister_gbps"], 1), flush=True)
    res["flags"] = {}
    for name, flags in (("default", 0), ("portable", PORTABLE), ("read_only", READ_ONLY), ("mapped", MAPPED)):
        try:
            res["flags"][name] = register_rates(a, 64 * MiB, 8, flags)
        except Exception as exc:
            res["flags"][name] = repr(exc)
    # fresh (never touched) memory: registering faults the pages in (an `out` from np.empty)
    res["fresh"] = []
    for threads in (1, 8, 16):
        f = np.empty(2 << 30, np.uint8)
        regs = chunks_of(f, 64 * MiB, res["page"])
        t = timed_pool(lambda pn: rt.hostRegister(pn[0], pn[1], 0), regs, threads)
        res["fresh"].append(dict(threads=threads, register_gbps=f.nbytes / t / 1e9))
        timed_pool(lambda pn: rt.hostUnregister(pn[0]), regs, threads)
        del f
    # copies from / to a registered chunk vs cudaHostAlloc memory, 256 MiB
    n = 256 * MiB
    d = cupy.empty(n, np.uint8)
    s, length = chunks_of(a[: n + 8192], n + 8192, res["page"])[0]
    rt.hostRegister(s, n, 0)
    res["h2d_registered_gbps"] = copy_rate(d.data.ptr, s, n, rt.memcpyHostToDevice)
    res["d2h_registered_gbps"] = copy_rate(s, d.data.ptr, n, rt.memcpyDeviceToHost)
    rt.hostUnregister(s)
    p = rt.hostAlloc(n, 0)
    res["h2d_pinned_gbps"] = copy_rate(d.data.ptr, p, n, rt.memcpyHostToDevice)
    res["d2h_pinned_gbps"] = copy_rate(p, d.data.ptr, n, rt.memcpyDeviceToHost)
    # threaded host memcpy pageable -> pinned and pinned -> pageable (the staging path's two host copies)
    pinned = np.frombuffer((__import__("ctypes").c_byte * n).from_address(p), np.uint8)
    res["memcpy_to_pinned_gbps"] = {t: threaded_memmove(pinned, a[:n], t) for t in (1, 2, 4, 8, 16)}
    res["memcpy_from_pinned_gbps"] = {t: threaded_memmove(a[n:2 * n], pinned, t) for t in (1, 2, 4, 8, 16)}
    del pinned
    rt.freeHost(p)
    json.dump(res, open(path, "w"), indent=1)
    print(json.dumps({k: v for k, v in res.items() if k != "register"}, indent=1))


if __name__ == "__main__":
    main()
