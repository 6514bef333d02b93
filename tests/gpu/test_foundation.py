"""GPU tests of the runtime layer, the harness and the global-memory kernels (odd sizes, NumPy references)."""

import copy

import _checks as C
import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.work_stream()
    return cupy


def test_device_info_is_read_from_the_device():
    from gpumemlab.gpu import runtime

    info = runtime.device_info()
    assert info["sm_count"] > 0 and info["l2_bytes"] > 0
    assert info["arch"] == f"sm_{info['cc'][0]}{info['cc'][1]}"
    assert info["memory_bus_width_bits"] > 0 and info["memory_clock_khz"] > 0


@pytest.mark.parametrize("vtype,width", [("float", 1), ("float2", 2), ("float4", 4)])
@pytest.mark.parametrize("unroll", [1, 2, 4])
@pytest.mark.parametrize("n_vec", [1, 255, 257, 100_003])
def test_copy_vec_odd_sizes(cp, vtype, width, unroll, n_vec):
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import copy as K

    host = random_nonzero(n_vec * width, np.float32)
    src = cp.asarray(host)
    out = C.poisoned(cp, host.size + 4 * width * unroll, np.float32)  # room past the end: must keep its poison
    runtime.launch(K.copy_vec(vtype, unroll), max(1, -(-n_vec // (128 * unroll)) // 2), 128, out, src, np.int64(n_vec))
    runtime.synchronize()
    C.expect_equal(out[:host.size], host, f"copy_vec<{vtype}, {unroll}>")
    C.expect_tail(out, host.size, f"copy_vec<{vtype}, {unroll}>")


def _copied_where(cp, kernel, args, host, touched, what):
    """Launch ``kernel(out, src, *args)`` (4 blocks of 256 threads) into a poisoned out: the ``touched`` elements
    equal the source, every other one keeps its poison."""
    from gpumemlab.gpu import runtime

    out = C.poisoned(cp, host.size, np.float32)
    runtime.launch(kernel, 4, 256, out, cp.asarray(host), *args)
    got = out.get()
    C.expect_equal(got[touched], host[touched], what)
    C.expect_poison(got, what, ~touched)


def test_offset_and_stride_copy_match_numpy(cp):
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.kernels import copy as K

    n = 1000  # not a multiple of the block
    host = random_nonzero(n * 7 + 40, np.float32)
    for offset in (0, 1, 31):
        touched = np.zeros(host.size, bool)
        touched[offset:offset + n] = True
        _copied_where(cp, K.OFFSET_COPY, (offset, np.int64(n)), host, touched, f"offset_copy {offset}")
    touched = np.zeros(host.size, bool)
    touched[: 7 * n: 7] = True
    _copied_where(cp, K.STRIDE_COPY, (7, np.int64(n)), host, touched, "stride_copy 7")


@pytest.mark.parametrize("unroll", [4, 8])
@pytest.mark.parametrize("offset,stride", [(0, 1), (1, 1), (31, 1), (0, 2), (0, 7)])
def test_indexed_copy_ilp_matches_numpy(cp, unroll, offset, stride):
    """Grid smaller than one pass (grid-stride loop) and n not a multiple of block * unroll (tail guard)."""
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import copy as K

    n = 5000
    host = random_nonzero(n * stride + offset + 8, np.float32)
    out = C.poisoned(cp, host.size, np.float32)
    runtime.launch(K.indexed_copy_ilp(unroll), 2, 128, out, cp.asarray(host), offset, stride, np.int64(n))
    got = out.get()
    touched = np.zeros(host.size, bool)
    touched[offset: offset + n * stride: stride] = True
    C.expect_equal(got[touched], host[touched], f"indexed_copy_ilp<{unroll}>")
    C.expect_poison(got, f"indexed_copy_ilp<{unroll}>", ~touched)


def test_read_sum_partials(cp):
    """One partial per thread, each the sum of the float4 vectors its grid-stride loop visits (vector j: thread
    j % block of block (j // block // unroll) % grid), within gamma_(n-1) sum|x| of its terms; nothing written past
    the last thread's partial."""
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import copy as K

    n_vec, grid, block, unroll = 12_345, 3, 64, 4
    host = random_nonzero(n_vec * 4, np.float32)
    partial = C.poisoned(cp, grid * block + 64, np.float32)
    runtime.launch(K.read_sum(unroll), grid, block, partial, cp.asarray(host), np.int64(n_vec))
    j = np.arange(n_vec)
    owner = (j // block // unroll) % grid * block + j % block
    vec = host.reshape(n_vec, 4).astype(np.float64)
    want = np.bincount(owner, weights=vec.sum(axis=1), minlength=grid * block)
    spread = np.bincount(owner, weights=np.abs(vec).sum(axis=1), minlength=grid * block)
    terms = 4 * np.bincount(owner, minlength=grid * block).max()
    C.expect_within(partial[:grid * block], want, C.gamma(terms - 1, np.float32) * spread, "read_sum partials")
    C.expect_tail(partial, grid * block, "read_sum partials")


def test_increment_patterns_touch_each_element_once(cp):
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import coalescing as K

    log2n = 13
    n = 1 << log2n
    for pattern in K.PATTERNS:
        a = cp.zeros(n + 32, cp.float32)
        runtime.launch(K.increment(pattern), n // 256, 256, a, np.int64(n), log2n)
        got = a.get()
        if pattern == "misaligned":
            assert got[0] == 0 and (got[1:n + 1] == 1).all()
        elif pattern == "partial":
            lane = np.arange(n) % 16
            assert (got[:n] == ((lane != 3) & (lane != 13))).all()
        else:
            assert (got[:n] == 1).all(), pattern  # random is a bijection: every element exactly once
        assert (got[n + 1:] == 0).all()


def test_increment_patterns_at_a_size_not_a_power_of_two(cp):
    """The seed's 3M floats is 3 * 2^20: every pattern but random (a permutation of 2^log2n) runs on any n."""
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import coalescing as K

    n = 3 * 1024
    for pattern in ("coalesced", "partial", "permuted", "misaligned"):
        a = cp.zeros(n + 64, cp.float32)
        runtime.launch(K.increment(pattern), n // 256 + 1, 256, a, np.int64(n), 12)
        got = a.get()
        lo = 1 if pattern == "misaligned" else 0
        assert got[:lo].sum() == 0 and (got[lo + n:] == 0).all(), pattern
        if pattern != "partial":
            assert (got[lo:lo + n] == 1).all(), pattern


@pytest.mark.parametrize("n", [1, 255, 1001])
def test_aos_kernels(cp, n):
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import coalescing as K

    pts = random_nonzero((n, 3), np.float32)
    want = pts + np.array([1, 2, 3], np.float32)
    grid = -(-n // K.AOS_BLOCK)
    for spec in (K.AOS_DIRECT, K.AOS_SHARED):
        a = cp.asarray(pts)
        runtime.launch(spec, grid, K.AOS_BLOCK, a, n)
        np.testing.assert_array_equal(a.get(), want)
    a16 = cp.zeros((n, 4), cp.float32)
    a16[:, :3] = cp.asarray(pts)
    runtime.launch(K.AOS_ALIGN16, grid, K.AOS_BLOCK, a16, n)
    np.testing.assert_array_equal(a16[:, :3].get(), want)
    s = cp.asarray(np.ascontiguousarray(pts.T))
    runtime.launch(K.SOA, grid, K.AOS_BLOCK, s[0], s[1], s[2], n)
    np.testing.assert_array_equal(s.get().T, want)


@pytest.mark.parametrize("layout", ["chunked", "interleaved"])
@pytest.mark.parametrize("blocks,n", [(1, 1000), (3, 77_777)])
def test_squares_sum(cp, layout, blocks, n):
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import squares_sum as K

    host = random_nonzero(n, np.int32)
    partial = cp.full(blocks * 256, -1, cp.int32)
    runtime.launch(K.LAYOUTS[layout], blocks, 256, partial, cp.asarray(host), np.int64(n))
    assert int(partial.get().astype(np.int64).sum()) == int((host.astype(np.int64) ** 2).sum())


def test_timer_gives_at_least_ten_samples(cp):
    from gpumemlab.bench.timer import L2Flusher, TimerConfig, time_gpu
    from gpumemlab.gpu import runtime

    a = cp.ones(1 << 22, cp.float32)
    flusher = L2Flusher(runtime.device_info()["l2_bytes"])
    t = time_gpu(lambda: cp.multiply(a, 2, out=a), flusher=flusher, cfg=TimerConfig(min_time_s=0.0))
    assert t.stats.n >= 10 and t.cold_l2 and t.inner == 1
    assert 0 < t.stats.min <= t.stats.median <= t.stats.max
    t2 = time_gpu(lambda: cp.multiply(a, 2, out=a), cfg=TimerConfig(min_time_s=0.0))
    assert t2.inner >= 1 and t2.stats.n >= 10


def test_work_stream_stays_current(session):
    import cupy

    assert cupy.cuda.get_current_stream().ptr == session.stream.handle


def test_ceilings_are_plausible(session):
    from gpumemlab.bench.records import Record
    from gpumemlab.suite.ceilings import implausible_ceilings, raise_ceilings

    c = session.ceilings
    for key in ("dram_theoretical_gbps", "memcpy_gbps", "copy_kernel_gbps", "copy_gbps", "read_gbps",
                "sgemm_cublas_gflops", "fp32_peak_gflops"):
        assert c[key]["value"] > 0, key
    # from both sides, here and in implausible_ceilings: copy and read within 0.5-1.05x of the DRAM datasheet figure,
    # SGEMM 0.3-1.05x of the FP32 peak
    dram, fp32 = c["dram_theoretical_gbps"]["value"], c["fp32_peak_gflops"]["value"]
    for key, peak, lo in (("copy_gbps", dram, 0.5), ("read_gbps", dram, 0.5), ("sgemm_cublas_gflops", fp32, 0.3)):
        assert lo <= c[key]["value"] / peak <= 1.05, (key, c[key]["value"], peak)
        assert "measured_as" not in c[key]  # no record raised it yet
    assert implausible_ceilings(c) == []
    # a record above a ceiling raises it; the value before raising stays recorded (measured_as) and is checked too
    raised = copy.deepcopy(c)
    above = Record("x", "v", {}, 8, None, dict(median=1.0), c["copy_gbps"]["value"] * 1.01, None, None, "copy_gbps",
                   True)
    assert raise_ceilings(raised, [above]) is True
    assert raised["copy_gbps"]["measured_as"] == c["copy_gbps"]["value"] and implausible_ceilings(raised) == []
    assert raised["copy_gbps"]["value"] == above.gbps
    # a measurement below the lower side is caught even when a record raised the ceiling back above it
    low = copy.deepcopy(c)
    low["copy_gbps"]["value"] = 0.45 * dram
    assert raise_ceilings(low, [above]) is True
    assert [line.split(" is ")[0] for line in implausible_ceilings(low)] == [
        f"copy_gbps measured {0.45 * dram:.4g} GB/s"]


def test_verification_catches_an_unwritten_output(cp):
    from gpumemlab.bench.verify import check_equal_device, poison
    from gpumemlab.errors import VerificationError

    src = cp.arange(10, dtype=cp.float32) + 1
    out = cp.empty_like(src)
    poison(out)
    out[:9] = src[:9]
    with pytest.raises(VerificationError, match="1 of 10 elements wrong"):
        check_equal_device(out, src, what="demo")


@pytest.mark.parametrize("dtype,shape", [("float32", (1,)), ("float32", (1001, 3)), ("int32", (17,)),
                                         ("float64", (4097,)), ("uint8", (33,)), ("float32", (0,))])
def test_library_copy(cp, dtype, shape):
    """A new array, and a caller's poisoned ``out``: the whole array, and a 1-D view one element in (misaligned)
    that must leave element 0 alone."""
    import gpumemlab
    from gpumemlab.bench.verify import poison

    host = np.random.default_rng(1).integers(1, 100, size=shape).astype(dtype)  # no value equals the poison
    x = cp.asarray(host)
    y = gpumemlab.copy(x)
    assert y.shape == x.shape and y.dtype == x.dtype and y.flags.c_contiguous
    assert x.size == 0 or y.data.ptr != x.data.ptr
    np.testing.assert_array_equal(y.get(), host)
    views = [slice(None)] + ([slice(1, None)] if x.ndim == 1 and x.size > 1 else [])
    for view in views:
        out = cp.empty_like(x)
        poison(out)
        poisoned = out.get()
        got = gpumemlab.copy(x[view], out=out[view])
        assert x.size == 0 or got.data.ptr == out[view].data.ptr
        after = out.get()
        np.testing.assert_array_equal(after[view], host[view])  # poison (NaN, -0x5A5A5A5A, 255) never equals
        if view.start:
            assert after[:1].tobytes() == poisoned[:1].tobytes()  # nothing written before the view


def test_library_copy_rejects_host_and_mismatched_out(cp):
    import gpumemlab

    with pytest.raises(TypeError, match="NumPy \\(host\\) array"):
        gpumemlab.copy(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="out: shape"):
        gpumemlab.copy(cp.zeros(3, cp.float32), out=cp.zeros(4, cp.float32))
    with pytest.raises(TypeError, match="dtype int32 not supported"):
        gpumemlab.copy(cp.zeros(3, cp.float32), out=cp.zeros(3, cp.int32))
