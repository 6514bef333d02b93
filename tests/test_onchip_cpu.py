"""CPU tests of the on-chip memory controls: argument checks, address-mode and window arithmetic, the
sliding-window verification, the constant-memory model and the declarations (no GPU needed)."""

import numpy as np
import pytest

from gpumemlab.errors import UsageError, VerificationError


@pytest.mark.parametrize("address,want", [
    ("clamp", [0, 0, 0, 1, 2, 2, 2]),
    ("wrap", [1, 2, 0, 1, 2, 0, 1]),
    ("mirror", [1, 0, 0, 1, 2, 2, 1]),
    ("border", [0, 0, 0, 1, 2, 2, 2]),
])
def test_reference_index_for_each_address_mode(address, want):
    from gpumemlab.ops.sample import reference_index

    idx, inside = reference_index(np.arange(-2, 5), 3, address)
    assert idx.tolist() == want
    assert inside.tolist() == ([False, False, True, True, True, False, False] if address == "border" else [True] * 7)


def test_reference_index_rejects_an_unknown_mode():
    from gpumemlab.ops.sample import reference_index

    with pytest.raises(UsageError, match="repeat"):
        reference_index([0], 3, "repeat")


def test_reference_sample_on_a_small_image():
    from gpumemlab.experiments.texture import reference_sample

    img = np.array([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]], np.float32)
    pts = np.array([[0.5, 0.5], [-1, -1], [-0.5, 0], [0, -1], [0, -2], [0.25, 1.75]], np.float32)
    assert reference_sample(img, pts[:2], "clamp", True).tolist() == [(1 + 2 + 8 + 16) / 4, 1.0]
    assert reference_sample(img, pts[2:3], "border", True).tolist() == [0.5]
    assert reference_sample(img, pts[3:4], "wrap", True).tolist() == [4.0]
    assert reference_sample(img, pts[3:5], "mirror", True).tolist() == [1.0, 2.0]
    top, bottom = 0.25 * 2 + 0.75 * 4, 0.25 * 16 + 0.75 * 32
    assert reference_sample(img, pts[5:], "clamp", True).tolist() == [0.75 * top + 0.25 * bottom]
    assert reference_sample(img, pts[5:], "clamp", False).tolist() == [4.0]  # floor(p + 0.5): row 0, col 2


def test_coordinate_maps():
    from gpumemlab.ops.sample import coordinate_map

    assert coordinate_map((40, 80), False, True, "wrap") == ((1.0, 0.0, 1.0, 0.0), False)
    assert coordinate_map((40, 80), True, True, "clamp") == ((40.0, -0.5, 80.0, -0.5), False)
    assert coordinate_map((40, 80), False, False, "clamp") == ((1.0, 0.5, 1.0, 0.5), False)
    assert coordinate_map((40, 80), False, False, "mirror") == ((1 / 40, 0.5 / 40, 1 / 80, 0.5 / 80), True)
    assert coordinate_map((40, 80), True, False, "border") == ((1.0, 0.0, 1.0, 0.0), True)


def test_sample2d_rejects_bad_modes_before_touching_the_gpu():
    from gpumemlab.ops.sample import sample2d

    with pytest.raises(UsageError, match="mode 'cubic' not supported"):
        sample2d(None, None, mode="cubic")
    with pytest.raises(UsageError, match="address 'repeat' not supported"):
        sample2d(None, None, address="repeat")
    with pytest.raises(TypeError, match="host"):
        sample2d(np.ones((4, 4), np.float32), None)


def test_persist_l2_rejects_host_arrays():
    from gpumemlab.ops.l2 import persist_l2

    with pytest.raises(TypeError, match="host"):
        persist_l2(np.ones(8))


def test_rule_hit_ratio():
    from gpumemlab.ops.l2 import rule_hit_ratio

    mib = 2**20
    assert rule_hit_ratio(10 * mib, 30 * mib) == 1.0
    assert rule_hit_ratio(120 * mib, 30 * mib) == 0.25
    with pytest.raises(UsageError, match="positive"):
        rule_hit_ratio(0, 30 * mib)


def _entry(shape_times: dict) -> dict:
    """A tuned l2_persist entry: {shape: (chosen policy, its final (p10, p90), the baseline's final (p10, p90))}."""
    points, base, chosen = [], [], {}
    for shape, (policy, (p10, p90), (b10, b90)) in shape_times.items():
        name = f"policy={policy}"
        points.append(dict(name=name, shape=shape, round="final", p10_s=p10, p90_s=p90, verified=True))
        base.append(dict(shape=shape, round="final", p10_s=b10, p90_s=b90))
        chosen[shape] = dict(name=name, params=dict(policy=policy), round="final")
    return dict(device=dict(name="GPU A", cc=[9, 0], sm_count=132), points=points, baseline=dict(points=base),
                chosen=chosen)


def test_a_window_is_taken_only_beyond_the_noise():
    from gpumemlab.ops.l2 import decide

    e = _entry({"10:400": ("set-aside sized", (1.0, 1.1), (1.2, 1.3)),   # p90 1.1 < baseline p10 1.2: a win
                "30:400": ("set-aside sized", (1.0, 1.25), (1.2, 1.3)),  # overlapping spreads: a tie
                "60:400": ("no window", (1.0, 1.1), (1.2, 1.3))})
    assert [decide(e, s) for s in ("10:400", "30:400", "60:400", "99:1")] == [
        "set-aside sized", "no window", "no window", "no window"]


def test_measured_table_takes_a_window_only_where_every_stream_size_did(monkeypatch, tmp_path):
    import json

    import gpumemlab.ops.l2 as ops

    e = _entry({"20:400": ("set-aside sized", (1.0, 1.1), (1.2, 1.3)), "20:100": ("set-aside sized", (1.0, 1.1),
                (1.2, 1.3)), "30:400": ("set-aside sized", (1.0, 1.1), (1.2, 1.3)),
                "30:100": ("set-aside sized", (1.0, 1.25), (1.2, 1.3))})
    for k, v in dict(date="d", command="c", space={}, checks={}).items():
        e[k] = v
    for p in e["points"]:
        p.update(label=p["name"], params={}, median_s=p["p10_s"], samples_n=10, gbps=1.0, ratio_to_baseline=1.0)
    for b in e["baseline"]["points"]:
        b.update(median_s=b["p10_s"], samples_n=10, gbps=1.0)
    path = tmp_path / "l2_persist.json"
    path.write_text(json.dumps(dict(format=1, family="l2_persist", about="a", metric="gbps", devices={"GPU A": e})))
    monkeypatch.setattr(ops, "TUNED_PATH", path)
    ops.measured_table.cache_clear()
    try:
        assert ops.measured_table()["GPU A"]["choices"] == [(20 * 2**20, "set-aside sized"), (30 * 2**20, "no window")]
    finally:
        ops.measured_table.cache_clear()


def test_measured_policy_nearest_table_size_and_borrowed():
    from gpumemlab.ops.l2 import measured_policy

    mib = 2**20
    table = {"GPU A": dict(device=dict(name="GPU A", cc=[9, 0], sm_count=132),
                           choices=[(10 * mib, "set-aside sized"), (40 * mib, "no window")])}
    same_chip = dict(name="GPU B", cc=[9, 0], sm_count=132)
    assert measured_policy(12 * mib, same_chip, table) == ("set-aside sized", "measured:GPU A")
    assert measured_policy(30 * mib, same_chip, table) == ("no window", "measured:GPU A")
    assert measured_policy(20 * mib, same_chip, table) == ("set-aside sized", "measured:GPU A")  # a tie: smaller
    assert measured_policy(30 * mib, dict(name="X", cc=[8, 0], sm_count=108), table) == ("set-aside sized", "rule")
    with pytest.raises(UsageError, match="positive"):
        measured_policy(0, same_chip, table)


def test_l2_family_settings_and_shapes():
    from gpumemlab.gpu.l2 import setting
    from gpumemlab.tune.families import get
    from gpumemlab.tune.l2_family import parse_shape, sizes

    mib = 2**20
    assert setting("no window", 20 * mib, 9 * mib, 30 * mib) == (9 * mib, 0.0)
    assert setting("set-aside sized", 20 * mib, 9 * mib, 30 * mib) == (20 * mib, 1.0)
    assert setting("set-aside sized", 60 * mib, 9 * mib, 30 * mib) == (30 * mib, 0.5)
    assert setting("set-aside as found", 36 * mib, 9 * mib, 30 * mib) == (9 * mib, 0.25)
    assert setting("set-aside as found", 36 * mib, 0, 30 * mib) == (0, 0.0)
    assert parse_shape(" 30 : 400.0") == "30:400"
    assert sizes("1:0.001") == (mib // 4, 256)
    with pytest.raises(UsageError, match="TABLE:STREAM"):
        parse_shape("30x400")
    family = get("l2_persist")
    assert [p.name for p in family.space.points(dict(found=0, max_set_aside=1))] == [
        "policy=no window", "policy=set-aside sized"]  # no set-aside as found: nothing to put a window in
    assert family.work("1:2") == 4 * (mib // 4 + 2 * (2 * mib // 4))


def test_access_window_validation():
    from gpumemlab.gpu.l2 import AccessWindow, persisting_window

    w = persisting_window(4096, 1000, 0.5)
    assert (w.hit_prop, w.miss_prop, w.hit_ratio) == ("persisting", "streaming", 0.5)
    with pytest.raises(ValueError, match=r"hit_ratio must be in \[0, 1\]"):
        AccessWindow(0, 10, 1.5)
    with pytest.raises(ValueError, match="sticky"):
        AccessWindow(0, 10, 1.0, "sticky")


def test_unsupported_reason_below_cc_80():
    from gpumemlab.gpu.l2 import unsupported_reason

    assert "8.0 or newer" in unsupported_reason(dict(cc=[7, 5], name="Tesla T4", persisting_l2_max_bytes=0))
    assert "no L2 set-aside" in unsupported_reason(dict(cc=[8, 6], name="X", persisting_l2_max_bytes=0))
    assert unsupported_reason(dict(cc=[9, 0], name="H100", persisting_l2_max_bytes=32 << 20)) is None


def test_sliding_window_windows():
    from gpumemlab.experiments.l2_persist import (AS_FOUND, FIG9, FIG10, GRAPH, NONE, RESERVED, SIZED, set_aside_for,
                                                  window_for)
    from gpumemlab.gpu.l2 import NO_WINDOW

    mib = 2**20
    assert window_for(NONE, 512, 60 * mib, 9 * mib, 128 * mib) == NO_WINDOW
    assert window_for(RESERVED, 512, 60 * mib, 30 * mib, 128 * mib) == NO_WINDOW
    w9 = window_for(FIG9, 512, 60 * mib, 30 * mib, 128 * mib)
    assert (w9.base_ptr, w9.num_bytes, w9.hit_ratio) == (512, 60 * mib, 1.0)
    w10 = window_for(FIG10, 512, 60 * mib, 30 * mib, 128 * mib)  # the seed's 20 MB at 20 MB / region
    assert (w10.num_bytes, w10.hit_ratio) == (20 * mib, 20 / 60)
    small = window_for(FIG10, 512, 10 * mib, 30 * mib, 128 * mib)
    assert (small.num_bytes, small.hit_ratio) == (20 * mib, 1.0)
    sized = window_for(SIZED, 512, 60 * mib, 30 * mib, 128 * mib)
    assert (sized.num_bytes, sized.hit_ratio) == (60 * mib, 0.5)
    assert window_for(AS_FOUND, 512, 36 * mib, 9 * mib, 128 * mib).hit_ratio == 0.25
    assert [set_aside_for(p, 20 * mib, 30 * mib, 9 * mib, 25 * mib) for p in (NONE, AS_FOUND, SIZED, GRAPH, FIG9)] == [
        9 * mib, 9 * mib, 20 * mib, 20 * mib, 25 * mib]


def _simulate(freq, data, gen, lost=0):
    """What one launch of the seed's kernel leaves: streaming doubled, persistent[i] doubled per update that won."""
    init_p = gen.integers(0, 2**31, freq + 5, dtype=np.uint32) | 1
    init_s = gen.integers(0, 2**32, data, dtype=np.uint32)
    count = np.bincount(np.arange(data) % freq, minlength=freq + 5) - lost
    p = init_p.astype(np.uint64) << np.maximum(count, 0).astype(np.uint64)
    return (p & 0xFFFFFFFF).astype(np.uint32), init_s * np.uint32(2), init_p, init_s


def test_check_sliding_window_accepts_races_and_catches_errors():
    from gpumemlab.experiments.l2_persist import check_sliding_window

    gen = np.random.default_rng(0)
    for lost in (0, 2):  # every update, or two lost to races per element
        p, s, ip, is_ = _simulate(100, 1000, gen, lost)
        check_sliding_window(p, s, ip, is_, 100, "ok")
    p, s, ip, is_ = _simulate(7, 7 * 40, gen)  # 40 updates per element: the value wraps to 0
    assert (p[:7] == 0).all()
    check_sliding_window(p, s, ip, is_, 7, "wrapped")
    p, s, ip, is_ = _simulate(100, 1000, gen)
    bad = p.copy()
    bad[3] += np.uint32(2**20)
    with pytest.raises(VerificationError, match=r"persistent\[3\]"):
        check_sliding_window(bad, s, ip, is_, 100, "bad")
    with pytest.raises(VerificationError, match="streaming"):
        check_sliding_window(p, s + np.uint32(1), ip, is_, 100, "bad")
    untouched = p.copy()
    untouched[101] ^= np.uint32(1)
    with pytest.raises(VerificationError, match="past the persisting region"):
        check_sliding_window(untouched, s, ip, is_, 100, "bad")
    with pytest.raises(VerificationError, match=r"persistent\[0\]"):
        check_sliding_window(ip.copy(), s, ip, is_, 100, "not run")  # k = 0: never doubled


@pytest.mark.parametrize("access,lets,block,want", [
    ("taps[k]", ["k=5"], 256, 1),
    ("taps[(k + threadIdx.x % 32) % 64]", ["k=5"], 256, 32),
    ("taps[threadIdx.x / 8]", [], 64, 4),
    ("taps[threadIdx.x % 2]", [], 32, 2),
])
def test_constant_requests(access, lets, block, want):
    from gpumemlab.model.constant import constant_requests

    res = constant_requests(access, "__constant__ float taps[64]", block=block, lets=lets)
    assert res["requests_per_warp"] == want
    assert res["verdict"].startswith("broadcast" if want == 1 else "serialized")


def test_constant_requests_counts_each_load_of_a_wide_element():
    from gpumemlab.model.constant import constant_requests

    res = constant_requests("c[0]", "__constant__ double2 c[4]", block=32)
    assert res["loads_per_element"] == 1 and res["requests_per_warp"] == 1


def test_kernel_tables_reject_missing_instantiations():
    from gpumemlab.kernels import constant, texture

    with pytest.raises(ValueError, match="not instantiated"):
        constant.conv1d("shared", "uniform")
    with pytest.raises(ValueError, match="address mode"):
        texture.sample_soft("repeat", True)
    assert texture.sample_soft("mirror", True).name == "sample_soft<2, 1, 0>"


@pytest.mark.parametrize("arch", ["sm_90"])  # every kernel, every arch: .ci/run (gpumemlab kernels --arch)
def test_onchip_kernels_compile_without_spills(arch):
    from kernel_sample import per_template

    from gpumemlab.gpu.compile import compile_specs
    from gpumemlab.kernels import constant, l2, texture

    specs = constant.KERNELS + l2.KERNELS + per_template(texture.KERNELS)
    for spec, (_mod, usage) in compile_specs(specs, arch).items():
        assert usage is not None and usage.spill_store_bytes in (0, None) and usage.local_bytes == 0, spec.label


def test_experiments_are_declared_with_seed_claims():
    from gpumemlab.experiments import registry

    reg = registry()
    for name, seed_file in (("l2_persist", "003"), ("texture", "001"), ("constant_memory", "003")):
        assert seed_file in reg[name].seed
    assert reg["l2_persist"].requires(dict(cc=[7, 0], name="V100", persisting_l2_max_bytes=0)).startswith("L2 persist")


def test_sample2d_bound_sentence():
    from gpumemlab.experiments.texture import sample2d_bound

    assert sample2d_bound("smooth warp", 40.0) == (
        "bound (smooth warp): map_coordinates order=1 moves the least DRAM traffic of this resampling at 40% of "
        "the measured copy ceiling, so no implementation can beat it by more than 2.50x here (a 2x speed-up "
        "would need 80% of the ceiling)")


class _FakeL2:
    """Stands in for gpu/l2.py: records the driver calls persist_l2 makes, in order."""

    def __init__(self, monkeypatch, reason=None, fail_set_window_on=(), device=None):
        import gpumemlab.gpu.l2 as real
        from gpumemlab.gpu import runtime

        self.calls, self.limit, self.window = [], 7 << 20, real.NO_WINDOW
        self.fail = set(fail_set_window_on)  # which set_window calls (1-based) raise
        fake = dict(
            unsupported_reason=lambda info=None: reason,
            limits=lambda: dict(l2_bytes=50 << 20, max_set_aside=30 << 20, max_window=128 << 20),
            stream_handle=lambda s=None: 99,
            persisting_limit=lambda: self.limit,
            get_window=lambda s=None: self.window,
            set_window=self.set_window,
            set_persisting_limit=self.set_limit,
            reset_persisting_lines=lambda: self.calls.append("reset"))
        for name, f in fake.items():
            monkeypatch.setattr(real, name, f)
        # a GPU no measured table names, unless a test gives one
        monkeypatch.setattr(runtime, "device_info", lambda: device or dict(name="Test GPU", cc=[0, 1], sm_count=1))

    def set_window(self, w, s=None):
        self.calls.append(("window", w.num_bytes, w.hit_ratio))
        if sum(1 for c in self.calls if c[0] == "window") in self.fail:
            raise RuntimeError("cuStreamSetAttribute failed")
        self.window = w

    def set_limit(self, n):
        self.calls.append(("limit", n))
        self.limit = n


def _ctx(nbytes, hit_ratio=None):
    from types import SimpleNamespace

    from gpumemlab.ops.l2 import PersistL2

    ctx = object.__new__(PersistL2)  # no GPU array here: the fields __init__ would set from one
    ctx.__dict__.update(array=SimpleNamespace(nbytes=nbytes, data=SimpleNamespace(ptr=4096)), requested=hit_ratio,
                        hit_ratio=hit_ratio, hit_ratio_source=None if hit_ratio is None else "given", stream=None,
                        window=None, set_aside=None, _saved=None)
    return ctx


def test_persist_l2_sets_then_restores_and_resets_in_order(monkeypatch):
    import gpumemlab.ops.l2 as ops

    monkeypatch.setattr(ops, "measured_table", dict)
    fake = _FakeL2(monkeypatch)
    mib = 1 << 20
    with pytest.raises(KeyError):
        with _ctx(20 * mib):  # under the 30 MiB largest set-aside: the limit sized to it, hit_ratio 1.0
            raise KeyError("work failed")
    assert fake.calls == [("limit", 20 * mib), ("window", 20 * mib, 1.0), ("window", 0, 0.0), ("limit", 7 * mib),
                          "reset"]
    fake.calls.clear()
    with _ctx(90 * mib) as c:  # 3x the largest set-aside: the lines that persist fill it, set-aside / window
        assert c.set_aside == 30 * mib and c.window.hit_ratio == pytest.approx(1 / 3)
        assert (c.policy, c.hit_ratio, c.hit_ratio_source) == ("set-aside sized", c.window.hit_ratio, "rule")
    assert fake.calls[-2:] == [("limit", 7 * mib), "reset"]


def test_persist_l2_takes_the_measured_setting_and_says_so(monkeypatch):
    import gpumemlab.ops.l2 as ops

    mib = 1 << 20
    table = {"GPU A": dict(device=dict(name="GPU A", cc=[9, 0], sm_count=132),
                           choices=[(10 * mib, "set-aside as found"), (40 * mib, "no window")])}
    monkeypatch.setattr(ops, "measured_table", lambda: table)
    fake = _FakeL2(monkeypatch, device=dict(name="GPU B", cc=[9, 0], sm_count=132))  # same chip: borrowed
    with _ctx(60 * mib) as c:  # nearest 40 MiB: no window, nothing set or restored
        assert (c.policy, c.window, c.hit_ratio, c.hit_ratio_source) == ("no window", None, None, "measured:GPU A")
    assert fake.calls == []
    with _ctx(14 * mib) as c:  # nearest 10 MiB: a window in the 7 MiB set-aside as found, the limit unchanged
        assert (c.policy, c.set_aside, c.hit_ratio) == ("set-aside as found", 7 * mib, 0.5)
    with _ctx(60 * mib, hit_ratio=0.75) as c:  # a given ratio is never replaced
        assert (c.policy, c.hit_ratio, c.hit_ratio_source) == ("set-aside sized", 0.75, "given")
    assert [w for w in fake.calls if w[0] == "window" and w[1]] == [("window", 14 * mib, 0.5), ("window", 60 * mib, 0.75)]


def test_persist_l2_chooses_again_on_each_entry(monkeypatch):
    import gpumemlab.ops.l2 as ops

    monkeypatch.setattr(ops, "measured_table", dict)
    _FakeL2(monkeypatch)
    ctx = _ctx(90 << 20)
    with ctx:
        assert ctx.hit_ratio_source == "rule"
    monkeypatch.setattr(ops, "measured_table", lambda: {"Test GPU": dict(
        device=dict(name="Test GPU", cc=[0, 1], sm_count=1), choices=[(1 << 20, "no window")])})
    with ctx:  # the setting chosen on the first entry is not kept
        assert (ctx.policy, ctx.hit_ratio_source) == ("no window", "measured:Test GPU")


def test_persist_l2_restores_limit_and_resets_even_when_restoring_the_window_fails(monkeypatch):
    fake = _FakeL2(monkeypatch, fail_set_window_on=(2,))
    with pytest.raises(RuntimeError, match="cuStreamSetAttribute failed"):
        with _ctx(1 << 20):
            pass
    assert fake.calls[-2:] == [("limit", 7 << 20), "reset"]


def test_persist_l2_keeps_the_limit_when_setting_the_window_fails(monkeypatch):
    fake = _FakeL2(monkeypatch, fail_set_window_on=(1,))
    with pytest.raises(RuntimeError, match="cuStreamSetAttribute failed"):
        _ctx(20 << 20).__enter__()
    assert fake.calls == [("limit", 20 << 20), ("window", 20 << 20, 1.0), ("limit", 7 << 20)]


def test_persist_l2_errors_below_cc_80_and_on_bad_nesting(monkeypatch):
    from gpumemlab.errors import NoDeviceError

    _FakeL2(monkeypatch, reason="L2 persisting accesses need compute capability 8.0 or newer; this GPU (T4) is 7.5")
    with pytest.raises(NoDeviceError, match=r"^persist_l2: L2 persisting accesses need compute capability 8\.0"):
        _ctx(1 << 20).__enter__()
    _FakeL2(monkeypatch)
    outer, inner = _ctx(1 << 20), _ctx(2 << 20)
    with outer:
        with pytest.raises(UsageError, match="already active"):
            outer.__enter__()
        inner.__enter__()
        with pytest.raises(UsageError, match="reverse order"):
            outer.__exit__(None, None, None)
        inner.__exit__(None, None, None)
    with pytest.raises(UsageError, match="exit without a matching enter"):
        outer.__exit__(None, None, None)


# ---------------------------------------------------------------- sample2d plans (kernels/texture.cu's tiling)

def _samples_touched(launch, n, block):
    """NumPy model of texture.cu's sample_points: how often each sample is stored, and every coordinate load index."""
    vec, unroll, width, tiles = launch.vec, launch.unroll, launch.width, launch.tiles
    b = np.arange(launch.grid)[:, None, None]
    t = np.arange(block)[None, :, None]
    u = np.arange(unroll)[None, None, :]
    band, tile = b // tiles, b % tiles
    col = (tile * block + t) * vec
    i = band * unroll * width + col + u * width
    stored = np.broadcast_to((col < width) & (i < n), i.shape)
    hits = np.zeros(n + vec, int)
    for k in range(vec):
        np.add.at(hits, (i + k)[stored], 1)
    return hits[:n], np.minimum(i, n - vec).ravel()


@pytest.mark.parametrize("n,row_length,samples,vector,order", [
    (1, None, 1, False, "flat"), (1000, None, 1, False, "flat"), (1000, None, 4, False, "flat"),
    (1002, None, 4, True, "flat"), (1001, None, 4, True, "flat"), (37 * 600, 600, 4, True, "rows"), (37 * 601, 601, 4, True, "rows"),
    (5 * 1030, 1030, 8, True, "rows"), (3 * 256, 256, 2, False, "rows"), (7 * 3, 3, 8, False, "rows"),
])
def test_sample2d_tiling_stores_every_sample_once(n, row_length, samples, vector, order):
    from gpumemlab.kernels import texture as K
    from gpumemlab.ops.sample import Plan, plan_launch

    from dataclasses import replace

    ln = plan_launch(n, row_length, Plan(samples=samples, vector=vector, order=order), False, True, "clamp",
                     False, True)
    if not ln.tiled:  # the kernel as first written: sample_points<1, 1> over rows of one block
        assert (samples, order, ln.spec) == (1, "flat", K.SAMPLE_TEX)
        ln = replace(ln, width=K.BLOCK)
    assert ln.vec * ln.unroll == samples
    assert ln.vec == (2 if vector and n % 2 == 0 and (order == "flat" or row_length % 2 == 0) else 1)
    hits, loads = _samples_touched(ln, n, K.BLOCK)
    assert (hits == 1).all()
    assert loads.min() >= 0 and loads.max() <= n - ln.vec and (ln.vec == 1 or (loads % 2 == 0).all())
    assert ln.spec == (K.sample_tex_tiled(ln.vec, ln.unroll) if ln.tiled else K.SAMPLE_TEX)


def test_sample2d_default_plans_by_path_and_coordinate_shape():
    from gpumemlab.ops.sample import Plan, default_plan

    assert default_plan(False, True) == default_plan(False, False) == Plan(samples=8, order="rows")
    assert default_plan(True, True) == Plan(samples=4, order="rows", source="ldg", weights="float")
    assert default_plan(True, False) == Plan(source="ldg", weights="float")
    assert default_plan(True, True, on_array=True).source == default_plan(True, False, on_array=True).source == "auto"
    assert default_plan(False, True, on_array=True) == default_plan(False, True)


def test_sample2d_first_written_plan_is_the_kernels_as_first_written():
    from gpumemlab.kernels import texture as K
    from gpumemlab.ops.sample import FIRST_WRITTEN, Plan, plan_launch

    assert FIRST_WRITTEN == Plan()
    tex = plan_launch(1000, None, Plan(), False, True, "wrap", False, True)
    assert (tex.spec, tex.grid, tex.tiled) == (K.SAMPLE_TEX, 4, False)
    soft = plan_launch(1000, 10, Plan(), True, True, "mirror", False, True)
    assert (soft.spec, soft.tiled, soft.source) == (K.sample_soft("mirror", True), False, "global")
    ldg = plan_launch(1000, None, Plan(source="ldg"), True, False, "border", False, True)
    assert ldg.spec == K.sample_soft("border", False, True)


def test_sample2d_streaming_plan_compiles_the_evict_first_hints():
    from gpumemlab.kernels import texture as K
    from gpumemlab.ops.sample import Plan, plan_launch

    tex = plan_launch(1000, None, Plan(streaming=True), False, True, "clamp", False, True)
    assert tex.tiled and tex.spec == K.sample_tex_tiled(1, 1, True)
    assert tex.spec.defines == (("SAMPLE_STREAM", "1"),) and K.sample_tex_tiled(1, 1).defines == ()
    soft = plan_launch(1000, None, Plan(streaming=True, source="ldg", weights="float"), True, True, "clamp", False,
                       True)
    assert soft.spec == K.sample_exact("clamp", True, "ldg", True, 1, 1, True) != K.sample_exact(
        "clamp", True, "ldg", True, 1, 1)
    assert {K.sample_tex_tiled(1, 8, True), K.sample_exact("clamp", True, "ldg", True, 1, 4, True)} <= set(K.KERNELS)


def test_sample2d_exact_sources():
    from gpumemlab.kernels import texture as K
    from gpumemlab.ops.sample import Plan, exact_source, plan_launch

    assert exact_source(Plan(), True, True, "clamp", True, False) == "gather"
    assert exact_source(Plan(), True, True, "wrap", True, False) == "points"  # wrap's seam
    assert exact_source(Plan(), True, False, "clamp", True, False) == "points"  # nearest: one texel
    assert exact_source(Plan(), True, True, "clamp", False, False) == "points"  # no gather-capable array
    assert exact_source(Plan(source="row4"), False, True, "clamp", False, True) == "row4"
    assert exact_source(Plan(source="row4"), False, True, "clamp", False, False) == "ldg"  # misaligned rows
    with pytest.raises(UsageError, match="ArrayImage"):
        exact_source(Plan(source="gather"), False, True, "clamp", False, True)
    with pytest.raises(UsageError, match="own memory"):
        exact_source(Plan(source="row4"), True, True, "clamp", True, True)
    ln = plan_launch(4096, None, Plan(samples=4, vector=True, weights="float"), True, True, "border", True, True,
                     True)
    assert ln.spec == K.sample_exact("border", True, "gather", True, 2, 2) and ln.source == "gather"
    assert ln.spec.name == "sample_exact<3, 1, 4, 1, 2, 2>"
    assert plan_launch(4096, None, Plan(samples=1, weights="float"), True, True, "clamp", False, True).tiled


def test_sample2d_plan_and_kernel_table_reject_what_they_lack():
    from gpumemlab.kernels import texture as K
    from gpumemlab.ops.sample import Plan

    for bad in (dict(samples=3), dict(order="hilbert"), dict(source="shared"), dict(weights="half")):
        with pytest.raises(UsageError, match="plan"):
            Plan(**bad)
    with pytest.raises(ValueError, match="wrap"):
        K.sample_exact("wrap", True, "gather", False, 1, 1)
    with pytest.raises(ValueError, match="geometry"):
        K.sample_tex_tiled(2, 8)
    with pytest.raises(ValueError, match="source"):
        K.sample_exact("clamp", True, "smem", False, 1, 1)


@pytest.mark.parametrize("counts,cc_major,want", [
    (None, 9, False),                 # not observed yet: the local layout
    ([32] * 8, 9, True),
    ([16] * 8, 9, False),             # exactly half apart is not "most"
    ([17] * 8, 9, True),
    ([32] * 7 + [0], 9, True),        # 224 of 256 pairs
    ([32] * 8, 8, False),             # the cap was measured on cc 9 only
    ([32] * 8, 10, False),
])
def test_sample2d_scattered_decision(counts, cc_major, want):
    from gpumemlab.ops.sample import scattered

    assert scattered(counts, cc_major) is want


def test_observation_board_hands_rows_out_least_recently_used_first():
    from gpumemlab.gpu.observe import UNSEEN, Board, seen

    mem = np.zeros((2, 8), np.uint32)
    board = Board(mem, 0x10000)
    a, a_ptr, a_calls = board.row("a")
    b, b_ptr, _ = board.row("b")
    assert (a_ptr, b_ptr, a_calls) == (0x10000, 0x10000 + 32, 1) and (mem == UNSEEN).all()
    assert seen(a) is None
    a[:] = np.arange(8)  # a kernel's report
    again, ptr, calls = board.row("a")  # "a" is now the most recently used
    assert (ptr, calls) == (a_ptr, 2) and seen(again) == list(range(8))
    b[:] = 5
    c, c_ptr, _ = board.row("c")  # evicts "b", whose row starts unseen again
    assert c_ptr == b_ptr and seen(c) is None and (mem[1] == UNSEEN).all()
    assert seen(board.row("a")[0]) == list(range(8))
    _, ptr, calls = board.row("b")  # "b" comes back in the row of the least recently used, "c", counting afresh
    assert (ptr, calls) == (c_ptr, 1)


def test_sample2d_observes_unseen_points_and_every_16th_call_after():
    from gpumemlab.ops.sample import OBSERVE_EVERY, observing

    assert OBSERVE_EVERY == 16
    assert [observing(None, k) for k in (1, 2, 3)] == [True] * 3
    assert [k for k in range(1, 50) if observing([0] * 8, k)] == [16, 32, 48]


def test_observers_agree_between_kernel_and_host():
    import re

    from gpumemlab.kernels import source_text
    from gpumemlab.ops import sample

    text = source_text("texture.cu")
    assert int(re.search(r"#define OBSERVERS (\d+)", text).group(1)) == sample.OBSERVERS
    assert "GML_L1_KEPT_COPY" not in text  # the capped copy differs by its -D alone: the same code, its own module


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "texture"])
@pytest.mark.parametrize("n,pts_ptr,out_ptr", [(1 << 24, 4096, 8192), (4099, 4104, 8196)], ids=["aligned", "odd"])
def test_scattered_launch_is_the_flat_one_sample_launch_capped(monkeypatch, exact, n, pts_ptr, out_ptr):
    """The cached launch for scattered points is what launch_for gives for the flat one-sample plan on the same
    (flattened) arrays, its kernel replaced by runtime.l1_kept_cap's copy: the layout the GPU tests and the probes
    measured before the launch was cached."""
    from dataclasses import replace
    from types import SimpleNamespace

    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import texture as K
    from gpumemlab.ops import sample

    caps = []
    monkeypatch.setattr(runtime, "l1_kept_cap", lambda spec, block, cap: caps.append((spec, block, cap)) or (
        replace(spec, defines=(("GML_L1_KEPT_COPY", "1"),)), 5632))
    sample.scattered_launch.cache_clear()
    got, shmem = sample.scattered_launch(n, exact, "clamp", pts_ptr % 16 == 0 and out_ptr % 8 == 0, 0)
    sample.scattered_launch.cache_clear()
    arr = lambda ptr, shape: SimpleNamespace(data=SimpleNamespace(ptr=ptr), shape=shape, ndim=len(shape),  # noqa
                                             size=int(np.prod(shape)), strides=(4 * shape[-1], 4))
    img, pts, out = arr(0, (8192, 8192)), arr(pts_ptr, (n, 2)), arr(out_ptr, (n,))
    want = (sample.launch_for(img, pts, out, exact=True, mode="linear", address="clamp", plan=sample.EXACT_FLAT_PLAN)
            if exact else sample.Launch(K.sample_tex_tiled(1, 1), -(-n // K.BLOCK), True, 1, 1, K.BLOCK, 1))
    assert caps == [(want.spec, K.BLOCK, sample.SCATTERED_SAMPLES_PER_SM // K.BLOCK)] and shmem == 5632
    assert got == replace(want, spec=replace(want.spec, defines=(("GML_L1_KEPT_COPY", "1"),)))
    assert (got.vec, got.unroll, got.tiles) == (1, 1, 1)


class _FakeLauncher:
    """runtime.Launcher.over recorded: the kernel, geometry, packed arguments and varying slots; each call's
    addresses kept."""

    def __init__(self, kernel, grid, block, args, varying, shmem):
        self.spec, self.grid, self.block, self.args, self.varying, self.shmem = kernel, grid, block, args, varying, shmem
        self.calls = []

    @classmethod
    def over(cls, kernel, grid, block, args, varying, shmem=0):
        return cls(kernel, grid, block, args, varying, shmem)

    def __call__(self, *arrays):
        self.calls.append(tuple(a if type(a) is int else a.data.ptr for a in arrays))


def _fake_array(ptr, shape):
    from types import SimpleNamespace

    strides = tuple(4 * int(np.prod(shape[i + 1:])) for i in range(len(shape)))
    return SimpleNamespace(data=SimpleNamespace(ptr=ptr, device_id=0), shape=tuple(shape), ndim=len(shape),
                           size=int(np.prod(shape)), strides=strides, dtype=np.dtype(np.float32),
                           flags=SimpleNamespace(c_contiguous=True))


def _kernel_parameters(spec) -> list[str]:
    """The parameter names of the texture.cu kernel ``spec`` instantiates."""
    import re

    from gpumemlab.kernels import source_text

    name = spec.name.split("<")[0]
    params = re.search(rf"void {name}\(([^)]*)\)", source_text("texture.cu")).group(1)
    return [p.split()[-1].lstrip("*") for p in params.split(",")]


@pytest.fixture
def prepared(monkeypatch):
    """sample._prepare with fake arrays, texture, device and Launcher: (prepare(exact, plan, on_array, shape), the
    board the default plan observes into, the fake outputs handed out)."""
    from types import SimpleNamespace

    from gpumemlab.gpu import observe, runtime
    from gpumemlab.ops import sample

    monkeypatch.setattr(runtime, "Launcher", _FakeLauncher)
    monkeypatch.setattr(runtime, "device_info", lambda: dict(cc=[9, 0], ordinal=0, can_map_host_memory=True,
                                                               sm_count=1))  # the cap binds above 1,024 samples
    board = observe.Board(np.zeros((4, sample.OBSERVERS), np.uint32), 0x5000)
    monkeypatch.setattr(sample, "_board", lambda info: board)
    tex = SimpleNamespace(handle=np.uint64(0x7E7))
    monkeypatch.setattr(sample, "_texture", lambda img, mode, address, normalized: (tex, None))
    monkeypatch.setattr(sample, "_check_image", lambda image: image)
    monkeypatch.setattr(sample, "_check_coords", lambda coords: coords)
    outs = []
    monkeypatch.setattr(sample, "_cupy", lambda: SimpleNamespace(
        empty=lambda shape, dtype: outs.append(_fake_array(0x9000 + 0x100 * len(outs), shape)) or outs[-1]))

    def prepare(exact, plan, on_array=False, shape=(4099, 2)):
        img = _fake_array(0x100000, (300, 500))
        if on_array:
            img = object.__new__(sample.ArrayImage)
            img.shape, img.gather, img.texture = (300, 500), True, lambda *a: tex
        pts = _fake_array(0x200000, shape)
        return img, pts, sample._prepare(img, pts, "linear", "clamp", False, exact, None, plan)
    return prepare, board, outs


@pytest.mark.parametrize("exact,plan,on_array", [
    (True, None, False), (True, "FIRST_WRITTEN", False), (False, None, False), (False, "FIRST_WRITTEN", False),
    (True, None, True), (False, None, True)],
    ids=["exact", "exact first written", "texture", "texture first written", "exact array", "texture array"])
def test_prepared_call_packs_each_argument_where_the_kernel_takes_it(prepared, exact, plan, on_array):
    """Each packed slot is the value of the kernel parameter at that position in texture.cu (the output and the
    observation address vary per call, in that order), and a call passes its new output's address."""
    from gpumemlab.ops import sample

    prepare, board, outs = prepared
    img, pts, (call, reusable) = prepare(exact, getattr(sample, plan) if plan else None, on_array)
    ln = call.local
    params = _kernel_parameters(ln.spec)
    assert len(params) == len(ln.args) and reusable and call.n == 4099
    (rs, ro, cs, co), _ = sample.coordinate_map((300, 500), False, exact, "clamp")
    want = dict(out=0, coords=0x200000, n=4099, h=300, w=500, row_scale=rs, row_offset=ro, col_scale=cs,
                col_offset=co, seen=0, width=getattr(ln, "width", None), tex=0x7E7)
    texture_exact = on_array and exact  # texels fetched through the array's texture, the image pointer unused
    want.update(img=0 if texture_exact else 0x100000, pitch=0 if texture_exact else 500,
                tex=0x7E7 if on_array or not exact else 0)
    launch = sample.launch_for(img, pts, _fake_array(0x9000, (4099,)), exact=exact, mode="linear", address="clamp",
                               plan=getattr(sample, plan) if plan else None)
    want.update(width=launch.width, tiles=launch.tiles)
    assert ln.spec == launch.spec and ln.grid == launch.grid
    assert {p: float(a) for p, a in zip(params, ln.args)} == {p: float(want[p]) for p in params}
    assert [params[i] for i in ln.varying] == (["out", "seen"] if "seen" in params else ["out"])
    out = call(img, None)
    observed = plan is None and not on_array  # the default plan on the image itself observes its points
    assert ln.calls == [(out.data.ptr, board.device_ptr if observed else 0)]


def test_prepared_call_takes_the_capped_launch_once_its_points_were_seen_scattered(prepared, monkeypatch):
    """The default plan's call reads its row of the board each call: unseen -> the local launch, observing; seen
    scattered -> the capped launch (made once, on the first scattered call: the same arguments, its own geometry and
    shared request), observing again on every OBSERVE_EVERY-th call."""
    from dataclasses import replace

    from gpumemlab.ops import sample

    prepare, board, outs = prepared
    made = []
    monkeypatch.setattr(sample, "scattered_launch", lambda *key: made.append(key) or (
        replace(sample.plan_launch(4099, None, sample.EXACT_FLAT_PLAN, True, True, "clamp", False, False),
                grid=77), 5632))
    img, pts, (call, _) = prepare(True, None)
    call(img, None)
    assert call.local.calls == [(outs[0].data.ptr, board.device_ptr)] and made == []
    board.counters[0] = 32  # every observer saw all its pairs apart
    for _ in range(2, sample.OBSERVE_EVERY + 1):  # the buffer's calls 2 .. 16
        call(img, None)
    capped = call.capped
    assert made == [(4099, True, "clamp", True, 0)] and (capped.grid, capped.shmem) == (77, 5632)
    assert capped.args[1:] == call.local.args[1:] and capped.varying == call.local.varying
    assert [a[1] for a in capped.calls] == [0] * (sample.OBSERVE_EVERY - 2) + [board.device_ptr]
    assert [a[0] for a in capped.calls] == [o.data.ptr for o in outs[1:]] and len(call.local.calls) == 1


def test_sample2d_prepares_a_call_once_per_arrays_and_options(prepared, monkeypatch):
    """Repeated calls on the same arrays and options run one prepared call; another pointer, shape, option or an
    output of other alignment prepares another; copied inputs are never kept; at most CALLS are kept, oldest out."""
    from gpumemlab.ops import _checks, sample

    prepare, board, outs = prepared
    fake = type(_fake_array(0, (1,)))
    monkeypatch.setattr(_checks, "_NDARRAY", fake)
    monkeypatch.setattr(_checks, "_GET_DEVICE", lambda: 0)
    monkeypatch.setattr(sample, "_calls", {})
    made = []
    real = sample._prepare
    monkeypatch.setattr(sample, "_prepare", lambda *a: made.append(a[1].data.ptr) or real(*a))
    img = _fake_array(0x100000, (300, 500))
    pts = [_fake_array(0x200000 + 0x1000 * i, (64, 2)) for i in range(3)]
    for p in (pts[0], pts[1], pts[0], pts[1]):
        sample.sample2d(img, p, exact=True)
    assert made == [pts[0].data.ptr, pts[1].data.ptr] and len(sample._calls) == 2
    sample.sample2d(img, pts[0], exact=False)
    sample.sample2d(img, pts[0], exact=True, out=_fake_array(0x9004, (64,)))  # an output 4 bytes off 8-byte alignment
    sample.sample2d(img, pts[0], exact=True, out=_fake_array(0x9008, (64,)))  # aligned: the kept call of the first
    assert len(made) == 4 and len(sample._calls) == 4
    monkeypatch.setattr(sample, "_check_coords", lambda coords: _fake_array(0x300000, coords.shape))  # a copy
    sample.sample2d(img, pts[2], exact=True)
    sample.sample2d(img, pts[2], exact=True)
    assert made[4:] == [pts[2].data.ptr] * 2 and len(sample._calls) == 4
    monkeypatch.setattr(sample, "CALLS", 4)
    monkeypatch.setattr(sample, "_check_coords", lambda coords: coords)
    oldest = next(iter(sample._calls))
    sample.sample2d(img, pts[2], exact=True)
    assert len(sample._calls) == 4 and oldest not in sample._calls and oldest[4] == pts[0].data.ptr


def test_only_calls_where_the_cap_can_bind_observe_their_points(prepared):
    """One SM: up to SCATTERED_SAMPLES_PER_SM samples the capped launch would run the same blocks per SM, so such a
    call neither observes nor reads the board; one sample more does both."""
    from gpumemlab.ops import sample

    prepare, board, _ = prepared
    cap = sample.SCATTERED_SAMPLES_PER_SM
    assert (sample.observed(cap, 1), sample.observed(cap + 1, 1), sample.observed(132 * cap, 132)) == (
        False, True, False)
    img, _, (call, _) = prepare(True, None, shape=(cap, 2))
    call(img, None)
    assert call.board is None and call.local.calls[0][1] == 0 and not board._keys
    img, pts, (call, _) = prepare(True, None, shape=(cap + 1, 2))
    call(img, None)
    assert call.board is board and call.local.calls[0][1] == board.device_ptr
    assert list(board._keys) == [(pts.data.ptr, cap + 1)]


def _l2_records(win_at=20.0):
    """Stand-in l2_persist records of the current shape: every policy per region (8x L2 stream) and the small set;
    the sized window beats the device as found beyond the noise at region ``win_at`` MiB only."""
    from gpumemlab.bench.records import Record
    from gpumemlab.experiments import l2_persist as E

    mib = 2**20
    recs = []
    for factor, policies in ((8.0, E.POLICIES), (2.0, E.SMALL_SET)):
        for region in (10.0, 20.0, 30.0):
            for policy in policies:
                t = 1e-3 * (0.8 if policy in (E.SIZED, E.GRAPH) and region == win_at and factor == 8.0 else
                            1.25 if policy in (E.RESERVED, E.FIG9, E.FIG10) else 1.0)
                recs.append(Record(
                    experiment="l2_persist", variant=policy, bytes=1e9, flops=None, gbps=1.0 / t, gflops=None,
                    params=dict(region_mib=region, streaming_over_l2=factor, region_over_set_aside=1.0,
                                streaming_mib=400.0 if factor == 8.0 else 100.0),
                    time_s=dict(median=t, p10=0.99 * t, p90=1.01 * t, min=0.98 * t, max=1.1 * t, n=20),
                    pct_of_ceiling=None, ceiling=None, verified=True, kind="kernel",
                    extra=dict(limit_as_found_bytes=11.25 * mib, seed_set_aside_bytes=30 * mib)))
    return recs


def test_l2_persist_leads_with_the_device_as_found_and_names_where_a_window_wins():
    import sys
    from pathlib import Path

    from gpumemlab.experiments import registry

    sys.path.insert(0, str(Path(__file__).parent))
    from test_findings_cite import problems

    exp = registry()["l2_persist"]
    recs = _l2_records()
    exp.derive(recs, None)
    info = exp.describe(recs)
    found = [str(f) for f in info["findings"]]
    assert found[0] == "the device as found: set-aside limit 11.25 MiB; the seed's 30 MB set-aside runs as 30.00 MiB"
    assert found[1].startswith("seed set-aside, no window vs the device as found (streaming 400 MiB), per region MiB: "
                               "10: 0.80x (slower)")
    assert "set-aside sized to the region vs the device as found (streaming 400 MiB), per region MiB: 10: 1.00x (tie), " \
           "20: 1.25x (faster), 30: 1.00x (tie)" in found
    wins = [f for f in found if f.startswith("a window beats")]
    assert len(wins) == 1 and wins[0].startswith("a window beats the device as found beyond the noise at: 20 MiB with "
                                                 "streaming 400 MiB (")
    assert "the same window on a CUDA graph kernel node vs on the stream, per region MiB: 10: 1.00x, 20: 1.00x, " \
           "30: 1.00x" in found
    assert all(problems(f, recs, info["claims"]) == [] for f in info["findings"])
    none = _l2_records(win_at=-1.0)
    exp.derive(none, None)
    assert "no window beats the device as found beyond the noise at any region or streaming set measured" in [
        str(f) for f in exp.describe(none)["findings"]]
