"""gpumemlab.stream_map against the loop users write (cupy.asarray -> fn -> .get()) and the pinned H2D rate.

A pageable host array of ``gib`` GiB goes through a light function (``x * 2 + 1``: transfer-bound), a heavy one
(a dependent arithmetic loop per element in one fused kernel: compute-bound) and a chain (``chain_steps`` x 2
elementwise CuPy calls per chunk, as users write fns), with stream_map's input routes (``staged``: two host copies
per byte; ``registered``: every chunk page-locked in place with cudaHostRegister; ``balanced``: the share of chunks
registered that makes the pinner and the copy threads finish together; ``default``: what stream_map picks for this
host; ``caller_pinned``: x and out already page-locked by the caller, no host copy at all). Every variant's result
is checked chunk by chunk before timing (light: against NumPy; heavy and chain: against the naive loop's
arithmetic); times are wall clock (the user's view: host work included).
``--param gib=16 --param fns=light --param routes=staged --param workers=16`` is the 16 GiB run (the naive
loop alone takes 10 x 7-14 s there). With two GPUs or more, each fn also runs with ``devices=[0]`` and ``[0, 1]`` on
the same input (caller-pinned when that route is measured, else staged): the speedup of two GPUs over one.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..bench.timer import TimerConfig
from ..errors import UsageError, VerificationError
from ..gpu import runtime
from ..gpu.host import host_array, memcpy_async
from ..ops.stream_map import copy_rows, stream_map
from ._cite import Finding, field, join, q, sentence
from ._declare import Case, Check, Claim, Experiment, seed

HOST_TIMER = TimerConfig(warmup=1, min_samples=10, min_time_s=0.0, max_time_s=0.0)  # gigabytes per call: 10 are plenty
HEAVY = ("float32 x, int32 iters", "float32 y",
         "float v = x; for (int i = 0; i < iters; ++i) v = fmaf(v, 0.999f, 0.001f); y = v;", "gml_heavy")


def cupy_chain(c, steps: int):
    """A fn as users write it: 2 x steps elementwise CuPy calls per chunk (each its own kernel and temporary)."""
    for _ in range(steps):
        c = c * 1.0001 + 0.25
    return c


def pageable_array(n: int, seed: int) -> np.ndarray:
    """n float32 values, pageable, filled block by block from a random block (fast for gigabytes)."""
    block = np.random.default_rng(seed).random(1 << 20, dtype=np.float32) + 0.5
    x = np.empty(n, np.float32)
    for lo in range(0, n, block.size):
        x[lo:lo + block.size] = block[: min(block.size, n - lo)]
    return x


def naive_loop(fn, x, out, rows: int):
    """What users write first: pageable copies, no overlap."""
    import cupy

    for lo in range(0, x.shape[0], rows):
        out[lo:lo + rows] = fn(cupy.asarray(x[lo:lo + rows])).get()


def host_copy(dst: np.ndarray, src: np.ndarray, workers: int) -> None:
    """Copy with ``workers`` threads in row blocks, as stream_map's host side does."""
    with ThreadPoolExecutor(workers) as pool:
        bounds = [src.shape[0] * i // workers for i in range(workers + 1)]
        for f in [pool.submit(copy_rows, dst, src, a, b) for a, b in zip(bounds, bounds[1:])]:
            f.result()


# stream_map's register= per route name; "default": the route measured for this host (tune host_route), else balanced
ROUTES = {"staged": False, "registered": True, "balanced": None, "default": "auto"}
# x and out in page-locked memory the caller allocated (cudaHostAlloc): DMA both ways in place, no host copy
CALLER_PINNED = "caller_pinned"


def chunkwise_check(run, out, reference, rows: int, what: str):
    """verify(): poison ``out``, run the case, compare every chunk of rows with ``reference(lo, hi)`` exactly
    (NaN, the poison, never compares equal; no full-size reference array: the 16 GiB run keeps only x and out)."""
    from ..bench.verify import poison

    def verify():
        poison(out)
        run()
        for lo in range(0, out.shape[0], rows):
            hi = min(out.shape[0], lo + rows)
            got, want = out[lo:hi], reference(lo, hi)
            bad = got != want
            if bad.any():
                i = int(np.argmax(bad))
                raise VerificationError(f"{what}: {int(bad.sum())} of {got.size} elements wrong in rows {lo}:{hi}; "
                                        f"first at row {lo + i}: got {got[i]!r}, expected {want[i]!r}")
    return verify


def cases(session, params):
    import cupy

    gib = params["quick_gib"] if session.quick else params["gib"]
    n = int(gib * 2**30) // 4
    chunk = params["chunk_mib"] << 20
    rows = chunk // 4
    for key, known in (("fns", ("light", "heavy", "chain")), ("routes", (*ROUTES, CALLER_PINNED))):
        unknown = [v for v in params[key] if v not in known]
        if unknown:
            raise UsageError(f"stream_map: unknown {key} value {unknown[0]!r}; known: {', '.join(known)}")
    x = pageable_array(n, session.seed)
    heavy_kernel = cupy.ElementwiseKernel(*HEAVY)
    fns = {"light": lambda c: c * 2 + 1, "heavy": lambda c: heavy_kernel(c, np.int32(params["heavy_iters"])),
           "chain": lambda c: cupy_chain(c, params["chain_steps"])}
    # light: NumPy rounds x * 2 + 1 like the GPU (two float32 operations); heavy: the naive loop's own arithmetic
    refs = {"light": lambda lo, hi: x[lo:hi] * np.float32(2) + np.float32(1),
            "heavy": lambda lo, hi: fns["heavy"](cupy.asarray(x[lo:hi])).get(),
            "chain": lambda lo, hi: fns["chain"](cupy.asarray(x[lo:hi])).get()}
    common = dict(gib=gib, chunk_mib=params["chunk_mib"])
    moved = dict(reads=x.nbytes, writes=x.nbytes)
    host = dict(ceiling=None, cold_l2=False, clock="host", timer=HOST_TIMER)

    # the reference rate: pinned H2D of the same bytes, chunk by chunk, from one pinned buffer
    with host_array(rows, np.float32) as pinned:
        dev = cupy.empty(rows, np.float32)
        src = pinned.array
        src[:] = x[:rows]

        def h2d():
            stream = cupy.cuda.get_current_stream().ptr
            for _ in range(0, n, rows):
                memcpy_async(dev.data.ptr, pinned.ptr, chunk, stream)
        yield Case("pinned H2D (cudaMemcpyAsync)", h2d, Check(dev, lambda: cupy.asarray(src)), params=common,
                   reads=x.nbytes, kind="baseline", ceiling=None, cold_l2=False, clock="host", timer=HOST_TIMER,
                   extra=dict(mechanism="CE"))
        del dev
    out = np.empty_like(x)  # shared by every case: each writes all of it, poisoned before its check
    # the host's side of the bound for the staged route: two host copies per byte (x -> pinned, pinned -> out)
    for workers in params["workers"]:
        copy = lambda w=workers: host_copy(out, x, w)  # noqa: E731
        yield Case("host memcpy x -> out", copy, chunkwise_check(copy, out, lambda lo, hi: x[lo:hi], rows, "memcpy"),
                   params=dict(common, workers=workers), **moved, kind="baseline", **host)
    with route_arrays(params["routes"], x, out, max(params["workers"])) as arrays:
        for name in params["fns"]:
            fn = fns[name]
            p = dict(common, fn=name)
            naive = lambda fn=fn: naive_loop(fn, x, out, rows)  # noqa: E731
            yield Case("naive loop", naive, chunkwise_check(naive, out, refs[name], rows, "naive loop"), params=p,
                       **moved, kind="baseline", **host)
            for route in params["routes"]:
                src, dst = arrays[route]
                copies = name == "light" and route != CALLER_PINNED  # host threads matter only where they copy
                for workers in params["workers"] if copies else (None,):
                    stats = {}

                    def mapped(fn=fn, stats=stats, workers=workers, route=route, src=src, dst=dst):
                        stats.update(stream_map(fn, src, out=dst, chunk_bytes=chunk, workers=workers,
                                                register=ROUTES.get(route, False), profile=True)[1])
                    yield Case("gpumemlab.stream_map", mapped,
                               chunkwise_check(mapped, dst, refs[name], rows, f"stream_map {route}"),
                               params=dict(p, route=route, workers=workers), **moved, **host,
                               after=lambda rec, stats=stats: rec.extra.update(profile=dict(stats)))
            if runtime.device_count() >= 2:
                route = CALLER_PINNED if CALLER_PINNED in arrays else "staged"
                yield from device_cases(fn, *arrays[route], chunk, rows, refs[name], dict(p, route=route), moved, host,
                                        ROUTES.get(route, False))


MULTI = "gpumemlab.stream_map devices"  # the same call spread over devices [0] and [0, 1]


def device_cases(fn, src, dst, chunk, rows, reference, params, moved, host, register):
    """stream_map(fn, devices=[0]) and devices=[0, 1] on the same input, each checked against ``reference``."""
    for gpus in (1, 2):
        stats = {}

        def mapped(stats=stats, devices=tuple(range(gpus))):
            stats.update(stream_map(fn, src, out=dst, chunk_bytes=chunk, devices=devices, register=register,
                                    profile=True)[1])
        yield Case(MULTI, mapped, chunkwise_check(mapped, dst, reference, rows, f"stream_map on {gpus} GPU(s)"),
                   params=dict(params, gpus=gpus), **moved, **host,
                   after=lambda rec, stats=stats: rec.extra.update(profile=dict(stats)))


@contextlib.contextmanager
def route_arrays(routes, x: np.ndarray, out: np.ndarray, workers: int):
    """(input, output) per route: ``x`` and ``out`` themselves, and for the caller-pinned route page-locked copies
    of them (cudaHostAlloc, filled before any timing; freed on exit)."""
    arrays = dict.fromkeys(ROUTES, (x, out))
    with contextlib.ExitStack() as held:
        if CALLER_PINNED in routes:
            px, pout = (held.enter_context(host_array(x.shape[0], x.dtype)) for _ in range(2))
            host_copy(px.array, x, workers)
            arrays[CALLER_PINNED] = (px.array, pout.array)
        yield arrays


def derive(records, session):
    h2d = next((r for r in records if r.variant.startswith("pinned H2D")), None)
    for r in records:
        if h2d is not None and r.variant != h2d.variant:
            r.extra["pct_of_pinned_h2d"] = 100.0 * h2d.median_s / r.median_s  # same bytes of x in both
        prof = r.extra.get("profile")
        if prof and prof.get("bound_s"):
            r.extra["wall_over_bound"] = r.median_s / prof["bound_s"]


def x_rate(r, copies: int = 1):
    """GB/s of x: the record's bytes count x twice (in and out); ``copies`` passes over each byte share the time."""
    return q(field(r, "bytes") * (0.5 / copies) / field(r, "time_s", "median") * 1e-9, ".1f")


def profile_line(lib) -> Finding:
    """Wall time against the GPU overlap bound, and the route balance where the profile has one."""
    p = lib.extra["profile"]

    def prof(key, scale=1e3, spec=".0f"):
        return q(field(lib, "extra", "profile", key) * scale, spec)
    parts = ["; wall ", q(field(lib, "time_s", "median") * 1e3, ".0f"), " ms = ",
             q(field(lib, "extra", "wall_over_bound"), ".2f"), "x the GPU overlap bound max(H2D ", prof("h2d_s"),
             ", fn ", prof("fn_s"), ", D2H ", prof("d2h_s"), " ms)"]
    if "routes" in p:
        routes = join(", ", (sentence(f"{k!r}: ", q(field(lib, "extra", "profile", "routes", k), ".0f"))
                             for k in p["routes"]))
        parts += ["; chunks by route {", routes, "}, pinner busy ", prof("pin_s"), " ms"]
    if p.get("register_share") is not None:
        parts += [", measured balance: register ", prof("register_share", 100), "% of the input"]
    return sentence(*parts)


def findings(records):
    h2d = next(r for r in records if r.variant.startswith("pinned H2D"))
    memcpy = {r.params["workers"]: r for r in records if r.variant.startswith("host memcpy")}
    route = lambda r: r.params.get("route", "staged")  # noqa: E731 - runs before the registered route: staged only
    for fn in dict.fromkeys(r.params["fn"] for r in records if "fn" in r.params):
        runs = [r for r in records if r.params.get("fn") == fn and r.variant == "gpumemlab.stream_map"]
        naive = next(r for r in records if r.params.get("fn") == fn and r.variant == "naive loop")
        pageable = [r for r in runs if route(r) != CALLER_PINNED]  # empty when a run asked for caller_pinned only
        lib = min(pageable, key=lambda r: r.median_s) if pageable else None
        if lib is not None:
            yield sentence(f"{fn} fn, ", q(field(lib, "params", "gib"), "g"), f" GiB: stream_map ({route(lib)} route) "
                           "moves x at ", x_rate(lib), " GB/s = ", q(field(lib, "extra", "pct_of_pinned_h2d"), ".0f"),
                           "% of pinned H2D (", q(field(h2d, "gbps"), ".1f"), " GB/s), ",
                           q(field(naive, "time_s", "median") / field(lib, "time_s", "median"), ".1f"),
                           "x the naive loop", profile_line(lib) if "wall_over_bound" in lib.extra else "")
        for r in (r for r in runs if route(r) == CALLER_PINNED):
            versus = ([", ", q(field(lib, "time_s", "median") / field(r, "time_s", "median"), ".2f"),
                       f"x its best pageable route ({route(lib)})"] if lib is not None else
                      [", ", q(field(naive, "time_s", "median") / field(r, "time_s", "median"), ".1f"),
                       "x the naive loop"])
            yield sentence(f"{fn} fn, x and out page-locked by the caller: stream_map moves x at ", x_rate(r),
                           " GB/s = ", q(field(r, "extra", "pct_of_pinned_h2d"), ".0f"), "% of pinned H2D", *versus,
                           profile_line(r) if "wall_over_bound" in r.extra else "")
        if len(runs) > 1:
            yield sentence(f"{fn} fn: stream_map by route / host threads: ", join(", ", (
                sentence(f"{route(r)}/", q(field(r, "params", "workers"), ".0f") if r.params["workers"] else "None",
                         ": ", x_rate(r), " GB/s") for r in runs)))
    for fn in dict.fromkeys(r.params["fn"] for r in records if r.variant == MULTI):
        by = {r.params["gpus"]: r for r in records if r.variant == MULTI and r.params["fn"] == fn}
        if {1, 2} <= set(by):
            one, two = by[1], by[2]
            yield sentence(f"{fn} fn on one GPU vs two ({one.params['route']} route, same input, results checked "
                           "against the same reference): ", q(field(one, "time_s", "median") * 1e3, ".0f"), " ms vs ",
                           q(field(two, "time_s", "median") * 1e3, ".0f"), " ms, two GPUs ",
                           q(field(one, "time_s", "median") / field(two, "time_s", "median"), ".2f"), "x as fast")
    for _, r in sorted(memcpy.items()):
        # two host copies per byte of x: the host alone caps the staged route at half the memcpy rate
        yield sentence("host memcpy with ", q(field(r, "params", "workers"), ".0f"), " threads: ", x_rate(r),
                       " GB/s of x; with two host copies per byte the staged route can move x at most at ",
                       x_rate(r, 2), " GB/s here")


EXPERIMENT = Experiment(
    name="stream_map",
    title="gpumemlab.stream_map: a host array through a GPU function, staged over pinned buffers and streams",
    claims=(Claim("Staged concurrent copy and execute: when execution time tE exceeds transfer time tT the staged "
                  "version takes about tE + tT/nStreams instead of tE + tT; when tT exceeds tE, about tT + tE/nStreams.",
                  seed("003", "9.1.2, asynchronous and overlapping transfers with computation")),
            Claim("Page-locked memory enables the highest cudaMemcpy performance (3.2 GB/s on PCIe x16 Gen1, 5.2 GB/s "
                  "on Gen2); use with caution.", seed("001", "slide 'Page-Locked System Memory'"))),
    cases=cases,
    params=dict(gib=2.0, quick_gib=0.25, chunk_mib=64, heavy_iters=6000, chain_steps=80, workers=[8, 16],
                routes=["staged", "registered", "balanced", "default", CALLER_PINNED], fns=["light", "heavy", "chain"]),
    group_by=("fn",),
    derive=derive,
    findings=findings,
    order=90,
)
