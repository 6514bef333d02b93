"""``gpumemlab lint --validate``: lint's per-access predictions against Nsight Compute's Source Counters, per line.

The parent never creates a CUDA context: it writes a plan (the file's text, each kernel's name expression, grid,
block and synthesized arguments), runs ``ncu --section SourceCounters --page source --print-source sass --csv``
over ``python -m gpumemlab.ncu.lint_child`` (which also saves the cubin it loaded), maps each instruction to its
CUDA line with ``nvdisasm -g`` and sums, per (line, global/shared, load/store): instructions executed (= requests),
L2 theoretical sectors and their ideal, L1 shared wavefronts and their ideal. lint's per-request numbers are for
its analyzed warp at the loops' first iteration; ncu's are averages over every warp and iteration of the launch.
"""

from __future__ import annotations

import contextlib
import csv
from dataclasses import replace
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
from ..gpu.sass import find_nvdisasm  # the one finder, shared with the SASS tools
from .runner import _child_env, _tail, find_ncu

FRONT = 64 << 20  # bytes before each buffer's pointer (negative offsets, e.g. a stencil's halo at block 0)
MIN_BYTES = 256 << 20  # bytes after it: loops run to their end on the GPU, lint saw their first iteration
MAX_BYTES = 2 << 30
# Source Counters columns of ncu's SASS source page (one row per instruction)
COLUMNS = {"executed": "Instructions Executed", "space": "Address Space", "operation": "Access Operation",
           "sectors": "L2 Theoretical Sectors Global", "ideal_sectors": "L2 Theoretical Sectors Global Ideal",
           "wavefronts": "L1 Wavefronts Shared", "ideal_wavefronts": "L1 Wavefronts Shared Ideal",
           "ways": "L1 Conflicts Shared N-Way"}
PROGRAM = "gpumemlab"  # NVRTC's program name: the file name the line information refers to


def plan(text: str, reports, opts, include_path: list[str] | None = None) -> dict:
    """The child's plan: kernels lint analyzed without error and whose parameters can be synthesized."""
    kernels, skipped = [], {}
    for r in reports:
        if r.error:
            skipped[r.name] = f"not analyzed: {r.error}"
            continue
        if r.unbound:
            skipped[r.name] = f"template parameter(s) {', '.join(r.unbound)} not given"
            continue
        if r.out_of_bounds:  # it would lose the context, and with it every kernel after it
            skipped[r.name] = f"not launched: {r.out_of_bounds[0]}"
            continue
        if r.constant_lets:  # the child leaves __constant__ memory as loaded: lint's values would not be the GPU's
            skipped[r.name] = (f"not launched: __constant__ values given with --let ({', '.join(r.constant_lets)}) "
                               f"are not written on the device")
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
        kernels.append(dict(name=name, base=r.name, grid=r.grid, block=r.block,
                            shmem=48 * 1024 if r.dynamic_shared else 0, args=args))
    return dict(text=text, kernels=kernels, skipped=skipped, include_path=list(include_path or []))


def _bytes(report, param: str) -> int:
    hi = 0
    for f in report.findings:
        if f.array == param and f.space == "global" and f.requests:
            hi = max(hi, (f.element_bytes or 0) * 1024)
    return min(max(MIN_BYTES, 4 * hi), MAX_BYTES)


def measure(plan_: dict, timeout: float = 300.0, pages: tuple = ("sass",)) -> dict:
    """Run the plan under ncu; {device, status, pages: {print-source: CSV text}, cubin, mapping, console}."""
    ncu = find_ncu()
    names = sorted({k["base"] for k in plan_["kernels"]})
    out = dict(device=None, status={}, pages={}, console="", cubin=None, mapping={})
    with tempfile.TemporaryDirectory(prefix="gpumemlab-lint-validate-") as tmp:
        work = Path(tmp)
        (work / PROGRAM).write_text(plan_["text"])  # ncu's CUDA view opens the source by this name
        plan_path, status_path = work / "plan.json", work / "status.json"
        plan_path.write_text(json.dumps({**plan_, "module_dir": str(work)}))
        for page in pages:
            log = work / f"source-{page.replace(',', '-')}.csv"
            cmd = [ncu, "--clock-control", "none", "--target-processes", "all", "--section", "SourceCounters",
                   "--page", "source", "--print-source", page, "--csv", "--log-file", str(log),
                   "--kernel-name", "regex:^(" + "|".join(re.escape(n) for n in names) + ")$",
                   sys.executable, "-m", "gpumemlab.ncu.lint_child", str(plan_path), str(status_path)]
            with _gpu_lock():
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=_child_env(), cwd=work, start_new_session=True)
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
        if (work / "module.cubin").exists():
            out["cubin"] = (work / "module.cubin").read_bytes()
            out["mapping"] = json.loads((work / "module.json").read_text())
    return out


@contextlib.contextmanager
def _gpu_lock():
    """An exclusive lock on the file GPUMEMLAB_NCU_LOCK names, if set: several lint processes (their CPU work in
    parallel) profile one at a time."""
    path = os.environ.get("GPUMEMLAB_NCU_LOCK")
    if not path:
        yield
        return
    import fcntl

    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def parse_sass_page(text: str) -> dict[str, list[dict]]:
    """{kernel base name: [instruction rows in address order]} from ``--page source --print-source sass --csv``."""
    out: dict[str, list[dict]] = {}
    kernel, header, rows = None, None, None
    for raw in text.splitlines():
        if not raw.startswith('"'):
            continue
        row = next(csv.reader(io.StringIO(raw)))
        if row and row[0] == "Kernel Name":
            kernel = _base_name(row[1]) if len(row) > 1 else None
            rows = out.setdefault(kernel, []) if kernel not in out else None  # a kernel's first listing only
            continue
        if row and row[0] == "Address":
            header = row
            continue
        if rows is None or header is None or len(row) != len(header):
            continue
        rec = dict(zip(header, row))
        try:
            addr = int(rec["Address"], 16)
        except (KeyError, ValueError):
            continue
        rows.append(dict(address=addr, sass=rec.get("Source", "").strip(),
                         **{q: (rec.get(col, "-").strip() if q in ("space", "operation") else _int(rec.get(col)))
                            for q, col in COLUMNS.items()}))
    return out


def _base_name(signature: str) -> str | None:
    """"void transpose_naive<float, 32, 8>(float *, ...)", "ns::k(int)" or an extern "C" kernel's bare "offset_copy"
    -> the function's own name."""
    m = re.search(r"([A-Za-z_][\w:]*)\s*[<(]", signature) or re.fullmatch(r"\s*([A-Za-z_]\w*)\s*", signature)
    return m.group(1).split("::")[-1] if m else None


def disassemble(cubin: bytes, nvdisasm: str) -> str:
    """``nvdisasm -g`` of a cubin: the SASS with each instruction's source line."""
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as fh:
        fh.write(cubin)
    try:
        return subprocess.run([nvdisasm, "-g", "-c", fh.name], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(fh.name)


def sass_instructions(text: str):
    """(function symbol, source line, offset, instruction text) of each instruction of ``nvdisasm -g`` output
    (symbol alone, with line and offset None, where a function starts)."""
    fn, line = None, None
    for ln in text.splitlines():
        m = re.match(r"\s*\.section\s+\.text\.([^,\s]+)", ln)
        if m:
            fn, line = m.group(1), None
            yield fn, None, None, None
            continue
        m = re.search(r'//## File "[^"]*", line (\d+)', ln)
        if m:
            line = int(m.group(1))
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", ln)
        if m and fn is not None and line is not None:
            yield fn, line, int(m.group(1), 16), m.group(2)


def line_map(cubin: bytes, nvdisasm: str) -> dict[str, dict[int, int]]:
    """{function symbol: {instruction offset: source line}} from ``nvdisasm -g`` (the cubin's line information)."""
    return parse_line_info(disassemble(cubin, nvdisasm))


def parse_line_info(text: str) -> dict[str, dict[int, int]]:
    """{function symbol: {instruction offset: source line}} from ``nvdisasm -g`` output."""
    out: dict[str, dict[int, int]] = {}
    for fn, line, offset, _ in sass_instructions(text):
        rows = out.setdefault(fn, {})
        if offset is not None:
            rows[offset] = line
    return out


def measured_lines(rows: list[dict], offsets: dict[int, int]) -> dict[tuple, dict]:
    """{(line, space, load/store): summed counters} of the memory instructions of one kernel."""
    out: dict[tuple, dict] = {}
    base = rows[0]["address"] if rows else 0
    for r in rows:
        if r["space"] not in ("Global", "Shared") or r["operation"] not in ("Load", "Store") or not r["executed"]:
            continue
        line = offsets.get(r["address"] - base)
        if line is None:
            continue
        key = (line, r["space"].lower(), r["operation"].lower())
        d = out.setdefault(key, dict(executed=0, sectors=0, ideal_sectors=0, wavefronts=0, ideal_wavefronts=0,
                                     ways=0, instructions=0))
        for q in ("executed", "sectors", "ideal_sectors", "wavefronts", "ideal_wavefronts"):
            d[q] += r[q] or 0
        d["ways"] = max(d["ways"], r["ways"] or 0)
        d["instructions"] += 1
    return out


def predicted_lines(report) -> dict[tuple, dict]:
    """{(line, space, load/store): per-request numbers averaged over lint's accesses there} (known ones only):
    ``sum``/``weight`` over the launch (``Finding.launch``) where every access of the line has it, else over the
    analyzed warp; ``warp_sum``/``warp_weight`` always over the analyzed warp."""
    out: dict[tuple, dict] = {}
    merged = set()
    for f in report.findings:
        if f.access not in ("load", "store") or f.space not in ("global", "shared"):
            continue
        c = getattr(f, "compiled", None)
        line = f.line
        issued = (getattr(f, "in_register", None) or {}).get("issued", 1.0)
        if c is not None:  # as compiled: ncu counts the instruction ptxas made, at the line it gave it
            group = (c["line"], c["instruction"], f.array, f.access, tuple(c["accesses_lines"]))
            if c["how"] == "merged" and group in merged:
                continue
            merged.add(group)
            line = c["line"]
            f = _as_compiled(f, c)
        d = out.setdefault((line, f.space, f.access), dict(n=0, known=0, weight=0.0, sum={}, texts=[], unknown=[],
                                                            not_executed=0, first_iteration=False, warp_weight=0.0,
                                                            warp_sum={}, launch=True, launch_unknown=[]))
        d["n"] += 1
        d["texts"].append(f.text)
        keys = (("sectors_per_request", "ideal_sectors_per_request") if f.space == "global" else
                ("wavefronts_per_request", "ideal_wavefronts_per_request"))
        la = getattr(f, "launch", None)
        if la is None or la.get("unknown_reason"):
            d["launch"] = False
            if la is not None:
                d["launch_unknown"].append(la["unknown_reason"])
        elif la["requests"]:
            d["lweight"] = d.get("lweight", 0.0) + la["requests"]
            for k in keys:
                d.setdefault("lsum", {})[k] = d.get("lsum", {}).get(k, 0.0) + la["requests"] * la[k]
        if f.verdict == "not executed" or not issued:  # (or served from a register: no instruction either)
            d["not_executed"] += 1
            continue
        if f.verdict == "unknown" or not f.requests:
            d["unknown"].append(f.unknown_reason or f.verdict)
            continue
        # ncu divides by instructions executed: weigh each access by its instructions per execution
        weight = (c["requests_per_execution"] if c is not None else f.requests) * issued
        if c is None and f.over_iterations is not None:  # every iteration evaluated: what ncu averages
            f = replace(f, **{k: v for k, v in f.over_iterations.items() if k not in ("requests", "iterations")})
        elif c is None and (len(f.iterations) > 1 or any(not lp["pattern_kept"] for lp in f.loops)):
            d["first_iteration"] = True  # the compiled instruction's numbers hold per request as they are
        d["known"] += 1
        d["warp_weight"] += weight
        for k in keys:
            d["warp_sum"][k] = d["warp_sum"].get(k, 0.0) + weight * getattr(f, k)
    for d in out.values():
        if d["launch"] and d["n"]:
            d["weight"], d["sum"] = d.get("lweight", 0.0), d.get("lsum", {})
            d["known"], d["not_executed"], d["unknown"] = d["n"], (d["n"] if not d["weight"] else 0), []
            d["first_iteration"] = False
        else:
            d["weight"], d["sum"] = d["warp_weight"], d["warp_sum"]
    return out


def _as_compiled(f, c: dict):
    """A copy of finding ``f`` with the numbers of the instruction it was compiled to."""
    keys = ("requests", "sectors_per_request", "ideal_sectors_per_request", "wavefronts_per_request",
            "ideal_wavefronts_per_request", "conflict_ways")
    return replace(f, text=f"{f.text} (as compiled: {c['instruction']})", **{k: c[k] for k in keys if k in c})


def _int(text) -> int | None:
    """An integer counter of the CSV ("1,024", "32"); None for "-" or text."""
    if text is None:
        return None
    try:
        return int(float(str(text).replace(",", "").strip()))
    except ValueError:
        return None


def _ratio(a, b):
    return round(a / b, 3) if b else None


def compare(reports, pages: dict[str, list[dict]], maps: dict[str, dict[int, int]], symbols: dict) -> list[dict]:
    """One row per (kernel, line, space, load/store): lint's per-request numbers next to ncu's."""
    rows = []
    for r in reports:
        name = r.name + (f"<{', '.join(str(v) for v in r.template.values())}>" if r.template else "")
        offsets = maps.get(symbols.get(name, name), {})
        measured = measured_lines(pages.get(r.name, []), offsets) if offsets else {}
        predicted = predicted_lines(r)
        for key in sorted(set(predicted) | set(measured)):
            line, space, op = key
            p, m = predicted.get(key), measured.get(key)
            row = dict(kernel=r.name, line=line, space=space, access=op, text=" | ".join(p["texts"]) if p else None)
            unit = ("sectors", "ideal_sectors") if space == "global" else ("wavefronts", "ideal_wavefronts")
            pk = ("sectors_per_request", "ideal_sectors_per_request") if space == "global" else \
                ("wavefronts_per_request", "ideal_wavefronts_per_request")
            row["ncu"] = [_ratio(m[u], m["executed"]) for u in unit] if m else None
            row["ncu_counts"] = m
            rows.append(judge(row, p, pk, m[unit[0]] if m else None))
    return rows


def judge(row: dict, p: dict | None, pk: tuple, measured_units) -> dict:
    """Fill lint's per-request numbers for one line (``p`` from predicted_lines) and whether they agree with ncu:
    ``lint`` over the launch where lint has it for every access of the line (``basis``), else over the analyzed
    warp; ``lint_one_warp`` beside it where the analyzed warp's numbers differ."""
    row["first_iteration"] = bool(p and p["first_iteration"])
    row["basis"] = "launch" if p and p["launch"] else "one warp"
    if p and not p["launch"] and p["launch_unknown"]:
        row["launch_unknown"] = p["launch_unknown"][0]
    if p and p["not_executed"] == p["n"]:
        row["lint"] = [0, 0]
        row["agree"] = row.get("ncu") is None or measured_units == 0
        return row
    if p and p["known"] == p["n"] - p["not_executed"] and p["weight"]:
        row["lint"] = [round(p["sum"][k] / p["weight"], 3) for k in pk]
    else:
        row["lint"] = None
        row["unknown"] = (p or {}).get("unknown") or ["no access lint recorded on this line"]
    if p and p["launch"] and p["warp_weight"] and len(p["warp_sum"]) == len(pk):
        warp = [round(p["warp_sum"][k] / p["warp_weight"], 3) for k in pk]
        if warp != row["lint"]:
            row["lint_one_warp"] = warp
    row["agree"] = row["lint"] is not None and row["ncu"] is not None and row["lint"][0] == row["ncu"][0]
    row["ideal_agree"] = row["lint"] is not None and row["ncu"] is not None and row["lint"][1] == row["ncu"][1]
    return row


def validate_lint(text: str, reports, opts, as_json: bool = False, timeout: float = 300.0,
                  include_path: list[str] | None = None, as_compiled=None) -> int:
    """``include_path``: NVRTC's include folders for the child; ``as_compiled(reports, cubin, mapping, nvdisasm)``:
    the caller's as-written/as-compiled comparison on the cubin the GPU ran (lint's, passed down by the CLI)."""
    """The --validate path of ``gpumemlab lint``: 0 if every analyzed line agrees with ncu, 1 if one differs."""
    nvdisasm = find_nvdisasm()
    if nvdisasm is None:
        raise GpumemlabError("--validate needs nvdisasm to map instructions to lines: pip install nvidia-cuda-nvdisasm")
    p = plan(text, reports, opts, include_path)
    if not p["kernels"]:
        raise GpumemlabError("--validate: no kernel to run (" + "; ".join(f"{k}: {v}" for k, v in p["skipped"].items())
                             + ")")
    res = measure(p, timeout)
    status = res["status"]
    fatal = str(status.get("fatal") or "")
    if res["device"] is None or fatal.startswith("compile:") or res["cubin"] is None:
        raise GpumemlabError(f"--validate: {fatal or _tail(res['console']) or 'no result from the GPU'}")
    if as_compiled is not None:
        as_compiled(reports, res["cubin"], res["mapping"], nvdisasm)
    rows = compare(reports, parse_sass_page(res["pages"].get("sass", "")), line_map(res["cubin"], nvdisasm),
                   res["mapping"])
    checked = [r for r in rows if r["lint"] is not None and not r["first_iteration"]]
    agree = all(r["agree"] for r in checked)
    if as_json:
        print(json.dumps(dict(device=res["device"], skipped=p["skipped"], errors=status.get("errors", {}),
                              lines=rows, agree=agree), indent=2))
        return 0 if agree else 1
    k0 = p["kernels"][0]
    print(f"validated on {res['device']['name']} (cc {'.'.join(map(str, res['device']['cc']))}) with Nsight Compute "
          f"Source Counters: one launch per kernel, grid {k0['grid']}, block {k0['block']}; per request "
          f"(sectors for global, wavefronts for shared) and its ideal; lint over the whole launch (every warp and "
          f"iteration, as ncu counts) where it could run it, else for its analyzed warp (marked 'one warp')")
    print(f"  {'kernel':24} {'line':>5} {'access':14} {'lint':>13} {'ncu':>13}")
    for r in rows:
        what = f"{r['space']} {r['access']}"
        lint = "unknown" if r["lint"] is None else f"{r['lint'][0]:g} / {r['lint'][1]:g}"
        ncu = "-" if r["ncu"] is None else f"{_f(r['ncu'][0])} / {_f(r['ncu'][1])}"
        verdict = ("ok" if r["agree"] else "unknown" if r["lint"] is None else
                   "first iteration only (the loop's step changes the pattern)" if r["first_iteration"] else "DIFFERS")
        if r["agree"] and not r.get("ideal_agree", True):
            verdict = "ok (ideal differs)"
        if r["basis"] == "one warp" and r["lint"] is not None:
            verdict += "; one warp" + (f" (launch: {r['launch_unknown'][:60]})" if r.get("launch_unknown") else "")
        if r.get("lint_one_warp"):
            verdict += f"; one warp {r['lint_one_warp'][0]:g} / {r['lint_one_warp'][1]:g}"
        print(f"  {r['kernel'][:24]:24} {r['line']:>5} {what:14} {lint:>13} {ncu:>13}   {verdict}")
    for k, v in {**p["skipped"], **status.get("errors", {})}.items():
        print(f"  {k}: {v}")
    return 0 if agree else 1


def _f(v) -> str:
    return "-" if v is None else f"{v:g}"


def main(argv: list[str] | None = None) -> int:
    """Developer entry: ``python -m gpumemlab.ncu.source PLAN.json OUTDIR`` writes ncu's raw pages and the cubin."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m gpumemlab.ncu.source PLAN.json OUTDIR", file=sys.stderr)
        return 2
    p = json.loads(Path(argv[0]).read_text())
    res = measure(p, pages=("sass", "cuda,sass"))
    out = Path(argv[1])
    for page, text in res["pages"].items():
        (out / f"source-{page.replace(',', '-')}.csv").write_text(text)
    if res["cubin"]:
        (out / "module.cubin").write_bytes(res["cubin"])
        (out / "module.json").write_text(json.dumps(res["mapping"]))
    (out / "console.txt").write_text(res["console"] + "\n" + json.dumps(res["status"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
