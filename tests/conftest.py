import os

import pytest

os.environ.setdefault("CUDA_CACHE_DISABLE", "1")  # as the CLI does: keep ptxas -v reports (see gpu/cubin.py)


def _has_gpu() -> bool:
    try:
        from gpumemlab.gpu.runtime import has_device

        return has_device()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if any(item.get_closest_marker("gpu") for item in items) and not _has_gpu():
        skip = pytest.mark.skip(reason="no CUDA GPU")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)


@pytest.fixture
def run_cli(capsys):
    """Run ``gpumemlab.cli.main(argv)``; return (exit code, stdout, stderr). argparse exits count too."""
    from gpumemlab.cli import main

    def run(*argv: str):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run
