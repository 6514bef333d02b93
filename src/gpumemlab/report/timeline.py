"""Timeline plots: when each copy and kernel of a multi-stream case started and ended, one row per stream.

Reads ``extra["timeline"]`` of a record: a list of {stream, op, start_ms, end_ms} measured with CUDA events
(seed 003's figure 1 of sequential vs staged copy and execute). Pure: matplotlib (Agg) only, no CUDA.
"""

from __future__ import annotations

from pathlib import Path

from .png import save_png

COLORS = {"H2D": "#2ca02c", "kernel": "#d62728", "D2H": "#1f77b4"}


def traced(records):
    """The first record that carries a timeline, or None."""
    return next((r for r in records if (r.extra or {}).get("timeline")), None)


def bars(timeline: list[dict]) -> dict[int, list[tuple[float, float, str]]]:
    """{stream: [(start_ms, duration_ms, op), ...]} in start order; raises ValueError on an op that ends first."""
    rows: dict[int, list] = {}
    for seg in timeline:
        start, end = float(seg["start_ms"]), float(seg["end_ms"])
        if end < start:
            raise ValueError(f"timeline: {seg['op']} on stream {seg['stream']} ends before it starts")
        rows.setdefault(int(seg["stream"]), []).append((start, end - start, str(seg["op"])))
    return {s: sorted(v) for s, v in sorted(rows.items())}


def write_timeline(name: str, info: dict, records, path: Path) -> bool:
    """Draw the traced record of ``records`` to ``path`` (PNG); False when no record has a timeline."""
    rec = traced(records)
    if rec is None:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = bars(rec.extra["timeline"])
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.45 * len(rows)))
    seen = set()
    for stream, segs in rows.items():
        for start, width, op in segs:
            label = op if op not in seen else None
            seen.add(op)
            ax.barh(stream, width, left=start, height=0.6, color=COLORS.get(op, "#888888"), label=label)
    ax.set_yticks(list(rows), [f"stream {s}" for s in rows])
    ax.invert_yaxis()
    ax.set_xlabel("ms from the first event")
    params = ", ".join(f"{k}={v}" for k, v in rec.params.items() if k in ("n_streams", "cost", "iters"))
    plot = info.get("plot") or {}
    ax.set_title(f"{plot.get('title') or info.get('title', name)}\n{rec.variant} ({params})", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)
    return True
