"""The parent side of ``gpumemlab analyze ... --validate``: never creates a CUDA context; runs

    ncu --clock-control none --csv --metrics <4 l1tex metrics> python -m gpumemlab.ncu.child run CASES STATUS

parses the counters, reruns the remaining cases without one that killed the context, and compares.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import GpumemlabError
from .cases import ALL_METRICS, KERNEL_PREFIX, METRICS, case_from_lanes

def find_ncu() -> str:
    for cand in (os.environ.get("GPUMEMLAB_NCU"), shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if cand and Path(cand).exists():
            return cand
    raise GpumemlabError("Nsight Compute (ncu) not found on PATH; --validate needs it (or set GPUMEMLAB_NCU)")


def parse_ncu_csv(text: str) -> dict[str, dict[str, float]]:
    """{kernel name: {metric: value}} from ``ncu --csv`` output (details or raw page)."""
    rows = list(csv.reader(io.StringIO("\n".join(ln for ln in text.splitlines() if ln.startswith('"')))))
    out: dict[str, dict[str, float]] = {}
    header = None
    for row in rows:
        if any(col in row for col in _NAME_COLUMNS):
            header = row
            continue
        if header is None or len(row) != len(header):
            continue
        rec = dict(zip(header, row))
        kernel = _kernel_base(next((rec[col] for col in _NAME_COLUMNS if rec.get(col)), ""))
        if not kernel:
            continue
        if "Metric Name" in rec:  # details page: one row per metric
            value = _number(rec.get("Metric Value", ""))
            if value is not None:
                out.setdefault(kernel, {})[rec["Metric Name"]] = value
        else:  # raw page: one row per kernel, metrics as columns
            for m in ALL_METRICS:
                if m in rec and _number(rec[m]) is not None:
                    out.setdefault(kernel, {})[m] = _number(rec[m])
    return out


_NAME_COLUMNS = ("Kernel Name", "Function Name", "Demangled Name")


def _kernel_base(name: str) -> str:
    name = name.split("(")[0].strip()
    return name[5:] if name.startswith("void ") else name


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").strip())
    except ValueError:
        return None


def _child_env() -> dict:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    src = str(Path(__file__).resolve().parents[2])  # the folder that holds the gpumemlab package
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _run_batch(cases: list[dict], workdir: Path, attempt: int, timeout: float, ncu: str) -> tuple[dict, dict, str]:
    cases_path, status_path = workdir / f"cases{attempt}.json", workdir / f"status{attempt}.json"
    log_path = workdir / f"ncu{attempt}.csv"
    cases_path.write_text(json.dumps(cases))
    cmd = [ncu, "--clock-control", "none", "--target-processes", "all", "--csv", "--page", "raw",
           "--print-units", "base", "--log-file", str(log_path),
           "--kernel-name", f"regex:^{KERNEL_PREFIX}", "--metrics", ",".join(ALL_METRICS),
           sys.executable, "-m", "gpumemlab.ncu.child", "run", str(cases_path), str(status_path)]
    # a session of its own, so that a timeout can stop ncu and the child it started, and nothing else
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_child_env(),
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        console = out + err
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        console = out + err + f"\nncu timed out after {timeout:.0f} s"
    status = json.loads(status_path.read_text()) if status_path.exists() else {}
    log = log_path.read_text(errors="replace") if log_path.exists() else ""
    return status, parse_ncu_csv(log), console + "\n" + "\n".join(ln for ln in log.splitlines() if not ln.startswith('"'))


def measure(cases: list[dict], timeout: float = 300.0, attempts: int = 4) -> dict:
    """Run the cases under ncu. Returns {device, measured: {name: {quantity: value}}, errors: {name: msg}}.

    Never raises for a failing case: each failure is recorded under ``errors`` and the rest go on.
    """
    ncu = find_ncu()
    by_name = {c["name"]: c for c in cases}
    measured: dict[str, dict] = {}
    errors: dict[str, str] = {}
    device = None
    pending = list(cases)
    with tempfile.TemporaryDirectory(prefix="gpumemlab-validate-") as tmp:
        for attempt in range(attempts):
            if not pending:
                break
            status, metrics, console = _run_batch(pending, Path(tmp), attempt, timeout, ncu)
            device = status.get("device") or device
            errors.update(status.get("errors", {}))
            for c in pending:
                got = metrics.get(c["name"])
                if got is not None:
                    measured[c["name"]] = {q: int(got[m]) for q, m in METRICS[c["space"]].items() if m in got}
            crashed = status.get("fatal") or status.get("running")
            if crashed and crashed not in errors:
                errors[crashed] = "the kernel broke the CUDA context"
            left = [c for c in pending if c["name"] not in measured and c["name"] not in errors]
            if not status or (left and not crashed):  # nothing to learn from another try
                reason = _tail(console) or "ncu produced no metrics"
                for c in left:
                    errors[c["name"]] = f"not measured: {reason}"
                left = []
            pending = left
    for name in by_name:
        if name not in measured and name not in errors:
            errors[name] = "not measured (gave up after several reruns)"
    return dict(device=device, measured=measured, errors=errors)


def _tail(text: str, lines: int = 3) -> str:
    keep = [ln.strip() for ln in text.splitlines() if ln.strip()][-lines:]
    return " | ".join(keep)[:500]


def compare(predicted: dict, measured: dict, space: str) -> list[dict]:
    """Rows of (quantity, predicted, measured, agree) for the quantities ncu measures."""
    return [dict(quantity=q, predicted=predicted[q], measured=measured.get(q), agree=measured.get(q) == predicted[q])
            for q in METRICS[space]]


def validate_access(lanes, requested_cc=None, as_json: bool = False) -> int:
    """The --validate path of ``gpumemlab analyze``: 0 if every quantity agrees, 1 if not."""
    from ..model import predict
    from ..model.cc import cc_str

    case = case_from_lanes(f"{KERNEL_PREFIX}case_0", lanes)
    res = measure([case])
    if res["device"] is None:
        raise GpumemlabError(f"--validate: {res['errors'].get(case['name'], 'no result from the GPU')}")
    cc = tuple(res["device"]["cc"])
    predicted = predict(lanes, cc)
    err = res["errors"].get(case["name"])
    rows = compare(predicted, res["measured"].get(case["name"], {}), lanes.space)
    agree = err is None and all(r["agree"] for r in rows)
    if as_json:
        print(json.dumps(dict(device=res["device"], predicted={r["quantity"]: r["predicted"] for r in rows},
                              measured={r["quantity"]: r["measured"] for r in rows}, agree=agree, error=err),
                         indent=2))
        return 0 if agree else 1
    b = lanes.launch.block
    print(f"{lanes.access} with {lanes.decl.text}: validated on {res['device']['name']} (cc {cc_str(cc)}) with "
          f"Nsight Compute, one block of {b[0]}x{b[1]}x{b[2]}")
    if requested_cc is not None and tuple(requested_cc) != cc:
        print(f"  note: predicted for this GPU's cc {cc_str(cc)}, not the --cc {cc_str(requested_cc)} given")
    print(f"  {'quantity':<12}{'predicted':>10}{'measured':>10}")
    for r in rows:
        print(f"  {r['quantity']:<12}{r['predicted']:>10}{_fmt(r['measured']):>10}   {'ok' if r['agree'] else 'DIFFERS'}")
    if err:
        print(f"  error: {err}")
    if lanes.space == "shared" and lanes.launch.nwarps > 1:
        print("  caveat: the bank-conflict counter is inflated when several warps run; validate one warp (--block 32)")
    return 0 if agree else 1


def _fmt(v) -> str:
    return "-" if v is None else str(v)


