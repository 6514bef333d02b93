"""`gpumemlab lint --validate` over the shipped kernels and the corpora, on a GPU with Nsight Compute.

Jobs: every src/gpumemlab/kernels/*.cu with, per template kernel, the template arguments of its first declared
instantiation (the family tables' KernelSpec names), then every run of the idioms and published-styles corpora with
the launch its test expects (RUNS of tests/lint/test_lint_idioms.py, test_lint_published.py) - one ncu run per job.
Writes OUTDIR/validate.json (every job's JSON) and OUTDIR/validate.md (one row per kernel line and access, and the
totals); stops starting jobs after --budget seconds. Run: PYTHONPATH=src python tools/lint_validate_all.py OUTDIR
[--dry-run] [--budget 240] [--jobs 4] [--only published-]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = {"idioms": ("test_lint_idioms.py", ROOT / "tests" / "lint" / "idioms"),
           "published": ("test_lint_published.py", ROOT / "tests" / "lint" / "corpus" / "published")}
KERNELS = ROOT / "src" / "gpumemlab" / "kernels"


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated template arguments of ``name<...>``."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += 1 if ch in "<(" else -1 if ch in ">)" else 0
        cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def _option_args(opts: dict) -> list[str]:
    args = []
    if opts.get("kernel"):
        args += ["--kernel", opts["kernel"]]
    for key in ("block", "grid"):
        if opts.get(key):
            args += [f"--{key}", ",".join(map(str, opts[key]))]
    if opts.get("assume_data_guards"):
        args.append("--assume-data-guards")
    for k, v in opts.get("lets", {}).items():
        args += ["--let", f"{k}={v}"]
    for k, v in opts.get("templates", {}).items():
        args += ["--template", f"{k}={v}"]
    return args


def corpus_jobs(corpus: str) -> list[tuple[str, str, list[str]]]:
    test_file, folder = CORPORA[corpus]
    sys.path.insert(0, str(ROOT / "tests" / "lint"))  # lint_tables, which the test modules import
    spec = importlib.util.spec_from_file_location(corpus, ROOT / "tests" / "lint" / test_file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    jobs = []
    for i, (name, kernel, opts) in enumerate(mod.RUNS):
        args = _option_args(dict(opts, kernel=kernel))
        jobs.append((f"{corpus}-{i}", str(folder / name), args))
    return jobs


def shipped_jobs() -> list[tuple[str, str, list[str]]]:
    from gpumemlab.kernels import all_specs
    from gpumemlab.lint import frontend as fe
    from gpumemlab.lint.analysis import find_functions, template_params

    first: dict[tuple[str, str], str] = {}
    for s in all_specs():
        base = s.name.split("<", 1)[0]
        first.setdefault((s.source, base), s.name)
    jobs = []
    for path in sorted(KERNELS.glob("*.cu")):
        parsed = fe.parse(str(path), [], 90)
        ci = fe.cindex()
        templates: dict[str, str] = {}
        for c, is_global, _ in find_functions(parsed):
            params = template_params(c, ci) if is_global else []
            inst = first.get((path.name, c.spelling))
            if not params or inst is None or "<" not in inst:
                continue
            values = _split_args(inst[inst.index("<") + 1:inst.rindex(">")])
            for (pname, _, _), v in zip(params, values):
                templates.setdefault(pname, v)
        lets = _lets(path, templates)
        jobs.append((f"kernels-{path.stem}", str(path), _option_args(dict(templates=templates, lets=lets))))
        for c, is_global, _ in find_functions(parsed):  # a 2-D tile kernel: its own job, block TILE x BLOCK_ROWS
            names = [p[0] for p in (template_params(c, ci) if is_global else [])]  # (or TILE x TILE)
            if "TILE" in names and (path.name, c.spelling) in first and "<" in first[(path.name, c.spelling)]:
                values = dict(zip(names, _split_args(first[(path.name, c.spelling)].split("<", 1)[1][:-1])))
                block = tile_block(_kernel_text(c), values)
                if block is None:
                    continue
                args = _option_args(dict(kernel=c.spelling, block=block, templates={**templates, **values}, lets=lets))
                jobs.append((f"kernels-{path.stem}-{c.spelling}", str(path), args))
    return jobs


def _kernel_text(c) -> str:
    ext = c.extent
    with open(ext.start.file.name, "rb") as fh:
        return fh.read()[ext.start.offset:ext.end.offset].decode(errors="replace")


def tile_block(text: str, values: dict) -> list[int] | None:
    """The block of a 2-D tile kernel, TILE x BLOCK_ROWS (TILE x TILE without BLOCK_ROWS), or None where the kernel
    is not one: it does not read threadIdx.y (a 1-D kernel with a TILE, which the file's job runs), or the block
    would pass CUDA's 1024 threads or the kernel's literal __launch_bounds__."""
    if "threadIdx.y" not in text:
        return None
    block = [int(values["TILE"]), int(values.get("BLOCK_ROWS", values["TILE"]))]
    bound = re.search(r"__launch_bounds__\(\s*(\d+)\s*[,)]", text)
    limit = min(1024, int(bound.group(1)) if bound else 1024)
    return block if block[0] * block[1] <= limit else None


JOB_SECONDS = 60
PRIORITY = ("kernels-transpose", "kernels-coalescing", "kernels-copy", "kernels-reduce")
SIZES = {"offset": 1, "stride": 2, "log2n": 10, "log_chunk": 4, "shift": 2}  # first non-trivial values; else 1024


def _lets(path: Path, templates: dict) -> dict:
    """A value for every integer parameter of the file's kernels (sizes 1024): accesses that depend on one are
    known, and the launch ncu profiles is the one lint analyzed."""
    from gpumemlab.lint import lint_file
    from gpumemlab.lint.analysis import Options

    lets = {}
    for r in lint_file(str(path), Options(templates=templates), resources=False):
        for p in r.params:
            if p["kind"] == "int":
                lets.setdefault(p["name"], SIZES.get(p["name"], 1024))
    return lets


def run(outdir: Path, dry: bool, budget: float, workers: int = 1, only: tuple = ()) -> int:
    shipped = shipped_jobs()
    first = [j for j in shipped if j[0] in PRIORITY]  # the template kernels ncu names `void name<...>` first
    jobs = first + [j for j in shipped if j not in first] + corpus_jobs("idioms") + corpus_jobs("published")
    if only:
        jobs = [j for j in jobs if j[0].startswith(tuple(only))]
    if dry:
        for label, path, args in jobs:
            print(label, "lint", path, *args, "--validate", "--json", "--no-resources")
        return 0
    # lint's CPU work runs in `workers` processes at once; ncu profiles one at a time (the lock file)
    env = dict(os.environ, GPUMEMLAB_NCU_LOCK=str(outdir / "ncu.lock"))
    t0 = time.monotonic()

    def one(job):
        label, path, args = job
        if time.monotonic() - t0 > budget:
            return dict(job=label, file=path, args=args, skipped="time budget spent")
        cmd = [sys.executable, "-m", "gpumemlab", "lint", path, *args, "--validate", "--json", "--no-resources"]
        t = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=JOB_SECONDS * min(workers, 2), env=env)
            out = json.loads(p.stdout) if p.stdout.strip().startswith("{") else None
            err = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else None
        except subprocess.TimeoutExpired:
            out, err = None, f"timed out after {JOB_SECONDS * min(workers, 2)} s"
        r = dict(job=label, file=path, args=args, seconds=round(time.monotonic() - t, 1), result=out,
                 error=None if out else err)
        print(f"{label}: {'ok' if out else err} ({r['seconds']} s)", flush=True)
        return r

    results = []
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for r in pool.map(one, jobs):
            results.append(r)
            (outdir / "validate.json").write_text(json.dumps(results, indent=1))
    if not dry:
        (outdir / "validate.md").write_text(summary(results))
        print(summary(results)[-1500:])
    return 0


def _verdict(ln: dict) -> str:
    """One row's class: agree, differs, lint unknown, ncu has no instruction, or not executed on both."""
    lint, ncu = ln.get("lint"), ln.get("ncu")
    if lint is None:
        return "lint unknown"
    if ncu is None or ncu[0] is None:
        return "not executed (both)" if lint[0] == 0 else "ncu: no instruction"
    return "agree" if ln["agree"] else "differs"


def summary(results: list[dict]) -> str:
    """Per kernel file: rows (kernel, line, space, load/store), agree, differ, with reasons; then every row."""
    head = ["| job | kernel | line | access | lint (ideal) | basis | one warp | ncu (ideal) | |",
            "|---|---|---:|---|---:|---|---:|---:|---|"]
    per_file: dict[str, dict] = {}
    rows = []
    for r in results:
        res = r.get("result") or {}
        name = Path(r["file"]).name
        t = per_file.setdefault(name, dict(rows=0, both=0, agree=0, differs=0, unknown=0, no_ncu=0, idle=0,
                                           failed=[]))
        if not r.get("result"):
            t["failed"].append(f"{r['job']}: {r.get('error') or r.get('skipped')}")
        for ln in res.get("lines", []):
            v = _verdict(ln)
            t["rows"] += 1
            t["both"] += v in ("agree", "differs")
            t["agree"] += v == "agree"
            t["differs"] += v == "differs"
            t["unknown"] += v == "lint unknown"
            t["no_ncu"] += v == "ncu: no instruction"
            t["idle"] += v == "not executed (both)"
            what = v
            if v == "lint unknown":
                what += ": " + str((ln.get("unknown") or ["?"])[0])[:80]
            elif ln.get("launch_unknown"):
                what += f" (launch average: {ln['launch_unknown'][:70]})"
            if v == "agree" and not ln.get("ideal_agree", True):
                what += "; ideal differs"
            if "as compiled" in (ln.get("text") or ""):
                what += " (as compiled)"
            one = ln.get("lint_one_warp")
            rows.append(f"| {r['job']} | {ln['kernel']} | {ln['line']} | {ln['space']} {ln['access']} | "
                        f"{_pair(ln.get('lint'))} | {ln.get('basis', 'one warp')} | {_pair(one) if one else ''} | "
                        f"{_pair(ln.get('ncu')) if ln.get('ncu') and ln['ncu'][0] is not None else '-'} | {what} |")
    device = next((r["result"]["device"] for r in results if r.get("result")), None)
    table = ["| file | rows | both numbers | agree | differ | lint unknown | ncu: no instruction | "
             "0 on both | jobs not run |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    total = dict(rows=0, both=0, agree=0, differs=0, unknown=0, no_ncu=0, idle=0)
    for name, t in per_file.items():
        for k in total:
            total[k] += t[k]
        table.append(f"| {name} | {t['rows']} | {t['both']} | {t['agree']} | {t['differs']} | {t['unknown']} | "
                     f"{t['no_ncu']} | {t['idle']} | {'; '.join(t['failed'])} |")
    table.append("| all | " + " | ".join(str(total[k]) for k in total) + " | |")
    first = f"device: {device['name'] if device else '?'}; " + ", ".join(f"{k} {v}" for k, v in total.items())
    return "\n".join([first, "", *table, "", *head, *rows]) + "\n"


def _options(args: list[str]):
    from gpumemlab.lint.analysis import Options

    o = Options(launch_average=True)
    for flag, value in zip(args[::2], args[1::2]):
        if flag == "--kernel":
            o.kernel = value
        elif flag == "--block":
            o.block = tuple(int(x) for x in value.split(","))
        elif flag == "--let":
            k, v = value.split("=", 1)
            o.lets[k] = int(v, 0)
        elif flag == "--template":
            k, v = value.split("=", 1)
            o.templates[k] = v
    return o


def rejoin(path: Path) -> list[dict]:
    """ncu's measured lines of an earlier run next to what lint says now (this checkout, compiled here for
    sm_90 for the as-compiled comparison): a lint fix is judged on the measurement without a GPU."""
    from gpumemlab.lint import lint_file
    from gpumemlab.ncu import source

    results = json.loads(path.read_text())
    for r in results:
        res = r.get("result")
        if not res:
            continue
        here = r["file"] if Path(r["file"]).exists() else str(ROOT / re.search(r"(tests/lint/.*|src/gpumemlab/.*)",
                                                                              r["file"]).group(1))
        reports = {x.name: x for x in lint_file(here, _options(r["args"]), resources=True)}
        measured = {(ln["kernel"], ln["line"], ln["space"], ln["access"]): ln for ln in res["lines"]}
        lines = []
        for name, rep in reports.items():
            predicted = source.predicted_lines(rep)
            keys = set(predicted) | {k[1:] for k in measured if k[0] == name}
            for key in sorted(keys):
                line, space, op = key
                m = measured.get((name, *key), {})
                p = predicted.get(key)
                pk = (("sectors_per_request", "ideal_sectors_per_request") if space == "global" else
                      ("wavefronts_per_request", "ideal_wavefronts_per_request"))
                unit = "sectors" if space == "global" else "wavefronts"
                row = dict(kernel=name, line=line, space=space, access=op, text=" | ".join(p["texts"]) if p else None,
                           ncu=m.get("ncu"), ncu_counts=m.get("ncu_counts"))
                lines.append(source.judge(row, p, pk, (m.get("ncu_counts") or {}).get(unit)))
        res["lines"] = lines
    return results


def _pair(v) -> str:
    return "-" if v is None else f"{v[0]:g} ({v[1]:g})" if v[1] is not None else f"{v[0]:g}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("outdir")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--budget", type=float, default=240.0)
    ap.add_argument("--jobs", type=int, default=1, help="lint processes at once (ncu still profiles one at a time)")
    ap.add_argument("--rejoin", metavar="VALIDATE_JSON", help="no GPU: an earlier run's ncu lines against lint now")
    ap.add_argument("--only", action="append", default=[], metavar="PREFIX",
                    help="only the jobs whose label starts so (kernels-, idioms-, published-; repeatable)")
    a = ap.parse_args()
    out = Path(a.outdir)
    out.mkdir(parents=True, exist_ok=True)
    if a.rejoin:
        results = rejoin(Path(a.rejoin))
        (out / "validate.json").write_text(json.dumps(results, indent=1))
        (out / "validate.md").write_text(summary(results))
        print(summary(results).splitlines()[0])
        return 0
    return run(out, a.dry_run, a.budget, a.jobs, tuple(a.only))


if __name__ == "__main__":
    sys.exit(main())
