"""PNG plots of the experiments that declare a Plot (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ..bench.records import RunResults
from .png import save_png

LABELS = {"gbps": "GB/s (read + write)", "gflops": "GFLOP/s", "pct_of_ceiling": "% of ceiling",
          "interleaved_us_per_call": "us per call", "us_per_call": "us per call"}


def _value(rec, key):
    if key in rec.params:
        return rec.params[key]
    return getattr(rec, key) if hasattr(rec, key) else rec.extra.get(key)  # derived fields live in extra


def plot_ceiling(res: RunResults, recs: list, plot: dict | None) -> tuple[str, float] | None:
    """(name, value) of the ceiling most of an experiment's records are compared with, when the plot's y axis is in
    that ceiling's unit (GB/s for gbps, GFLOP/s for gflops); None otherwise."""
    if not plot or plot.get("y") not in ("gbps", "gflops"):
        return None
    names = [r.ceiling for r in recs if r.ceiling in res.ceilings]
    if not names:
        return None
    name = max(set(names), key=names.count)
    c = res.ceilings[name]
    if (c.get("unit") == "GFLOP/s") != (plot["y"] == "gflops"):
        return None
    return name, float(c["value"])


def write_plots(res: RunResults, out_dir: Path, progress=None) -> dict[str, str]:
    """Write one PNG per plotted experiment; return {experiment: file name}. ``progress``: a
    :class:`gpumemlab._progress.StepLine` told of each experiment."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    written = {}
    for name, info in res.experiments.items():
        if progress is not None:
            progress.step(f"plot of {name}")
        plot = info.get("plot")
        recs = [r for r in res.results if r.experiment == name]
        if not recs:
            continue
        if plot and plot.get("kind") == "timeline":
            from .timeline import write_timeline

            if write_timeline(name, info, recs, out_dir / f"{name}.png"):
                written[name] = f"{name}.png"
            continue
        fig, ax = plt.subplots(figsize=(7, 4))
        if plot:
            series: dict[str, list] = {}
            for r in recs:
                x, y = _value(r, plot["x"]), _value(r, plot["y"])
                if x is not None and y is not None:
                    series.setdefault(str(_value(r, plot["series"])), []).append((x, y))
            if not series:  # records from before the plotted field existed: no PNG rather than an empty axis
                plt.close(fig)
                continue
            for label, pts in series.items():
                pts.sort()
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=label)
            ax.set_xlabel(plot["x"])
            ax.set_ylabel(LABELS.get(plot["y"], plot["y"]))
            if plot.get("logx"):
                ax.set_xscale("log", base=2)
            ax.set_ylim(bottom=0)  # bandwidth, throughput and time axes from zero: no exaggerated dips
            ax.set_title(textwrap.fill(plot.get("title") or info.get("title", name), 80), fontsize=10)
        else:  # a bar per variant (and params group)
            key = "gflops" if any(r.gflops for r in recs) else "gbps"
            if not any(getattr(r, key) for r in recs):  # nothing to draw: no PNG rather than an empty axis
                plt.close(fig)
                continue
            labels = [f"{r.variant}\n{','.join(f'{k}={v}' for k, v in r.params.items() if k not in ('n', 'mib'))}"
                      for r in recs]
            ax.barh(range(len(recs)), [getattr(r, key) or 0 for r in recs],
                    color=["#999999" if r.kind == "baseline" else "#3366aa" for r in recs])
            ax.set_yticks(range(len(recs)), labels, fontsize=6)
            ax.invert_yaxis()
            ax.set_xlabel(LABELS[key])
            ax.set_title(textwrap.fill(info.get("title", name), 80), fontsize=10)
        ceiling = plot_ceiling(res, recs, plot)
        if ceiling:  # the ceiling the records are measured against, drawn inside the axes
            name_, value = ceiling
            ax.axhline(value, color="grey", ls="--", lw=1, label=f"ceiling: {name_}")
            ax.set_ylim(0, max(ax.get_ylim()[1], 1.05 * value))
        if plot:
            ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fname = f"{name}.png"
        save_png(fig, out_dir / fname)
        plt.close(fig)
        written[name] = fname
    return written
