"""The tuning engine: check, screen, final round, choose; every measured point cached as it is measured.

For one family (:mod:`gpumemlab.tune.families`) on this device:

1. every kernel the selected points use is checked on small odd cases in a child process (one batch; if
   the child dies - a fault that breaks the CUDA context - one child per kernel, so one bad kernel costs
   only itself);
2. per shape, every valid point that passed is verified against the float64 answer at that shape
   (output poisoned first, NaN never passes) and timed alone with the bench timer (CUDA events, warm-up
   excluded, >= 10 samples, median and p10/p90); the baseline is timed before and after them;
3. the best ``top`` points, the library's current point and the baseline are verified again and timed
   sample by sample in alternating order (the final round); the fastest of it is the chosen point.

The cache (JSON) keeps every check and every timed point under the device name and a hash of the family's
kernel sources: a rerun measures only what is missing (an interrupted run resumes).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import asdict
from datetime import datetime, UTC
from pathlib import Path

from ..errors import UsageError
from . import table
from .families import Family, Runner, run_checked
from .space import Point

BASELINE = "baseline"


def source_hash(family: Family) -> str:
    from ..kernels import source_text

    h = hashlib.sha256()
    for src in family.sources:
        h.update(src.encode() + b"\0" + source_text(src).encode() + b"\0")
    return h.hexdigest()[:16]


class Cache:
    """Checks and measured records of one family, per device name and source hash, in a JSON file."""

    def __init__(self, path, family: str, device: str, source: str):
        self.path = Path(path) if path else None
        self.data = {"format": 1, "family": family, "entries": {}}
        if self.path and self.path.exists():
            try:
                loaded = json.loads(self.path.read_text())
            except ValueError:
                raise UsageError(f"cache {self.path} is not JSON; remove it or pass another --cache") from None
            if loaded.get("family") != family:
                raise UsageError(f"cache {self.path} belongs to family {loaded.get('family')!r}, not {family!r}")
            self.data = loaded
        self.entry = self.data["entries"].setdefault(device, {}).setdefault(
            source, {"checks": {}, "screen": {}, "final": {}})

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1))
        tmp.replace(self.path)

    def screened(self, shape: str, name: str) -> dict | None:
        return self.entry["screen"].get(shape, {}).get(name)

    def put_screen(self, shape: str, name: str, rec: dict) -> None:
        self.entry["screen"].setdefault(shape, {})[name] = rec
        self.save()


# ---------------------------------------------------------------- checks in a child process

def _child(family: str, keys: list[str]) -> tuple[int, dict | None, str]:
    proc = subprocess.run([sys.executable, "-m", "gpumemlab.tune.child", family, *keys],
                          capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    result = None
    if proc.returncode == 0 and lines:
        try:
            result = json.loads(lines[-1])
        except ValueError:
            result = None
    return proc.returncode, result, proc.stderr.strip()


def check_isolated(family: str, keys: list[str], log=print) -> dict:
    """{key: None if every odd case was right, else the error} - one child for all; if it dies, one per key."""
    if not keys:
        return {}
    rc, result, err = _child(family, keys)
    if result is not None:
        return result
    log(f"checker died (rc {rc}); checking each kernel in its own process. {err[-600:]}")
    out = {}
    for key in keys:
        rc, result, err = _child(family, [key])
        out[key] = result[key] if result is not None else \
            f"crashed (rc {rc}): {err.splitlines()[-1] if err else 'no message'}"
    return out


# ---------------------------------------------------------------- records

def _timing(stats) -> dict:
    return dict(median_s=stats.median, p10_s=stats.p10, p90_s=stats.p90, samples_n=stats.n)


def point_record(family: Family, point: Point, shape: str, rnd: str, stats=None, base_median=None,
                 error: str | None = None) -> dict:
    """One measured (or failed) point in the table's format."""
    rec = dict(name=point.name, label=family.label(point.params), params=dict(point.params),
               derived={k: point.derived[k] for k in family.recorded if k in point.derived}, shape=shape, round=rnd)
    if stats is None:
        rec.update(median_s=None, p10_s=None, p90_s=None, samples_n=None, ratio_to_baseline=None, verified=False,
                   error=error)
        rec[family.metric] = None
        return rec
    rec.update(_timing(stats))
    rec[family.metric] = family.work(shape) / stats.median / 1e9
    rec["ratio_to_baseline"] = base_median / stats.median if base_median else None
    rec["verified"] = True
    return rec


def baseline_record(family: Family, shape: str, rnd: str, stats) -> dict:
    rec = dict(shape=shape, round=rnd, **_timing(stats))
    rec[family.metric] = family.work(shape) / stats.median / 1e9
    return rec


# ---------------------------------------------------------------- selection

def select(family: Family, points: list[Point], configs) -> list[Point]:
    """The points named (by name or label) in ``configs``; all of them when ``configs`` is empty."""
    if not configs:
        return points
    wanted = set(configs)
    return [p for p in points if p.name in wanted or family.label(p.params) in wanted]


def _check_unknown(family: Family, by_shape: dict, configs) -> None:
    if not configs:
        return
    known = {x for pts in by_shape.values() for p in pts for x in (p.name, family.label(p.params))}
    unknown = [c for c in configs if c not in known]
    if unknown:
        raise UsageError(f"{family.name}: no valid point named {unknown[0]!r}"
                         + (f" (and {len(unknown) - 1} more)" if unknown[1:] else "")
                         + f"; the space has {family.space.product_size()} combinations")


# ---------------------------------------------------------------- the run

def tune(family: Family, shapes=None, configs=None, cache=None, top: int | None = None, command: str = "",
         log=print) -> dict:
    """Tune ``family`` on this GPU; return the device entry of the tuned table (see :mod:`.table`)."""
    from ..bench.timer import L2Flusher, time_gpu, time_interleaved
    from ..gpu import runtime

    shapes = list(dict.fromkeys(family.parse_shape(s) for s in (shapes or family.shapes)))  # bad input first
    runtime.ensure_device()
    device = runtime.device_info()
    free = runtime.free_memory_bytes()
    for s in shapes:
        if family.bytes_needed(s) > free:
            raise UsageError(f"{family.name} shape {s} needs {family.bytes_needed(s) / 2**30:.1f} GiB of device "
                             f"memory; {free / 2**30:.1f} GiB are free")
    top = family.top if top is None else top
    store = Cache(cache, family.name, device["name"], source_hash(family))
    by_shape = {s: list(family.space.points(family.context(s, device))) for s in shapes}
    _check_unknown(family, by_shape, configs)
    by_shape = {s: select(family, pts, configs) for s, pts in by_shape.items()}

    keys = list(dict.fromkeys(family.check_key(p) for pts in by_shape.values() for p in pts))
    missing = [k for k in keys if k not in store.entry["checks"]]
    store.entry["checks"].update(check_isolated(family.name, missing, log))
    store.save()
    checks = {k: store.entry["checks"][k] for k in keys}
    log(f"{family.name}: {sum(v is None for v in checks.values())}/{len(keys)} kernels right on the odd cases")

    stream = runtime.work_stream()
    flusher = L2Flusher(device["l2_bytes"]) if family.cold_l2 else None
    points, base_points, chosen = [], [], {}
    with stream:
        for shape in shapes:
            problem = family.problem(shape)
            base = family.baseline_runner(problem)
            run_checked(base, problem, f"{family.baseline} at {shape}")
            first = time_gpu(base.run, stream=stream, flusher=flusher, cfg=family.screen_timer)

            screened = screen(store, shape, by_shape[shape], lambda p: _screen(
                family, problem, p, shape, checks[family.check_key(p)], stream, flusher, first.stats.median, time_gpu))
            last = time_gpu(base.run, stream=stream, flusher=flusher, cfg=family.screen_timer)
            # clocks drift over a long screen: the baseline's better measurement of the two
            base_points.append(baseline_record(family, shape, "screen", min(first, last, key=lambda t: t.stats.median).stats))
            points += screened
            log(f"{shape}: screened {len(screened)} points, {sum(r['verified'] for r in screened)} verified")

            finals = _final(family, problem, base, by_shape[shape], screened, shape, top, store, stream, flusher,
                            time_interleaved, device)
            if finals:
                base_points.append(finals["baseline"])
                points += finals["points"]
            pool = (finals or {}).get("points") or [r for r in screened if r["verified"]]
            if pool:
                best = max(pool, key=lambda r: r[family.metric])
                chosen[shape] = {k: best[k] for k in ("name", "label", "params", family.metric, "ratio_to_baseline",
                                                      "round")}
            del problem, base
            _free_pool()
    if flusher is not None:
        flusher.close()
    return dict(
        device=dict(name=device["name"], cc=device["cc"], sm_count=device["sm_count"],
                    nvrtc=device["nvrtc_version"], driver=device["driver_version"]),
        date=datetime.now(UTC).isoformat(timespec="seconds"), command=command,
        source_hash=source_hash(family), space=family.space.describe(),
        timers=dict(screen=asdict(family.screen_timer), final=asdict(family.final_timer),
                    cold_l2=family.cold_l2, top=top),
        baseline=dict(name=family.baseline, points=base_points), points=points, chosen=chosen, checks=checks)


def screen(store: Cache, shape: str, points: list[Point], measure) -> list[dict]:
    """The screen records of ``points`` at ``shape``: from the cache, else ``measure(point)`` (then cached)."""
    out = []
    for p in points:
        rec = store.screened(shape, p.name)
        if rec is None:
            rec = measure(p)
            store.put_screen(shape, p.name, rec)
        out.append(rec)
    return out


def _free_pool() -> None:
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()


def _screen(family, problem, p: Point, shape, check_error, stream, flusher, base_median, time_gpu) -> dict:
    if check_error is not None:
        return point_record(family, p, shape, "screen", error=f"odd-case check: {check_error}")
    try:
        runner = family.runner(problem, p)
        run_checked(runner, problem, f"{p.name} at {shape}")
    except Exception as exc:  # a wrong or unlaunchable point is recorded and skipped, not fatal
        if "CUDA_ERROR" in str(exc) or "illegal" in str(exc).lower():
            raise  # the context is gone: nothing after this would be trustworthy
        return point_record(family, p, shape, "screen", error=f"{type(exc).__name__}: {exc}")
    timing = time_gpu(runner.run, stream=stream, flusher=flusher, cfg=family.screen_timer)
    return point_record(family, p, shape, "screen", timing.stats, base_median)


def reference(family: Family, shape: str, device: dict) -> dict | None:
    """The params the library uses now at ``shape`` on ``device`` (the family's fixed point, or its installed
    choice there), or None."""
    return family.reference(shape, device) if callable(family.reference) else family.reference


def finalists(family: Family, points: list[Point], screened: list[dict], top: int,
              current: dict | None = None) -> list[Point]:
    """The ``top`` fastest verified screened points, plus the library's current point (``current``, by default
    the family's fixed reference) if it was screened: a choice changes only when beaten in the same round."""
    current = family.reference if current is None and not callable(family.reference) else current
    ok = sorted((r for r in screened if r["verified"]), key=lambda r: -r[family.metric])
    names = [r["name"] for r in ok[:top]]
    if current is not None:
        names += [r["name"] for r in ok if r["params"] == current and r["name"] not in names]
    by_name = {p.name: p for p in points}
    return [by_name[n] for n in names]


def _final(family, problem, base: Runner, points, screened, shape, top, store, stream, flusher,
           time_interleaved, device: dict) -> dict | None:
    chosen = finalists(family, points, screened, top, reference(family, shape, device))
    if not chosen or top <= 0:
        return None
    names = [p.name for p in chosen]
    cached = store.entry["final"].get(shape)
    if cached and cached["names"] == names:
        return cached
    runs = {}
    for p in chosen:
        r = family.runner(problem, p)
        run_checked(r, problem, f"{p.name} at {shape} (final)")
        runs[p.name] = r.run
    run_checked(base, problem, f"{family.baseline} at {shape} (final)")
    runs[BASELINE] = base.run
    stats = time_interleaved(runs, stream=stream, flusher=flusher, cfg=family.final_timer)
    b = stats[BASELINE].median
    result = dict(names=names, baseline=baseline_record(family, shape, "final", stats[BASELINE]),
                  points=[point_record(family, p, shape, "final", stats[p.name], b) for p in chosen])
    store.entry["final"][shape] = result
    store.save()
    return result


def write(family: Family, entry: dict, out_dir) -> Path:
    """``out_dir/<family>.json``: a tuned file with this device's entry (other devices in it are kept)."""
    path = Path(out_dir) / f"{family.name}.json"
    table.install(path, family.name, family.about, family.metric, entry)
    return path


def install(family: Family, entry: dict) -> Path:
    """Put the entry into the package's table, ``kernels/tuned/<family>.json``, for this device."""
    from ..kernels import KERNEL_DIR

    path = KERNEL_DIR / "tuned" / f"{family.name}.json"
    table.install(path, family.name, family.about, family.metric, entry)
    return path
