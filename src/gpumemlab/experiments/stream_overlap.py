"""Seed 003's staged copy/kernel overlap: copy all then run the kernel, against nStreams chunks each copied and
processed on its own stream, next to the seed's model, in both regimes (tE >= tT and tT > tE); a third stage
(D2H) to use the second copy direction; a host function (the seed's cpuFunction) overlapped with GPU work; and the
two pitfalls of 9.1.2 beside the staged loop that works: the same loop copying from pageable memory, and the same
loop issued on the legacy default stream."""

from __future__ import annotations

import time
from contextlib import ExitStack

import numpy as np

from ..errors import VerificationError
from ..gpu import host, runtime
from ..kernels import blocks_for
from ..kernels import host as K
from ..model.overlap import sequential_time, staged_time
from ._cite import field, join, q, sentence
from ._declare import Case, Claim, Experiment, Plot, seed
from ._transfers import MIB, check_close_device, require_equal

BLOCK = 256
C = float(np.float32(0.999))   # busy_map's contraction: x <- x*c + (1 - c), fixed point 1
ATOL = 2e-4                    # float32 rounding over the chain: each step's error shrinks by c


def busy_expected(x_dev, iters: int):
    """busy_map's result in float64: x_k = 1 + c^k (x_0 - 1) (1 - c is exact in float32)."""
    return 1.0 + C**iters * (x_dev.astype(np.float64) - 1.0)


# Copies of one direction are chained with events, so they run back to back in chunk order as on the seed's
# one engine per direction: left alone, the driver spreads same-direction copies of several streams over the
# copy engines, where they share the link, all finish late, and hold back every chunk's kernel.


class Pipeline:
    """The buffers and stages of one problem: pinned input ``x``, device ``a``, pinned output ``y``."""

    def __init__(self, session, stack: ExitStack, n: int):
        from ..bench.verify import device_random_nonzero

        self.session, self.n = session, n
        self.x_dev = device_random_nonzero(n, np.float32, session.seed)
        self.x = stack.enter_context(host.host_array(n, np.float32)).array
        self.y = stack.enter_context(host.host_array(n, np.float32)).array
        host.copy_async(self.x, self.x_dev)
        import cupy

        self.x_pageable = cupy.asnumpy(self.x_dev)  # the same input in ordinary (pageable) host memory

        self.a = cupy.empty_like(self.x_dev)
        self.kernel = runtime.get_kernel(K.BUSY_MAP)
        self.iters = 1

    def stage(self, name: str, lo: int, hi: int, mode: str = "pinned") -> None:
        """One stage on CuPy's current stream for elements [lo, hi) (``mode`` "pageable": H2D from pageable memory)."""
        if name == "H2D":
            host.copy_async(self.a[lo:hi], (self.x_pageable if mode == "pageable" else self.x)[lo:hi])
        elif name == "kernel":
            grid = min(blocks_for(hi - lo, BLOCK), 32 * self.session.sm_count)
            runtime.launch(self.kernel, grid, BLOCK, self.a[lo:hi], self.iters, np.float32(C), np.int64(hi - lo))
        else:
            host.copy_async(self.y[lo:hi], self.a[lo:hi])

    def run(self, stages, n_streams: int, trace: list | None = None, mode: str = "pinned") -> None:
        """Every stage over ``n_streams`` equal chunks, chunk i on stream i (seed 003's staged loop). ``mode``:
        "pinned" (non-blocking streams, pinned host memory), "pageable" (H2D from pageable memory) or
        "default stream" (every chunk on the legacy default stream)."""
        streams = [host.legacy_stream()] * n_streams if mode == "default stream" else host.side_streams(n_streams)
        t0 = host.timing_event() if trace is not None else None
        host.fork(streams)
        chunk = self.n // n_streams
        done: dict = {}  # copy direction -> event after the previous chunk's copy
        for i, s in enumerate(streams):
            lo, hi = i * chunk, (i + 1) * chunk if i < n_streams - 1 else self.n
            for name in stages:
                if name in done:  # copies of one direction back to back, in chunk order (note above)
                    s.wait_event(done[name])
                start = host.timing_event(s) if trace is not None else None
                host.run_on_stream(s, lambda: self.stage(name, lo, hi, mode))
                if name != "kernel":
                    done[name] = host.timing_event(s)
                if trace is not None:
                    trace.append((i, name, start, host.timing_event(s)))
        host.join(streams)
        if trace is not None:
            host.synchronize()
            trace[:] = [dict(stream=i, op=name, start_ms=1e3 * host.seconds_between(t0, a),
                             end_ms=1e3 * host.seconds_between(t0, b)) for i, name, a, b in trace]

    def time_once(self, fn) -> float:
        fn()  # warm-up (first launch loads the module)
        start = host.timing_event()
        fn()
        end = host.timing_event()
        end.synchronize()
        return host.seconds_between(start, end)

    def calibrate(self, ratio: float, probe: int = 256) -> int:
        """Iterations of busy_map that make its time about ``ratio`` x the H2D copy's."""
        t_copy = self.time_once(lambda: self.stage("H2D", 0, self.n))
        self.iters = probe
        t_probe = self.time_once(lambda: self.stage("kernel", 0, self.n))
        return max(1, round(probe * ratio * t_copy / t_probe))

    def check(self, stages, n_streams: int = 1, mode: str = "pinned"):
        """Poison the output of ``stages``, run them, compare with the float64 model of busy_map."""
        def verify():
            self.a.fill(np.nan)
            self.y.fill(np.nan)
            self.run(stages, n_streams, mode=mode)
            out = self.a
            if stages[-1] == "D2H":
                import cupy

                self.session.stream.sync()
                out = cupy.asarray(self.y)
            check_close_device(out, busy_expected(self.x_dev, self.iters), ATOL, " + ".join(stages))
        return verify


def cases(session, params):
    n = (params["mib"] if not session.quick else min(params["mib"], 32)) * MIB // 4
    n = session.fit_elements(n, 8, "stream_overlap")
    n -= n % (max(params["streams"]) * BLOCK)
    with ExitStack() as stack:
        p = Pipeline(session, stack, n)
        for ratio in params["cost"]:
            iters = p.calibrate(ratio)
            common = dict(cost=ratio, iters=iters, mib=4 * n / MIB)

            def case(variant, stages, n_streams, check, **kw):
                def run(stages=stages, n_streams=n_streams, iters=iters):
                    p.iters = iters
                    p.run(stages, n_streams)
                kw.setdefault("extra", {}).update(mechanism="CE" if "kernel" not in stages else "CE + SM kernel")
                return Case(variant, run, check, params=dict(common, n_streams=n_streams), cold_l2=False,
                            ceiling=None, **kw)

            nbytes = 4 * n
            p.iters = iters
            yield case("H2D copy", ("H2D",), 1, _copy_check(p, "H2D"), reads=nbytes)
            yield case("kernel", ("kernel",), 1, _kernel_check(p), reads=nbytes, writes=nbytes)
            yield case("D2H copy", ("D2H",), 1, _copy_check(p, "D2H"), reads=nbytes)
            for k in params["streams"]:
                trace = k == min(4, max(params["streams"])) and ratio == max(params["cost"])
                c = case("copy + kernel", ("H2D", "kernel"), k, p.check(("H2D", "kernel")), reads=nbytes)
                if trace:  # the timeline of one case: start and end of every copy and kernel per stream
                    c.after = _timeline(p, ("H2D", "kernel"), k, iters)
                yield c
                yield case("copy + kernel + D2H", ("H2D", "kernel", "D2H"), k, p.check(("H2D", "kernel", "D2H")),
                           reads=nbytes, writes=nbytes)
            if ratio == max(params["cost"]):
                yield from _pitfall_cases(p, common, params["pitfall_streams"], iters, nbytes)
        yield from _cpu_function_cases(session, p, common)


PITFALLS = {"pinned": "staged, pinned, non-default streams", "pageable": "staged from pageable memory",
            "default stream": "staged on the legacy default stream"}


def _pitfall_cases(p: Pipeline, common: dict, k: int, iters: int, nbytes: int):
    """The staged H2D + kernel loop three ways, on the host clock (legacy-stream work is not ordered with the
    runner's events): as it should be, from pageable memory, and on the legacy default stream (seed 003, 9.1.2)."""
    stages = ("H2D", "kernel")
    for mode, variant in PITFALLS.items():
        def run(mode=mode):
            p.iters = iters
            p.run(stages, k, mode=mode)
        yield Case(variant, run, p.check(stages, k, mode), params=dict(common, n_streams=k), reads=nbytes,
                   cold_l2=False, ceiling=None, clock="host", extra=dict(mode=mode, mechanism="CE + SM kernel"))


def _copy_check(p: Pipeline, direction: str):
    import cupy

    def verify():
        if direction == "H2D":
            p.a.fill(np.nan)
            p.run(("H2D",), 1)
            from ..bench.verify import check_equal_device

            check_equal_device(p.a, p.x_dev, what="H2D copy")
        else:
            p.a[...] = p.x_dev
            p.y.fill(np.nan)
            p.run(("D2H",), 1)
            p.session.stream.sync()
            require_equal(bool(cupy.array_equal(cupy.asarray(p.y), p.x_dev)), True, "D2H copy equals its source")
    return verify


def _kernel_check(p: Pipeline):
    def verify():
        p.a[...] = p.x_dev
        p.run(("kernel",), 1)
        check_close_device(p.a, busy_expected(p.x_dev, p.iters), ATOL, "busy_map")
    return verify


def _timeline(p: Pipeline, stages, n_streams: int, iters: int):
    def after(rec):
        p.iters = iters
        trace = []
        with p.session.stream:
            p.run(stages, n_streams, trace)
        rec.extra["timeline"] = trace
    return after


def _cpu_function_cases(session, p: Pipeline, common: dict):
    """Seed 003's cudaMemcpyAsync; Kernel<<<>>>; cpuFunction(): the host works while the GPU copies and computes."""
    t_gpu = p.time_once(lambda: p.run(("H2D", "kernel"), 1))
    scratch = np.ones(1 << 20, np.float32)

    def cpu_once():
        np.sqrt(scratch, out=scratch)

    start = time.perf_counter()
    cpu_once()
    reps = max(1, round(t_gpu / max(time.perf_counter() - start, 1e-7)))  # about as long as the GPU work

    def cpu_function():
        for _ in range(reps):
            cpu_once()

    def serial():
        p.run(("H2D", "kernel"), 1)
        session.stream.sync()
        cpu_function()

    def overlapped():
        p.run(("H2D", "kernel"), 1)
        cpu_function()  # the runner's host clock stops after a synchronize

    params = dict(common, n_streams=1, cpu_reps=reps)
    check = p.check(("H2D", "kernel"))
    host_clock = dict(cold_l2=False, ceiling=None, clock="host", params=params)
    def check_cpu():  # sqrt keeps ones at one: anything else means the host work went wrong
        scratch.fill(1.0)
        cpu_function()
        if not np.all(scratch == 1.0):
            raise VerificationError("cpuFunction: sqrt(1) is no longer 1")
    yield Case("cpuFunction alone", cpu_function, check_cpu, **host_clock)
    yield Case("GPU, then cpuFunction", serial, check, **host_clock)
    yield Case("GPU with cpuFunction overlapped", overlapped, check, **host_clock)


def derive(records, session):
    engines = host.copy_engines()
    for r in records:
        r.extra["copy_engines"] = engines
    for cost in {r.params["cost"] for r in records}:
        group = {r.variant: r for r in records if r.params["cost"] == cost and r.params["n_streams"] == 1}
        if "kernel" not in group:
            continue
        t_t, t_e, t_d = (group[v].median_s for v in ("H2D copy", "kernel", "D2H copy"))
        for r in records:
            if r.params["cost"] != cost or r.variant not in ("copy + kernel", "copy + kernel + D2H"):
                continue
            k = r.params["n_streams"]
            if r.variant == "copy + kernel":
                stages, formula = [t_e, t_t], ("tE + tT/nStreams" if t_e >= t_t else "tT + tE/nStreams")
            elif engines >= 2:
                stages, formula = [t_t, t_e, t_d], "max(tT, tE, tD) + (sum - max)/nStreams"
            else:  # one copy engine: H2D and D2H take turns on it
                stages, formula = [t_t + t_d, t_e], "max(tT + tD, tE) + (sum - max)/nStreams"
            predicted = staged_time(stages, k)
            r.model = dict(formula=formula, predicted_s=predicted, sequential_s=sum(stages), t_transfer_s=t_t,
                           t_exec_s=t_e, t_d2h_s=t_d, regime="tE >= tT" if t_e >= t_t else "tT > tE")
            r.extra["vs_model_pct"] = 100.0 * r.median_s / predicted
        for r in records:
            if r.params["cost"] == cost and r.variant in PITFALLS.values():
                predicted = staged_time([t_e, t_t], r.params["n_streams"])
                r.model = dict(formula="tE + tT/nStreams staged, tE + tT sequential", predicted_s=predicted,
                               sequential_s=t_e + t_t, t_transfer_s=t_t, t_exec_s=t_e)
                r.extra.update(vs_model_pct=100.0 * r.median_s / predicted,
                               vs_sequential_pct=100.0 * r.median_s / (t_e + t_t))
    cpu = {r.variant: r for r in records if "cpuFunction" in r.variant}
    if len(cpu) == 3:
        t_cpu = cpu["cpuFunction alone"].median_s
        t_gpu = next(r.median_s for r in records if r.variant == "copy + kernel" and r.params["n_streams"] == 1
                     and r.params["cost"] == cpu["cpuFunction alone"].params["cost"])
        for name, predicted in (("GPU, then cpuFunction", sequential_time(t_gpu, t_cpu)),
                                ("GPU with cpuFunction overlapped", max(t_gpu, t_cpu))):
            r = cpu[name]
            r.model = dict(formula="tGPU + tCPU in turn, max(tGPU, tCPU) overlapped", predicted_s=predicted,
                           t_gpu_s=t_gpu, t_cpu_s=t_cpu)
            r.extra["vs_model_pct"] = 100.0 * r.median_s / predicted


def ms(r):
    return q(field(r, "time_s", "median") * 1e3, ".2f")


def of_model(r):
    return q(field(r, "extra", "vs_model_pct"), ".0f")


def findings(records):
    staged = [r for r in records if r.variant == "copy + kernel"]
    for cost in sorted({r.params["cost"] for r in staged}):
        mine = sorted((r for r in staged if r.params["cost"] == cost), key=lambda r: r.params["n_streams"])
        first, m = mine[0], mine[0].model
        worst = max(mine, key=lambda r: abs(r.extra["vs_model_pct"] - 100))
        t, predicted = field(worst, "time_s", "median"), field(worst, "model", "predicted_s")
        rows = join(", ", (sentence(q(field(r, "params", "n_streams"), ".0f"), ": ", ms(r), " ms (", of_model(r),
                                    f"% of {m['formula']})") for r in mine))
        yield sentence(f"{m['regime']} (tE = ", q(field(first, "model", "t_exec_s") * 1e3, ".2f"), " ms, tT = ",
                       q(field(first, "model", "t_transfer_s") * 1e3, ".2f"), " ms): staged ", rows,
                       "; furthest from the model: ", q((t - predicted) / predicted * 100, "+.1f"), "% at nStreams = ",
                       q(field(worst, "params", "n_streams"), ".0f"))
    three = [r for r in records if r.variant == "copy + kernel + D2H"]
    if three:
        best = min(three, key=lambda r: r.median_s)
        one = next(r for r in three if r.params["n_streams"] == 1 and r.params["cost"] == best.params["cost"])
        yield sentence("H2D + kernel + D2H with ", q(field(best, "extra", "copy_engines"), ".0f"), " copy engines: ",
                       ms(best), " ms on ", q(field(best, "params", "n_streams"), ".0f"), " streams vs ", ms(one),
                       " ms on one (", of_model(best), f"% of {best.model['formula']})")
    pitfalls = [r for r in records if r.variant in PITFALLS.values() and r.model]
    if pitfalls:
        first = pitfalls[0]
        rows = join("; ", (sentence(r.variant, " ", ms(r), " ms (", of_model(r), "% of staged tE + tT/nStreams, ",
                                    q(field(r, "extra", "vs_sequential_pct"), ".0f"), "% of sequential tE + tT)")
                           for r in pitfalls))
        yield sentence("overlap pitfalls at nStreams = ", q(field(first, "params", "n_streams"), ".0f"),
                       ", host clock: ", rows)
    cpu = {r.variant: r for r in records if "cpuFunction" in r.variant}
    if len(cpu) == 3:
        a, b = cpu["GPU, then cpuFunction"], cpu["GPU with cpuFunction overlapped"]
        yield sentence("cpuFunction (", ms(cpu["cpuFunction alone"]), " ms) after the GPU work: ", ms(a),
                       " ms; overlapped with it: ", ms(b), " ms (", of_model(b), "% of max(tGPU, tCPU))")


EXPERIMENT = Experiment(
    name="stream_overlap",
    title="Overlapping copies with kernels: sequential vs staged on nStreams streams",
    claims=(
        Claim("Staged concurrent copy and execute: split the transfer and the kernel into nStreams chunks, each "
              "copied and processed on its own stream. Sequential total tE + tT; staged tE + tT/nStreams when the "
              "execution time tE exceeds the transfer time tT, tT + tE/nStreams otherwise.",
              seed("003", "9.1.2, staged concurrent copy and execute")),
        Claim("A GPU with one copy engine can overlap one async transfer with a kernel; with two it can run an H2D "
              "transfer, a D2H transfer and a kernel at once (asyncEngineCount). Overlap needs pinned memory and "
              "non-default streams.", seed("003", "9.1.2, copy engines")),
        Claim("For overlap, the host memory involved must be pinned and the copy and the kernel must be issued to "
              "different, non-default streams: operations on the default stream wait for all earlier work of the "
              "device and block later work.", seed("003", "9.1.2, overlapping computation and data transfers")),
        Claim("cudaMemcpyAsync returns control to the host at once, so cpuFunction() overlaps the copy and the "
              "kernel.", seed("003", "9.1.2, overlapping computation and data transfers")),
        Claim("Concurrent execution of a kernel and a host-device copy of pinned memory: a kernel in one stream "
              "overlaps a copy in another.", seed("001", "slides 'Asynchronous memory copy', 'Kernel and memory "
                                                          "copy overlap'")),
    ),
    cases=cases,
    params=dict(mib=256, streams=[1, 2, 4, 8, 16], cost=[0.5, 2.0], pitfall_streams=4),
    group_by=("cost",),
    modern_note="Recent GPUs have 2 or more copy engines (asyncEngineCount), so H2D, D2H and kernels of different "
                "streams all run at once; each chunk then pays only a launch and a few microseconds of copy setup. "
                "Copies of one direction are chained here: unchained, the driver runs them at once on several "
                "engines that share the link.",
    plot=Plot(x="ms", y="stream", kind="timeline",
              title="stream_overlap: copies and kernels per stream (staged, tE >= tT)"),
    findings=findings,
    derive=derive,
    order=220,
)
