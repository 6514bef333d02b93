"""The lint command's faces: clang-tidy lines, --json schema, --fail-on exit codes, the missing extra."""

import json
import sys
from pathlib import Path

import pytest

from gpumemlab.cli import main
from gpumemlab.lint import SCHEMA

CORPUS = Path(__file__).parent / "corpus"
NAIVE = ["lint", str(CORPUS / "transpose_samples.cu"), "--kernel", "transposeNaive", "--block", "32,8",
         "--let", "width=1024", "--let", "height=1024", "--no-resources"]

ACCESS_KEYS = {"kernel", "file", "line", "column", "text", "access", "space", "array", "element_bytes", "requests",
               "sectors_per_request", "ideal_sectors_per_request", "wavefronts_per_request",
               "ideal_wavefronts_per_request", "conflict_ways", "reads_per_request", "ideal_reads_per_request",
               "verdict", "block", "warp", "active_lanes", "fix", "fix_predicted", "unknown_reason", "not_modelled",
               "call_lines", "loops", "explanation", "rule", "iterations", "assumption", "compiled", "over_iterations",
               "launch", "in_register"}


def test_finding_line_is_clang_tidy_style(capsys):
    assert main(NAIVE) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith(f"{CORPUS / 'transpose_samples.cu'}:12:9: uncoalesced: global store "
                            "`odata[x * width + (y + j)]`: 32 sectors/request (ideal 4), column-major; "
                            "fix: corner turning")
    assert first.endswith("-> sectors/request 4")


def test_json_schema(capsys):
    assert main(NAIVE + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == SCHEMA and doc["block"] == [32, 8, 1] and doc["arch"] == "sm_90"
    (k,) = doc["kernels"]
    assert k["name"] == "transposeNaive" and k["error"] is None
    assert [(a["line"], a["access"], a["verdict"]) for a in k["accesses"]] == [(12, "store", "column-major"),
                                                                               (12, "load", "coalesced")]
    for a in k["accesses"]:
        assert set(a) == ACCESS_KEYS


@pytest.mark.parametrize("rules,rc", [("uncoalesced", 1), ("bank-conflict", 0), ("uncoalesced,bank-conflict", 1),
                                      ("unknown", 0)])
def test_fail_on(capsys, rules, rc):
    assert main(NAIVE + ["--fail-on", rules]) == rc


def test_fail_on_constant_serialized(capsys, tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("__constant__ float c[3];\n"
                   "__global__ void k(float* out) { out[threadIdx.x] = c[threadIdx.x % 3] + c[1]; }\n")
    args = ["lint", str(src), "--block", "32", "--no-resources", "--fail-on", "constant-serialized"]
    assert main(args) == 1
    assert (f"{src}:2:52: constant-serialized: constant load `c[threadIdx.x % 3]`: 3 reads/request (ideal 1), "
            "serialized; fix: index __constant__ memory") in capsys.readouterr().out


def test_fail_on_bank_conflict(capsys):
    args = ["lint", str(CORPUS / "transpose_samples.cu"), "--kernel", "transposeCoalesced", "--block", "32,8",
            "--let", "width=1024", "--let", "height=1024", "--no-resources", "--fail-on", "bank-conflict"]
    assert main(args) == 1
    assert ": bank-conflict: shared load `tile[threadIdx.x][threadIdx.y + j]`: 32 wavefronts/request (ideal 1)" in \
        capsys.readouterr().out


def test_without_libclang_says_so_in_one_line(monkeypatch, capsys):
    from gpumemlab.lint import frontend

    monkeypatch.setattr(frontend._Lib, "_ci", None)
    monkeypatch.setitem(sys.modules, "clang", None)
    monkeypatch.setitem(sys.modules, "clang.cindex", None)
    assert main(NAIVE) == 2
    assert capsys.readouterr().err == "gpumemlab lint: needs libclang, the lint extra: pip install 'gpumemlab[lint]'\n"
