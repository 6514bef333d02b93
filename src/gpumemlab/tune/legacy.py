"""Format 0: the register_blocked tuner's earlier files ({"devices": {name: {configs, shapes, ...}}}).

They kept, per device, each configuration's best GFLOP/s over its split-K factors at each shape (with that
factor), cuBLAS's GFLOP/s and the winner per shape. :func:`from_format0` carries every measured number over
unchanged into format 1 (:mod:`gpumemlab.tune.table`); what format 0 did not record stays ``None``
(p10/p90, sample counts), and ``median_s`` is the time the recorded GFLOP/s stands for (2 M N K / rate).
"""

from __future__ import annotations

from .keys import FORMAT, parse_mnk

CUBLAS = "cuBLAS SGEMM (TF32 off)"
ABOUT = ("register_blocked SGEMM tuning per device name, written by `gpumemlab tune matmul --install` "
         "(measured: never edit by hand; rerun the command on the device instead)")


def _seconds(shape: str, gflops: float) -> float:
    m, n, k = parse_mnk(shape)
    return 2.0 * m * n * k / (gflops * 1e9)


def _timing(shape: str, gflops: float) -> dict:
    return dict(median_s=_seconds(shape, gflops), p10_s=None, p90_s=None, samples_n=None, gflops=gflops)


def _point(config: str, splits: int, blocks_per_sm, shape: str, gflops: float, cublas) -> dict:
    params = dict(config=config, splits=int(splits))
    return dict(name=f"config={config},splits={int(splits)}", label=config, params=params,
                derived=dict(blocks_per_sm=blocks_per_sm), shape=shape, round="screen", **_timing(shape, gflops),
                ratio_to_baseline=(gflops / cublas) if cublas else None, verified=True)


def convert_entry(e: dict, source: str) -> dict:
    shapes = e.get("shapes", {})
    points, seen = [], set()
    for c in e.get("configs", []):
        for shape, g in c.get("gflops", {}).items():
            if g:  # format 0 listed only configurations that passed their checks and were timed
                splits = (c.get("splits") or {}).get(shape) or 1
                points.append(_point(c["name"], splits, c.get("blocks_per_sm"), shape, g,
                                     shapes.get(shape, {}).get("cublas_gflops")))
                seen.add((points[-1]["name"], shape))
    chosen = {}
    for shape, w in shapes.items():
        name = f"config={w['winner']},splits={int(w.get('splits') or 1)}"
        if (name, shape) not in seen:  # a winner without its config row (never written by the tool; keep it)
            points.append(_point(w["winner"], w.get("splits") or 1, None, shape, w["gflops"], w.get("cublas_gflops")))
        chosen[shape] = dict(name=name, label=w["winner"], params=dict(config=w["winner"], splits=int(w.get("splits") or 1)),
                             gflops=w["gflops"], ratio_to_baseline=w["gflops"] / w["cublas_gflops"]
                             if w.get("cublas_gflops") else None, round="screen")
    baseline = [dict(shape=s, round="screen", **_timing(s, w["cublas_gflops"]))
                for s, w in shapes.items() if w.get("cublas_gflops")]
    configs = [c["name"] for c in e.get("configs", [])]
    checks = dict.fromkeys(configs)
    checks.update(e.get("failed_checks") or {})
    return dict(
        device=e["device"], date=e["date"], command=e.get("tool", "format 0"),
        converted=f"from format 0 ({source}): GFLOP/s as measured; median_s = 2 M N K / GFLOP/s; "
                  "p10/p90 and sample counts were not recorded; only each config's best split-K factor was kept",
        space=dict(params=dict(config=configs, splits=sorted({p["params"]["splits"] for p in points})),
                   restrictions=["split-K factors as ops.matmul._split_options allowed them"], derive={}),
        baseline=dict(name=CUBLAS, points=baseline), points=points, chosen=chosen, checks=checks)


def from_format0(old: dict, source: str = "format 0") -> dict:
    """A format-0 matmul file as a format-1 one, every measured number carried over unchanged."""
    return dict(format=FORMAT, family="matmul", about=ABOUT, metric="gflops",
                devices={name: convert_entry(e, source) for name, e in old["devices"].items()})
