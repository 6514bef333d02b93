"""Packaging: light core dependencies with the CUDA stack as an extra, complete package data, PEP 639
license, and commands that need CUDA ending in one line when its packages are missing."""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CUDA_PACKAGES = {"cuda-core", "cuda-bindings", "nvidia-cuda-nvrtc", "cupy-cuda13x", "nvidia-ml-py"}


def _name(requirement: str) -> str:
    return requirement.split(";")[0].split("[")[0].split("<")[0].split(">")[0].split("=")[0].strip().lower()


def _data_files() -> list[str]:
    """Every file under src/gpumemlab that is not Python source: read at run time, so it must ship."""
    pkg = ROOT / "src" / "gpumemlab"
    return sorted(str(p.relative_to(pkg)) for p in pkg.rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts)


def test_core_dependencies_are_light_and_cuda_is_an_extra():
    project = PYPROJECT["project"]
    assert {_name(r) for r in project["dependencies"]} == {"numpy", "matplotlib", "rich"}
    assert {_name(r) for r in project["optional-dependencies"]["cuda"]} == CUDA_PACKAGES
    assert {"pytest", "hypothesis"} <= {_name(r) for r in project["optional-dependencies"]["test"]}


def test_license_is_pep_639_mit_with_the_file():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "gpumemlab authors" in text


def test_every_data_file_matches_a_package_data_pattern():
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["gpumemlab"]
    files = _data_files()
    assert "kernels/sgemm.cu" in files and "kernels/tuned/matmul.json" in files
    assert [f for f in files if not any(fnmatch.fnmatch(f, p) for p in patterns)] == []


@pytest.mark.skipif(os.environ.get("GPUMEMLAB_TEST_INSTALLED") != "1",
                    reason="checks an installed wheel: CI sets GPUMEMLAB_TEST_INSTALLED=1")
def test_installed_package_is_the_wheel_with_its_data():
    import gpumemlab

    installed = Path(gpumemlab.__file__).resolve().parent
    assert "site-packages" in installed.parts and ROOT / "src" not in installed.parents
    assert [f for f in _data_files() if not (installed / f).is_file()] == []


# Run in a child with `cuda` and `cupy` unimportable, as on `pip install gpumemlab` without extras.
BLOCKED = textwrap.dedent("""
    import importlib.abc, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("cuda", "cupy"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, Block())
    from gpumemlab.cli import main
    code = main(sys.argv[1:])
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("cuda", "cupy"))
    sys.exit(99 if loaded else code)
""")


def _without_cuda(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCKED, *argv], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


@pytest.mark.parametrize("argv", [
    ["analyze", "a[threadIdx.x]", "--decl", "float a[]", "--json"],
    ["occupancy", "--threads", "256", "--regs", "64", "--cc", "9.0"],
    ["intensity", "tiled", "--tile", "32", "--device", "H100"],
    ["compare", "tests/data/runs/nvidia-h100-80gb-hbm3/results.json", "tests/data/runs/nvidia-h200/results.json"],
    ["list"],
])
def test_light_install_commands_work_without_cuda(argv):
    proc = _without_cuda(*argv)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout


def test_light_install_report_renders_every_format(tmp_path):
    """A run of three experiments (a line plot, a bar plot, a timeline) cut from the fixture: every format and
    kind of plot without drawing thirty."""
    doc = json.loads((ROOT / "tests/data/runs/nvidia-h200/results.json").read_text())
    keep = {"offset_copy", "vector_copy", "stream_overlap"}
    doc["results"] = [r for r in doc["results"] if r["experiment"] in keep]
    doc["experiments"] = {n: e for n, e in doc["experiments"].items() if n in keep}
    run = tmp_path / "run" / "results.json"
    run.parent.mkdir()
    run.write_text(json.dumps(doc))
    out = tmp_path / "out"
    for fmt in ("md", "csv"):  # md writes report.html too
        proc = _without_cuda("report", str(run), "--out", str(out), "--format", fmt)
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert {"report.md", "report.csv", "report.html", "results.json", "offset_copy.png", "vector_copy.png",
            "stream_overlap.png"} <= {p.name for p in out.iterdir()}


@pytest.mark.parametrize("argv", [["bench"], ["device"], ["run", "offset_copy"], ["kernels", "--arch", "sm_90"]])
def test_commands_needing_cuda_say_so_in_one_line(argv):
    proc = _without_cuda(*argv)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr[-2000:]
    assert lines[0].startswith(f"gpumemlab {argv[0]}: ")
    assert "cannot import the CUDA Python packages (No module named 'cuda" in lines[0]
    assert lines[0].endswith("pip install 'gpumemlab[cuda]' installs them")
