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
