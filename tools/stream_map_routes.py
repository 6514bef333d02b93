"""Developer probe: stream_map's routes on this host and its GPUs, printed as one compact table and saved as JSON.

    python tools/stream_map_routes.py OUT.json [--gib 2] [--samples 3] [--sections host,routes,chain,heavy,dask]

Sections: ``host`` (the host copy into an existing / a new ``out``: first-touch faults, populated in one call,
huge pages refused; thread placement where the host has several NUMA nodes), ``routes`` (pinned H2D; the light fn
over pageable x into a new out through each route and the default; caller-pinned; one GPU vs two), ``chain`` (a fn
of 160 CuPy calls per chunk: its own GPU time over the same chunks on the device vs stream_map on one and two
GPUs, with the profile's breakdown; bit-identical results), ``heavy`` (the fused heavy kernel, one vs two GPUs),
``dask`` (a LocalCUDACluster of 1 and 2 workers, blocks made on the workers). Every timed call is checked first.
Rates are GB/s of x (bytes of x / median wall).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

CHAIN_STEPS = 80      # 160 elementwise CuPy calls per chunk
HEAVY_ITERS = 6000
DASK_HEAVY_ITERS = 20000
HEAVY = ("float32 x, int32 iters", "float32 y",
         "float v = x; for (int i = 0; i < iters; ++i) v = fmaf(v, 0.999f, 0.001f); y = v;", "gml_probe_heavy")


MADV_NOHUGEPAGE, MADV_POPULATE_WRITE = 15, 23
_libc = None


def madvise(a: np.ndarray, advice: int) -> bool:
    """madvise over the whole pages of ``a`` (False where the kernel refuses)."""
    import ctypes
    import ctypes.util
    import mmap

    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    page = mmap.PAGESIZE
    first, last = -(-a.ctypes.data // page) * page, (a.ctypes.data + a.nbytes) // page * page
    return last <= first or _libc.madvise(first, last - first, advice) == 0


def thp_mode() -> str | None:
    try:
        text = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        return None
    return next((w[1:-1] for w in text.split() if w.startswith("[")), None)


def chain(c):
    for _ in range(CHAIN_STEPS):
        c = c * 1.0001 + 0.25
    return c


def light(c):
    return c * 2 + 1


def timed(fn, samples: int, check=None) -> dict:
    """fn once (then ``check``), then ``samples`` timed calls: median and min wall in s."""
    fn()
    if check is not None:
        check()
    ts = []
    for _ in range(samples):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return dict(median_s=float(np.median(ts)), min_s=float(min(ts)), samples=ts)


def rate(rec: dict, nbytes: int) -> float:
    return nbytes / rec["median_s"] / 1e9


def filled(n: int, seed: int = 0) -> np.ndarray:
    block = np.random.default_rng(seed).random(1 << 20, dtype=np.float32) + 0.5
    x = np.empty(n, np.float32)
    for lo in range(0, n, block.size):
        x[lo:lo + block.size] = block[: min(block.size, n - lo)]
    return x


def threaded_copy(dst, src, workers: int, before=None, cpus=None):
    from gpumemlab.ops.stream_map import copy_rows

    def part(a, b):
        if cpus:
            os.sched_setaffinity(0, cpus)
        if before is not None:
            before(dst[a:b])
        copy_rows(dst, src, a, b)
    bounds = [src.shape[0] * i // workers for i in range(workers + 1)]
    with ThreadPoolExecutor(workers) as pool:
        for f in [pool.submit(part, a, b) for a, b in zip(bounds, bounds[1:])]:
            f.result()


def numa_cpus() -> dict[int, set]:
    nodes = {}
    for path in glob.glob("/sys/devices/system/node/node[0-9]*"):
        cpus = set()
        for part in open(f"{path}/cpulist").read().strip().split(","):
            if part:
                a, _, b = part.partition("-")
                cpus.update(range(int(a), int(b or a) + 1))
        nodes[int(path.rsplit("node", 1)[1])] = cpus
    return nodes


def gpu_node(ordinal: int) -> int | None:
    from gpumemlab.gpu import runtime

    bus = (runtime.device_info(ordinal).get("pci_bus_id") or "").lower()
    try:
        return int(open(f"/sys/bus/pci/devices/{bus}/numa_node").read())
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------- sections

def host_section(x, samples, workers, res):
    nodes = numa_cpus()
    res["host"] = dict(thp=thp_mode(), cpus=os.cpu_count(), numa_nodes=len(nodes),
                       gpu0_node=gpu_node(0))
    out = np.empty_like(x)
    out[:] = 0
    rows = {}
    rows["memcpy into an existing out"] = timed(lambda: threaded_copy(out, x, workers), samples)
    fresh = {}

    def new_out(before=None, advice=None):
        def run():
            o = np.empty_like(x)
            if advice is not None:
                madvise(o, advice)
            threaded_copy(o, x, workers, before)
            fresh["last"] = o
        return run
    rows["memcpy into a new out (first touch)"] = timed(new_out(), samples)
    rows["memcpy into a new out, populated first (MADV_POPULATE_WRITE)"] = timed(
        new_out(lambda part: madvise(part, MADV_POPULATE_WRITE)), samples)
    rows["memcpy into a new out, huge pages refused (MADV_NOHUGEPAGE)"] = timed(new_out(advice=MADV_NOHUGEPAGE), samples)
    node = res["host"]["gpu0_node"]
    if len(nodes) > 1 and node in nodes:
        near, far = sorted(nodes[node]), sorted(set().union(*(c for n, c in nodes.items() if n != node)))
        rows[f"memcpy, threads on GPU 0's node {node}"] = timed(
            lambda: threaded_copy(out, x, workers, cpus=near), samples)
        rows["memcpy, threads on the other nodes"] = timed(lambda: threaded_copy(out, x, workers, cpus=far), samples)
    res["host"]["rows"] = {k: dict(v, gbps=rate(v, x.nbytes)) for k, v in rows.items()}


def pinned_h2d(x, samples, chunk):
    import cupy

    from gpumemlab.gpu.host import host_array

    rows = chunk // 4
    with host_array(rows, np.float32) as pinned:
        pinned.array[:] = x[:rows]
        dev = cupy.empty(rows, np.float32)

        def run():
            s = cupy.cuda.get_current_stream()
            for _ in range(0, x.shape[0], rows):
                cupy.cuda.runtime.memcpyAsync(dev.data.ptr, pinned.ptr, chunk, cupy.cuda.runtime.memcpyHostToDevice,
                                              s.ptr)
            s.synchronize()
        return timed(run, samples)


def routes_section(x, samples, res, two):
    from gpumemlab import stream_map
    from gpumemlab.gpu.host import host_array

    want = x * np.float32(2) + np.float32(1)

    def checked(**kw):
        def check():
            got = stream_map(light, x, **kw)
            assert np.array_equal(got, want), kw
        return check
    rows = {"pinned H2D (same bytes, 64 MiB copies)": pinned_h2d(x, samples, 64 << 20)}
    for name, register in (("staged", False), ("registered", True), ("balanced", None), ("default", "auto")):
        stats = {}
        rows[f"light, pageable x, new out: {name}"] = timed(
            lambda r=register, s=stats: s.update(stream_map(light, x, register=r, profile=True)[1]), samples,
            checked(register=register))
        rows[f"light, pageable x, new out: {name}"]["profile"] = brief(stats)
    out = np.empty_like(x)
    out[:] = 0
    rows["light, pageable x, existing out: staged"] = timed(lambda: stream_map(light, x, out=out, register=False),
                                                           samples)
    if two:
        for devs in ([0], [0, 1]):
            rows[f"light, pageable x, new out: default, devices {devs}"] = timed(
                lambda d=devs: stream_map(light, x, devices=d), samples, checked(devices=devs))
    with host_array(x.shape, np.float32) as px, host_array(x.shape, np.float32) as po:
        px.array[:] = x
        for devs in ([0], [0, 1]) if two else ([0],):
            rows[f"light, caller-pinned, devices {devs}"] = timed(
                lambda d=devs: stream_map(light, px.array, out=po.array, devices=d), samples,
                lambda: np.array_equal(po.array, want) or _fail("caller-pinned light"))
    res["routes"] = {k: dict(v, gbps=rate(v, x.nbytes)) for k, v in rows.items()}


def same_bits(a, b) -> bool:
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def _fail(what):
    raise AssertionError(f"{what}: wrong result")


def brief(st: dict) -> dict:
    keys = ("wall_s", "h2d_s", "fn_s", "d2h_s", "fn_gpu_s", "fn_host_s", "wait_gpu_s", "host_in_s", "host_out_s",
            "pin_s", "routes", "out_route", "route", "register_share")
    return {k: st.get(k) for k in keys if k in st}


def fn_alone(fn, px, chunk_rows) -> dict:
    """fn over the same chunks already on the GPU, in a plain loop on one stream: its own GPU time."""
    import cupy

    chunks = [cupy.asarray(px[lo:lo + chunk_rows]) for lo in range(0, px.shape[0], chunk_rows)]
    s = cupy.cuda.Stream(non_blocking=True)
    outs = []

    def run():
        outs.clear()
        a, b = cupy.cuda.Event(), cupy.cuda.Event()
        with s:
            a.record()
            for c in chunks:
                outs.append(fn(c))
            b.record()
        b.synchronize()
        run.gpu_s.append(cupy.cuda.get_elapsed_time(a, b) / 1e3)
    run.gpu_s = []
    rec = timed(run, 3)
    rec["gpu_s"] = float(np.median(run.gpu_s[1:]))
    result = np.concatenate([o.get() for o in outs])
    outs.clear()
    chunks.clear()
    return rec, result


def fn_section(name, fn, x, samples, res, two, chunk=64 << 20):
    from gpumemlab import stream_map
    from gpumemlab.gpu.host import host_array

    rows = {}
    with host_array(x.shape, np.float32) as px, host_array(x.shape, np.float32) as po:
        px.array[:] = x
        alone, want = fn_alone(fn, px.array, chunk // 4)
        rows[f"{name}: fn alone over the same chunks, on the GPU (one stream)"] = alone
        for devs in ([0], [0, 1]) if two else ([0],):
            stats = {}
            rec = timed(lambda d=devs, s=stats: s.update(stream_map(fn, px.array, out=po.array, devices=d,
                                                                    chunk_bytes=chunk, profile=True)[1]),
                        samples, lambda d=devs: same_bits(po.array, want) or _fail(f"{name} devices {d}"))
            rec["profile"] = brief(stats)
            rec["over_fn_alone"] = rec["median_s"] / alone["gpu_s"]
            rows[f"{name}: stream_map caller-pinned, devices {devs}"] = rec
    res[name] = {k: dict(v, gbps=rate(v, x.nbytes)) for k, v in rows.items()}


def dask_section(gib, res, samples):
    import distributed
    from dask_cuda import LocalCUDACluster

    n = int(gib * 2**30) // 4
    rows = {}
    heavy = _heavy(DASK_HEAVY_ITERS)
    small = filled(1 << 24, 3)
    for workers in (1, 2):
        with LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(map(str, range(workers))), n_workers=workers,
                              threads_per_worker=1, dashboard_address=None, protocol="tcp") as cluster, \
                distributed.Client(cluster) as client:
            try:
                dask_rows(client, rows, workers, n, small, heavy, samples)
            except Exception:
                logs = client.get_worker_logs(n=30)
                res["dask_worker_logs"] = {w: [m for _, m in lines] for w, lines in logs.items()}
                raise
            client.close()
    res["dask"] = {k: dict(v, gbps=rate(v, n * 4)) for k, v in rows.items()}


def dask_rows(client, rows, workers, n, small, heavy, samples):
    """Each fn through a cluster of ``workers``: identical to the in-process call, then timed on blocks made on the
    workers (persisted first: the timing holds no data movement from this process)."""
    import dask.array as da
    import distributed

    from gpumemlab import stream_map

    for name, fn in (("chain", chain), ("heavy", heavy)):
        got = stream_map(fn, da.from_array(small, chunks=1 << 22)).compute()  # 64 MiB gathered back
        if not same_bits(got, stream_map(fn, small)):
            _fail(f"dask {name} {workers} workers")
        dx = (da.arange(n, chunks=1 << 26, dtype=np.float32) % 1000 / 1000 + 0.5).astype(np.float32).persist()
        distributed.wait(dx)

        def run(dx=dx, fn=fn):
            distributed.wait(stream_map(fn, dx).persist())
        rows[f"dask {name}, {workers} worker(s), blocks of 256 MiB on the workers"] = timed(run, samples)
        del dx


class _heavy:
    """The fused heavy fn (a class: it pickles to Dask workers without its compiled kernel, which belongs to this
    process's CUDA context; each process compiles its own)."""

    def __init__(self, iters: int):
        self.iters, self.kernel = iters, None

    def __getstate__(self):
        return dict(iters=self.iters, kernel=None)

    def __call__(self, c):
        import cupy

        if self.kernel is None:
            self.kernel = cupy.ElementwiseKernel(*HEAVY)
        return self.kernel(c, np.int32(self.iters))


def table(res) -> str:
    lines = []
    for section, rows in res.items():
        if section in ("meta", "host") and "rows" not in rows:
            lines.append(f"[{section}] {json.dumps(rows)}")
            continue
        if section == "host":
            lines.append(f"[host] thp={rows['thp']} cpus={rows['cpus']} numa_nodes={rows['numa_nodes']} "
                         f"gpu0_node={rows['gpu0_node']}")
            rows = rows["rows"]
        else:
            lines.append(f"[{section}]")
        for k, v in rows.items():
            extra = ""
            if "over_fn_alone" in v:
                extra += f" {v['over_fn_alone']:.2f}x fn alone"
            if "gpu_s" in v:
                extra += f" (GPU {v['gpu_s'] * 1e3:.1f} ms)"
            p = v.get("profile")
            if p:
                extra += " | " + " ".join(f"{a}={p[a] * 1e3:.0f}ms" for a in ("fn_gpu_s", "fn_host_s", "wait_gpu_s",
                                                                              "host_in_s", "host_out_s", "pin_s")
                                          if isinstance(p.get(a), float))
                if p.get("routes"):
                    extra += f" routes={p['routes']}"
            lines.append(f"  {k:<72} {v['gbps']:6.1f} GB/s  med {v['median_s'] * 1e3:7.1f} ms"
                         f"  min {v['min_s'] * 1e3:7.1f} ms{extra}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--gib", type=float, default=2.0)
    ap.add_argument("--dask-gib", type=float, default=2.0)
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--sections", default="host,routes,chain,heavy,dask")
    args = ap.parse_args(argv)
    from gpumemlab.gpu import runtime

    runtime.ensure_device()
    sections = args.sections.split(",")
    two = runtime.device_count() >= 2
    res = {"meta": dict(device=runtime.device_info(0)["name"], gpus=runtime.device_count(), gib=args.gib,
                        package=os.path.dirname(sys.modules["gpumemlab"].__file__))}
    x = filled(int(args.gib * 2**30) // 4)
    steps = {"host": lambda: host_section(x, args.samples, min(16, os.cpu_count()), res),
             "routes": lambda: routes_section(x, args.samples, res, two),
             "chain": lambda: fn_section("chain", chain, x, args.samples, res, two),
             "heavy": lambda: fn_section("heavy", _heavy(HEAVY_ITERS), x, args.samples, res, two),
             "dask": lambda: dask_section(args.dask_gib, res, args.samples)}
    for name in sections:
        t = time.perf_counter()
        try:
            steps[name]()
        except Exception as exc:  # one failing section must not cost the others' numbers
            res.setdefault("errors", {})[name] = f"{type(exc).__name__}: {exc}"
        print(f"# {name}: {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
        with contextlib.suppress(Exception):
            import cupy

            cupy.get_default_memory_pool().free_all_blocks()
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1, default=str)
    print(table({k: v for k, v in res.items() if k != "errors"}))
    for k, v in res.get("errors", {}).items():
        print(f"ERROR in {k}: {v}")
    return 1 if res.get("errors") else 0


if __name__ == "__main__":
    sys.exit(main())
