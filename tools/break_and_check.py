#!/usr/bin/env python3
"""Break the code the way the old weak tests could not notice, run the tests that replaced them, see them fail.

Each sabotage is an exact text substitution (snippets, never line numbers) in a file under src/ or tests/, made
in a throw-away copy of the repository (src, tests, tools, pyproject.toml and the committed runs' results.json,
which tests read; not .git, not the rest of docs/). The named pytest nodes run there with PYTHONPATH=src and
GPUMEMLAB_REQUIRE_GPU=1: first all of them on an unbroken copy (the control, which must pass), then each
sabotage's nodes on its own broken copy (which must fail: test failures, not collection or setup errors).
The runtime-import check runs tools/gpu_check.sh's test stage with ``import cuda.core`` made to raise: the
device test script must exit non-zero, and for that reason.

    python tools/break_and_check.py --cpu-only --out break-check.md     # a machine without a GPU
    python tools/break_and_check.py --out break-check.md                # on the GPU: everything
    python tools/break_and_check.py --only sum-skips-last-block         # one or more by name
    python tools/break_and_check.py --check                             # the table is current (CI, no tests run)

Prints a markdown table (sabotage, test, control, broken, verdict) and the edits; exit status 0 only when every
sabotage that ran fails as it must. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("src", "tests", "tools", "pyproject.toml")
RESULTS_JSON = "docs/results/*/results.json.xz"  # committed runs that test_declarations / test_experiments read
CAUGHT = "fails as it must"


@dataclass(frozen=True)
class Edit:
    path: str  # relative to the repository root
    old: str   # must occur exactly once in the file
    new: str


@dataclass(frozen=True)
class Sabotage:
    name: str
    weak: str                 # the old weak test this failure mode slipped past
    what: str                 # the breakage, in one line
    edits: tuple[Edit, ...]
    tests: tuple[str, ...]    # pytest node ids that must fail on it

    def nodes(self, cpu_only: bool) -> tuple[str, ...]:
        return tuple(t for t in self.tests if not (cpu_only and is_gpu(t)))


def is_gpu(node: str) -> bool:
    return node.startswith("tests/gpu/")


CONFTEST = "tests/conftest.py"
PROBE = "tests/test_conftest_gpu_probe.py"
RT_GPU = "tests/gpu/test_reduce_transpose.py"
NAN_INF = "tests/gpu/test_nan_inf.py"

SABOTAGES = (
    Sabotage(
        "probe-swallows-errors", "tests/conftest.py GPU probe",
        "the GPU probe takes any exception (ImportError of the runtime too) for 'no CUDA GPU' and skips",
        (Edit(CONFTEST, "    except NoDeviceError as exc:\n", "    except Exception as exc:\n"),),
        (f"{PROBE}::test_any_other_probe_error_errors_the_gpu_tests[ImportError]",
         f"{PROBE}::test_any_other_probe_error_errors_the_gpu_tests[RuntimeError]")),
    Sabotage(
        "require-gpu-ignored", "tests/conftest.py GPU probe",
        "GPUMEMLAB_REQUIRE_GPU=1 no longer turns 'no CUDA GPU' into a failure: GPU tests skip quietly",
        (Edit(CONFTEST, 'if os.environ.get(REQUIRE_GPU, "") not in ("", "0"):',
              'if os.environ.get(REQUIRE_GPU, "") == "true":'),),
        (f"{PROBE}::test_require_gpu_turns_the_skip_into_a_failure",)),
    Sabotage(
        "check-close-ignores-nan", "check_close known answers",
        "check_close counts only Inf as non-finite and flags |got - want| > tol, which NaN never is",
        (Edit("src/gpumemlab/bench/verify.py", "lambda lo, hi: ~np.isfinite(flat_got[lo:hi])",
              "lambda lo, hi: np.isinf(flat_got[lo:hi])"),
         Edit("src/gpumemlab/bench/verify.py", "return ~(np.abs(g.astype(np.float64) - w64) <= ",
              "return (np.abs(g.astype(np.float64) - w64) > ")),
        ("tests/test_harness.py::test_check_close_never_passes_a_non_finite_output[nan]",
         "tests/test_harness.py::test_check_close_fails_when_the_expected_value_is_nan")),
    Sabotage(
        "check-equal-device-nan-equals-nan", "check_close / check_equal_device known answers",
        "check_equal_device treats NaN == NaN (as assert_array_equal does): an unwritten output matches a NaN one",
        (Edit("src/gpumemlab/bench/verify.py", "    bad = actual != expected",
              "    bad = (actual != expected) & ~(cupy.isnan(actual) & cupy.isnan(expected))"),),
        ("tests/gpu/test_harness_gpu.py::test_check_equal_device_never_passes_nan_even_against_nan[nan]",)),
    Sabotage(
        "timer-divides-by-batch", "test_timer_gives_at_least_ten_samples (a sample count, no known duration)",
        "the timer divides each sample by the batch size instead of the calls it timed",
        (Edit("src/gpumemlab/bench/timer.py", "return [runtime.elapsed_s(a, b) / inner for a, b in events]",
              "return [runtime.elapsed_s(a, b) / count for a, b in events]"),),
        ("tests/test_harness.py::test_time_gpu_batches_short_kernels_and_reports_per_call_time",
         "tests/gpu/test_harness_gpu.py::test_timer_measures_a_kernel_of_known_duration[0.001-False]")),
    Sabotage(
        "ceiling-not-raised", "test_ceilings_are_plausible",
        "a record above its ceiling no longer raises it: percentages of the ceiling go past 100",
        (Edit("src/gpumemlab/suite/ceilings.py", 'value=getattr(best, field),', 'value=own,'),),
        ("tests/test_ceilings_cpu.py::test_a_record_above_its_ceiling_raises_it_and_is_named",)),
    Sabotage(
        "findings-raise", "experiment smoke tests (r.verified only)",
        "squares_sum's findings look up a variant that does not exist: KeyError, reported as '(no finding'",
        (Edit("src/gpumemlab/experiments/squares_sum.py", "t['chunked'] / t['interleaved']",
              "t['chunked'] / t['interleave']"),),
        ("tests/test_declarations.py::test_every_experiment_finds_on_the_committed_run",
         "tests/gpu/test_experiments.py::test_experiment_quick[squares_sum]")),
    Sabotage(
        "sum-bound-too-loose", "float32 sum tests against the library's own error_bound",
        "tree_depth counts the partials one after another, not as their tree: a bound grid-many roundings loose",
        (Edit("src/gpumemlab/ops/full_sum.py", "final = math.ceil(p.grid / p.final_block)", "final = p.grid"),),
        ("tests/test_reduce_transpose_cpu.py::test_the_documented_float32_accuracy_at_2_to_the_28[2]",
         f"{RT_GPU}::test_sum_error_is_well_inside_the_bound_on_a_large_input")),  # 2^24: grid 264 on H100/H200
    Sabotage(
        "copy-out-skips-copy", "test_library_copy (float64 path only)",
        "gpumemlab.copy into a caller's out copies nothing: out keeps its poison",
        (Edit("src/gpumemlab/ops/transpose.py", "    if run is not None:\n", "    if run is not None and out is None:\n"),),
        ("tests/gpu/test_foundation.py::test_library_copy[float32-shape1]",)),
    Sabotage(
        "accumulators-write-nothing", "test_register_limited_kernels_compute_the_same_values",
        "the register-pressure kernel (every --maxrregcount instantiation) stores nothing: NaN outputs all agree",
        (Edit("src/gpumemlab/kernels/register_pressure.cu",
              "out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;", "(void)s;"),),
        (f"{RT_GPU}::test_register_limited_kernels_compute_the_same_values",)),
    Sabotage(
        "sum-skips-last-block", "float32 sum tests against the library's own error_bound",
        "reduce7's last block adds every partial but the last one",
        (Edit("src/gpumemlab/kernels/reduce.cu", "for (unsigned i = threadIdx.x; i < gridDim.x; i += BLOCK)",
              "for (unsigned i = threadIdx.x; i + 1 < gridDim.x; i += BLOCK)"),),
        (f"{RT_GPU}::test_sum_is_exact_when_every_partial_sum_is_representable[100003-3-float32]",)),
    Sabotage(
        "sum-drops-nan", "no NaN/Inf inputs to sum",
        "the single-block sum adds only the inputs equal to themselves: NaN is left out (a nansum)",
        (Edit("src/gpumemlab/kernels/reduce.cu", "acc += (Acc)in[i];",
              "{ const Acc v = (Acc)in[i]; if (v == v) acc += v; }"),),
        (f"{NAN_INF}::test_sum_propagates_nan_and_inf_like_numpy[first-1000-nan-float32]",)),
    Sabotage(
        "matmul-skips-zero", "no NaN/Inf inputs to matmul",
        "the register-blocked matmul skips products with a zero B element: Inf * 0 no longer gives NaN",
        (Edit("src/gpumemlab/kernels/sgemm.cu", "acc[i][j] = fmaf(ra[buf][i], rb[buf][j], acc[i][j]);",
              "if (rb[buf][j] != 0.0f) acc[i][j] = fmaf(ra[buf][i], rb[buf][j], acc[i][j]);"),),
        (f"{NAN_INF}::test_matmul_every_variant_propagates_nan_and_inf[auto-inf_times_zero]",)),
    Sabotage(
        "transpose-quiets-nan", "no NaN/Inf inputs to transpose (random non-zero data only)",
        "transpose_tiled adds +0 on the way in: -0.0 becomes +0.0 and a signalling NaN quiet; other values are exact",
        (Edit("src/gpumemlab/kernels/transpose.cu",
              "y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(long long)(y + j) * cols + x];",
              "y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(long long)(y + j) * cols + x] + T(0);"),),
        (f"{NAN_INF}::test_transpose_moves_nan_and_inf_bit_for_bit[shape1-float32]",)),
    Sabotage(
        "transpose-tile-untransposed", "none: a wrong index, as the transpose kernel tests always caught (odd shapes)",
        "transpose_tiled writes its shared tile back by rows, not columns (the wrong index of the tile read)",
        (Edit("src/gpumemlab/kernels/transpose.cu", "= tile[threadIdx.x][threadIdx.y + j];",
              "= tile[threadIdx.y + j][threadIdx.x];"),),
        (f"{RT_GPU}::test_transpose_kernels[transpose_tiled-32, 8, 1-float-33x65]",
         f"{NAN_INF}::test_transpose_moves_nan_and_inf_bit_for_bit[shape1-float32]")),
)

# (a) of the issue: the device test script on a GPU machine whose runtime import is broken
RUNTIME_IMPORT = "runtime-import-broken"
GPU_CHECK_K = "test_device_info_is_read_from_the_device or test_library_copy_rejects_host_and_mismatched_out"
SENTINEL = "cuda.core made unimportable by break_and_check"


class SabotageError(Exception):
    """A sabotage's snippet is not in its file exactly once: the table no longer matches the code."""


# ------------------------------------------------------------------ copies and edits

def make_copy(dest: Path, root: Path = ROOT) -> Path:
    skip = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.pyc", ".hypothesis")
    dest.mkdir(parents=True)
    for name in COPIED:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=skip)
        else:
            shutil.copy2(src, dest / name)
    for res in root.glob(RESULTS_JSON):
        (dest / res.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(res, dest / res.relative_to(root))
    return dest


def check_snippets(root: Path, edits) -> None:
    """SabotageError unless every edit's file exists under ``root`` and holds its snippet exactly once."""
    for e in edits:
        path = root / e.path
        if not path.is_file():
            raise SabotageError(f"{e.path}: no such file")
        count = path.read_text().count(e.old)
        if count != 1:
            raise SabotageError(f"{e.path}: snippet found {count} times (want exactly 1): {e.old!r}")


def apply(root: Path, edits) -> None:
    """Make every substitution in the copy ``root`` (checked first, so a stale table fails loudly)."""
    check_snippets(root, edits)
    for e in edits:
        path = root / e.path
        path.write_text(path.read_text().replace(e.old, e.new))


# ------------------------------------------------------------------ running pytest

@dataclass
class Run:
    rc: int | None                                        # None: timed out
    outcomes: dict[str, tuple[str, str]] = field(default_factory=dict)  # node -> (outcome, message)
    tail: str = ""


def env_for(root: Path, cache: Path) -> dict:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(root / "src"),
               GPUMEMLAB_REQUIRE_GPU="1", GPUMEMLAB_CACHE=os.environ.get("GPUMEMLAB_CACHE", str(cache)),
               CUPY_TF32="0", PYTHONDONTWRITEBYTECODE="1")
    return env


def parse_junit(path: Path) -> dict[str, tuple[str, str]]:
    """node id -> (passed | failed | error | skipped, first line of the message)."""
    out = {}
    for case in ET.parse(path).iter("testcase"):
        node = case.get("classname", "").replace(".", "/") + ".py::" + case.get("name", "")
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            el = case.find(tag)
            if el is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = (el.get("message") or el.text or "").strip().splitlines()[:1]
                message = message[0] if message else ""
                break
        out[node] = (outcome, message)
    return out


def run_pytest(root: Path, nodes, timeout: float, cache: Path) -> Run:
    junit = root / "junit.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *nodes]
    try:
        p = subprocess.run(cmd, cwd=root, env=env_for(root, cache), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Run(None)
    output = (p.stdout + p.stderr).strip().splitlines()
    return Run(p.returncode, parse_junit(junit) if junit.exists() else {}, output[-1] if output else "")


# ------------------------------------------------------------------ verdicts

def summarize(run: Run | None, nodes) -> str:
    if run is None:
        return "not run"
    if run.rc is None:
        return "timed out"
    got = [run.outcomes.get(n, ("not run", ""))[0] for n in nodes]
    counts = {o: got.count(o) for o in dict.fromkeys(got)}
    return ", ".join(f"{c} {o}" for o, c in counts.items())


def verdict(control: Run, broken: Run | None, nodes) -> str:
    if control.rc is None or any(control.outcomes.get(n, ("",))[0] != "passed" for n in nodes):
        return "NO EVIDENCE: control did not pass"
    if broken is None:
        return "NO EVIDENCE: not run"
    if broken.rc is None:
        return "NO EVIDENCE: timed out"
    if broken.rc not in (0, 1):
        return f"NO EVIDENCE: pytest exit {broken.rc} ({broken.tail})"
    states = [broken.outcomes.get(n, ("not run", ""))[0] for n in nodes]
    if all(s == "failed" for s in states):
        if any("CompileError" in broken.outcomes[n][1] for n in nodes):
            return "NO EVIDENCE: the sabotage does not compile"
        return CAUGHT
    if "passed" in states:
        return f"NOT CAUGHT: {states.count('passed')} of {len(nodes)} passed"
    return f"NO EVIDENCE: {', '.join(sorted(set(states) - {'failed'}))} (not a test failure)"


def first_message(run: Run | None, nodes, outcomes) -> str:
    """': message' of the first node whose outcome is in ``outcomes`` (the evidence, or why a control failed)."""
    for n in nodes:
        outcome, message = run.outcomes.get(n, ("", "")) if run and run.rc is not None else ("", "")
        if outcome in outcomes and message:
            return f": {message[:140]}"
    return ""


# ------------------------------------------------------------------ the runtime-import check

def gpu_check(copy: Path, work: Path, cache: Path, timeout: float, broken: bool) -> tuple[int | None, str]:
    """Run tools/gpu_check.sh tests in ``copy``; with ``broken`` a cuda/core package that raises comes first on
    PYTHONPATH (cuda is a namespace package: cuda.bindings still imports). Returns (exit status, output)."""
    shim = work / "broken-runtime"
    if broken:
        (shim / "cuda" / "core").mkdir(parents=True, exist_ok=True)
        (shim / "cuda" / "core" / "__init__.py").write_text(f"raise ImportError({SENTINEL!r})\n")
    env = env_for(copy, cache)
    env.update(PYTHONPATH=str(shim) if broken else "", PY=sys.executable, TESTS_K=GPU_CHECK_K,  # the script adds src
               OUT=str(work / ("gpu-check-broken" if broken else "gpu-check-control")))
    if broken:  # the shim must really break the import, or the check proves nothing
        probe = subprocess.run([sys.executable, "-c", "import cuda.core"], env=env, capture_output=True, text=True)
        if SENTINEL not in probe.stderr:
            return None, "the shim did not break `import cuda.core`"
    try:
        p = subprocess.run(["bash", "tools/gpu_check.sh", "tests"], cwd=copy, env=env, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    return p.returncode, p.stdout + p.stderr


def runtime_import_row(work: Path, cache: Path, timeout: float) -> list[str]:
    copy = make_copy(work / RUNTIME_IMPORT)
    control_rc, _ = gpu_check(copy, work, cache, timeout, broken=False)
    broken_rc, out = gpu_check(copy, work, cache, timeout, broken=True) if control_rc == 0 else (None, "not run")
    says = [ln.strip() for ln in out.splitlines() if SENTINEL in ln]
    if control_rc != 0:
        v = "NO EVIDENCE: control did not pass"
    elif broken_rc is None:
        v = f"NO EVIDENCE: {out}"
    elif broken_rc == 0:
        v = "NOT CAUGHT: exit 0"
    else:
        v = CAUGHT if says else "NO EVIDENCE: failed, but not for the import"
    broken_cell = "not run" if broken_rc is None else f"exit {broken_rc}" + (f": {says[0][:140]}" if says else "")
    return [f"**{RUNTIME_IMPORT}**: `import cuda.core` raises ImportError (weak: tests/conftest.py GPU probe)",
            f"`tools/gpu_check.sh tests`, TESTS_K=`{GPU_CHECK_K}`",
            "not run" if control_rc is None else f"exit {control_rc}", broken_cell, v]


# ------------------------------------------------------------------ the table

def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def check(sabotages, cpu_only: bool, timeout: float, work: Path, cache: Path, log=print) -> list[list[str]]:
    chosen = [(s, s.nodes(cpu_only)) for s in sabotages]
    chosen = [(s, nodes) for s, nodes in chosen if nodes]
    for s, _ in chosen:  # every snippet before any test runs: a stale table fails at once
        check_snippets(ROOT, s.edits)
    all_nodes = list(dict.fromkeys(n for _, nodes in chosen for n in nodes))
    log(f"control: {len(all_nodes)} tests on an unbroken copy")
    control = run_pytest(make_copy(work / "control"), all_nodes, timeout * 2, cache) if all_nodes else Run(0)
    rows = []
    for s, nodes in chosen:
        ok = control.rc is not None and all(control.outcomes.get(n, ("",))[0] == "passed" for n in nodes)
        broken = None
        if ok:
            log(f"{s.name}: {len(nodes)} tests on the broken copy")
            copy = make_copy(work / s.name)
            apply(copy, s.edits)
            broken = run_pytest(copy, nodes, timeout, cache)
        rows.append([f"**{s.name}**: {s.what} (weak: {s.weak})", "<br>".join(f"`{n}`" for n in nodes),
                     summarize(control, nodes) + first_message(control, nodes, ("failed", "error", "skipped")),
                     summarize(broken, nodes) + first_message(broken, nodes, ("failed",)),
                     verdict(control, broken, nodes)])
    return rows


def render(rows, sabotages) -> str:
    head = ["sabotage", "test", "control (unbroken)", "broken", "verdict"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    lines += ["", "Edits (each made in a fresh copy of the repository; the working tree is never touched):", ""]
    for s in sabotages:
        for e in s.edits:
            lines.append(f"- {s.name}: `{e.path}`: `{cell(e.old.strip())}` -> `{cell(e.new.strip())}`")
    if any(r[0].startswith(f"**{RUNTIME_IMPORT}**") for r in rows):
        lines.append(f"- {RUNTIME_IMPORT}: a `cuda/core/__init__.py` raising `ImportError({SENTINEL!r})` first on "
                     "PYTHONPATH (after src)")
    return "\n".join(lines) + "\n"


def table_is_current(sabotages) -> str:
    """SabotageError unless every snippet occurs exactly once and every test node collects as exactly one test."""
    for s in sabotages:
        check_snippets(ROOT, s.edits)
    nodes = list(dict.fromkeys(n for s in sabotages for n in s.tests))
    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *nodes],
                       cwd=ROOT, capture_output=True, text=True)
    collected = [ln for ln in p.stdout.splitlines() if "::" in ln]
    if p.returncode != 0 or collected != nodes:
        missing = [n for n in nodes if n not in collected] or [f"(pytest exit {p.returncode})"]
        raise SabotageError(f"test nodes that do not collect as one test each: {', '.join(missing)}")
    return f"{len(sabotages)} sabotages, {len(nodes)} test nodes: every snippet found once, every node collects"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that the table is current (no test runs)")
    ap.add_argument("--cpu-only", action="store_true", help="only the tests that need no GPU (no runtime-import check)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these sabotages (and/or runtime-import-broken)")
    ap.add_argument("--out", type=Path, help="also write the markdown table here")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per sabotage's test run (default 180)")
    ap.add_argument("--keep", action="store_true", help="keep the copies (their path is printed)")
    args = ap.parse_args(argv)
    names = [s.name for s in SABOTAGES] + [RUNTIME_IMPORT]
    unknown = sorted(set(args.only or ()) - set(names))
    if unknown:
        ap.error(f"unknown sabotage {', '.join(unknown)}; known: {', '.join(names)}")
    chosen = [s for s in SABOTAGES if not args.only or s.name in args.only]
    if args.check:
        try:
            print(table_is_current(chosen))
        except SabotageError as exc:
            print(f"break_and_check: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.cpu_only and not any(s.nodes(True) for s in chosen):
        ap.error("nothing to run without a GPU among the sabotages chosen")
    work = Path(tempfile.mkdtemp(prefix="break_and_check-"))
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731 - progress on stderr, table on stdout
    try:
        rows = check(chosen, args.cpu_only, args.timeout, work, work / "cache", log)
        if not args.cpu_only and (not args.only or RUNTIME_IMPORT in args.only):
            log(f"{RUNTIME_IMPORT}: tools/gpu_check.sh tests, unbroken then broken")
            rows.append(runtime_import_row(work, work / "cache", args.timeout))
    except SabotageError as exc:
        print(f"break_and_check: {exc}", file=sys.stderr)
        return 2
    finally:
        if args.keep:
            log(f"copies kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    table = render(rows, [s for s in chosen if s.nodes(args.cpu_only)])
    print(table, end="")
    if args.out:
        args.out.write_text(table)
    return 0 if rows and all(r[-1] == CAUGHT for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
