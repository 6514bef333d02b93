"""`gpumemlab kernels --reports FILE`: .ci/run's all-arch resource check takes a kernel group's ptxas report from
the committed .ci/kernel-reports/<arch>.json only while the group's key (a hash of its source with headers, names,
arch, options, defines and NVRTC version) is unchanged; anything changed is compiled and checked again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import gpumemlab.kernels as kernels
from gpumemlab.gpu import compile as C
from gpumemlab.kernels import copy as K
from gpumemlab.kernels import reduce as R

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (the cuda extra) compiles the kernels")

SPECS = [K.OFFSET_COPY, K.STRIDE_COPY]  # one part: copy.cu's two smallest kernels
COMMITTED = Path(__file__).resolve().parents[1] / ".ci" / "kernel-reports"


@pytest.fixture
def catalog(monkeypatch, tmp_path):
    """The catalog cut to SPECS; returns (run, compiled): ``run(*argv)`` runs `gpumemlab kernels --arch sm_90 --json
    --reports FILE` and ``compiled`` lists the kernel groups NVRTC was asked for."""
    monkeypatch.setattr(kernels, "all_specs", lambda: SPECS)
    compiled = []
    real = C.compile_group

    def counted(source, names, *args, **kwargs):
        compiled.append((source, tuple(names)))
        return real(source, names, *args, **kwargs)

    monkeypatch.setattr(C, "compile_group", counted)
    return tmp_path / "sm_90.json", compiled


def _kernels(run_cli, reports: Path):
    code, out, err = run_cli("kernels", "--arch", "sm_90", "--json", "--reports", str(reports))
    return code, (json.loads(out) if code == 0 else None), err


def test_a_group_with_an_unchanged_key_is_not_compiled_again(run_cli, catalog):
    reports, compiled = catalog
    code, first, err = _kernels(run_cli, reports)
    assert code == 0, err
    assert compiled == [("copy.cu", ("offset_copy", "stride_copy"))]
    stored = json.loads(reports.read_text())
    assert len(stored) == 1 and sorted(next(iter(stored.values()))) == ["offset_copy", "stride_copy"]
    code, again, err = _kernels(run_cli, reports)
    assert code == 0, err
    assert len(compiled) == 1 and again == first  # the same rows, none compiled
    assert json.loads(reports.read_text()) == stored


@pytest.fixture
def sources(monkeypatch, tmp_path):
    """A copy of the package's kernel sources that the test may change (source_text reads them afresh)."""
    folder = tmp_path / "kernels"
    shutil.copytree(kernels.KERNEL_DIR, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__", "tuned"))
    monkeypatch.setattr(kernels, "KERNEL_DIR", folder)
    kernels.source_text.cache_clear()  # one process reads each source once
    yield folder
    kernels.source_text.cache_clear()


def test_a_changed_source_header_or_nvrtc_is_compiled_again(run_cli, catalog, monkeypatch, sources):
    reports, compiled = catalog
    assert _kernels(run_cli, reports)[0] == 0
    before = json.loads(reports.read_text())
    (sources / "copy.cu").write_text((sources / "copy.cu").read_text() + "\n// changed\n")
    kernels.source_text.cache_clear()
    assert _kernels(run_cli, reports)[0] == 0
    assert len(compiled) == 2  # compiled again, not served from the report
    after = json.loads(reports.read_text())
    assert after.keys() != before.keys() and list(after.values()) == list(before.values())  # only this run's key
    monkeypatch.setattr(C, "nvrtc_build", lambda: "13.99.0")
    assert _kernels(run_cli, reports)[0] == 0 and len(compiled) == 3
    # a header is part of each source that includes it: reduce.cu's key follows common.cuh
    spec = R.LIBRARY.spec()
    key = lambda: C._cache_key(kernels.source_text(spec.source), [spec.name], "sm_90", spec.options, spec.defines)  # noqa: E731
    was = key()
    (sources / "common.cuh").write_text((sources / "common.cuh").read_text() + "\n// changed\n")
    kernels.source_text.cache_clear()
    assert key() != was


def test_the_check_reads_the_stored_numbers(run_cli, catalog):
    """A stored report that says a kernel spills fails the run as a compiled one would."""
    reports, compiled = catalog
    assert _kernels(run_cli, reports)[0] == 0
    stored = json.loads(reports.read_text())
    (part,) = stored.values()
    part["stride_copy"][C.REPORT_FIELDS.index("spill_store_bytes")] = 8
    reports.write_text(json.dumps(stored))
    code, _, err = _kernels(run_cli, reports)
    assert code == 1 and len(compiled) == 1
    assert err.strip().endswith("gpumemlab kernels: unexpected register spills, stack frames or missing reports "
                                "for sm_90: stride_copy")


@pytest.mark.parametrize("text", ["{", "[]", '{"k": {"offset_copy": [1, 2]}}', '{"k": []}'])
def test_a_file_that_is_not_reports_is_refused_in_one_line(run_cli, catalog, text):
    reports, compiled = catalog
    reports.write_text(text)
    code, _, err = _kernels(run_cli, reports)
    assert code == 2 and err.count("\n") == 1 and f"--reports {reports}: " in err and compiled == []


def test_the_committed_reports_agree_with_nvrtc():
    """The smallest part of the committed sm_90 reports whose key this checkout still has, compiled: its numbers are
    NVRTC's (.ci/run rewrites the files, so in CI every part is current)."""
    stored = C.load_reports(COMMITTED / "sm_90.json")
    assert stored, "no committed reports for sm_90"
    specs = [s for s in kernels.all_specs() if C.runs_on(s, "sm_90")]
    parts = {}
    for (source, options, defines), members in C.group_specs(specs).items():
        for i in range(0, len(members), C.CHUNK):
            names = sorted({m.name for m in members[i:i + C.CHUNK]})
            parts[C._cache_key(kernels.source_text(source), names, "sm_90", options, defines)] = \
                (source, names, options, defines)
    current = sorted((k for k in stored if k in parts), key=lambda k: len(parts[k][1]))
    if not current:
        pytest.skip("no committed report matches this NVRTC and these sources: run .ci/run and commit "
                    ".ci/kernel-reports")
    source, names, options, defines = parts[current[0]]
    mod = C.compile_group(source, names, "sm_90", options, defines)
    assert {n: [getattr(u, f) for f in C.REPORT_FIELDS] for n, u in mod.usage.items()} == stored[current[0]]
