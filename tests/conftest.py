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
