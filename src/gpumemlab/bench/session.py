"""A measurement session: the device, the work stream, the ceilings, the L2 flusher and the records.

The suite's runner calls :meth:`Session.measure` for each case: it verifies first, then times, then
writes a :class:`Record` with bandwidth, throughput and the percentage of the chosen ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import GpumemlabError
from ..gpu import runtime
from . import nvml
from .records import Record
from .stats import gb_per_s, gflop_per_s
from .stats import summarize
from .timer import L2Flusher, Timing, TimerConfig, time_gpu, time_host, time_interleaved

# record flags: what the report shows next to a median it cannot vouch for
FLAG_FAR_FROM_MIN = "median far from min"   # still > TimerConfig.far_from_min above the minimum after a re-measure
FLAG_NOISY = "noisy"                        # a time or sample limit stopped it before its spread came down
FLAG_THROTTLED = "throttled"                # NVML saw the clocks held down (bench.nvml.throttling)


def flags_for(timing: Timing, cfg: TimerConfig, throttle_reasons: list[str]) -> list[str]:
    flags = []
    if timing.far_from_min(cfg):
        flags.append(FLAG_FAR_FROM_MIN)
    if not timing.converged:
        flags.append(FLAG_NOISY)
    if throttle_reasons:
        flags.append(FLAG_THROTTLED)
    return flags


@dataclass
class Session:
    timer: TimerConfig = field(default_factory=TimerConfig)
    quick: bool = False          # smaller sizes and fewer samples (tests, smoke runs)
    seed: int = 1234
    ceilings: dict = field(default_factory=dict)
    records: list = field(default_factory=list)
    progress: object = None      # callable(str) for status lines

    def __post_init__(self):
        self.device = runtime.device_info()
        self.stream = runtime.work_stream()
        self.stream.cupy.use()  # setup work between measurements also goes on the stream the events time
        self.rng = np.random.default_rng(self.seed)
        self._flusher = None

    # ------------------------------------------------------------------ sizes
    @property
    def l2_bytes(self) -> int:
        return int(self.device["l2_bytes"])

    @property
    def sm_count(self) -> int:
        return int(self.device["sm_count"])

    def dram_bytes(self, factor: float = 8.0) -> int:
        """A working-set size far above L2 (``factor`` x L2, read from the device)."""
        return int(factor * self.l2_bytes) if not self.quick else int(2 * self.l2_bytes)

    def fit_elements(self, wanted: int, bytes_per_element: float, what: str, share: float = 0.6) -> int:
        """Shrink ``wanted`` so ``wanted * bytes_per_element`` fits in ``share`` of free memory."""
        free = runtime.free_memory_bytes()
        cap = int(share * free / bytes_per_element)
        if cap < 1:
            raise GpumemlabError(f"{what}: not enough free GPU memory ({free / 2**30:.1f} GiB free)")
        return min(int(wanted), cap)

    def flusher(self) -> L2Flusher:
        if self._flusher is None:
            self._flusher = L2Flusher(self.l2_bytes)
        return self._flusher

    def close(self) -> None:
        if self._flusher is not None:
            self._flusher.close()
            self._flusher = None

    def say(self, text: str) -> None:
        if self.progress:
            self.progress(text)

    # ------------------------------------------------------------------ measuring
    def measure(self, *, experiment: str, variant: str, params: dict, run, bytes: float | None = None,
                flops: float | None = None, verify=None, cold_l2: bool = True, ceiling: str | None = "copy_gbps",
                kind: str = "kernel", model: dict | None = None, notes: str | None = None,
                extra: dict | None = None, timer: TimerConfig | None = None, clock: str = "events") -> Record:
        """Verify (``verify()`` raises VerificationError on a wrong result), then time ``run``.

        ``bytes``: what the algorithm must move (read + write). ``ceiling``: a key of
        :attr:`ceilings` to express the result as a percentage of (GB/s or GFLOP/s). ``clock``: "events"
        (CUDA events on the work stream) or "host" (wall clock around ``run`` and a synchronize).
        """
        self.say(f"{experiment}: {variant} {params}")
        if verify is not None:
            with self.stream:
                verify()
        cfg = timer or self.timer
        if self.quick:
            cfg = replace(cfg, min_samples=10, min_time_s=0.0, max_time_s=0.2)
        timing, flags, remeasured, env = self._timed(run, cfg, clock, cold_l2)
        med = timing.stats.median
        gbps = gb_per_s(bytes, med) if bytes else None
        gflops = gflop_per_s(flops, med) if flops else None
        pct = None
        if ceiling and ceiling in self.ceilings:
            value = self.ceilings[ceiling]["value"]
            achieved = gflops if self.ceilings[ceiling]["unit"] == "GFLOP/s" else gbps
            pct = 100.0 * achieved / value if achieved and value else None
        time_s = timing.stats.to_dict()
        time_s.update(inner=timing.inner, cold_l2=timing.cold_l2, clock=clock, stop=timing.stop)
        if remeasured:
            time_s["remeasured"] = remeasured  # the first attempt, whose median lay far above its minimum
        rec = Record(experiment=experiment, variant=variant, params=dict(params),
                     bytes=int(bytes) if bytes else None, flops=int(flops) if flops else None,
                     time_s=time_s, gbps=gbps, gflops=gflops, pct_of_ceiling=pct,
                     ceiling=ceiling if pct is not None else None, verified=verify is not None,
                     kind=kind, model=model, notes=notes, env=env, extra=dict(extra or {}), flags=flags)
        self.records.append(rec)
        return rec

    def _timed(self, run, cfg: TimerConfig, clock: str, cold_l2: bool):
        """Time ``run`` once more when its median lies far above its minimum (a hiccup, another process, a clock
        change), and mark what stays doubtful: the timing's flags and the evidence behind them."""
        timer_fn = time_host if clock == "host" else time_gpu
        flusher = self.flusher() if cold_l2 else None
        before = nvml.snapshot()
        timing = timer_fn(run, stream=self.stream, flusher=flusher, cfg=cfg)
        remeasured = None
        if timing.far_from_min(cfg):
            first = timing.stats
            remeasured = dict(median=first.median, min=first.min, n=first.n, stop=timing.stop)
            timing = timer_fn(run, stream=self.stream, flusher=flusher, cfg=cfg)
        after = nvml.snapshot()
        reasons = nvml.throttling(before, after)
        env = after if after is None else dict(after, before=before, throttle=reasons)
        return timing, flags_for(timing, cfg, reasons), remeasured, env

    def head_to_head(self, ours, baseline, *, cold_l2: bool = True, timer: TimerConfig | None = None) -> dict:
        """Speed of ``ours`` relative to ``baseline`` from interleaved samples (A B, B A, ...).

        ``speedup`` is the median over rounds of t_baseline / t_ours (> 1: ours is faster); robust
        to the drift that separately timed medians pick up on a shared or warming GPU.
        """
        cfg = timer or TimerConfig(min_samples=30, min_time_s=0.3, max_time_s=2.0)
        stats = time_interleaved({"ours": ours, "baseline": baseline}, stream=self.stream,
                                 flusher=self.flusher() if cold_l2 else None, cfg=cfg)
        ratios = summarize([b / a for a, b in zip(stats["ours"].samples, stats["baseline"].samples)])
        return dict(speedup=ratios.median, p10=ratios.p10, p90=ratios.p90, rounds=ratios.n,
                    ours_median_s=stats["ours"].median, baseline_median_s=stats["baseline"].median)
