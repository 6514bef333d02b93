"""Write the small results.json fixtures of tests/data/runs/ from real runs (run once; the output is committed).

    python tests/data/make_runs.py SOURCE.json OUT_DIR [SOURCE.json OUT_DIR ...]

Each fixture is its source run cut down: per experiment the first VARIANTS variants, each with its first
POINTS parameter points (as the source orders them), plus any record with a timeline (the report draws it), and every raw sample list cut to its first SAMPLES values
(the summary statistics stay those of the full run, so ratios and verdicts computed from them are real ones).
Meta, device, ceilings, errors and the kept experiments' entries are copied unchanged. Tests that only need a
real-looking run (compare, report, bad-input handling) read these, so a new GPU run committed under
docs/results/ changes none of them.

The committed fixtures were made with
    python tests/data/make_runs.py docs/results/nvidia-h100-80gb-hbm3/results.json.xz tests/data/runs/nvidia-h100-80gb-hbm3 \
        docs/results/nvidia-h200/results.json.xz tests/data/runs/nvidia-h200
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

VARIANTS, POINTS, SAMPLES = 2, 2, 5


def keep(r: dict, variants: dict, points: dict) -> bool:
    """Whether record ``r`` goes into the fixture, given what was kept before it (updated here)."""
    if (r.get("extra") or {}).get("timeline"):
        return True
    names = variants.setdefault(r["experiment"], [])
    if r["variant"] not in names:
        if len(names) == VARIANTS:
            return False
        names.append(r["variant"])
    key = (r["experiment"], r["variant"])
    points[key] = points.get(key, 0) + 1
    return points[key] <= POINTS


def slim(doc: dict) -> dict:
    variants, points, kept = {}, {}, []
    for r in doc["results"]:
        if keep(r, variants, points):
            r = dict(r, time_s=dict(r["time_s"]))
            if "samples" in r["time_s"]:
                r["time_s"]["samples"] = r["time_s"]["samples"][:SAMPLES]
            kept.append(r)
    ran = {r["experiment"] for r in kept}
    experiments = {n: e for n, e in doc.get("experiments", {}).items() if n in ran or e.get("skipped")}
    return dict(doc, results=kept, experiments=experiments)


def main(argv: list[str]) -> int:
    if not argv or len(argv) % 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    for source, out in zip(argv[::2], argv[1::2]):
        doc = slim(json.loads(Path(source).read_text()))
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "results.json").write_text(json.dumps(doc) + "\n")
        print(f"{out}/results.json: {len(doc['results'])} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
