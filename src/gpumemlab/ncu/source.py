"""``gpumemlab lint --validate``: lint's per-access predictions against Nsight Compute's Source Counters, per line.

The parent never creates a CUDA context: it writes a plan (the file's text, each kernel's name expression, grid,
block and synthesized arguments), runs ``ncu --section SourceCounters --page source --print-source cuda --csv``
over ``python -m gpumemlab.ncu.lint_child``, and reads per CUDA source line: L2 theoretical sectors (global) and
their ideal, L1 wavefronts (shared) and their ideal. A line's prediction sums its accesses over every warp of the
launched block at the loops' first iteration, so lines inside loops are compared as ratios (sectors per ideal
sector, wavefronts per ideal wavefront), which every iteration of a warp-uniform loop keeps.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import GpumemlabError
from .runner import _child_env, _tail, find_ncu

FRONT = 64 << 20  # bytes before each buffer's pointer (negative offsets, e.g. a stencil's halo at block 0)
MIN_BYTES = 256 << 20  # bytes after it: loops run to their end on the GPU, lint saw their first iteration
MAX_BYTES = 2 << 30
# Source Counters columns as ncu's source page names them, normalized (lower case, single spaces)
COLUMNS = {"sectors": "l2 theoretical sectors global", "ideal_sectors": "l2 theoretical sectors global ideal",
           "wavefronts": "l1 wavefronts shared", "ideal_wavefronts": "l1 wavefronts shared ideal",
           "executed": "warp instructions executed"}


def plan(text: str, reports, opts) -> dict:
    """The child's plan: kernels lint analyzed without error and whose parameters can be synthesized."""
    from ..model.access import dim3

    kernels, skipped = [], {}
    for r in reports:
        if r.error:
            skipped[r.name] = f"not analyzed: {r.error}"
            continue
        args, why = [], None
        for p in r.params:
            if p["kind"] == "pointer":
                args.append(dict(kind="pointer", front=FRONT, bytes=FRONT + _bytes(r, p["name"])))
            elif p["kind"] in ("int", "float"):
                args.append(dict(kind=p["kind"], type=p["type"], value=p["value"] if p["value"] is not None else 0))
            else:
                why = f"parameter {p['name']} of type {p['type']} cannot be synthesized"
        if why:
            skipped[r.name] = why
            continue
        name = r.name + (f"<{', '.join(str(v) for v in r.template.values())}>" if r.template else "")
        kernels.append(dict(name=name, base=r.name, grid=list(dim3(opts.grid, "grid")),
                            block=list(dim3(opts.block, "block")), shmem=48 * 1024 if r.dynamic_shared else 0,
                            args=args))
    return dict(text=text, kernels=kernels, skipped=skipped)


def _bytes(report, param: str) -> int:
    hi = 0
    for f in report.findings:
        if f.array == param and f.space == "global" and f.requests:
            hi = max(hi, (f.element_bytes or 0) * 1024)
    return min(max(MIN_BYTES, 4 * hi), MAX_BYTES)


def measure(plan_: dict, timeout: float = 300.0, pages: tuple = ("cuda",)) -> dict:
    """Run the plan under ncu; {device, status, pages: {print-source: CSV text}, console}."""
    ncu = find_ncu()
    names = sorted({k["base"] for k in plan_["kernels"]})
    out = dict(device=None, status={}, pages={}, console="")
    with tempfile.TemporaryDirectory(prefix="gpumemlab-lint-validate-") as tmp:
        plan_path, status_path = Path(tmp) / "plan.json", Path(tmp) / "status.json"
        plan_path.write_text(json.dumps(plan_))
        for page in pages:
            log = Path(tmp) / f"source-{page}.csv"
            cmd = [ncu, "--clock-control", "none", "--target-processes", "all", "--section", "SourceCounters",
                   "--page", "source", "--print-source", page, "--csv", "--log-file", str(log),
                   "--kernel-name", "regex:^(" + "|".join(re.escape(n) for n in names) + ")$",
                   sys.executable, "-m", "gpumemlab.ncu.lint_child", str(plan_path), str(status_path)]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_child_env(),
                                    start_new_session=True)
            try:
                so, se = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                so, se = proc.communicate()
                se += f"\nncu timed out after {timeout:.0f} s"
            out["console"] += so + se
            out["pages"][page] = log.read_text(errors="replace") if log.exists() else ""
            if status_path.exists():
                out["status"] = json.loads(status_path.read_text())
                out["device"] = out["status"].get("device")
    return out


def _norm(name: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", name.lower()).split())


def parse_source_page(text: str) -> dict[str, dict[int, dict]]:
    """{kernel: {source line: {quantity: value}}} from ncu's ``--page source --print-source cuda --csv`` output."""
    out: dict[str, dict[int, dict]] = {}
    kernel = None
    header = None
    for raw in text.splitlines():
        if not raw.startswith('"'):
            m = re.search(r"Kernel Name:?\s*\"?([A-Za-z_]\w*)", raw) or re.match(r"^\s*([A-Za-z_]\w*)[<(]", raw)
            if m:
                kernel = m.group(1)
            continue
        row = next(csv.reader(io.StringIO(raw)))
        norm = [_norm(c) for c in row]
        if any(n in ("line", "line number", "address line", "source line", "address") for n in norm) and \
                any("source" == n for n in norm):
            header = norm
            continue
        if header is None or len(row) != len(header):
            continue
        rec = dict(zip(header, row))
        line = _int(rec.get("line") or rec.get("line number") or rec.get("address line") or rec.get("source line")
                    or rec.get("address"))
        if line is None:
            continue
        vals = {}
        for q, col in COLUMNS.items():
            v = _int(rec.get(col))
            if v is not None:
                vals[q] = v
        if vals:
            out.setdefault(kernel or "?", {})[line] = vals
    return out


def _int(text) -> int | None:
    if text is None:
        return None
    t = str(text).replace(",", "").strip()
    try:
        return int(float(t))
    except ValueError:
        return None


def predicted_lines(report) -> dict[int, dict]:
    """Per source line: sectors/ideal and wavefronts/ideal of lint's accesses (analyzed warp, per request)."""
    lines: dict[int, dict] = {}
    for f in report.findings:
        if f.call_lines or f.verdict in ("unknown", "not executed") or not f.requests:
            continue
        d = lines.setdefault(f.line, dict(sectors=0.0, ideal_sectors=0.0, wavefronts=0.0, ideal_wavefronts=0.0,
                                          accesses=[]))
        if f.space == "global":
            d["sectors"] += f.sectors_per_request * f.requests
            d["ideal_sectors"] += f.ideal_sectors_per_request * f.requests
        else:
            d["wavefronts"] += f.wavefronts_per_request * f.requests
            d["ideal_wavefronts"] += f.ideal_wavefronts_per_request * f.requests
        d["accesses"].append(f"{f.access} {f.text}")
    return lines


def _ratio(a, b):
    return round(a / b, 3) if b else None


def compare(reports, measured: dict) -> list[dict]:
    rows = []
    for r in reports:
        got = measured.get(r.name, {})
        for line, p in sorted(predicted_lines(r).items()):
            m = got.get(line, {})
            row = dict(kernel=r.name, line=line, accesses=p["accesses"],
                       predicted_sectors_per_ideal=_ratio(p["sectors"], p["ideal_sectors"]),
                       measured_sectors=m.get("sectors"), measured_ideal_sectors=m.get("ideal_sectors"),
                       measured_sectors_per_ideal=_ratio(m.get("sectors", 0), m.get("ideal_sectors", 0)),
                       predicted_wavefronts_per_ideal=_ratio(p["wavefronts"], p["ideal_wavefronts"]),
                       measured_wavefronts=m.get("wavefronts"), measured_ideal_wavefronts=m.get("ideal_wavefronts"),
                       measured_wavefronts_per_ideal=_ratio(m.get("wavefronts", 0), m.get("ideal_wavefronts", 0)))
            row["agree"] = (row["predicted_sectors_per_ideal"] == row["measured_sectors_per_ideal"] and
                            row["predicted_wavefronts_per_ideal"] == row["measured_wavefronts_per_ideal"])
            rows.append(row)
    return rows


def validate_lint(text: str, reports, opts, as_json: bool = False, timeout: float = 300.0) -> int:
    """The --validate path of ``gpumemlab lint``: 0 if every line agrees, 1 if one differs."""
    p = plan(text, reports, opts)
    if not p["kernels"]:
        raise GpumemlabError("--validate: no kernel to run (" + "; ".join(f"{k}: {v}" for k, v in p["skipped"].items())
                             + ")")
    res = measure(p, timeout)
    status = res["status"]
    fatal = str(status.get("fatal") or "")
    if res["device"] is None or fatal.startswith("compile:"):
        raise GpumemlabError(f"--validate: {status.get('fatal') or _tail(res['console']) or 'no result from the GPU'}")
    measured = parse_source_page(res["pages"].get("cuda", ""))
    rows = compare(reports, measured)
    agree = all(r["agree"] for r in rows)
    if as_json:
        print(json.dumps(dict(device=res["device"], skipped=p["skipped"], errors=status.get("errors", {}),
                              lines=rows, agree=agree), indent=2))
        return 0 if agree else 1
    print(f"validated on {res['device']['name']} (cc {'.'.join(map(str, res['device']['cc']))}) with Nsight Compute "
          f"Source Counters; grid {p['kernels'][0]['grid']}, block {p['kernels'][0]['block']}")
    print(f"  {'kernel':24} {'line':>5} {'sectors/ideal':>22} {'wavefronts/ideal':>22}")
    print(f"  {'':24} {'':>5} {'lint':>10} {'ncu':>11} {'lint':>10} {'ncu':>11}")
    for r in rows:
        print(f"  {r['kernel'][:24]:24} {r['line']:>5} {_f(r['predicted_sectors_per_ideal']):>10} "
              f"{_f(r['measured_sectors_per_ideal']):>11} {_f(r['predicted_wavefronts_per_ideal']):>10} "
              f"{_f(r['measured_wavefronts_per_ideal']):>11}   {'ok' if r['agree'] else 'DIFFERS'}")
    for k, v in {**p["skipped"], **status.get("errors", {})}.items():
        print(f"  {k}: {v}")
    return 0 if agree else 1


def _f(v) -> str:
    return "-" if v is None else f"{v:g}"


def main(argv: list[str] | None = None) -> int:
    """Developer entry: ``python -m gpumemlab.ncu.source PLAN.json OUTDIR`` writes ncu's raw source pages."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m gpumemlab.ncu.source PLAN.json OUTDIR", file=sys.stderr)
        return 2
    p = json.loads(Path(argv[0]).read_text())
    res = measure(p, pages=("cuda", "sass"))
    out = Path(argv[1])
    for page, text in res["pages"].items():
        (out / f"source-{page}.csv").write_text(text)
    (out / "console.txt").write_text(res["console"] + "\n" + json.dumps(res["status"]))
    print(json.dumps(parse_source_page(res["pages"].get("cuda", "")))[:3000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
