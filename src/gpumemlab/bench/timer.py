"""GPU timer after nvbench's method: events on the work stream, warm-up excluded, cold L2 per
sample for DRAM experiments, at least ``min_samples`` samples and ``min_time_s`` of timed work."""

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


class L2Flusher:
    """Evicts L2 by writing a buffer twice its size (cudaMemsetAsync on the work stream)."""

    def __init__(self, l2_bytes: int):
        import cupy

        self.nbytes = max(2 * int(l2_bytes), 1 << 20)
        self.buf = cupy.empty(self.nbytes, dtype=cupy.uint8)
        self._value = 0

    def flush(self, stream: "runtime.WorkStream") -> None:
        import cupy

        self._value ^= 0x5A  # a different value each time so nothing can be skipped
        cupy.cuda.runtime.memsetAsync(self.buf.data.ptr, self._value, self.nbytes, stream.handle)

    def close(self) -> None:
        self.buf = None


@dataclass(frozen=True)
class Timing:
    stats: SampleStats   # seconds per call of fn
    inner: int           # calls of fn per recorded sample
    cold_l2: bool


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

    first = one_batch(1, 1)[0]
    inner = 1
    if flusher is None and first > 0:
        inner = max(1, min(1000, math.ceil(cfg.target_sample_s / first)))
    samples: list[float] = []
    total = 0.0
    while True:
        batch = one_batch(cfg.batch, inner)
        samples.extend(batch)
        total += sum(batch) * inner
        n = len(samples)
        if n >= cfg.max_samples:
            break
        if n >= cfg.min_samples and (total >= cfg.min_time_s or total >= cfg.max_time_s):
            break
    return Timing(summarize(samples), inner, flusher is not None)


def time_host(fn, *, stream=None, flusher: L2Flusher | None = None, cfg: TimerConfig = TimerConfig()) -> Timing:
    """Wall-clock time of ``fn()`` followed by a synchronize of ``stream``: for host-side work that CUDA events
    on one stream cannot bracket (pageable copies staged by the driver, allocation and pinning)."""
    stream = stream or runtime.work_stream()
    with stream:
        for _ in range(cfg.warmup):
            fn()
        stream.sync()
        samples: list[float] = []
        while len(samples) < cfg.max_samples:
            if flusher is not None:
                flusher.flush(stream)
                stream.sync()
            start = time.perf_counter()
            fn()
            stream.sync()
            samples.append(time.perf_counter() - start)
            if len(samples) >= cfg.min_samples and sum(samples) >= cfg.min_time_s:
                break
    return Timing(summarize(samples), 1, flusher is not None)


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
            if rounds >= cfg.max_samples or (rounds >= cfg.min_samples and total >= cfg.min_time_s):
                break
    return {n: summarize(s) for n, s in samples.items()}
