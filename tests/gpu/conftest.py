import pytest


@pytest.fixture(scope="module")
def session():
    """A quick-mode measurement session with its ceilings measured (quick), closed after the module."""
    from gpumemlab.bench.session import Session
    from gpumemlab.suite.ceilings import measure_ceilings

    s = Session(quick=True)
    measure_ceilings(s, quick=True)
    yield s
    s.close()


@pytest.fixture(scope="module")
def two_gpus():
    """CuPy, on a machine with at least two GPUs (the test skips with fewer)."""
    import cupy

    from gpumemlab.gpu import runtime

    runtime.ensure_device()
    if runtime.device_count() < 2:
        pytest.skip(f"needs two GPUs: this machine has {runtime.device_count()}")
    return cupy
