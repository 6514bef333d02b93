"""The GPU probe of tests/conftest.py, run on a tiny test file: only NoDeviceError skips the GPU tests, any
other exception errors them, GPUMEMLAB_REQUIRE_GPU=1 turns the skip into a failure, and the probe runs once."""

from pathlib import Path

import pytest

from gpumemlab.errors import NoDeviceError
from gpumemlab.gpu import runtime

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()

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
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA")

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
