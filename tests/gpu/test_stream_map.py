"""gpumemlab.stream_map on the GPU: results equal to a NumPy reference on every path, failures that drain and
free everything (pinned and device memory back to their starting values, no worker thread left)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.ensure_device()
    return cupy


def stream_map(*args, **kw):
    from gpumemlab import stream_map as fn

    return fn(*args, **kw)


def resources(cp, release: bool = True):
    """What must come back to its starting value after any call (the staging cache of successful calls
    released first unless ``release`` is False: a failing call must have emptied it itself)."""
    from gpumemlab.gpu.host import live_bytes
    from gpumemlab.ops.stream_map import _live_streams, release_staging

    import gc

    gc.collect()  # arrays that earlier tests dropped but did not yet free must not count against this call
    cp.cuda.Device().synchronize()
    if release:
        release_staging()
    threads = sum(t.name.startswith("gpumemlab-stream_map") for t in threading.enumerate())
    held = live_bytes()
    return held["pinned"], held["registered"], cp.get_default_memory_pool().used_bytes(), threads, len(_live_streams)


def rng_array(shape, dtype, seed=0):
    g = np.random.default_rng(seed)
    return (g.random(shape) * 2 - 1 + 0.25).astype(dtype)


@pytest.mark.parametrize("shape,dtype,chunk_rows,streams", [
    ((1,), np.float32, 1, None),                # one row
    ((1000,), np.float32, 7, 2),                # rows not a multiple of the chunk
    ((4099, 3), np.float64, 100, 3),            # trailing dimension
    ((513, 5, 7), np.int32, 64, 4),             # 3-D, ints
    ((257, 16), np.float32, 1000, None),        # one chunk larger than x
])
def test_results_equal_numpy(cp, shape, dtype, chunk_rows, streams):
    x = rng_array(shape, dtype) if np.dtype(dtype).kind == "f" else np.arange(np.prod(shape), dtype=dtype).reshape(shape)
    row_bytes = x[:1].nbytes
    before = resources(cp)
    got = stream_map(lambda c: c * 3 + 1, x, chunk_bytes=chunk_rows * row_bytes, streams=streams)
    np.testing.assert_array_equal(got, x * 3 + 1)
    assert got.dtype == x.dtype and got.shape == x.shape
    assert resources(cp) == before


def test_dtype_and_trailing_shape_come_from_fn(cp):
    x = rng_array((1001, 4), np.float32)
    got = stream_map(lambda c: c.astype(cp.float64).sum(axis=1, keepdims=True) ** 2, x, chunk_bytes=4096)
    want = x.astype(np.float64).sum(axis=1, keepdims=True) ** 2
    assert got.dtype == np.float64 and got.shape == (1001, 1)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_caller_out_is_filled_and_returned(cp):
    x = rng_array((777,), np.float32)
    out = np.full(777, np.nan, np.float32)
    got = stream_map(lambda c: -c, x, out=out, chunk_bytes=400)
    assert got is out
    np.testing.assert_array_equal(out, -x)  # every row written: no NaN left


def test_strided_and_memmapped_inputs(cp, tmp_path):
    base = rng_array((600, 8), np.float32)
    strided = base[:, ::2]
    np.testing.assert_array_equal(stream_map(lambda c: c + 1, strided, chunk_bytes=256), strided + 1)
    path = tmp_path / "x.bin"
    base.tofile(path)
    mm = np.memmap(path, dtype=np.float32, mode="r", shape=(600, 8))
    np.testing.assert_array_equal(stream_map(lambda c: c * c, mm, chunk_bytes=1000), base * base)


def test_nan_and_inf_pass_through_bit_exactly(cp):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5] * 100, np.float32)
    got = stream_map(lambda c: c.copy(), x, chunk_bytes=64)
    assert got.tobytes() == x.tobytes()


def test_profile_reports_stages_and_bound(cp):
    x = rng_array((1 << 20,), np.float32)
    got, st = stream_map(lambda c: c * 2, x, chunk_bytes=1 << 18, profile=True)
    np.testing.assert_array_equal(got, x * 2)
    assert st["bytes_in"] == x.nbytes and st["bytes_out"] == x.nbytes and st["chunks"] == 16
    assert st["chunk_rows"] == 1 << 16 and st["streams"] >= 2
    for k in ("h2d_s", "fn_s", "d2h_s"):
        assert 0 < st[k] <= st["wall_s"]
    assert st["bound_s"] == max(st["h2d_s"], st["fn_s"], st["d2h_s"])


def test_staging_is_reused_between_calls_and_released(cp):
    from gpumemlab.gpu.host import live_bytes
    from gpumemlab.ops import stream_map as sm

    resources(cp)
    x = rng_array((4096,), np.float32)
    stream_map(lambda c: c + 1, x, chunk_bytes=4096, streams=2)
    held = [id(b) for b in sm._staging]
    # input staging for the chunks in flight (2 streams) and those prepared ahead (AHEAD), an output buffer per stream
    assert sm.AHEAD == 2
    assert len(held) == 6 and live_bytes()["pinned"] == 6 * 4096
    stream_map(lambda c: c + 2, x, chunk_bytes=4096, streams=2)
    assert sorted(id(b) for b in sm._staging) == sorted(held)  # the same buffers, reused
    assert live_bytes()["pinned"] == 6 * 4096
    sm.release_staging()
    assert live_bytes()["pinned"] == 0 and sm._staging == []


def test_work_queued_before_the_call_is_seen_by_fn(cp):
    """fn reads a device array the caller filled on its own stream just before: stream_map's streams wait."""
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        w = cp.zeros(1 << 22, cp.float32)
        w.fill(5.0)  # queued, maybe still running when stream_map starts
        got = stream_map(lambda c: c + w[: c.shape[0]], np.ones(1 << 22, np.float32), chunk_bytes=1 << 20)
    np.testing.assert_array_equal(got, np.full(1 << 22, 6.0, np.float32))


class Boom(RuntimeError):
    pass


@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("error", [Boom, KeyboardInterrupt])
def test_a_failing_fn_drains_frees_and_reraises(cp, where, error):
    x = rng_array((1000,), np.float32)
    chunks = 10
    bad = {"first": 0, "middle": 5, "last": chunks - 1}[where]
    calls = []

    def fn(c):
        calls.append(len(calls))
        if len(calls) - 1 == bad:
            raise error("fn failed")
        return c + 1

    stream_map(lambda c: c, x, chunk_bytes=400, streams=3)  # a successful call first: its staging is cached
    before = resources(cp)
    stream_map(lambda c: c, x, chunk_bytes=400, streams=3)
    out = np.full(1000, np.nan, np.float32)
    with pytest.raises(error) as info:
        stream_map(fn, x, out=out, chunk_bytes=400, streams=3)
    if error is Boom:
        assert any(f"chunk {bad} " in note for note in getattr(info.value, "__notes__", []))
    assert resources(cp, release=False) == before  # the failure freed its staging and the cache
    assert len(calls) == bad + 1  # nothing after the failing chunk was started
    done = out[~np.isnan(out)]
    np.testing.assert_array_equal(done, (x + 1)[~np.isnan(out)])  # what was written is right


@pytest.mark.parametrize("fn,words", [
    (lambda c: np.asarray(c.get()), "must return a CuPy array, got ndarray"),
    (lambda c: c[:-1], "leading dimension must be the chunk's"),
    (lambda c: c.sum(), "leading dimension must be the chunk's"),
])
def test_wrong_results_are_usage_errors(cp, fn, words):
    from gpumemlab.errors import UsageError

    before = resources(cp)
    with pytest.raises(UsageError, match=words):
        stream_map(fn, rng_array((100,), np.float32), chunk_bytes=40)
    assert resources(cp, release=False) == before


def test_a_dtype_change_between_chunks_is_refused(cp):
    from gpumemlab.errors import UsageError

    calls = []

    def fn(c):
        calls.append(1)
        return c if len(calls) == 1 else c.astype(cp.float64)
    with pytest.raises(UsageError, match="float64 .* for chunk 1, but float32"):
        stream_map(fn, rng_array((100,), np.float32), chunk_bytes=40)


@pytest.mark.parametrize("out,words", [
    (np.zeros((100, 2), np.float32), r"shape \(100,\)"),
    (np.zeros(100, np.float64), "float32 array"),
])
def test_a_wrong_out_is_refused(cp, out, words):
    from gpumemlab.errors import UsageError

    with pytest.raises(UsageError, match=words):
        stream_map(lambda c: c, rng_array((100,), np.float32), out=out, chunk_bytes=40)


def test_read_only_out_is_refused(cp):
    from gpumemlab.errors import UsageError

    out = np.zeros(100, np.float32)
    out.flags.writeable = False
    with pytest.raises(UsageError, match="read-only"):
        stream_map(lambda c: c, rng_array((100,), np.float32), out=out, chunk_bytes=40)


# ---------------------------------------------------------------- the registered route (x page-locked in place)

def big_unaligned(n=1_000_003):
    """float32 data whose start and chunk boundaries are not page-aligned (so every chunk has partial pages)."""
    base = rng_array((n + 1,), np.float32, seed=3)
    return base[1:]  # 4 bytes past the allocation's start


ODD_CHUNK = (1 << 20) + 12  # 262147 rows: chunks of 1 MiB + 12 bytes; the last one (213562 rows) is under 1 MiB


@pytest.mark.parametrize("register,routes", [
    (True, {"pinned": 0, "registered": 3, "staged": 1}),   # the last chunk is too small to register
    (False, {"pinned": 0, "registered": 0, "staged": 4}),
])
def test_registered_and_staged_routes_give_the_same_result(cp, register, routes):
    x = big_unaligned()
    assert x.ctypes.data % 4096 != 0
    before = resources(cp)
    got, st = stream_map(lambda c: c * 3 + 1, x, chunk_bytes=ODD_CHUNK, streams=3, register=register, profile=True)
    np.testing.assert_array_equal(got, x * np.float32(3) + np.float32(1))
    assert st["routes"] == routes and st["chunks"] == 4 and st["chunk_rows"] == 262147
    assert resources(cp) == before  # every registration undone, nothing pinned, no thread left


def test_the_balance_mixes_routes_and_matches(cp):
    x = big_unaligned(4_000_001)
    got, st = stream_map(lambda c: c - 0.5, x, chunk_bytes=ODD_CHUNK, streams=4, profile=True, register=None)
    np.testing.assert_array_equal(got, x - np.float32(0.5))
    assert sum(st["routes"].values()) == st["chunks"] == 16 and st["routes"]["pinned"] == 0
    assert st["routes"]["registered"] >= 1 and st["routes"]["staged"] >= 1  # the first two chunks: one of each


@pytest.mark.parametrize("measured,routes,source", [
    (False, {"pinned": 0, "registered": 0, "staged": 4}, "table"),
    (True, {"pinned": 0, "registered": 3, "staged": 1}, "table"),
    ("none", None, "fallback"),   # not measured on this host: balanced
])
def test_the_default_takes_the_route_measured_for_this_host(cp, monkeypatch, measured, routes, source):
    from gpumemlab.ops import _stream_route

    monkeypatch.setattr(_stream_route, "default_register", lambda: measured)
    x = big_unaligned()
    got, st = stream_map(lambda c: c + 2, x, chunk_bytes=ODD_CHUNK, profile=True)
    np.testing.assert_array_equal(got, x + np.float32(2))
    assert st["route"] == dict(register=None if source == "fallback" else measured, source=source)
    if routes is not None:
        assert st["routes"] == routes
    else:  # balanced: the first two eligible chunks, one of each route
        assert st["routes"]["registered"] >= 1 and st["routes"]["staged"] >= 1


def test_in_place_out_equal_to_x(cp):
    x = big_unaligned()
    want = x * np.float32(2) - np.float32(1)
    got = stream_map(lambda c: c * 2 - 1, x, out=x, chunk_bytes=ODD_CHUNK, streams=2, register=True)
    assert got is x
    np.testing.assert_array_equal(x, want)


def test_page_locked_x_is_copied_in_place(cp):
    from gpumemlab.gpu.host import host_array

    with host_array(3_000_000, np.float32) as buf:
        buf.array[:] = rng_array((3_000_000,), np.float32, seed=5)
        got, st = stream_map(lambda c: c * c, buf.array, chunk_bytes=ODD_CHUNK, profile=True)
        np.testing.assert_array_equal(got, buf.array * buf.array)
    assert st["routes"] == {"pinned": st["chunks"], "registered": 0, "staged": 0}


def test_page_locked_out_receives_the_d2h_directly(cp):
    from gpumemlab.gpu.host import host_array

    x = big_unaligned()
    with host_array((x.shape[0], 2), np.float64) as buf:  # another dtype and trailing shape than x's
        buf.array[:] = np.nan
        got, st = stream_map(lambda c: cp.stack([c, -c], axis=1).astype(cp.float64), x, out=buf.array,
                             chunk_bytes=ODD_CHUNK, streams=3, profile=True)
        assert got is buf.array and st["out_route"] == "pinned" and st["chunks"] > 3
        np.testing.assert_array_equal(got, np.stack([x, -x], axis=1).astype(np.float64))
    got, st = stream_map(lambda c: c + 1, x, chunk_bytes=ODD_CHUNK, profile=True)  # a new, pageable out
    assert st["out_route"] == "staged"
    np.testing.assert_array_equal(got, x + 1)


def test_memmapped_and_strided_x_are_staged(cp, tmp_path):
    base = rng_array((600_000, 2), np.float32)
    path = tmp_path / "big.bin"
    base.tofile(path)
    mm = np.memmap(path, dtype=np.float32, mode="r", shape=base.shape)
    for x in (mm, base[:, ::2]):
        got, st = stream_map(lambda c: c + 1, x, chunk_bytes=1 << 20, register=True, profile=True)
        np.testing.assert_array_equal(got, np.asarray(x) + 1)
        assert st["routes"]["registered"] == 0 and st["routes"]["staged"] == st["chunks"]


@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("error", [Boom, KeyboardInterrupt])
def test_a_failure_on_the_registered_route_unregisters_everything(cp, where, error):
    from gpumemlab.gpu.host import live_bytes

    x = big_unaligned(4_000_001)  # 16 chunks, 15 registered with register=True
    bad = {"first": 0, "middle": 7, "last": 14}[where]  # the last registered chunk
    calls = []

    def fn(c):
        calls.append(len(calls))
        if len(calls) - 1 == bad:
            raise error("fn failed")
        return c + 1

    before = resources(cp)
    out = np.full(x.shape, np.nan, np.float32)
    with pytest.raises(error):
        stream_map(fn, x, out=out, chunk_bytes=ODD_CHUNK, streams=3, register=True)
    assert live_bytes()["registered"] == 0
    assert resources(cp, release=False) == before
    assert len(calls) == bad + 1
    done = ~np.isnan(out)
    np.testing.assert_array_equal(out[done], (x + 1)[done])


# ---------------------------------------------------------------- fn as users write it, NVTX, progress

def chain(c, steps: int = 40):
    """A function as users write it: many small CuPy calls per chunk (2 x steps elementwise kernels)."""
    for _ in range(steps):
        c = c * 1.0001 + 0.25
    return c


def test_a_cupy_chain_fn_is_profiled_and_bit_identical_to_a_plain_loop(cp):
    x = rng_array((1 << 21,), np.float32)
    rows = 1 << 18
    want = np.concatenate([chain(cp.asarray(x[lo:lo + rows])).get() for lo in range(0, x.shape[0], rows)])
    before = resources(cp)
    got, st = stream_map(chain, x, chunk_bytes=rows * 4, profile=True, register=False)
    assert got.tobytes() == want.tobytes()
    assert st["chunks"] == 8 and st["route"] == dict(register=False, source="argument")
    # one compute stream: fn's summed GPU time is the time the stream was busy with fn
    assert st["fn_gpu_s"] == pytest.approx(st["fn_s"], rel=1e-6)
    assert 0 < st["fn_gpu_s"] <= st["wall_s"] and 0 < st["fn_host_s"] <= st["wall_s"]
    assert 0 <= st["wait_gpu_s"] <= st["wall_s"]
    assert resources(cp) == before


def test_nvtx_ranges_name_each_chunk_stage_and_device(cp, monkeypatch):
    import sys

    from fake_nvtx import FakeNvtx

    fake = FakeNvtx()
    monkeypatch.setitem(sys.modules, "nvtx", fake)
    x = rng_array((3000,), np.float32)
    np.testing.assert_array_equal(stream_map(lambda c: c * 2, x, chunk_bytes=4000), x * 2)
    pushed = [e[1] for e in fake.events if e[0] == "push"]
    dev = cp.cuda.Device().id
    assert pushed == [f"chunk {k} {stage} dev {dev}" for k in range(3) for stage in ("h2d", "fn", "d2h")]
    assert sum(e[0] == "pop" for e in fake.events) == len(pushed)


def test_progress_shows_rate_and_eta_on_stderr(cp, capsys):
    x = rng_array((1 << 20,), np.float32)
    np.testing.assert_array_equal(stream_map(lambda c: c + 1, x, chunk_bytes=1 << 18, progress=True), x + 1)
    err = capsys.readouterr().err
    assert "4.2/4.2 MB" in err and "GB/s" in err and "ETA" in err


# ---------------------------------------------------------------- faults on every route

def route_input(route: str, held):
    """(x, register) for a route: pageable x with register=..., or x page-locked by the caller."""
    from gpumemlab.gpu.host import host_array

    x = big_unaligned(4_000_001)
    if route == "pinned":
        buf = held.enter_context(host_array(x.shape, np.float32))
        buf.array[:] = x
        return buf.array, False
    return x, {"staged": False, "registered": True, "balanced": None}[route]


@pytest.mark.parametrize("route", ["staged", "registered", "balanced", "pinned"])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("error", [Boom, KeyboardInterrupt])
def test_a_failure_on_any_route_leaks_nothing(cp, route, where, error):
    import contextlib

    with contextlib.ExitStack() as held:
        x, register = route_input(route, held)
        bad = {"first": 0, "middle": 7, "last": 15}[where]  # 16 chunks
        calls = []

        def fn(c):
            calls.append(len(calls))
            if len(calls) - 1 == bad:
                raise error("fn failed")
            return chain(c, 3)

        before = resources(cp)
        out = np.full(x.shape, np.nan, np.float32)
        with pytest.raises(error) as info:
            stream_map(fn, x, out=out, chunk_bytes=ODD_CHUNK, streams=3, register=register)
        if error is Boom:
            assert any(f"chunk {bad} " in n for n in getattr(info.value, "__notes__", []))
        del info
        assert resources(cp, release=False) == before  # no thread, stream, pinned buffer or registration left
        assert len(calls) == bad + 1
        done = ~np.isnan(out)
        np.testing.assert_array_equal(out[done], chain(cp.asarray(x), 3).get()[done])
