"""GPU tests of on-chip memory controls: the L2 persisting window (gpu/l2.py, persist_l2), textures
(gpu/texture.py, sample2d against map_coordinates and NumPy) and constant memory (conv1d taps)."""

import _checks as C
import numpy as np
import pytest

pytestmark = pytest.mark.gpu

ADDRESS = ("clamp", "wrap", "mirror", "border")


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.work_stream()
    return cupy


@pytest.fixture(scope="module")
def persisting():
    from gpumemlab.gpu import l2

    reason = l2.unsupported_reason()
    if reason:
        pytest.skip(reason)
    return l2


# ---------------------------------------------------------------- L2 persisting window

def test_window_set_read_back_and_cleared(cp, persisting):
    l2 = persisting
    buf = cp.zeros(1 << 20, cp.uint8)
    before = l2.get_window()
    w = l2.persisting_window(buf.data.ptr, buf.nbytes, 0.5)
    l2.set_window(w)
    try:
        got = l2.get_window()
        assert (got.base_ptr, got.num_bytes, got.hit_prop, got.miss_prop) == (buf.data.ptr, buf.nbytes,
                                                                               "persisting", "streaming")
        assert got.hit_ratio == pytest.approx(0.5)
    finally:
        l2.set_window(before)
    assert l2.get_window() == before


def test_persist_l2_restores_limit_and_window_also_on_exception(cp, persisting):
    import gpumemlab

    l2 = persisting
    a = cp.ones(1 << 20, cp.float32)
    limit0, window0 = l2.persisting_limit(), l2.get_window()
    with pytest.raises(RuntimeError, match="inside"):
        with gpumemlab.persist_l2(a, hit_ratio=1.0) as ctx:
            got = l2.get_window()
            assert (got.base_ptr, got.num_bytes, got.hit_ratio) == (a.data.ptr, a.nbytes, 1.0)
            assert l2.persisting_limit() >= a.nbytes and ctx.set_aside >= a.nbytes
            raise RuntimeError("inside")
    assert (l2.persisting_limit(), l2.get_window()) == (limit0, window0)


def test_persist_l2_sets_what_it_reports_and_says_who_chose_it(cp, persisting):
    import gpumemlab
    from gpumemlab.gpu import runtime
    from gpumemlab.ops.l2 import measured_entry, measured_policy

    lim, info = persisting.limits(), runtime.device_info()
    a = cp.ones(lim["max_set_aside"] // 2, cp.uint32)  # twice the set-aside in bytes
    policy, source = measured_policy(a.nbytes, info)
    before = persisting.get_window()
    with gpumemlab.persist_l2(a) as ctx:
        assert (ctx.policy, ctx.hit_ratio_source) == (policy, source)
        if policy == "no window":  # measured fastest here: nothing set
            assert ctx.window is None and persisting.get_window() == before
        else:
            assert persisting.get_window().hit_ratio == pytest.approx(ctx.hit_ratio)  # the driver keeps a float
    assert source.startswith("measured:") == (measured_entry(info) is not None)
    with gpumemlab.persist_l2(a, hit_ratio=0.25) as ctx:
        assert (ctx.hit_ratio_source, persisting.get_window().hit_ratio) == ("given", pytest.approx(0.25))


def test_a_window_on_a_cuda_graph_kernel_node(cp, persisting):
    """The access policy window set on a captured kernel node (seed 003, 9.2.2.1), read back, and the result right."""
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import l2 as K

    n, size = 4 * K.BLOCK + 9, 100
    table, stream = cp.arange(size, dtype=cp.float32), cp.ones(n, cp.float32)
    out = cp.full(n, np.nan, cp.float32)
    ws = runtime.work_stream()
    window = persisting.persisting_window(table.data.ptr, table.nbytes, 0.5)
    graph = persisting.WindowedGraph(lambda: runtime.launch(K.TABLE_STREAM, -(-n // K.BLOCK), K.BLOCK, out, stream,
                                                            table, np.uint32(n), np.uint32(size), stream=ws),
                                     window, ws)
    try:
        assert graph.kernel_nodes == 1 and graph.window() == window
        graph()
        ws.sync()
        assert cp.array_equal(out, 1 + cp.arange(n, dtype=cp.float32) % size)
    finally:
        graph.close()


def test_persist_l2_nesting_and_arguments(cp, persisting):
    import gpumemlab
    from gpumemlab.errors import UsageError

    a, b = cp.ones(1000, cp.float32), cp.ones(3000, cp.float32)
    with pytest.raises(UsageError, match="hit_ratio"):
        gpumemlab.persist_l2(a, hit_ratio=1.5)
    with pytest.raises(TypeError, match="host"):
        gpumemlab.persist_l2(np.ones(4))
    outer, inner = gpumemlab.persist_l2(a, hit_ratio=1.0), gpumemlab.persist_l2(b, hit_ratio=0.25)
    with outer:
        with inner:
            assert persisting.get_window().num_bytes == b.nbytes
        assert persisting.get_window().num_bytes == a.nbytes  # the outer window is back
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(UsageError, match="reverse order"):
        outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)
    with pytest.raises(UsageError, match="already active"):
        with outer:
            outer.__enter__()
    assert persisting.get_window() == persisting.NO_WINDOW


def test_persist_l2_speeds_up_a_reused_region_while_streaming(cp, persisting):
    """The sliding-window kernel: a region half the set-aside re-read while 8x L2 streams past it. The window's
    gain is measured against the same set-aside reserved without a window; the run with the limit as found is
    recorded (on an H100 the reservation itself slowed this read-modify-write stream more than the window won)."""
    import gpumemlab
    from gpumemlab.bench.timer import TimerConfig, time_gpu
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import l2 as K

    l2 = persisting
    lim = l2.limits()
    hot = cp.ones(lim["max_set_aside"] // 8, cp.uint32)  # half the set-aside, in bytes
    n = (8 * lim["l2_bytes"] // 4) // K.BLOCK * K.BLOCK
    stream = cp.ones(n, cp.uint32)
    ws = runtime.work_stream()

    def run():
        runtime.launch(K.SLIDING_WINDOW, n // K.BLOCK, K.BLOCK, hot, stream, np.uint32(n), np.uint32(hot.size))

    cfg = TimerConfig(min_samples=20, min_time_s=0.2, max_time_s=1.0)
    limit0, window0 = l2.persisting_limit(), l2.get_window(ws)
    as_found = time_gpu(run, stream=ws, cfg=cfg).stats.median
    with gpumemlab.persist_l2(hot, hit_ratio=1.0, stream=ws) as ctx:
        kept = time_gpu(run, stream=ws, cfg=cfg).stats.median
    l2.set_persisting_limit(ctx.set_aside)
    try:
        reserved = time_gpu(run, stream=ws, cfg=cfg).stats.median
    finally:
        l2.set_persisting_limit(limit0)
    again = time_gpu(run, stream=ws, cfg=cfg).stats.median
    print(f"as found {as_found:.3e} s, persist_l2 {kept:.3e} s, set-aside only {reserved:.3e} s, after {again:.3e} s")
    assert reserved / kept > 1.1, f"no gain from the window: {reserved:.3e} s reserved only, {kept:.3e} s with it"
    assert abs(again / as_found - 1) < 0.1, f"after the context: {again:.3e} s vs {as_found:.3e} s before"
    assert (l2.persisting_limit(), l2.get_window(ws)) == (limit0, window0)


# ---------------------------------------------------------------- textures and sample2d

def _image(cp, h, w, seed=0):
    from gpumemlab.bench.verify import random_nonzero

    host = random_nonzero((h, w), np.float32, np.random.default_rng(seed))
    return host, cp.asarray(host)


def _points(cp, h, w, n, seed=1, margin=3.0):
    gen = np.random.default_rng(seed)
    rc = np.stack([gen.uniform(-margin, h - 1 + margin, n), gen.uniform(-margin, w - 1 + margin, n)], -1)
    return rc.astype(np.float32)


def reference(host, rc, address, linear):
    """NumPy float64 sampling (the experiment's reference, whose index math tests/test_onchip_cpu.py pins by hand);
    the tests also compare with cupyx's map_coordinates, an implementation of neither."""
    from gpumemlab.experiments.texture import reference_sample

    return reference_sample(host, rc, address, linear)


@pytest.mark.parametrize("address", ADDRESS)
@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("shape", [(37, 53), (64, 256)])  # rows misaligned for a pitched texture / aligned
def test_sample2d_matches_numpy_and_map_coordinates(cp, address, mode, shape):
    import gpumemlab
    from cupyx.scipy.ndimage import map_coordinates

    from gpumemlab.ops.sample import MAP_COORDINATES_MODE

    h, w = shape
    host, img = _image(cp, h, w)
    rc = _points(cp, h, w, 5000)
    want = reference(host, rc, address, mode == "linear")
    pts = cp.asarray(rc)
    exact = gpumemlab.sample2d(img, pts, mode=mode, address=address, exact=True).get()
    np.testing.assert_allclose(exact, want, rtol=1e-6, atol=1e-6)
    mc = map_coordinates(img, cp.asarray(rc.T), order=1 if mode == "linear" else 0,
                         mode=MAP_COORDINATES_MODE[address], cval=0.0).get()
    np.testing.assert_allclose(exact, mc, rtol=1e-6, atol=1e-6)
    out = C.poisoned(cp, rc.shape[:-1], cp.float32)
    for i in range(2):  # the same out twice, poisoned before each call
        C.run_poisoned(out, lambda: gpumemlab.sample2d(img, pts, mode=mode, address=address, out=out))
        C.expect_texture_sample(out, host, rc, address, mode == "linear", f"texture {mode} {address} call {i}")


def test_sample2d_normalized_and_shapes(cp):
    import gpumemlab

    host, img = _image(cp, 40, 96)
    rc = _points(cp, 40, 96, 24).reshape(2, 3, 4, 2)
    norm = (rc + 0.5) / np.array([40, 96], np.float32)
    want = reference(host, rc, "wrap", True)
    for exact in (True, False):
        got = gpumemlab.sample2d(img, cp.asarray(norm), address="wrap", normalized=True, exact=exact)
        assert got.shape == (2, 3, 4) and got.dtype == np.float32
        if exact:
            np.testing.assert_allclose(got.get(), want, atol=1e-5)
        else:
            C.expect_texture_sample(got, host, rc, "wrap", True, "normalized texture")
    assert gpumemlab.sample2d(img, cp.zeros((0, 2), cp.float32)).shape == (0,)


def test_sample2d_errors(cp):
    import gpumemlab
    from gpumemlab.errors import UsageError

    img = cp.ones((8, 8), cp.float32)
    with pytest.raises(UsageError, match="address"):
        gpumemlab.sample2d(img, cp.zeros((4, 2), cp.float32), address="repeat")
    with pytest.raises(UsageError, match="mode"):
        gpumemlab.sample2d(img, cp.zeros((4, 2), cp.float32), mode="cubic")
    with pytest.raises(UsageError, match=r"\(\.\.\., 2\)"):
        gpumemlab.sample2d(img, cp.zeros((4, 3), cp.float32))
    with pytest.raises(TypeError, match="float64"):
        gpumemlab.sample2d(img.astype(cp.float64), cp.zeros((4, 2), cp.float32))
    with pytest.raises(TypeError, match="host"):
        gpumemlab.sample2d(img.get(), cp.zeros((4, 2), cp.float32))


@pytest.mark.parametrize("shape", [(2999, 2), (37, 81, 2)], ids=["flat", "image-shaped"])
@pytest.mark.parametrize("array", [False, True], ids=["image", "ArrayImage"])
def test_sample2d_default_plans_match_map_coordinates(cp, shape, array):
    """The default plans (both coordinate shapes, image or ArrayImage): exact to 1e-6 of map_coordinates(order=1),
    the texture path within its 8-bit weights."""
    import gpumemlab
    from cupyx.scipy.ndimage import map_coordinates

    rng = np.random.default_rng(5)
    img = cp.asarray(rng.random((61, 75), dtype=np.float32) + 0.5)
    pts = cp.asarray((rng.random(shape) * [66, 80] - 3).astype(np.float32))
    want = map_coordinates(img, pts.reshape(-1, 2).T, order=1, mode="nearest").reshape(shape[:-1]).get()
    src = gpumemlab.ArrayImage(img) if array else img
    exact = gpumemlab.sample2d(src, pts, exact=True).get()
    np.testing.assert_allclose(exact, want, rtol=1e-6, atol=1e-6)
    assert np.abs(gpumemlab.sample2d(src, pts).get() - want).max() < 1.5 / 256


def _mappable():
    from gpumemlab.gpu import runtime

    if not runtime.device_info()["can_map_host_memory"]:
        pytest.skip("this GPU cannot map host memory: sample2d observes nothing")


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "texture"])
@pytest.mark.parametrize("n", [256 * 64, 300], ids=["64 blocks", "2 blocks"])
@pytest.mark.parametrize("axis,step,want", [(1, 0.25, 0), (1, 20.0, 32), (0, 17.0, 32), (0, 16.0, 1)])
def test_sample2d_reports_how_many_neighbouring_points_lie_apart(cp, monkeypatch, axis, step, want, n, exact):
    """Each of the 8 observing blocks counts, of its first warp's 32 neighbour pairs (lane 31 pairs with lane 0),
    those more than 16 pixels apart: points `step` apart along one axis in runs of 32, so lane 31 and lane 0 lie
    31 steps apart. Exact, 16384 points: 64 blocks of one sample per thread, observers at blocks 0, 8, ..., 56;
    texture: 8 blocks of 8 samples per thread, all observing; 300 points: 1 or 2 blocks, block 0 filling the slots of
    the blocks the grid lacks."""
    import gpumemlab
    from gpumemlab.gpu import runtime
    from gpumemlab.ops import sample

    _mappable()
    sample.clear_cache()  # a fresh board: this buffer's calls count from 1 (an earlier case may share its pointer)
    monkeypatch.setattr(sample, "observed", lambda n, sm_count: True)  # small grids observe too: the partial grid
    i = np.arange(n)
    rc = np.full((i.size, 2), 10.0)
    rc[:, axis] += (i % 32) * step
    pts = cp.asarray(rc.astype(np.float32))
    img = cp.ones((1024, 1024), cp.float32)
    gpumemlab.sample2d(img, pts, exact=exact)
    runtime.synchronize()
    assert sample._observations(pts, i.size)[0] == [want] * 8
    out = cp.empty(i.size, cp.float32)
    ln = sample.launch_for(img, pts, out, exact=exact, mode="linear", address="clamp")
    chosen, seen, shmem = sample.observed_launch(img, pts, out, ln, exact, "clamp")
    capped = want == 32 and runtime.device_info()["cc"][0] in sample.SCATTERED_ARCHS
    assert (chosen != ln, shmem > 0) == (capped, capped)
    # the buffer's third call (the first, then _observations, then observed_launch): seen, so not observed; the
    # 16th is
    addrs = [seen] + [sample._observations(pts, i.size)[1] for _ in range(14)]
    assert [k + 3 for k, a in enumerate(addrs) if a] == [sample.OBSERVE_EVERY]


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "texture"])
@pytest.mark.parametrize("image_shaped", [False, True], ids=["flat", "image-shaped"])
def test_sample2d_scattered_points_take_the_capped_layout_with_the_same_samples(cp, image_shaped, exact):
    """The second call on scattered points runs a flat one-sample kernel with its residency capped (where the cap
    was measured): the same samples, bit for bit, as the first call's layout, and map_coordinates' to 1e-6 (exact)
    or within the texture unit's 8-bit weights."""
    import gpumemlab
    from cupyx.scipy.ndimage import map_coordinates
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import texture as K
    from gpumemlab.ops import sample

    _mappable()
    sample.clear_cache()
    rows = 2 * sample.SCATTERED_SAMPLES_PER_SM * runtime.device_info()["sm_count"] // 256  # twice what the cap holds
    shape = (rows, 256, 2) if image_shaped else (rows * 256, 2)
    rng = np.random.default_rng(11)
    img = cp.asarray(rng.random((512, 700), dtype=np.float32) + 0.5)
    pts = cp.asarray((rng.random(shape) * [515, 703] - 1.5).astype(np.float32))
    first = gpumemlab.sample2d(img, pts, exact=exact).get()  # nothing observed yet: the default layout
    runtime.synchronize()
    out = cp.empty(shape[:-1], cp.float32)
    ln = sample.launch_for(img, pts, out, exact=exact, mode="linear", address="clamp")
    chosen, _, shmem = sample.observed_launch(img, pts, out, ln, exact, "clamp")
    if runtime.device_info()["cc"][0] in sample.SCATTERED_ARCHS:
        assert ("GML_L1_KEPT_COPY", "1") in chosen.spec.defines and (chosen.unroll, chosen.tiles) == (1, 1)
        assert runtime.max_active_blocks(chosen.spec, K.BLOCK, shmem) == sample.SCATTERED_SAMPLES_PER_SM // K.BLOCK
    else:
        assert (chosen, shmem) == (ln, 0)
    second = gpumemlab.sample2d(img, pts, exact=exact).get()
    np.testing.assert_array_equal(second, first)
    want = map_coordinates(img, pts.reshape(-1, 2).T, order=1, mode="nearest").reshape(shape[:-1]).get()
    if exact:
        np.testing.assert_allclose(second, want, rtol=1e-6, atol=1e-6)
    else:
        assert np.abs(second - want).max() < 1.5 / 256
    from gpumemlab.gpu import host

    held = host.live_bytes()
    board = sample._boards[runtime.current_ordinal()]
    sample.clear_cache()  # frees the observations' mapped memory; the next call starts unseen
    assert board._owner.closed and not sample._boards and host.live_bytes() == held  # a cache, not counted
    assert sample._observations(pts, out.size)[0] is None


@pytest.mark.parametrize("exact", [False, True], ids=["texture", "exact"])
@pytest.mark.parametrize("width", [64, 67], ids=["aligned rows", "padded for the texture unit"])
def test_sample2d_sees_writes_to_the_image(cp, width, exact):
    """A repeated call (a kept, prepared call) reads the image as it is now, also through the padded copy the
    texture unit needs for rows of 67 floats."""
    import gpumemlab

    img = cp.zeros((64, width), cp.float32)
    pts = cp.asarray([[3.0, 5.0], [60.0, 66.0]], cp.float32)
    assert gpumemlab.sample2d(img, pts, exact=exact).get().tolist() == [0.0, 0.0]
    img[3, 5], img[60, width - 1] = 7.0, 9.0
    assert gpumemlab.sample2d(img, pts, exact=exact).get().tolist() == [7.0, 9.0]


def test_sample2d_no_leak_over_10000_calls(cp):
    import gpumemlab
    from gpumemlab.gpu import runtime
    from gpumemlab.ops import sample

    pts = cp.asarray(_points(cp, 64, 64, 256))
    for i in range(50):  # warm the pool and the caches
        gpumemlab.sample2d(cp.ones((64, 64 + i % 3), cp.float32), pts)
    runtime.synchronize()
    free0, used0 = runtime.free_memory_bytes(), cp.get_default_memory_pool().used_bytes()
    for i in range(10_000):  # a new image each call (and misaligned ones that need a padded copy)
        gpumemlab.sample2d(cp.full((64, 64 + i % 3), float(i), cp.float32), pts, address=ADDRESS[i % 4])
    runtime.synchronize()
    assert len(sample._caches()[0]) <= sample.CACHE_SIZE and len(sample._calls) <= sample.CALLS
    assert cp.get_default_memory_pool().used_bytes() <= used0 + (1 << 20)
    assert runtime.free_memory_bytes() >= free0 - (64 << 20)


def test_array_and_pitched_textures_agree(cp):
    from gpumemlab.gpu import runtime
    from gpumemlab.gpu import texture as T
    from gpumemlab.kernels import texture as K

    host, img = _image(cp, 128, 256)
    rc = _points(cp, 128, 256, 4096)
    pts = cp.asarray(rc)
    outs = []
    for tex in (T.pitched_texture(img, filter="point"), T.array_texture(img, filter="point")):
        out = cp.full(len(rc), cp.nan, cp.float32)
        runtime.launch(K.SAMPLE_TEX, 16, 256, out, tex.handle, pts, np.int64(len(rc)), np.float32(1), np.float32(0.5),
                       np.float32(1), np.float32(0.5))
        outs.append(out.get())
    np.testing.assert_array_equal(outs[0], outs[1])
    assert np.mean(outs[0] == reference(host, rc, "clamp", False).astype(np.float32)) > 0.999


def _plans(array: bool):
    """Plans covering every tiling path, and the texel sources that apply to a pitched image or an ArrayImage."""
    from gpumemlab.ops.sample import Plan

    common = [Plan(samples=4), Plan(samples=4, vector=True), Plan(samples=8, vector=True, order="rows"),
              Plan(samples=2, order="rows", weights="float"), Plan(streaming=True),
              Plan(samples=4, vector=True, order="rows", streaming=True)]
    if array:
        return common + [Plan(source="points"), Plan(samples=4, vector=True, order="rows", source="gather"),
                         Plan(source="gather", weights="float")]
    return common + [Plan(source="ldg", weights="float"), Plan(samples=4, source="row4"),
                     Plan(samples=4, vector=True, order="rows", source="row4", weights="float")]


@pytest.mark.parametrize("address", ADDRESS)
@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("shape", [(37, 52), (29, 61)])  # rows 16-byte aligned (row4's float4 loads) / not
@pytest.mark.parametrize("array", [False, True])
def test_sample2d_plans_match_numpy(cp, address, mode, shape, array):
    import gpumemlab
    from gpumemlab.ops.sample import ArrayImage

    h, w = shape
    host, img = _image(cp, h, w)
    rc = _points(cp, h, w, 6 * 250).reshape(6, 250, 2)  # rows order: 6 rows of 250 (a partial tile across)
    want = reference(host, rc, address, mode == "linear")
    image = ArrayImage(img) if array else img
    for plan in _plans(array):
        for exact in (True, False):
            out = C.poisoned(cp, rc.shape[:-1], cp.float32)
            got = gpumemlab.sample2d(image, cp.asarray(rc), mode=mode, address=address, exact=exact, out=out,
                                     plan=plan).get()
            assert not np.isnan(got).any(), (plan, exact)
            if exact:
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{plan}")
            else:
                C.expect_texture_sample(got, host, rc, address, mode == "linear", f"{plan} texture")


def test_sample2d_odd_counts_and_misaligned_coordinates_fall_back_to_one_sample_per_load(cp):
    import gpumemlab
    from gpumemlab.ops.sample import Plan

    host, img = _image(cp, 40, 64)
    rc = _points(cp, 40, 64, 1001)
    buf = cp.asarray(np.concatenate([rc[:1], rc]))
    for pts, want_rc in ((cp.asarray(rc), rc), (buf[1:], rc), (buf[1:1000], rc[:999])):  # odd n, 8-byte offset
        want = reference(host, want_rc, "clamp", True)
        got = gpumemlab.sample2d(img, pts, exact=True, plan=Plan(samples=4, vector=True)).get()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_array_image_is_a_snapshot_and_gathers_exactly(cp):
    import gpumemlab
    from gpumemlab.ops.sample import ArrayImage

    img = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    snap = ArrayImage(img)
    assert snap.gather  # a 3 x 4 image is within every GPU's gather limits
    pts = cp.asarray([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.5, 0.5], [2.0, 3.0], [-1.0, 5.0]], cp.float32)
    want = np.array([0.0, 1.0, 4.0, 2.5, 11.0, 3.0], np.float32)  # each of the 2x2 in its place (gather order)
    np.testing.assert_array_equal(gpumemlab.sample2d(snap, pts, exact=True).get(), want)
    img[0, 0] = 100.0
    assert gpumemlab.sample2d(snap, pts[:1], exact=True).get()[0] == 0.0
    assert gpumemlab.sample2d(ArrayImage(img), pts[:1], exact=True).get()[0] == 100.0


# ---------------------------------------------------------------- constant memory and the experiments (quick)

def test_constant_symbol_is_written_per_kernel(cp):
    from gpumemlab.gpu.constant import symbol, write_symbol
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import constant as K

    spec = K.conv1d("constant", "per_lane")
    taps = np.arange(64, dtype=np.float32) + 1
    write_symbol(spec, K.SYMBOL, taps)
    ptr, size = symbol(spec, K.SYMBOL)
    assert size == 4 * K.MAX_TAPS
    runtime.synchronize()
    got = cp.ndarray((64,), cp.float32, cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(ptr, size, None), 0)).get()
    np.testing.assert_array_equal(got, taps)
    with pytest.raises(ValueError, match="do not fit"):
        write_symbol(spec, K.SYMBOL, np.zeros(K.MAX_TAPS + 1, np.float32))


def _run_quick(name):
    from gpumemlab.bench.session import Session
    from gpumemlab.experiments import get
    from gpumemlab.suite.runner import run_experiment

    exp = get(name)
    s = Session(quick=True)
    try:
        return exp, run_experiment(s, exp, dict(exp.params))
    finally:
        s.close()


def test_l2_persist_experiment_leaves_the_device_as_found(cp, persisting):
    from gpumemlab.experiments import l2_persist as E

    limit0, window0 = persisting.persisting_limit(), persisting.get_window()
    exp, recs = _run_quick("l2_persist")
    assert all(r.verified for r in recs)
    assert (persisting.persisting_limit(), persisting.get_window()) == (limit0, window0)
    after = next(r for r in recs if r.variant == E.AFTER)
    assert after.extra["limit_after"] == limit0 and after.extra["window_after"]["num_bytes"] == 0
    before = next(r for r in recs if r.variant == E.NONE and r.params == after.params)
    assert 0.85 < after.median_s / before.median_s < 1.15  # a following timing is unchanged
    big = max(r.params["streaming_over_l2"] for r in recs)
    for region in {r.params["region_mib"] for r in recs}:  # every policy at every region of the large stream
        got = {r.variant for r in recs if r.params["region_mib"] == region and r.params["streaming_over_l2"] == big}
        want = set(E.POLICIES) - ({E.AS_FOUND} if limit0 == 0 else set())
        assert want - got <= {E.GRAPH}, (region, sorted(want - got))
    for r in recs:  # each window as set, read back from the graph node where one ran
        if r.variant == E.GRAPH and "graph_window" in r.extra:
            got, want = r.extra["graph_window"], r.extra["window"]
            assert {k: v for k, v in got.items() if k != "hit_ratio"} == {k: v for k, v in want.items() if k != "hit_ratio"}
            assert got["hit_ratio"] == pytest.approx(want["hit_ratio"], rel=1e-6)  # a float32 on the node
    found = exp.describe(recs)["findings"]
    assert any(f.startswith("the device as found") for f in found)
    assert any("after the reset" in f for f in found)
    assert not any(f.startswith("(no finding") for f in found)


def test_constant_memory_experiment_broadcast_beats_serialized(cp):
    exp, recs = _run_quick("constant_memory")
    by = {r.variant: r for r in recs}
    assert len(by) == 6 and all(r.verified for r in recs)
    assert by["constant uniform"].model["requests_per_warp"] == 1
    assert by["constant per_lane"].model["requests_per_warp"] == 32
    assert by["constant per_lane"].median_s > 2 * by["constant uniform"].median_s
    assert not any(f.startswith("(no finding") for f in exp.describe(recs)["findings"])


def test_texture_experiment_quick(cp):
    exp, recs = _run_quick("texture")
    assert all(r.verified for r in recs if r.kind == "kernel")
    sections = {r.params["section"] for r in recs}
    assert sections == {"gather", "filter", "address", "sample2d", "types"}
    hw = [r for r in recs if r.variant.startswith("tex2D bilinear")]
    assert hw and all(0 < r.extra["max_abs_error"] for r in hw)  # 8-bit fractional weights are not exact
    exact = [r for r in recs if r.params["section"] == "address" and r.variant.startswith("exact")]
    assert len(exact) == 8  # normalized inputs carry float32 rounding of (rc + 0.5) / size into the reference
    assert all(r.extra["max_abs_error"] < (1e-4 if r.params["normalized"] else 1e-5) for r in exact)
    s2d = [r for r in recs if r.variant.startswith("sample2d")]
    paths = {"sample2d texture", "sample2d exact"}
    assert sorted((r.params["coords"], r.variant) for r in s2d) == sorted(
        (c, v + a) for c in ("smooth warp", "uniform random") for v in paths for a in ("", " (ArrayImage)"))
    assert all("map_coordinates order=1" in r.extra["head_to_head"] for r in s2d)
    assert not any(f.startswith("(no finding") for f in exp.describe(recs)["findings"])
