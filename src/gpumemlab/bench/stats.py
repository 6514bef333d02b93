"""Summary statistics of timing samples (pure Python; unit-tested without a GPU)."""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class SampleStats:
    """Median is the headline; min/max and the relative spread say how much to trust it."""

    median: float
    min: float
    max: float
    mean: float
    stdev: float
    p10: float
    p90: float
    rel_spread: float  # (p90 - p10) / median: robust to one outlier, unlike (max - min)
    n: int
    samples: tuple[float, ...]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["samples"] = list(self.samples)
        return d


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted values (numpy's default method)."""
    if not sorted_values:
        raise ValueError("quantile of no samples")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} outside [0, 1]")
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


# A CUDA event's elapsed time is a float32 of milliseconds (24-bit mantissa, about 7.2 decimal digits): samples keep
# 7 significant digits, everything the timer measured, and not the float64 noise of the conversion to seconds
SIGNIFICANT_DIGITS = 7


def at_timer_precision(value: float) -> float:
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")


def summarize(samples) -> SampleStats:
    values = [at_timer_precision(float(s)) for s in samples]
    if not values:
        raise ValueError("no samples to summarize")
    if any(not math.isfinite(v) or v < 0 for v in values):
        raise ValueError("timing samples must be finite and non-negative")
    s = sorted(values)
    med = statistics.median(s)
    p10, p90 = quantile(s, 0.10), quantile(s, 0.90)
    return SampleStats(
        median=med, min=s[0], max=s[-1], mean=statistics.fmean(s),
        stdev=statistics.stdev(s) if len(s) > 1 else 0.0,
        p10=p10, p90=p90, rel_spread=(p90 - p10) / med if med > 0 else 0.0,
        n=len(s), samples=tuple(values),
    )


def gb_per_s(nbytes: float, seconds: float) -> float:
    return nbytes / seconds / 1e9


def gflop_per_s(flops: float, seconds: float) -> float:
    return flops / seconds / 1e9
