"""The tuned-table format (one JSON file per family, one entry per device) and its one reader: format,
validation, the entry of a device (borrowed from the same chip), shape parsing and markdown. No GPU.

``kernels/tuned/<family>.json``::

    {"format": 1, "family": "matmul", "about": "...", "metric": "gflops" | "gbps",
     "devices": {device name: {
         "device": {name, cc, sm_count, ...}, "date": ISO 8601, "command": what wrote it,
         "space": {"params", "restrictions", "derive"},
         "baseline": {"name": ..., "points": [{shape, round, median_s, p10_s, p90_s, samples_n, METRIC}]},
         "points": [{name, label, params, derived, shape, round, median_s, p10_s, p90_s, samples_n, METRIC,
                     ratio_to_baseline, verified, error?}],
         "chosen": {shape: {name, label, params, METRIC, ratio_to_baseline, round}},
         "checks": {kernel key: null | error}, "converted"?: where converted measurements came from,
         "kept"?: {shape: why the installed choice was kept over the re-tuned one}}}}

``round`` is "screen" (every valid point, timed alone) or "final" (the best few and the baseline timed
sample by sample in alternating order); ``ratio_to_baseline`` is baseline time / point time in the same
round (> 1: faster than the baseline).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import UsageError

FORMAT = 1
METRICS = {"gflops": ("TFLOP/s", 1e-3, ".1f"), "gbps": ("GB/s", 1.0, ".0f")}  # unit, scale, format in tables
ROUNDS = ("screen", "final")
TIMES = ("median_s", "p10_s", "p90_s", "samples_n")


def problems(data) -> list[str]:
    """What makes ``data`` not a valid tuned file (empty: valid)."""
    if not isinstance(data, dict):
        return ["not a JSON object"]
    out = [f"missing {k!r}" for k in ("format", "family", "about", "metric", "devices") if k not in data]
    if out:
        return out
    if data["format"] != FORMAT:
        return [f"format {data['format']!r}, expected {FORMAT}"]
    metric = data["metric"]
    if metric not in METRICS:
        return [f"metric {metric!r} is not one of {', '.join(METRICS)}"]
    for dev, e in data["devices"].items():
        where = f"devices[{dev!r}]"
        missing = [k for k in ("device", "date", "command", "space", "baseline", "points", "chosen") if k not in e]
        if missing:
            out.append(f"{where}: missing {', '.join(missing)}")
            continue
        if e["device"].get("name") != dev:
            out.append(f"{where}: device.name {e['device'].get('name')!r} differs from its key")
        for i, p in enumerate(e["points"]):
            keys = {"name", "label", "params", "shape", "round", metric, "ratio_to_baseline", "verified"} | set(TIMES)
            if not keys <= set(p):
                out.append(f"{where}.points[{i}]: missing {', '.join(sorted(keys - set(p)))}")
            elif p["round"] not in ROUNDS:
                out.append(f"{where}.points[{i}]: round {p['round']!r}")
            elif p["verified"] and not (isinstance(p[metric], (int, float)) and p[metric] > 0):
                out.append(f"{where}.points[{i}]: verified without a positive {metric}")
            elif not p["verified"] and p[metric] is not None:
                out.append(f"{where}.points[{i}]: a {metric} for a point that failed verification")
        for i, b in enumerate(e["baseline"].get("points", [])):
            if not (isinstance(b.get(metric), (int, float)) and b[metric] > 0 and b.get("shape")):
                out.append(f"{where}.baseline.points[{i}]: no shape or no positive {metric}")
        verified = {(p["name"], p["shape"]) for p in e["points"] if p.get("verified")}
        for shape, c in e["chosen"].items():
            if (c.get("name"), shape) not in verified:
                out.append(f"{where}.chosen[{shape!r}]: {c.get('name')!r} is not a verified point at that shape")
    return out


def load(path) -> dict:
    """A tuned file; UsageError with one line if it is missing, not JSON or not valid."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None
    except RecursionError:
        raise UsageError(f"{path} is not a tuned table (nested too deeply to be one)") from None
    bad = problems(data)
    if bad:
        raise UsageError(f"{path} is not a tuned table: {bad[0]}" + (f" (and {len(bad) - 1} more)" if bad[1:] else ""))
    return data


def read_devices(path, family: str) -> dict:
    """{device name: entry} of a tuned file of ``family``; {} if absent, unreadable or not valid (the library
    then falls back to its defaults rather than failing a user's call)."""
    try:
        data = load(path)
    except UsageError:
        return {}
    return data["devices"] if data["family"] == family else {}


def install(path, family: str, about: str, metric: str, entry: dict) -> None:
    """Put ``entry`` in the tuned file at ``path`` under its device name (other devices are kept)."""
    path = Path(path)
    data = load(path) if path.exists() else dict(format=FORMAT, family=family, about=about, metric=metric,
                                                 devices={})
    if data["family"] != family:
        raise UsageError(f"{path} holds family {data['family']!r}, not {family!r}")
    data["devices"][entry["device"]["name"]] = entry
    data["devices"] = dict(sorted(data["devices"].items()))
    bad = problems(data)
    if bad:  # an internal bug: never write a file the readers would reject
        raise ValueError(f"refusing to write an invalid tuned table: {bad[0]}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


def keep_choices(entry: dict, installed: dict, shapes, why: str, metric: str) -> dict:
    """A copy of the re-tuned ``entry`` that keeps the ``installed`` entry's choice at each of ``shapes``, e.g.
    where the new choice made a shape slower; ``why`` is recorded per kept shape under ``kept``. The kept choice
    names the re-tuned entry's own record of that point where it measured one (the final round first: the
    installed choice joins it), else the installed record, copied in so the entry stays valid. A shape
    ``installed`` chose nothing at loses the new choice."""
    out = dict(entry, chosen=dict(entry["chosen"]), points=list(entry["points"]), kept=dict(entry.get("kept", {})))
    for shape in shapes:
        c = installed.get("chosen", {}).get(shape)
        if c is None:
            out["chosen"].pop(shape, None)
            out["kept"][shape] = f"nothing chosen: {why}"
            continue
        mine = [p for p in out["points"] if p["shape"] == shape and p["params"] == c["params"] and p["verified"]]
        if mine:
            p = max(mine, key=lambda p: (p["round"] == "final", p[metric]))
        else:  # the installed record itself (a converted entry may hold earlier points of the same name)
            own = [p for p in installed["points"] if p["name"] == c["name"] and p["shape"] == shape and p["verified"]]
            p = dict(min(own, key=lambda p: (p["round"] != c["round"], p[metric] != c.get(metric))))
            out["points"].append(p)
        out["chosen"][shape] = {k: p[k] for k in ("name", "label", "params", metric, "ratio_to_baseline", "round")}
        out["kept"][shape] = f"installed choice kept: {why}"
    return out


# ---------------------------------------------------------------- what the library reads

def device_entry(devices: dict, device: dict) -> dict | None:
    """The entry measured on this device name; else one of the same compute capability and SM count (the same
    chip, e.g. H100 SXM and H200), marked ``borrowed_from``; else None. ``devices``: {name: entry}."""
    if device.get("name") in devices:
        return devices[device["name"]]
    for name, e in sorted(devices.items()):
        d = e.get("device", {})
        if list(d.get("cc", [])) == list(device.get("cc", [])) and d.get("sm_count") == device.get("sm_count"):
            return dict(e, borrowed_from=name)
    return None


def parse_mnk(text: str) -> tuple[int, int, int]:
    """(M, N, K) of a matmul shape written MxNxK; UsageError on anything else."""
    m = re.fullmatch(r"\s*(\d+)\s*x\s*(\d+)\s*x\s*(\d+)\s*", str(text).lower())
    if not m or min(int(g) for g in m.groups()) < 1:
        raise UsageError(f"matmul shape {text!r}: expected MxNxK with positive integers, e.g. 4096x4096x4096")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def mnk_name(m: int, n: int, k: int) -> str:
    return f"{m}x{n}x{k}"


# ---------------------------------------------------------------- markdown

def _cell(rec: dict, metric: str, varying: dict) -> str:
    _unit, scale, fmt = METRICS[metric]
    notes = [f"{100 * rec['ratio_to_baseline']:.1f}%"] if rec.get("ratio_to_baseline") else []
    notes += [f"{k}={rec['params'][k]}" for k, first in varying.items() if rec["params"].get(k) != first]
    return format(rec[metric] * scale, fmt) + (f" ({', '.join(notes)})" if notes else "")


def _grid(records: list[dict], shapes: list[str], metric: str, order_shape: str, space: dict) -> list[str]:
    """Rows by label (best record per shape), derived values constant in a row as columns."""
    rows: dict[str, list[dict]] = {}
    for r in records:
        rows.setdefault(r["label"], []).append(r)
    derived_keys = [k for k in dict.fromkeys(k for r in records for k in (r.get("derived") or {}))
                    if all(len({(r.get("derived") or {}).get(k) for r in rs}) == 1 for rs in rows.values())]
    lines = []
    best = {}
    for label, rs in rows.items():
        best[label] = {}
        for r in rs:
            if r["verified"] and r[metric] and r[metric] > best[label].get(r["shape"], {}).get(metric, 0):
                best[label][r["shape"]] = r
    for label in sorted(rows, key=lambda lb: -(best[lb].get(order_shape, {}).get(metric) or 0)):
        rs = rows[label]
        # params that take several values within the row (split-K factor...): a cell names them when they are
        # not the space's first value
        firsts = {k: space[k][0] if space.get(k) else None for k in rs[0]["params"]
                  if len({r["params"].get(k) for r in rs}) > 1}
        cells = [_cell(best[label][s], metric, firsts) if s in best[label] else
                 ("failed" if any(r["shape"] == s for r in rs) else "-") for s in shapes]
        extra = [str((rs[0].get("derived") or {}).get(k)) for k in derived_keys]
        lines.append("| " + " | ".join([label] + extra + cells) + " |")
    header = "| point | " + "".join(f"{k} | " for k in derived_keys) + " | ".join(shapes) + " |"
    return [header, "|---|" + "---|" * (len(derived_keys) + len(shapes))] + lines


def _device_grids(e: dict, metric: str, points: list[dict], baseline: list[dict]) -> list[str]:
    """The screen and final grids of one set of points, each with its baseline row."""
    _unit, scale, fmt = METRICS[metric]
    base = {}
    for b in baseline:
        base.setdefault(b["round"], {})[b["shape"]] = b
    shapes = list(dict.fromkeys([p["shape"] for p in points] + list(base.get("screen", {}))))
    # rows are ordered by the shape whose baseline takes longest (the largest problem)
    timed = base.get("screen") or {}
    order = max(shapes, key=lambda s: timed.get(s, {}).get("median_s") or 0) if shapes else None
    out = []
    for rnd in ROUNDS:
        recs = [p for p in points if p["round"] == rnd]
        if not recs:
            continue
        if rnd == "final":
            out += ["", "final round (interleaved with the baseline):", ""]
        grid = _grid(recs, shapes, metric, order, e["space"].get("params", {}))
        row = "| " + " | ".join([e["baseline"]["name"]] + [""] * (grid[0].count("|") - len(shapes) - 2)
                                + [format(base[rnd][s][metric] * scale, fmt) if s in base.get(rnd, {}) else "-"
                                   for s in shapes]) + " |"
        out += grid[:2] + [row] + grid[2:]
    return out


def markdown(data: dict) -> str:
    """Markdown tables of a tuned file: per device, the screened points (metric and % of the baseline in the
    same round), the final round if any, and the chosen point per shape. A converted entry's points are shown
    per ``source`` (each with the baseline measured with it)."""
    metric = data["metric"]
    unit, scale, fmt = METRICS[metric]
    out = []
    for dev, e in data["devices"].items():
        out += [f"{dev} ({e['date']}, {e['command']}); {unit}, % of {e['baseline']['name']} in the same round:", ""]
        sources = list(dict.fromkeys(p.get("source") for p in e["points"])) or [None]
        for source in sources:
            if source is not None:
                out += ([""] if source != sources[0] else []) + [f"from {source}:", ""]
            out += _device_grids(e, metric, [p for p in e["points"] if p.get("source") == source],
                                 [b for b in e["baseline"].get("points", []) if b.get("source") == source])
        if e.get("converted"):
            out += ["", f"converted: {e['converted']}"]
        out += ["", "chosen:"]
        for shape, c in e["chosen"].items():
            ratio = f" = {100 * c['ratio_to_baseline']:.1f}% of the baseline" if c.get("ratio_to_baseline") else ""
            out.append(f"- {shape}: {c['label']} ({', '.join(f'{k}={v}' for k, v in c['params'].items())}), "
                       f"{format(c[metric] * scale, fmt)} {unit}{ratio} ({c['round']} round)")
        out.append("")
    return "\n".join(out)
