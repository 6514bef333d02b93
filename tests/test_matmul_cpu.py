"""Matmul family without a GPU: the ladder, the gemv kernels and two register-blocked configs compile for sm_90
with no spills (.ci/run builds the whole catalog for every arch and fails on a spill or stack frame), the tuning space,
the OP/B model (seed 000's answers), the config choice, and the public API's input errors."""

import os

import numpy as np
import pytest

from gpumemlab.kernels import matmul as K
from kernel_sample import matmul_sample


@pytest.mark.parametrize("arch", ["sm_90"])
def test_catalog_compiles_without_spills(arch):
    from gpumemlab.gpu.compile import compile_specs

    specs = matmul_sample()
    compiled = compile_specs(specs, arch)
    assert set(compiled) == set(specs)
    assert len(specs) == sum(not s.name.startswith("register_blocked") for s in K.KERNELS) + 8
    for spec, (_mod, usage) in compiled.items():
        assert usage.spill_store_bytes == 0 and usage.spill_load_bytes == 0, f"{spec.name} spills on {arch}: {usage}"
        assert usage.local_bytes == 0, f"{spec.name} has a stack frame on {arch}: {usage}"
        assert 0 < usage.registers <= 255


@pytest.mark.parametrize("arch", ["sm_90"])  # every arch: .ci/run (gpumemlab kernels --arch)
def test_register_blocked_fits_its_launch_bounds(arch):
    """ptxas must honour MINB: registers x threads x MINB fit the 64K-register file."""
    from gpumemlab.gpu.compile import compile_specs

    compiled = compile_specs(matmul_sample(), arch)  # a cache hit after the test above
    for cfg in (K.DEFAULT, K.SMALL):  # the register-blocked configs matmul_sample builds
        for vec in (4, 1):
            for split in (False, True):
                spec = cfg.spec(vec, split)
                usage = compiled[spec][1]
                minb = int(spec.name.split("<", 1)[1].rstrip(">").split(",")[11])
                assert usage.registers * cfg.threads * minb <= 65536, (spec.name, usage.registers)


def test_candidates_are_points_of_the_declared_space():
    space = set(K.space())
    assert len(space) > len(K.CANDIDATES)
    for cfg in K.CANDIDATES:
        assert cfg.problems(4) == [] and cfg.problems(1) == [], cfg.name
        plain = K.RBConfig(cfg.bm, cfg.bn, cfg.bk, cfg.wm, cfg.wn, cfg.wniter, cfg.stages, cfg.aload, 1, cfg.tm, cfg.tn,
                           dbuf=cfg.dbuf, order=cfg.order, pin=cfg.pin)
        assert plain in space, cfg.name
        assert K.RBConfig.from_name(cfg.name) == cfg
    names = [c.name for c in K.CANDIDATES]
    assert len(names) == len(set(names))
    assert K.DEFAULT in K.CANDIDATES and K.SMALL in K.CANDIDATES


@pytest.mark.parametrize("cfg", [c for c in K.CANDIDATES if c.thread_tile[0] * c.thread_tile[1] >= 64],
                         ids=lambda c: c.name)
def test_register_blocked_shared_layouts_by_the_model(cfg):
    """The kernel's shared-memory accesses, as the analyzer sees them (cc 9.0): interleaved lanes make every
    fragment LDS.128 take 2 wavefronts (row-major lanes: 4 for B), and the transposed A stores are conflict-free."""
    from gpumemlab.model import analyze_shared

    tcols = (cfg.wn // cfg.wniter) // cfg.tn
    lane = "(threadIdx.x % 32)"
    t_n, t_m = f"(({lane} >> 1) % {tcols})", f"(({lane} & 1) | ((({lane} >> 1) / {tcols}) << 1))"
    decl = "__shared__ float4 s[4096]"
    a = analyze_shared(f"s[{t_m} * {cfg.tm // 4}]", decl, block=(32, 1, 1))
    b = analyze_shared(f"s[{t_n} * {cfg.tn // 4}]", decl, block=(32, 1, 1))
    row_major_b = analyze_shared(f"s[({lane} % {tcols}) * {cfg.tn // 4}]", decl, block=(32, 1, 1))
    assert (a["wavefronts"], b["wavefronts"], row_major_b["wavefronts"]) == (2, 2, 4)
    if cfg.aload == 1:  # a warp stores 16 rows x 2 k-quads of A^T (pitch BM + 4): one wavefront per STS
        kq = cfg.bk // 4
        store = analyze_shared(f"s[(4 * (({lane} / 16) % {kq})) * {cfg.bm + 4} + {lane} % 16]",
                               f"__shared__ float s[{cfg.bk * (cfg.bm + 4)}]", block=(32, 1, 1))
        assert store["wavefronts"] == 1, store


def test_space_rejects_what_the_kernel_would_not_compile():
    bad = K.RBConfig(128, 128, 8, 64, 32, 3, stages=3, aload=0)  # 3 sub-tiles do not split a 32-wide warp tile
    assert bad.problems()
    too_big = K.RBConfig(256, 256, 16, 64, 64, 4, stages=4, aload=0)
    assert any("shared memory" in p or "threads" in p for p in too_big.problems())
    with pytest.raises(ValueError):
        K.RBConfig.from_name("nope")
    # any point of the space reads back from its name (a sweep can try it before it is a candidate)
    points = K.space()
    assert len(points) > 100 and all(K.RBConfig.from_name(c.name) == c for c in points)
    skinny = K.RBConfig.from_name("128x32x16_w32x32_i1_t4x4_s3_a0_b4_o2_p1")
    assert (skinny.bm, skinny.bn, skinny.threads, skinny.order, skinny.pin, skinny.dbuf) == (128, 32, 128, 2, 1, 0)
    with pytest.raises(ValueError, match="outside the space: 64 threads"):
        K.RBConfig.from_name("64x32x16_w32x32_i1_t4x4_s3_a0_b4_o2_p1")
    with pytest.raises(ValueError):
        K.DEFAULT.spec(2)


def test_default_config_geometry():
    cfg = K.DEFAULT
    assert cfg.threads == 256 and cfg.thread_tile == (8, 16) and cfg.dbuf == 1  # 8 warps of 64 x 64
    assert (cfg.order, cfg.pin) == (2, 1) and cfg.name == "128x256x16_w64x64_i4_t4x4_s2_a1_b1_d1_o2_p1"
    assert cfg.spec(4).name == "register_blocked<128, 256, 16, 64, 64, 4, 4, 4, 2, 4, 1, 1, false, 1, 2, 1>"
    assert K.CANDIDATES[5].spec(1, True).name == "register_blocked<128, 128, 16, 64, 64, 4, 4, 4, 2, 1, 1, 1, true, 1, 2>"
    assert K.CANDIDATES[6].spec(4).name == "register_blocked<128, 128, 16, 64, 64, 4, 4, 4, 2, 4, 1, 2, false, 1>"
    assert cfg.smem_bytes == cfg.stages * (cfg.bk * (cfg.bm + 4) + cfg.bk * cfg.bn) * 4


def op_per_byte(variant, config=None):
    return K.VARIANTS[variant].op_per_byte(config)


def test_op_per_byte_matches_seed_000_exercise():
    from gpumemlab.model.intensity import reuse_intensity

    assert op_per_byte("naive") == pytest.approx(0.25)
    assert op_per_byte("tiled_32") == pytest.approx(8.0)
    assert op_per_byte("coarsened_4") == pytest.approx(12.8)
    assert op_per_byte("tiled_8") == pytest.approx(2.0)
    assert op_per_byte("tiled_16") == pytest.approx(4.0)
    assert op_per_byte("coarsened_1") == pytest.approx(8.0)
    assert op_per_byte("coarsened_8") == pytest.approx(0.5 / (1 / 256 + 1 / 32))
    assert op_per_byte("corner_turning") == pytest.approx(8.0)
    assert op_per_byte("register_blocked", K.DEFAULT) == pytest.approx(0.5 / (1 / 128 + 1 / 256))  # 128 x 256 tiles
    assert op_per_byte("register_blocked", K.CANDIDATES[1]) == pytest.approx(32.0)  # 128 x 128 tiles
    assert op_per_byte("shared_ab_multiply") == pytest.approx(8.0)  # reuse factors 32 x 32: no analyzer kernel
    assert op_per_byte("coalesced_multiply") == pytest.approx(0.5 / (1 + 1 / 32))
    with pytest.raises(ValueError, match="reuse factors must be >= 1"):
        reuse_intensity(0, 4)


def test_op_per_byte_formula_agrees_with_the_analyzer():
    """The reuse-factor formula and model.intensity give the same OP/B for every rung the model knows."""
    from gpumemlab.model.intensity import matmul_intensity, reuse_intensity

    checked = 0
    for v in K.VARIANTS.values():
        if v.intensity is not None:
            assert matmul_intensity(*v.intensity) == pytest.approx(reuse_intensity(*v.reuse)), v.name
            checked += 1
    assert checked >= 10


def test_ladder_variants_are_declared():
    from gpumemlab.ops import matmul as ops

    assert K.LADDER[0] == "naive" and K.LADDER[-1] == "register_blocked" and K.TEACHING == K.LADDER[:-1]
    assert not any(K.VARIANTS[n].k32 or K.VARIANTS[n].op == "aat" for n in K.LADDER)
    for name in ("naive", "naive_col_major", "transposed_b", "simple_multiply", "coalesced_multiply",
                 "shared_ab_multiply", "tiled_8", "tiled_16", "tiled_32", "corner_turning", "coarsened_1",
                 "coarsened_2", "coarsened_4", "coarsened_8", "aat_simple", "aat_shared", "aat_padded",
                 "register_blocked"):
        assert name in K.VARIANTS
    assert set(K.AAT_VARIANTS) == {"aat_simple", "aat_shared", "aat_padded"}
    assert "auto" in ops.MATMUL_VARIANTS and "aat_simple" not in ops.MATMUL_VARIANTS
    specs = {v.spec for v in K.VARIANTS.values() if v.spec is not None}
    assert specs <= set(K.KERNELS)


def test_split_chunk_never_leaves_an_empty_split():
    assert K.split_chunk(1000, 8, 3) == (336, 3)
    assert K.split_chunk(20, 8, 8) == (8, 3)
    for k in (1, 7, 8, 9, 64, 1000, 1023, 4096):
        for bk in (8, 16):
            for s in (1, 2, 3, 4, 8, 100):
                chunk, eff = K.split_chunk(k, bk, s)
                assert chunk % bk == 0 and 1 <= eff <= s and (eff - 1) * chunk < k <= eff * chunk


def test_register_blocked_launch_recipe():
    g = K.rb_launch(K.SMALL, 1000, 300, 1000, 1, 3)  # 64 x 64 tiles: 16 x 5; 3 slices of 336 rows
    assert g.grid == (80, 3, 1) and g.scalars[:6] == (1000, 300, 1000, 336, 1000, 300) and g.splits == 3
    assert tuple(map(int, g.scalars[6:])) == (0, 0)  # one product: no batch steps
    assert g.spec == K.SMALL.spec(1, split=True) and g.threads == K.SMALL.threads and g.smem == K.SMALL.smem_bytes
    assert K.rb_launch(K.DEFAULT, 4096, 4096, 4096, 4).spec == K.DEFAULT.spec(4)


def test_every_ladder_recipe_names_arguments_the_launcher_knows():
    for v in K.VARIANTS.values():
        if v.spec is not None:
            assert set(v.args) <= {"out", "a", "b", "m", "n", "k"} and v.args[:2] == ("out", "a"), v.name
    assert K.VARIANTS["aat_simple"].args == ("out", "a", "m")
    assert K.VARIANTS["simple_multiply"].args == ("out", "a", "b", "n")
    assert K.VARIANTS["tiled_16"].args == ("out", "a", "b", "m", "n", "k")


# ---------------------------------------------------------------- public API errors (before any GPU work)

def test_matmul_rejects_host_arrays():
    import gpumemlab

    a = np.ones((4, 4), np.float32)
    with pytest.raises(TypeError, match="NumPy"):
        gpumemlab.matmul(a, a)


def test_matmul_rejects_other_objects():
    import gpumemlab

    with pytest.raises(TypeError, match="GPU array"):
        gpumemlab.matmul([[1.0]], [[1.0]])


@pytest.mark.parametrize("variant", ["fastest", "aat_simple", "", None])
def test_matmul_rejects_unknown_variants(variant):
    import gpumemlab

    a = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="unknown variant"):
        gpumemlab.matmul(a, a, variant=variant)


def test_matmul_config_is_an_explicit_choice_for_the_tiled_variants():
    import gpumemlab
    from gpumemlab.ops.matmul import Choice

    a = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="^matmul: config must be a gpumemlab.ops.matmul.Choice, not str$"):
        gpumemlab.matmul(a, a, config=K.DEFAULT.name)
    with pytest.raises(ValueError, match="^matmul: config applies to variant 'auto' or 'register_blocked', not "
                                         "'tiled_16'$"):
        gpumemlab.matmul(a, a, variant="tiled_16", config=Choice(K.DEFAULT))


def test_matmul_error_messages_are_one_line():
    import gpumemlab

    for args, kw in (((np.ones((2, 2), np.float32),) * 2, {}), (([[1.0]], [[1.0]]), {}),
                     ((np.ones((2, 2), np.float32),) * 2, {"variant": "x"})):
        with pytest.raises((TypeError, ValueError)) as info:
            gpumemlab.matmul(*args, **kw)
        assert "\n" not in str(info.value)


def test_matmul_experiments_are_registered():
    from gpumemlab.experiments import registry

    reg = registry()
    assert reg["matmul"].params["size"] == 4096
    assert "register_blocked" in reg["matmul"].params["variants"]
    sizes = reg["matmul_sizes"].params["sizes"]
    assert sizes[0] == 128 and sizes[-1] == 8192
    assert reg["matmul_sizes"].params["slow_max_size"] < 8192
    assert "matmul_shared_ab" in reg


def test_tf32_environment_check_names_the_variable_and_sets_cupy_tf32_off(monkeypatch):
    from gpumemlab.gpu.fp32 import require_fp32_env, tf32_env_problem

    for var in ("CUPY_TF32", "NVIDIA_TF32_OVERRIDE"):
        monkeypatch.delenv(var, raising=False)
    assert tf32_env_problem() is None
    assert require_fp32_env() is None and os.environ["CUPY_TF32"] == "0"
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "1")
    assert tf32_env_problem() == "NVIDIA_TF32_OVERRIDE=1: cuBLAS SGEMM would not be pure FP32; unset it"
    monkeypatch.delenv("NVIDIA_TF32_OVERRIDE")
    monkeypatch.setenv("CUPY_TF32", "1")
    assert require_fp32_env() == "CUPY_TF32=1: cuBLAS SGEMM would not be pure FP32; unset it"
    assert os.environ["CUPY_TF32"] == "1"  # left as found: the caller refuses to run
