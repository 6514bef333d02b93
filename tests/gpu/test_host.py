"""GPU tests of gpu/host.py (allocation kinds, registration, pointer attributes, pitched memory, 1-D/2-D copies,
leaks after errors) and of the five host-side experiments in quick mode through the runner."""

import _checks as C
import numpy as np
import pytest

from gpumemlab.errors import GpumemlabError, UsageError

pytestmark = pytest.mark.gpu


@pytest.fixture
def h():
    from gpumemlab.gpu import host

    return host


@pytest.fixture
def cupy():
    import cupy

    return cupy


def in_use(cupy, host):
    """Device bytes CuPy hands out plus every byte this module holds (pinned, registered, pitched)."""
    cupy.cuda.Device().synchronize()
    return cupy.get_default_memory_pool().used_bytes(), host.live_bytes()


@pytest.mark.parametrize("kind", ["pinned", "write_combined", "mapped"])
def test_host_array_roundtrip_and_attributes(h, cupy, kind):
    before = in_use(cupy, h)
    x = np.arange(1, 4097, dtype=np.float32)
    with h.host_array((64, 64), np.float32, kind) as buf:
        assert buf.array.shape == (64, 64) and buf.nbytes == 4 * 4096
        assert h.live_bytes()[kind] == before[1][kind] + 4 * 4096
        dev = cupy.asarray(x)
        h.copy_async(buf, dev)
        out = cupy.full(4096, np.nan, np.float32)
        h.copy_async(out, buf)  # back through the same host memory (no CPU read of write-combined memory)
        cupy.cuda.get_current_stream().synchronize()
        assert bool(cupy.array_equal(out, dev))
        attrs = h.pointer_attributes(buf)
        assert attrs["memory"] == "host"
        if kind == "mapped":
            assert buf.device_ptr is not None
            assert h.pointer_attributes(buf.device_ptr)["memory"] == "host"
    assert buf.closed and buf.array is None
    del dev, out
    assert in_use(cupy, h) == before


def test_mapped_memory_read_by_a_kernel(h, cupy):
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import host as K

    n4 = 1024
    with h.host_array(4 * n4, np.float32, "mapped") as buf:
        buf.array[:] = np.linspace(-1, 1, 4 * n4, dtype=np.float32)
        out = cupy.full(4 * n4, np.nan, np.float32)
        runtime.launch(K.SCALE_VEC4, 8, 128, out, np.uint64(buf.device_ptr), np.float32(2.0), np.int64(n4))
        np.testing.assert_array_equal(out.get(), 2 * buf.array)


def test_register_pins_in_place_and_unregisters(h, cupy):
    a = np.arange(1 << 16, dtype=np.int32)
    assert h.pointer_attributes(a)["memory"] == "unregistered"
    with h.register(a, mapped=True) as reg:
        assert h.pointer_attributes(a)["memory"] == "host"
        assert reg.device_ptr and h.live_bytes()["registered"] >= a.nbytes
        d = cupy.empty(a.size, np.int32)
        h.copy_async(d, a)
        np.testing.assert_array_equal(d.get(), a)
    assert h.pointer_attributes(a)["memory"] == "unregistered"


def test_register_rejects_bad_arrays(h):
    with pytest.raises(UsageError, match="C-contiguous"):
        h.register(np.zeros((8, 8), np.float32)[:, ::2])
    with pytest.raises(UsageError, match="NumPy array"):
        h.register([1, 2, 3])
    with pytest.raises(UsageError, match="unknown host memory kind"):
        h.host_array(16, np.float32, "locked")
    with pytest.raises(UsageError, match="empty"):
        h.host_array(0)


def test_device_pointer_attributes(h, cupy):
    d = cupy.zeros(16, np.float32)
    a = h.pointer_attributes(d)
    assert a["memory"] == "device" and a["device_pointer"] == d.data.ptr and a["device"] == d.device.id


def test_pitched_allocation_and_2d_copy(h, cupy):
    rows, cols = 100, 1001
    src = np.random.default_rng(0).random((rows, cols), dtype=np.float32)
    with h.pitched(rows, cols) as p:
        assert p.pitch >= 4 * cols and p.pitch % 128 == 0, p.pitch
        view = p.cupy()
        view.fill(np.nan)
        h.copy_2d_async(p, p.pitch, src, 4 * cols, 4 * cols, rows)
        np.testing.assert_array_equal(view.get(), src)
        back = np.zeros_like(src)
        h.copy_2d_async(back, 4 * cols, p, p.pitch, 4 * cols, rows)
        cupy.cuda.get_current_stream().synchronize()
        np.testing.assert_array_equal(back, src)
        with pytest.raises(UsageError, match="exceeds a pitch"):
            h.copy_2d_async(p, 16, src, 4 * cols, 4 * cols, rows)
        with pytest.raises(UsageError, match="need"):
            h.copy_2d_async(back, 4 * cols, p, p.pitch, 4 * cols, rows + 1)


def test_copy_size_checked(h, cupy):
    d = cupy.zeros(4, np.float32)
    with pytest.raises(UsageError, match="does not fit"):
        h.copy_async(d, np.zeros(8, np.float32), 32)
    with pytest.raises(UsageError, match="needs nbytes"):
        h.copy_async(d.data.ptr, 0)


def test_nothing_leaks_when_a_block_raises(h, cupy):
    before = in_use(cupy, h)
    with pytest.raises(RuntimeError, match="mid-way"):
        with h.host_array(1 << 20, np.uint8) as a, h.pitched(64, 1001) as p, h.host_array(4096, np.float32,
                                                                                             "mapped"):
            d = cupy.empty(1 << 20, np.uint8)
            reg_src = np.ones(1 << 14, np.float32)
            with h.register(reg_src):
                h.copy_async(d, a)
                assert p.pitch > 0
                raise RuntimeError("mid-way")
    del d
    assert in_use(cupy, h) == before


def test_an_impossible_pinning_is_a_typed_error_and_leaks_nothing(h, cupy):
    before = in_use(cupy, h)
    with pytest.raises(GpumemlabError, match="cudaHostAlloc"):
        h.host_array(1 << 60, np.uint8)
    assert in_use(cupy, h) == before


def test_fork_join_and_timing_events(h, cupy):
    streams = h.side_streams(3)
    assert len(streams) == 3 and h.side_streams(2) == streams[:2]
    x = cupy.arange(1 << 20, dtype=np.float32)
    outs = [C.poisoned(cupy, x.shape, x.dtype) for _ in streams]
    t0 = h.timing_event()
    h.fork(streams)
    for s, o in zip(streams, outs):
        h.run_on_stream(s, lambda o=o: h.copy_async(o, x))
    h.join(streams)
    t1 = h.timing_event()
    t1.synchronize()
    assert h.seconds_between(t0, t1) > 0
    for i, o in enumerate(outs):
        C.expect_equal(o, x, f"copy on side stream {i}")


def test_copy_engines_and_link(h):
    from gpumemlab.gpu import runtime

    assert h.copy_engines() == runtime.device_info()["copy_engines"] >= 1
    link = h.pcie_link()
    if link is not None:  # nvidia-ml-py installed
        assert link.max_generation >= 1 and link.max_width >= 1 and link.gbps > 0


@pytest.mark.parametrize("name", ["transfer_bandwidth", "transfer_batching", "stream_overlap", "zero_copy",
                                  "pitched_copy"])
def test_experiment_quick(name, h, cupy, tmp_path):
    from gpumemlab import experiments
    from gpumemlab.bench.records import RunResults
    from gpumemlab.bench.session import Session
    from gpumemlab.report.plots import write_plots
    from gpumemlab.suite.runner import run_experiment

    exp = experiments.get(name)
    s = Session(quick=True)
    before = h.live_bytes()
    recs = run_experiment(s, exp, dict(exp.params))
    assert recs and all(r.verified or r.variant == "cpuFunction alone" for r in recs)
    assert all(r.median_s > 0 for r in recs)
    found = exp.describe(recs)["findings"]
    assert found and not any(f.startswith("(no finding") for f in found), found
    assert h.live_bytes() == before  # every host buffer of the experiment was freed
    res = RunResults(meta={}, device=s.device, ceilings=s.ceilings, results=recs,
                     experiments={name: exp.describe(recs)})
    assert write_plots(res, tmp_path) == {name: f"{name}.png"}
    s.close()
    if name == "stream_overlap":
        staged = [r for r in recs if r.variant == "copy + kernel"]
        assert {r.model["regime"] for r in staged} == {"tE >= tT", "tT > tE"}
        traced = [r for r in recs if r.extra.get("timeline")]
        assert len(traced) == 1 and len(traced[0].extra["timeline"]) == 2 * traced[0].params["n_streams"]
    if name == "zero_copy":
        ptrs = next(r for r in recs if r.variant == "cudaMemcpyDefault H2D").extra["pointers"]
        assert all(p["ok"] for p in ptrs.values()), ptrs
    if name == "transfer_bandwidth":
        assert all(r.extra.get("mechanism") == "CE" for r in recs if r.params["direction"] != "pinning")
        assert "h2d_best_gbps" in s.ceilings and "d2h_best_gbps" in s.ceilings
