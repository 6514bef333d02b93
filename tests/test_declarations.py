"""Experiment declarations without a GPU: claims and their sources, findings on a committed run's records, the
runner's checks on host arrays, and the layer rules of the import graph."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from committed_runs import H200, H200_X2, committed_run
from gpumemlab.errors import VerificationError
from gpumemlab.experiments import registry
from gpumemlab.experiments._declare import SEEDS, Case, Check

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "gpumemlab"
SEED_FILES = {"000": "000_cbba422fb54d36fa.txt", "001": "001_12d176daf52dfa17.txt", "002": "002_ee633bd1f416c3eb.txt",
              "003": "003_72d1c57199d51822.txt", "004": "004_97a79e79f8c1c7cd.txt"}


@pytest.fixture(scope="module")
def committed():
    return committed_run(H200)  # the newest committed single-GPU run


def test_every_claim_has_a_source_and_seed_claims_cite_a_seed_file():
    reg = registry()
    assert set(SEED_FILES) == set(SEEDS)
    for name, exp in reg.items():
        assert exp.claims, name
        assert any(c.from_seed for c in exp.claims), f"{name}: no claim from the seeds"
        for c in exp.claims:
            assert c.text.strip() and c.source.cite.strip(), name
            if c.from_seed:
                assert c.source.seed in SEED_FILES and c.source.cite.startswith(f"seed {c.source.seed}, "), name
            else:
                assert not c.source.cite.startswith("seed "), f"{name}: an outside work cited as a seed"


def test_outside_results_are_not_seed_claims():
    """Figures the seeds do not contain are attributed to their real authors."""
    reg = registry()
    seed_text = {n: " ".join(c.text for c in e.claims if c.from_seed) for n, e in reg.items()}
    outside = {n: " ".join(c.source.cite for c in e.claims if not c.from_seed) for n, e in reg.items()}
    assert "30x" not in seed_text["reduce"] and "5x" not in seed_text["reduce"]
    assert "Harris" in outside["reduce"] and "How_to_optimize_in_GPU" in outside["reduce"]
    assert "copy bandwidth" not in seed_text["transpose"] and "Ruetsch" in outside["transpose"]
    assert "32x33" not in seed_text["matmul_shared_ab"]
    assert all("G80" not in t for t in seed_text.values())  # the seed slides name no GPU


# Declared without a GPU to run them on; their findings are tested on stand-in records (test_findings_cite.py)
# until the committed run has them, and an entry here then fails the test below: the list only shrinks.
AWAITING_A_GPU_RUN = {"p2p": "needs two GPUs: its records are in the two-GPU run (MULTI_GPU, tested below)"}
MULTI_GPU = H200_X2  # p2p and stream_map on two H200s


def test_every_experiment_finds_on_the_committed_run(committed):
    """Each declaration's findings run on the records of a real run and produce sentences, none missing."""
    reg = registry()
    ran = {r.experiment for r in committed.results}
    # declared after the committed run: no records to find on yet (the README names them as not in this run), so a
    # new experiment needs no GPU run for CI; its own test holds its findings on stand-in records until then
    newer = set(reg) - ran
    assert not set(AWAITING_A_GPU_RUN) & ran, "measured now: remove them from AWAITING_A_GPU_RUN"
    assert set(AWAITING_A_GPU_RUN) <= set(reg)
    assert len(ran & set(reg)) >= 30  # the committed run is a real one, not an empty file
    for name, exp in reg.items():
        if name in newer:
            continue
        recs = [r for r in committed.results if r.experiment == name]
        found = exp.describe(recs)["findings"]
        assert found and not any("(no finding" in f for f in found), (name, found)


def test_the_two_gpu_run_finds_p2p_and_the_two_gpu_stream_map():
    run = committed_run(MULTI_GPU)
    assert run.meta["device"]["name"] == run.device["name"] and run.device["device_count"] == 2
    for name in ("p2p", "stream_map"):
        recs = [r for r in run.results if r.experiment == name]
        found = registry()[name].describe(recs)["findings"]
        assert found and not any("(no finding" in f for f in found), (name, found)
    assert any("two GPUs" in f for f in registry()["stream_map"].describe(
        [r for r in run.results if r.experiment == "stream_map"])["findings"])


def test_committed_records_carry_what_findings_and_report_read(committed):
    """The record fields the ported declarations fill (kinds, ceilings, extra keys) as the committed run has them."""
    by = {}
    for r in committed.results:
        by.setdefault(r.experiment, []).append(r)
    assert {r.ceiling for r in by["reduce"]} == {"read_gbps"}
    assert all("rel_error_vs_float64" in r.extra and "bound_rel_abs_sum" in r.extra for r in by["reduce"])
    assert all("pct_of_copy_in_run" in r.extra for r in by["transpose"] if "(ceiling)" not in r.variant)
    assert {r.variant for r in by["transpose"] if r.kind == "baseline"} >= {"cudaMemcpy D2D (ceiling)",
                                                                           "copy_vec float4 x4 (ceiling)"}
    assert all("slowdown_vs_uniform" in r.extra for r in by["divergence"])
    assert all("pct_of_cublas" in r.extra for r in by["matmul"] if r.kind == "kernel")


def test_check_compares_host_arrays_exactly_and_poisons_the_output():
    from gpumemlab.suite.runner import verifier

    out = np.arange(4, dtype=np.float32)
    verify = verifier(Case("demo", lambda: None, Check(out, np.arange(4, dtype=np.float32))))
    with pytest.raises(VerificationError, match="non-finite outputs"):  # the case wrote nothing: NaN stays
        verify()

    def write():
        out[:] = [0, 1, 2, 4]
    with pytest.raises(VerificationError, match="1 of 4 elements wrong; first at \\(3,\\)"):
        verifier(Case("demo", write, Check(out, np.arange(4, dtype=np.float32))))()


def test_check_with_per_element_tolerance_and_all_finite():
    from gpumemlab.suite.runner import verifier

    out = np.zeros(3)

    def write():
        out[:] = [1.0, 2.05, np.nan]
    loose = Check(out, np.array([1.0, 2.0]), atol=np.array([0.0, 0.1]), view=lambda o: o[:2])
    verifier(Case("demo", write, loose))()  # 2.05 within 0.1; the NaN is outside the view
    strict = Check(out, np.array([1.0, 2.0]), atol=np.array([0.0, 0.01]), view=lambda o: o[:2])
    with pytest.raises(VerificationError, match="1 of 2 elements wrong"):
        verifier(Case("demo", write, strict))()
    with pytest.raises(VerificationError, match="demo: non-finite outputs"):
        verifier(Case("demo", write, Check(out, np.array([1.0, 2.05]), atol=0.1, view=lambda o: o[:2],
                                           all_finite=True)))()


def test_speedups_take_a_per_group_reference():
    from gpumemlab.bench.records import Record
    from gpumemlab.suite.runner import speedups

    def rec(variant, group, t):
        return Record(experiment="e", variant=variant, params=dict(function=group), bytes=None, flops=None,
                      time_s=dict(median=t), gbps=None, gflops=None, pct_of_ceiling=None, ceiling=None, verified=True)
    recs = [rec("sinf", "sin", 4.0), rec("__sinf", "sin", 1.0), rec("expf", "exp", 3.0), rec("__expf", "exp", 2.0)]
    speedups(recs, naive=lambda r: not r.variant.startswith("__"), keys=("function",))
    assert [r.speedup_vs_naive for r in recs] == [1.0, 4.0, 1.0, 1.5]


# ------------------------------------------------------------------ the layer picture

# DESIGN.md's layers, top to bottom; at the bottom as the imports go: bench/ measures over gpu/, gpu/ compiles
# and launches the kernels/ tables (KernelSpec), and everything may use the pure model/
LAYERS = ["cli", "report", "suite", "experiments", "ops", "tune", "ncu", "bench", "gpu", "kernels", "model"]
SAME_FLOOR = {"tune": 5, "ncu": 5}  # tune/ and ncu/ sit beside each other


def _rank(pkg: str) -> int:
    return SAME_FLOOR.get(pkg, LAYERS.index(pkg))


def _imports(path: Path) -> set[str]:
    """gpumemlab subpackages (and experiment modules) a module imports, relative imports resolved."""
    rel = path.relative_to(PKG).with_suffix("").parts
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[:len(rel) - node.level])  # the package `.` names (`..`: its parent)
                parts = base + (node.module.split(".") if node.module else [])
                names = [parts + [a.name] for a in node.names]
            elif node.module and node.module.startswith("gpumemlab"):
                names = [node.module.split(".")[1:] + [a.name] for a in node.names]
            else:
                continue
            out.update(".".join(n[:2]) for n in names if n)
    return out


def _modules(sub: str):
    return sorted(p for p in (PKG / sub).rglob("*.py"))




def test_no_layer_imports_one_above_it():
    upward = set()
    for sub in LAYERS:
        for path in _modules(sub):
            for target in _imports(path):
                top = target.split(".")[0]
                if top in LAYERS and top != sub and _rank(top) < _rank(sub):
                    upward.add((str(path.relative_to(PKG)), top))
    assert upward == set()


def test_bench_imports_only_gpu_and_itself():
    for path in _modules("bench"):
        tops = {t.split(".")[0] for t in _imports(path)}
        assert tops <= {"bench", "gpu", "errors"}, f"{path.name}: {tops}"


def test_no_experiment_imports_a_sibling():
    public = {p.stem for p in (PKG / "experiments").glob("*.py") if not p.stem.startswith("_")}
    for path in _modules("experiments"):
        siblings = {t.split(".")[1] for t in _imports(path) if t.startswith("experiments.")} & public
        assert not siblings, f"{path.name} imports {siblings}"
