"""The GPU probe of tests/conftest.py, run on a tiny test file: only NoDeviceError skips the GPU tests, any
other exception errors them, GPUMEMLAB_REQUIRE_GPU=1 turns the skip into a failure, and the probe runs once."""

import importlib.abc
import os
import importlib.util
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpumemlab.errors import CudaStackError, NoDeviceError
from gpumemlab.gpu import runtime

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()
INNER = ("-p", "no:cacheprovider", "-p", "no:xdist", "-rA")  # the runs below: in this process, where the fakes are

TESTS = """
import pytest

@pytest.mark.gpu
def test_on_the_gpu():
    pass

@pytest.mark.gpu
def test_on_the_gpu_again():
    pass

def test_on_the_cpu():
    pass
"""


@pytest.fixture
def project(pytester, monkeypatch):
    """A pytester directory with this repository's conftest; returns (run, calls): ``run(raises)`` runs it with
    ``ensure_device`` raising ``raises`` (None: a GPU is there) and ``calls`` counts the probes."""
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nmarkers =\n    gpu: needs a CUDA GPU\n")
    monkeypatch.delenv("GPUMEMLAB_REQUIRE_GPU", raising=False)
    calls = []

    def run(raises, tests=TESTS):
        def fake_ensure_device():
            calls.append(1)
            if raises is not None:
                raise raises
            return object()

        monkeypatch.setattr(runtime, "ensure_device", fake_ensure_device)
        pytester.makepyfile(test_tiny=tests)
        return pytester.runpytest_inprocess(*INNER)

    return run, calls


def test_no_device_skips_the_gpu_tests_only(project):
    run, calls = project
    result = run(NoDeviceError("no CUDA device: the driver reports no GPU"))
    result.assert_outcomes(passed=1, skipped=2)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*SKIPPED*no CUDA GPU: no CUDA device: the driver reports no GPU*"])
    assert len(calls) == 1  # decided once, not per test


@pytest.mark.parametrize("exc", [ImportError("libcudart.so.12: cannot open shared object file"),
                                 RuntimeError("cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH")],
                         ids=["ImportError", "RuntimeError"])
def test_any_other_probe_error_errors_the_gpu_tests(project, exc):
    run, calls = project
    result = run(exc)
    result.assert_outcomes(passed=1, errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*probing the GPU failed (not a missing GPU): {type(exc).__name__}*"])
    assert str(exc) in result.stdout.str()
    assert len(calls) == 1


def test_require_gpu_turns_the_skip_into_a_failure(project, monkeypatch):
    run, _ = project
    monkeypatch.setenv("GPUMEMLAB_REQUIRE_GPU", "1")
    result = run(NoDeviceError("no CUDA device: no NVIDIA driver"))
    result.assert_outcomes(passed=1, errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*GPUMEMLAB_REQUIRE_GPU=1 but no CUDA GPU: no CUDA device: no NVIDIA driver*"])


@pytest.mark.parametrize("value", ["", "0"])
def test_require_gpu_unset_or_zero_still_skips(project, monkeypatch, value):
    run, _ = project
    monkeypatch.setenv("GPUMEMLAB_REQUIRE_GPU", value)
    run(NoDeviceError("no CUDA device")).assert_outcomes(passed=1, skipped=2)


def test_a_present_gpu_runs_the_gpu_tests(project, monkeypatch):
    run, calls = project
    monkeypatch.setenv("GPUMEMLAB_REQUIRE_GPU", "1")
    result = run(None)
    result.assert_outcomes(passed=3)
    assert len(calls) == 1


def test_cpu_only_runs_do_not_probe(project):
    run, calls = project
    run(RuntimeError("must not be called"), tests="def test_cpu():\n    pass\n").assert_outcomes(passed=1)
    assert calls == []


# ---------------------------------------------------------------- the real initialization, broken on purpose

@pytest.fixture
def fresh_runtime(monkeypatch):
    """gpu/runtime with its cached initialization cleared before and after (the real _init runs)."""
    runtime._init.cache_clear()
    runtime._device.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    runtime._init.cache_clear()
    runtime._device.cache_clear()


class _BrokenImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``name`` (installed) but fails while importing it, as a wheel missing its shared library does."""

    def __init__(self, name: str, error: Exception):
        self.name, self.error = name, error

    def find_spec(self, fullname, path=None, target=None):
        return importlib.util.spec_from_loader(fullname, self) if fullname == self.name else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        raise self.error


def _installed_but_broken(mp, name: str, error: Exception):
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        mp.delitem(sys.modules, mod)
    mp.setattr(sys, "meta_path", [_BrokenImport(name, error)] + sys.meta_path)


def _cuinit_returns(mp, name: str):
    from cuda.bindings import driver

    mp.setattr(driver, "cuInit", lambda flags: (getattr(driver.CUresult, name),))


def _cuinit_raises(mp, error: Exception):
    from cuda.bindings import driver

    def fail(flags):
        raise error
    mp.setattr(driver, "cuInit", fail)


BROKEN = {  # what the machine has -> (probe state, words of the message)
    "cuda.core fails to import": (
        lambda mp: _installed_but_broken(mp, "cuda.core", ImportError("libnvrtc.so.13: cannot open shared object file")),
        "broken", "the CUDA Python packages are installed but fail to import (ImportError: libnvrtc.so.13"),
    "cuda.bindings imports a missing module": (
        lambda mp: _installed_but_broken(mp, "cuda.bindings", ModuleNotFoundError("No module named 'cuda.pathfinder'",
                                                                                  name="cuda.pathfinder")),
        "broken", "the CUDA Python packages are installed but fail to import (No module named 'cuda.pathfinder')"),
    "cuInit: driver/library mismatch": (
        lambda mp: _cuinit_returns(mp, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
        "broken", "cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (a driver or GPU problem, not a missing GPU)"),
    "cuInit: unknown error": (
        lambda mp: _cuinit_returns(mp, "CUDA_ERROR_UNKNOWN"), "broken", "cuInit failed: CUDA_ERROR_UNKNOWN"),
    "cuInit: no device": (
        lambda mp: _cuinit_returns(mp, "CUDA_ERROR_NO_DEVICE"), "none", "no CUDA device: cuInit says CUDA_ERROR_NO_DEVICE"),
    "cuInit: the toolkit's stub libcuda": (
        lambda mp: _cuinit_returns(mp, "CUDA_ERROR_STUB_LIBRARY"), "none", "cuInit says CUDA_ERROR_STUB_LIBRARY"),
    "no libcuda.so": (
        lambda mp: _cuinit_raises(mp, RuntimeError("Failed to dlopen libcuda.so.1")), "none",
        "no CUDA device: no NVIDIA driver (Failed to dlopen libcuda.so.1)"),
    "cuda.core not installed": (
        lambda mp: _installed_but_broken(mp, "cuda.core", ModuleNotFoundError("No module named 'cuda.core'",
                                                                              name="cuda.core")),
        "none", "no CUDA device: cannot import the CUDA Python packages (No module named 'cuda.core')"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_the_real_initialization_skips_only_a_missing_gpu(fresh_runtime, case):
    """probe_gpu (tests/conftest.py) over the real runtime._init: a broken stack is "broken" (the GPU tests error),
    only a missing package, driver or GPU is "none" (they skip)."""
    probe_gpu = runpy.run_path(str(Path(__file__).parent / "conftest.py"))["probe_gpu"]  # tests/conftest.py itself
    pytest.importorskip("cuda.bindings")
    breaks, want, words = BROKEN[case]
    breaks(fresh_runtime)
    state, detail = probe_gpu()
    assert state == want, detail
    assert words in str(detail)
    if want == "broken":
        assert isinstance(detail, CudaStackError) and not isinstance(detail, NoDeviceError)


def test_the_gpu_tests_error_on_a_broken_stack_without_any_variable(pytester, fresh_runtime):
    """This repository's conftest over the real initialization (no stand-in for ensure_device); the other cases
    of BROKEN reach the same probe (test above)."""
    pytest.importorskip("cuda.bindings")
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nmarkers =\n    gpu: needs a CUDA GPU\n")
    fresh_runtime.delenv("GPUMEMLAB_REQUIRE_GPU", raising=False)
    BROKEN["cuInit: driver/library mismatch"][0](fresh_runtime)
    pytester.makepyfile(test_tiny=TESTS)
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(["*probing the GPU failed (not a missing GPU): CudaStackError*"])


# ---------------------------------------------------------------- spreading a CPU run over the cores

@pytest.fixture
def spread(monkeypatch):
    """``spread(*args, numprocesses=None, dist="no")``: the worker count and distribution tests/conftest.py's
    pytest_cmdline_main leaves for a run with those arguments on a machine without a GPU."""
    conftest = runpy.run_path(str(Path(__file__).parent / "conftest.py"))
    for name in ("PYTEST_XDIST_WORKER", "GPUMEMLAB_REQUIRE_GPU"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(os.path, "exists", lambda p, real=os.path.exists: p != "/dev/nvidiactl" and real(p))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)

    def run(*args, numprocesses=None, dist="no"):
        config = SimpleNamespace(args=list(args), option=SimpleNamespace(numprocesses=numprocesses, dist=dist))
        conftest["pytest_cmdline_main"](config)
        return config.option.numprocesses, config.option.dist

    return run


def test_a_run_of_folders_spreads_over_the_cores_one_module_per_worker(spread):
    here = str(Path(__file__).parent)
    assert spread(here) == (2, "loadfile")
    assert spread(here, dist="load") == (2, "load")  # a --dist given stays


def test_a_run_of_files_a_given_n_a_worker_or_a_gpu_machine_stays_as_it_is(spread, monkeypatch):
    here = Path(__file__).parent
    assert spread(str(here / "test_cli.py")) == (None, "no")
    assert spread(f"{here / 'test_cli.py'}::test_version") == (None, "no")
    assert spread(str(here), numprocesses=0) == (0, "no")
    monkeypatch.setenv("GPUMEMLAB_REQUIRE_GPU", "1")
    assert spread(str(here)) == (None, "no")
    monkeypatch.delenv("GPUMEMLAB_REQUIRE_GPU")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert spread(str(here)) == (None, "no")
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    monkeypatch.setattr(os.path, "exists", lambda p: p == "/dev/nvidiactl")
    assert spread(str(here)) == (None, "no")


def test_rest_after_runs_only_the_tests_a_cut_off_log_has_no_outcome_for(pytester, monkeypatch):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_cut="""
import pytest

@pytest.mark.parametrize("n", [1, 2])
def test_a(n):
    pass

def test_b():
    pass

def test_c():
    assert False
""")
    # a -v log cut off while test_b ran: test_a[1] passed, test_c failed earlier in another order, test_a[2] started
    log = pytester.path / "cut.log"
    log.write_text("test_cut.py::test_a[1] PASSED                 [ 25%]\n"
                   "[gw1] [ 50%] FAILED test_cut.py::test_c \n"  # as pytest-xdist's workers report
                   "test_cut.py::test_a[2] \n")
    monkeypatch.delenv("GPUMEMLAB_REQUIRE_GPU", raising=False)
    result = pytester.runpytest_inprocess(*INNER, "-v", "--rest-after", str(log))
    result.assert_outcomes(passed=2, deselected=2)
    result.stdout.fnmatch_lines(["*test_cut.py::test_a[[]2[]] PASSED*", "*test_cut.py::test_b PASSED*"])
    assert "::test_a[1]" not in result.stdout.str() and "::test_c" not in result.stdout.str()
