"""stream_map without a GPU: argument checks that come before any device work, and the busy-time union."""

from __future__ import annotations

import numpy as np
import pytest

from gpumemlab.errors import NoDeviceError, UsageError
from gpumemlab.ops import stream_map as sm


def double(c):
    return c * 2


@pytest.mark.parametrize("x,words", [
    ([1.0, 2.0], "host NumPy array, not list"),
    (np.float32(3.0), "host NumPy array, not float32"),
    (np.zeros(()), "at least one row"),
    (np.zeros((0, 4)), "at least one row"),
    (np.zeros((5, 0)), "rows of x are empty"),
    (np.array([object()] * 3), "numeric dtype"),
])
def test_bad_x_is_one_clear_usage_error(x, words):
    with pytest.raises(UsageError, match=words):
        sm.stream_map(double, x)


def test_a_device_array_gets_a_hint():
    class FakeDeviceArray:
        __cuda_array_interface__ = {}
    with pytest.raises(UsageError, match="call fn on it directly"):
        sm.stream_map(double, FakeDeviceArray())


@pytest.mark.parametrize("kw,words", [
    (dict(chunk_bytes=0), "chunk_bytes must be a positive integer, got 0"),
    (dict(chunk_bytes=1.5), "chunk_bytes must be a positive integer, got 1.5"),
    (dict(streams=-2), "streams must be a positive integer, got -2"),
    (dict(streams=True), "streams must be a positive integer, got True"),
    (dict(workers="4"), "workers must be a positive integer, got '4'"),
    (dict(out=np.zeros(7)), "out must be a NumPy array with 8 rows like x"),
    (dict(out=[0.0] * 8), "out must be a NumPy array with 8 rows like x, got list"),
    (dict(register="yes"), "register must be \"auto\", None, True or False, got 'yes'"),
    (dict(register=1.0), "register must be \"auto\", None, True or False, got 1.0"),
])
def test_bad_options_are_refused_before_any_gpu_work(kw, words):
    with pytest.raises(UsageError, match=words):
        sm.stream_map(double, np.ones(8, np.float32), **kw)


def test_fn_must_be_callable():
    with pytest.raises(UsageError, match="fn must be callable, got int"):
        sm.stream_map(3, np.ones(8))


def test_no_gpu_is_one_line(monkeypatch):
    from gpumemlab.gpu import runtime

    def missing():
        raise NoDeviceError("no CUDA device: the driver reports no GPU")
    monkeypatch.setattr(runtime, "ensure_device", missing)
    with pytest.raises(NoDeviceError, match="no CUDA device"):
        sm.stream_map(double, np.ones(8, np.float32))


@pytest.mark.parametrize("intervals,total", [
    ([], 0.0),
    ([(0.0, 1.0)], 1.0),
    ([(0.0, 1.0), (2.0, 3.5)], 2.5),          # disjoint: the sum
    ([(0.0, 2.0), (1.0, 3.0)], 3.0),          # overlapping: [0, 3]
    ([(1.0, 3.0), (0.0, 2.0), (2.5, 2.7)], 3.0),  # unsorted, one inside another
    ([(0.0, 4.0), (1.0, 2.0)], 4.0),          # nested
])
def test_busy_time_is_the_union_of_intervals(intervals, total):
    assert sm._union_ms(intervals) == pytest.approx(total)


def test_copy_rows_handles_strided_sources():
    src = np.arange(40, dtype=np.float32).reshape(10, 4)[:, ::2]  # not contiguous
    dst = np.full((10, 2), np.nan, np.float32)
    sm.copy_rows(dst, src, 2, 7)
    np.testing.assert_array_equal(dst[2:7], src[2:7])
    assert np.isnan(dst[:2]).all() and np.isnan(dst[7:]).all()
    contiguous = np.arange(12, dtype=np.int64).reshape(6, 2)
    out = np.zeros_like(contiguous)
    sm.copy_rows(out, contiguous, 0, 6)
    np.testing.assert_array_equal(out, contiguous)


def test_file_backed_arrays_are_recognised(tmp_path):
    path = tmp_path / "x.bin"
    np.arange(64, dtype=np.float32).tofile(path)
    mm = np.memmap(path, dtype=np.float32, mode="r", shape=(8, 8))
    assert sm._file_backed(mm) and sm._file_backed(mm[2:5]) and sm._file_backed(np.asarray(mm)[1:])
    plain = np.arange(64, dtype=np.float32).reshape(8, 8)
    assert not sm._file_backed(plain) and not sm._file_backed(plain[1:, ::2])


def test_balance_alternates_until_both_costs_are_measured():
    b = sm.Balance(workers=4)
    assert b.share() is None
    assert [b.register_next(100) for _ in range(4)] == [True, False, True, False]
    b.add_pin(1.0, 100)
    assert b.share() is None  # no copy measured yet


@pytest.mark.parametrize("pin,copy,out_per_in,share", [
    # c_pin = 2 * 1 s / 100 B = 0.02; c_copy = 4 s / 100 B / 4 workers = 0.01: p = 2 * 0.01 / 0.03
    ((1.0, 100), (4.0, 100), 1.0, 2 / 3),
    ((1.0, 100), (4.0, 100), 0.5, 1.5 * 0.01 / 0.03),   # a smaller output leaves the copy threads more input
    ((0.1, 100), (4.0, 100), 1.0, 1.0),                  # a fast pinner takes every chunk (2 * 0.01 / 0.012 > 1)
])
def test_balance_share_makes_both_sides_finish_together(pin, copy, out_per_in, share):
    b = sm.Balance(workers=4)
    b.out_per_in = out_per_in
    b.add_pin(*pin)
    b.add_copy(*copy)
    assert b.share() == pytest.approx(share)


def test_balance_routes_the_measured_share():
    b = sm.Balance(workers=4)
    b.add_pin(1.0, 100)
    b.add_copy(4.0, 100)      # share 2/3, as above
    routed = [b.register_next(10) for _ in range(30)]
    assert sum(routed) == 20 and b.registered == 200 and b.staged == 100
    assert routed[:6] == [True, False, True, True, False, True]  # spread evenly: two of every three


# ---------------------------------------------------------------- default route, NVTX, progress, host pages

@pytest.mark.parametrize("measured,route", [
    ("none", sm.Route(None, "fallback")),      # no measurement for this host: balanced, which adapts in the call
    (True, sm.Route(True, "table")),
    (False, sm.Route(False, "table")),
    (None, sm.Route(None, "table")),
])
def test_the_default_route_is_the_measured_one(monkeypatch, measured, route):
    from gpumemlab.ops import _stream_route

    monkeypatch.setattr(_stream_route, "default_register", lambda: measured)
    assert sm._route("auto") == route
    assert sm._route(False) == sm.Route(False, "argument")  # an explicit choice is never replaced


def test_host_route_table_is_read_for_this_host_only():
    from gpumemlab.tune.host_route import chosen_register, host_signature, parse_size

    here, there = parse_size("256MiB"), "256 MiB on another CPU, 4 CPUs, 8 GiB"
    assert here == f"256 MiB on {host_signature()}" and parse_size(here) == here
    entry = {"chosen": {there: {"params": {"route": "staged"}}}}
    assert chosen_register(entry) == "none" and chosen_register(None) == "none"
    entry["chosen"][here] = {"params": {"route": "registered"}}
    entry["chosen"][parse_size("64")] = {"params": {"route": "staged"}}
    assert chosen_register(entry) is True  # the largest size measured on this host decides


@pytest.mark.parametrize("text", ["0", "-3", "big", "12 GiB"])
def test_host_route_sizes_are_checked(text):
    from gpumemlab.tune.host_route import parse_size

    with pytest.raises(UsageError, match="host_route size"):
        parse_size(text)


def test_nvtx_ranges_are_named_by_chunk_stage_and_device():
    from fake_nvtx import FakeNvtx

    from gpumemlab.ops._stream_trace import Ranges

    fake = FakeNvtx()
    ranges = Ranges(1, module=fake)
    with ranges(3, "h2d"):
        pass
    with pytest.raises(ValueError), ranges(4, "fn"):
        raise ValueError("fn failed")  # the range is closed on the way out
    assert fake.events == [("domain", "gpumemlab"), ("push", "chunk 3 h2d dev 1"), ("pop",),
                           ("push", "chunk 4 fn dev 1"), ("pop",)]


def test_without_nvtx_the_ranges_do_nothing(monkeypatch):
    import sys

    from gpumemlab.ops import _stream_trace

    monkeypatch.setitem(sys.modules, "nvtx", None)  # import nvtx raises ImportError
    ranges = _stream_trace.Ranges(0)
    assert ranges.nvtx is None and ranges(0, "fn") is _stream_trace._NULL


def test_progress_bar_shows_bytes_rate_and_eta():
    import io

    from rich.console import Console

    from gpumemlab.ops._stream_trace import Bar

    buf = io.StringIO()
    with Bar(3_000_000_000, True, console=Console(file=buf, width=120)) as bar:
        for _ in range(3):
            bar.advance(1_000_000_000)
    text = buf.getvalue()
    assert "3.0/3.0 GB" in text and " GB/s" in text and "ETA" in text
    quiet = Bar(10, False)
    with quiet:
        quiet.advance(10)  # disabled: no rich objects at all
    assert quiet.progress is None


class FakeBuffer:
    def __init__(self, nbytes):
        self.nbytes, self.closed = nbytes, False

    def close(self):
        self.closed = True


def test_the_staging_cache_keeps_each_devices_share(monkeypatch):
    monkeypatch.setattr(sm, "_staging", [])
    first, second = [FakeBuffer(400) for _ in range(2)], [FakeBuffer(400) for _ in range(2)]
    sm._keep_staging(first, limit=2 * 1000)   # two devices' pipelines closing one after the other
    sm._keep_staging(second, limit=2 * 1000)
    assert sm._staging == second[::-1] + first[::-1] and not any(b.closed for b in first + second)
    sm._keep_staging([FakeBuffer(400)], limit=1000)  # over the limit: the oldest are freed
    assert [b.closed for b in first] == [True, True] and [b.closed for b in second] == [True, False]
    assert sum(b.nbytes for b in sm._staging) == 800
