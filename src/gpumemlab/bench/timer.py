"""GPU timer after nvbench's method: events on the work stream, warm-up excluded, cold L2 per
sample for DRAM experiments.

Stopping rule (nvbench's, with a robust noise measure): take at least ``min_samples`` samples and
``min_time_s`` of timed work, then stop as soon as the relative spread (p90 - p10) / median is at most
``max_rel_spread`` (default 1%, i.e. the median's p10-p90 half-width within 0.5%, the figure of nvbench's
default 0.5% noise limit, which uses stdev / mean instead: one outlier moves the stdev, not p10-p90); otherwise
keep sampling until ``max_time_s`` of timed work or ``max_samples``. A timing that hit a limit before its spread
came down is marked ``converged=False``."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from ..gpu import runtime
from .stats import SampleStats, summarize


@dataclass(frozen=True)
class TimerConfig:
    warmup: int = 2
    min_samples: int = 10
    max_samples: int = 300
    min_time_s: float = 0.05      # total timed work before stopping
    max_time_s: float = 1.5       # stop adding samples past this (min_samples still honoured)
    target_sample_s: float = 2e-4  # batch short kernels so one sample is well above event resolution
    batch: int = 10               # samples recorded between host syncs
    max_rel_spread: float = 0.01  # stop once (p90 - p10) / median is at most this (past the minimums above)
    far_from_min: float = 0.05    # a median more than 5% above the minimum: re-measured once, then flagged


def should_stop(stats: SampleStats, total_s: float, cfg: TimerConfig) -> str | None:
    """Why to stop now ("spread", "time limit", "max samples"), or None to take another batch."""
    if stats.n >= cfg.max_samples:
        return "spread" if stats.rel_spread <= cfg.max_rel_spread else "max samples"
    if stats.n < cfg.min_samples or total_s < cfg.min_time_s:
        return None
    if stats.rel_spread <= cfg.max_rel_spread:
        return "spread"
    return "time limit" if total_s >= cfg.max_time_s else None


class L2Flusher:
    """Evicts L2 by writing a buffer twice its size (cudaMemsetAsync on the work stream)."""

    def __init__(self, l2_bytes: int):
        import cupy

        self.nbytes = max(2 * int(l2_bytes), 1 << 20)
        self.buf = cupy.empty(self.nbytes, dtype=cupy.uint8)
        self._value = 0

    def flush(self, stream: "runtime.WorkStream") -> None:
        from ..gpu.host import memset_async

        self._value ^= 0x5A  # a different value each time so nothing can be skipped
        memset_async(self.buf.data.ptr, self._value, self.nbytes, stream)

    def close(self) -> None:
        self.buf = None


@dataclass(frozen=True)
class Timing:
    stats: SampleStats   # seconds per call of fn
    inner: int           # calls of fn per recorded sample
    cold_l2: bool
    stop: str = "spread"  # why sampling stopped: "spread" (converged), "time limit" or "max samples"

    @property
    def converged(self) -> bool:
        return self.stop == "spread"

    def far_from_min(self, cfg: TimerConfig) -> bool:
        """The median lies more than ``cfg.far_from_min`` above the fastest sample."""
        return self.stats.median > (1.0 + cfg.far_from_min) * self.stats.min


def time_gpu(fn, *, stream=None, flusher: L2Flusher | None = None, cfg: TimerConfig = TimerConfig()) -> Timing:
    """Time ``fn`` (which enqueues GPU work on ``stream``) and return per-call statistics."""
    stream = stream or runtime.work_stream()
    with stream:  # CuPy work inside fn (baselines, memcpy) goes on the stream the events time
        return _time_on(fn, stream, flusher, cfg)


def _time_on(fn, stream, flusher, cfg) -> Timing:
    for _ in range(cfg.warmup):
        fn()
    stream.sync()

    def one_batch(count: int, inner: int) -> list[float]:
        events = []
        for _ in range(count):
            if flusher is not None:
                flusher.flush(stream)
            start = stream.record_timing()
            for _ in range(inner):
                fn()
            events.append((start, stream.record_timing()))
        stream.sync()
        return [runtime.elapsed_s(a, b) / inner for a, b in events]

    first = min(one_batch(3, 1))  # the fastest of three: one late sample must not make a short call look long
    inner = 1
    if flusher is None and first > 0:
        inner = max(1, min(1000, math.ceil(round(cfg.target_sample_s / first, 6))))  # 4.0000001 calls: 4
    samples: list[float] = []
    total = 0.0
    while True:
        batch = one_batch(cfg.batch, inner)
        samples.extend(batch)
        total += sum(batch) * inner
        stats = summarize(samples)
        stop = should_stop(stats, total, cfg)
        if stop:
            return Timing(stats, inner, flusher is not None, stop)


def time_host(fn, *, stream=None, flusher: L2Flusher | None = None, cfg: TimerConfig = TimerConfig()) -> Timing:
    """Wall-clock time of ``fn()`` followed by a synchronize of ``stream``: for host-side work that CUDA events
    on one stream cannot bracket (pageable copies staged by the driver, allocation and pinning)."""
    stream = stream or runtime.work_stream()
    with stream:
        for _ in range(cfg.warmup):
            fn()
        stream.sync()
        samples: list[float] = []
        while True:
            if flusher is not None:
                flusher.flush(stream)
                stream.sync()
            start = time.perf_counter()
            fn()
            stream.sync()
            samples.append(time.perf_counter() - start)
            if len(samples) >= cfg.min_samples:
                stats = summarize(samples)
                stop = should_stop(stats, sum(samples), cfg)
                if stop:
                    return Timing(stats, 1, flusher is not None, stop)


def time_interleaved(fns: dict, *, stream=None, flusher: L2Flusher | None = None,
                     cfg: TimerConfig = TimerConfig()) -> dict[str, SampleStats]:
    """Time several callables sample by sample in alternating order (A B, B A, ...), so clock,
    temperature and neighbour drift hit all of them alike; per-call statistics for each."""
    stream = stream or runtime.work_stream()
    names = list(fns)
    with stream:
        for _ in range(cfg.warmup):
            for fn in fns.values():
                fn()
        stream.sync()
        samples: dict[str, list[float]] = {n: [] for n in names}
        total, rounds = 0.0, 0
        while True:
            events = []
            for r in range(cfg.batch):
                order = names if (rounds + r) % 2 == 0 else names[::-1]
                for name in order:
                    if flusher is not None:
                        flusher.flush(stream)
                    start = stream.record_timing()
                    fns[name]()
                    events.append((name, start, stream.record_timing()))
            stream.sync()
            for name, a, b in events:
                t = runtime.elapsed_s(a, b)
                samples[name].append(t)
                total += t
            rounds += cfg.batch
            stats = {n: summarize(s) for n, s in samples.items()}
            # every side must converge: the noisiest one decides
            if all(should_stop(st, total, cfg) for st in stats.values()):
                return stats
