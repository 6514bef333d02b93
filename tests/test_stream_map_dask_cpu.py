"""stream_map over a Dask array without a GPU: the block plumbing (shapes, dtypes, the block named in an error)
with a local threaded scheduler and NumPy standing in for the GPU pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from gpumemlab.errors import UsageError
from gpumemlab.ops import stream_map as sm

da = pytest.importorskip("dask.array")


@pytest.fixture
def host_pipeline():
    """stream_map(fn, block) as NumPy: fn gets and returns NumPy arrays; the calls are recorded."""
    calls = []

    def fake(fn, x, **options):
        calls.append((x.shape, options))
        return fn(x)
    fake.calls = calls
    return fake


def test_each_block_goes_through_the_pipeline_and_matches(host_pipeline):
    x = np.arange(1000 * 3, dtype=np.float32).reshape(1000, 3)
    dx = da.from_array(x, chunks=(300, 3))
    from gpumemlab.ops.stream_map_dask import stream_map_dask

    y = stream_map_dask(host_pipeline, lambda c: c * 2 + 1, dx, chunk_bytes=4096)
    assert isinstance(y, da.Array) and y.chunks == ((300, 300, 300, 100), (3,))
    out = y.compute(scheduler="threads")
    np.testing.assert_array_equal(out, x * 2 + 1)
    blocks = sorted(shape for shape, _ in host_pipeline.calls)
    assert blocks == [(1, 3), (100, 3), (300, 3), (300, 3), (300, 3)]  # one row first: the result's dtype and shape
    assert all(opts == {"chunk_bytes": 4096} for _, opts in host_pipeline.calls)


@pytest.mark.parametrize("fn,shape,dtype", [
    (lambda c: c.sum(axis=(1, 2)).astype(np.float64)[:, None], (500, 1), np.float64),   # trailing shape shrinks
    (lambda c: c.reshape(c.shape[0], -1), (500, 12), np.float32),                          # fewer axes
    (lambda c: np.stack([c, -c], axis=-1), (500, 4, 3, 2), np.float32),                    # more axes
])
def test_dtype_and_trailing_shape_come_from_fn(host_pipeline, fn, shape, dtype):
    from gpumemlab.ops.stream_map_dask import stream_map_dask

    x = np.random.default_rng(0).random((500, 4, 3), dtype=np.float32)
    dx = da.from_array(x, chunks=(128, 2, 3))  # split along a trailing axis too: joined into whole rows
    y = stream_map_dask(host_pipeline, fn, dx)
    got = y.compute(scheduler="threads")
    assert y.shape == shape and y.dtype == dtype and got.shape == shape and got.dtype == dtype
    np.testing.assert_array_equal(got, fn(x))


def test_an_error_in_fn_names_the_block(host_pipeline):
    from gpumemlab.ops.stream_map_dask import stream_map_dask

    class Boom(RuntimeError):
        pass

    def fn(c):
        if c.shape[0] > 1 and c[0, 0] == 400:  # the third block only
            raise Boom("fn failed")
        return c + 1

    x = np.arange(1000, dtype=np.float32).reshape(1000, 1)
    with pytest.raises(Boom) as info:
        stream_map_dask(host_pipeline, fn, da.from_array(x, chunks=(200, 1))).compute(scheduler="threads")
    notes = getattr(info.value, "__notes__", [])
    assert any("block 2 (rows 400:600 of x)" in n for n in notes), notes


def test_dask_input_dispatches_from_stream_map(monkeypatch):
    import gpumemlab.ops.stream_map_dask as smd

    seen = {}
    monkeypatch.setattr(smd, "stream_map_dask", lambda pipeline, fn, x, **kw: seen.update(kw, pipeline=pipeline) or "lazy")
    x = da.ones((10, 2), chunks=(5, 2))
    assert sm.stream_map(lambda c: c, x, workers=3) == "lazy"
    assert seen == dict(chunk_bytes=None, streams=None, workers=3, register="auto", pipeline=sm.stream_map)


@pytest.mark.parametrize("x,words", [
    (lambda: da.ones((0, 3), chunks=(1, 3)), "at least one row"),
])
def test_bad_dask_input_is_a_usage_error(host_pipeline, x, words):
    from gpumemlab.ops.stream_map_dask import stream_map_dask

    with pytest.raises(UsageError, match=words):
        stream_map_dask(host_pipeline, lambda c: c, x())
    with pytest.raises(UsageError, match="fn must be callable"):
        stream_map_dask(host_pipeline, 3, da.ones((4,), chunks=2))
