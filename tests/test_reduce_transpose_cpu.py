"""CPU tests for the reduce / transpose / control / intrinsics / launch families: compile reports, plans,
error bounds, host models, and input validation that fails before any GPU call."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpumemlab.gpu.compile import compile_specs, runs_on
from gpumemlab.kernels import divergence, intrinsics, reduce, register_pressure, transpose
from gpumemlab.errors import InputTypeError, UsageError
from gpumemlab.ops import _axes, reduce_axis
from gpumemlab.ops import reduce as ops_reduce
from gpumemlab.ops import transpose as ops_transpose
from kernel_sample import per_template

FAMILIES = (reduce, transpose, divergence, intrinsics, register_pressure)
ARCHS = ("sm_90",)  # .ci/run builds every family for every supported arch


def built(arch: str) -> list:
    """Every transpose, divergence, intrinsics and spill-demo kernel; three of each reduction template."""
    return [s for s in per_template(reduce.KERNELS) + [s for fam in FAMILIES[1:] for s in fam.KERNELS]
            if runs_on(s, arch)]  # transpose_bulk: sm_90+


@pytest.fixture(scope="module", params=ARCHS)
def compiled(request):
    specs = built(request.param)
    result = compile_specs(specs, request.param)
    missing = [s.label for s, (_, u) in result.items() if u is None or u.from_cubin]  # spills known only from ptxas
    assert not missing, f"no ptxas report for {missing}"
    return request.param, result


def test_every_instantiation_compiles_without_spills_except_the_demo(compiled):
    arch, result = compiled
    spilling = sorted(s.label for s, (_, u) in result.items()
                      if (u.spill_store_bytes or u.spill_load_bytes) and s not in register_pressure.SPILL_DEMO)
    assert spilling == [], f"{arch}: unexpected spills in {spilling}"
    assert len(result) == len(set(built(arch)))


def test_spill_demo_really_spills_and_respects_the_limit(compiled):
    arch, result = compiled
    natural = result[register_pressure.NATURAL][1]
    assert natural.registers > max(register_pressure.REG_LIMITS), f"{arch}: the demo kernel needs {natural.registers} registers"
    for limit, spec in zip(register_pressure.REG_LIMITS, register_pressure.SPILL_DEMO):
        usage = result[spec][1]
        assert usage.registers <= limit
        assert usage.spill_store_bytes > 0 and usage.local_bytes > 0, f"{arch}: {spec.label} does not spill"
    assert all(s.spills_expected for s in register_pressure.SPILL_DEMO) and not register_pressure.NATURAL.spills_expected
    spills = [result[s][1].spill_store_bytes for s in register_pressure.SPILL_DEMO]
    assert spills == sorted(spills), "tighter limits must spill more"


def test_shared_memory_of_the_tiles(compiled):
    arch, result = compiled
    usage = {s.name: u for s, (_, u) in result.items()}
    assert usage["transpose_tiled<float, 32, 32, 0>"].shared_bytes == 32 * 32 * 4
    assert usage["transpose_tiled<float, 32, 32, 1>"].shared_bytes == 32 * 33 * 4
    assert usage["transpose_tiled<double, 32, 8, 1>"].shared_bytes == 32 * 33 * 8
    assert usage["transpose_vec<float, float4, 64, 8>"].shared_bytes == 64 * 64 * 4
    assert usage["transpose_vec<double, double2, 64, 4>"].shared_bytes == 64 * 64 * 8
    assert usage["reduce0<float, 256>"].shared_bytes == 256 * 4
    assert usage["reduce5<float, 256>"].shared_bytes == 8 * 4  # warp sums only
    # the min-blocks launch bound keeps the vector transpose within 8 blocks per SM of registers
    assert usage["transpose_vec<float, float4, 64, 8>"].registers <= 32


def test_ladders_are_in_seed_order():
    assert [s.step for s in reduce.LADDER] == [0, 1, 2, 3, 4, 5]
    assert [s.per_block for s in reduce.LADDER] == [256, 256, 256, 512, 512, 512]
    assert transpose.LADDER[2] is transpose.NAIVE and transpose.LADDER[-1] is transpose.VECTORIZED
    with pytest.raises(ValueError):
        reduce.reduce6("float", unroll=3)
    with pytest.raises(ValueError):
        reduce.ladder_spec(6)


# ------------------------------------------------------------------ sum: plan and error bound

def test_sum_plan_small_inputs_take_one_block():
    for n in (1, 2, 1000, ops_reduce.SINGLE_PASS_MAX):
        assert ops_reduce.plan(n, 4, 132, 8).grid == 0


def test_sum_plan_is_waves_of_the_resident_grid_and_deterministic():
    lib = reduce.LIBRARY
    big = ops_reduce.plan(1 << 28, 4, 132, 8)
    assert big.grid == 132 * 8 * lib.waves and big.width == 4 and big.block == lib.block
    assert ops_reduce.plan(1 << 28, 4, 132, 8) == big
    mid = ops_reduce.plan(100_003, 4, 132, 8)  # fewer tiles than the grid
    assert mid.grid == math.ceil(100_003 / (4 * lib.block * lib.unroll))
    assert ops_reduce.plan(1 << 20, 8, 132, 8).width == 2
    four = reduce.VecConfig("reduce7", 4, 0, 256, 1, waves=5)  # CUB-like: 5 x the resident grid
    assert ops_reduce.plan(1 << 28, 4, 132, 8, four).grid == 132 * 8 * 5
    assert ops_reduce.plan(1 << 28, 4, 132, 8, reduce.VecConfig("reduce6", 8)).final_block == reduce.FINAL_BLOCK


def test_vec_config_names_and_validation():
    assert reduce.VecConfig().spec().name == "reduce7<float, float, 256, 8, 0, 0>"
    c = reduce.VecConfig("reduce7", 16, 2, 512, 1, 4)
    assert c.spec("int", "long long").name == "reduce7<int, long long, 512, 16, 2, 1>"
    assert c.label == "reduce7 float4 x16 no_allocate B512 strip-mined 4 waves"
    assert c.with_waves(1).spec() == c.spec()
    for bad in (dict(unroll=3), dict(block=128), dict(load=7), dict(mapping=2), dict(waves=0), dict(kernel="x")):
        with pytest.raises(ValueError):
            reduce.VecConfig(**bad)
    assert len(reduce.TUNING) == 3 * 2 * 2 * 2 and reduce.LIBRARY.with_waves(1) in reduce.TUNING


def _thread_share_indices(nv: int, grid: int, block: int, unroll: int, mapping: int) -> np.ndarray:
    """Host model of thread_share's vector indices (reduce.cu), every block and thread."""
    seen = []
    for b in range(grid):
        for t in range(block):
            if mapping == 0:
                chunks = (nv + 31) // 32
                begin, end = min(nv, chunks * b // grid * 32), min(nv, chunks * (b + 1) // grid * 32)
                base = begin + t
                while base + (unroll - 1) * block < end:
                    seen += [base + u * block for u in range(unroll)]
                    base += unroll * block
                seen += [base + u * block for u in range(unroll) if base + u * block < end]
            else:
                tile = block * unroll
                full, tt = nv // tile, b
                while tt < full:
                    seen += [tt * tile + t + u * block for u in range(unroll)]
                    tt += grid
                if tt == full:
                    seen += [j for j in (full * tile + t + u * block for u in range(unroll)) if j < nv]
    return np.asarray(seen, dtype=np.int64)


@pytest.mark.parametrize("mapping", [0, 1])
@pytest.mark.parametrize("nv,grid,unroll", [(0, 3, 4), (1, 3, 4), (5000, 3, 4), (70_001, 7, 8), (4096 * 3 + 5, 2, 16),
                                            (100_000, 40, 2)])
def test_every_vector_is_read_exactly_once(mapping, nv, grid, unroll):
    block = 64  # small blocks keep the model fast; the index algebra does not depend on it
    counts = np.bincount(_thread_share_indices(nv, grid, block, unroll, mapping), minlength=nv)
    assert counts.size == nv and np.all(counts == 1)


def test_sum_bound_holds_for_a_host_model_of_the_tree():
    """Simulate the float32 tree of one small plan on the host and check the bound against float64."""
    rng = np.random.default_rng(3)
    x = (rng.random(5000) + 0.5).astype(np.float32) * np.where(rng.random(5000) < 0.5, -1, 1).astype(np.float32)
    p = ops_reduce.plan(x.size, 4, 132, 8)
    assert p.grid == 0
    block = p.final_block
    acc = np.zeros(block, np.float32)
    for i in range(0, x.size, block):  # thread t adds x[t], x[t + 1024], ... in order
        chunk = x[i:i + block]
        acc[:chunk.size] += chunk
    while acc.size > 1:  # shuffle tree: pairwise
        acc = acc[: acc.size // 2] + acc[acc.size // 2:]
    err = abs(float(acc[0]) - math.fsum(x.astype(np.float64)))
    assert err <= ops_reduce.relative_bound(p, np.float32) * float(np.abs(x.astype(np.float64)).sum())


def _chain_lower_bound(p) -> int:
    """Additions that x[0] goes through in reduce.cu, counted from the kernels' structure (aligned input): a
    lower bound that any valid ``tree_depth`` must reach, derived here without ops.reduce's formula.

    Single block (reduce_final): thread 0 adds x[0], x[FINAL_BLOCK], ... (the first add, to 0, is exact), then the
    block's shuffle tree (log2 FINAL_BLOCK levels). reduce7: x[0] is in thread 0's first batch of block 0: hsum of
    its vector (log2 width) and the pairwise tree of the batch (log2 unroll), one add per later batch, the block
    tree (log2 block), then in the last block thread 0 adds partials 0, block, 2 block, ... and the tree again.
    """
    if p.grid == 0:
        return math.ceil(p.n / reduce.FINAL_BLOCK) - 1 + int(math.log2(reduce.FINAL_BLOCK))
    nv, tile = p.n // p.width, p.block * p.unroll
    if p.mapping == 1:  # strip-mined: block 0 takes tiles 0, grid, 2 grid, ... of the full ones
        batches = math.ceil((nv // tile) / p.grid)
    else:               # even share: block 0 reads [0, end0), thread 0 a full batch per tile that fits
        end0 = min(nv, math.ceil(nv / 32) // p.grid * 32)
        batches = (end0 - (p.unroll - 1) * p.block - 1) // tile + 1 if end0 > (p.unroll - 1) * p.block else 0
    first = int(math.log2(p.width * p.unroll)) if batches else 0
    final = math.ceil(p.grid / p.final_block) - 1 + int(math.log2(p.final_block))
    return first + max(batches - 1, 0) + int(math.log2(p.block)) + final


PLAN_CASES = [(n, itemsize, sms, bps, cfg) for n in (1, 1000, 16_384, 16_385, 100_003, (1 << 22) + 9, 1 << 28)
              for itemsize in (4, 8) for sms, bps in ((132, 2), (1, 1), (78, 4))
              for cfg in (reduce.LIBRARY, reduce.VecConfig("reduce7", 4, 0, 256, 0, 1), reduce.LIBRARY.with_waves(4))]


@pytest.mark.parametrize("n,itemsize,sms,bps,config", PLAN_CASES)
def test_tree_depth_covers_the_kernels_chain(n, itemsize, sms, bps, config):
    p = ops_reduce.plan(n, itemsize, sms, bps, config)
    assert (p.grid == 0) == (n <= ops_reduce.SINGLE_PASS_MAX)
    assert ops_reduce.tree_depth(p) >= _chain_lower_bound(p), p


@pytest.mark.parametrize("n,grid", [(1 << 28, 264), (100_003, 7), ((1 << 22) + 9, 1)])
def test_relative_bound_is_gamma_of_the_tree_depth(n, grid):
    """Higham (Accuracy and Stability of Numerical Algorithms, 2nd ed., sec. 4.2): if every x_i goes through at
    most h roundings, |s^ - s| <= gamma_h sum |x_i| with gamma_h = h u / (1 - h u), u = 2^-24 (float32),
    2^-53 (float64); integers are summed exactly."""
    p = ops_reduce.SumPlan(n, 4, grid, reduce.LIBRARY.block, reduce.LIBRARY.unroll, reduce.LIBRARY.block,
                           reduce.LIBRARY.mapping)
    h = ops_reduce.tree_depth(p)
    for dtype, u in ((np.float32, 2.0**-24), (np.float64, 2.0**-53)):
        assert ops_reduce.relative_bound(p, dtype) == pytest.approx(h * u / (1 - h * u), rel=1e-15)
    assert ops_reduce.relative_bound(p, np.int32) == 0.0


@pytest.mark.parametrize("bps", [2, 4])
def test_the_documented_float32_accuracy_at_2_to_the_28(bps):
    """The module docstring: 2^28 float32 on a 132-SM GPU, a bound of about 6e-6 of sum |x| (tests/gpu checks
    the measured error against 1e-5)."""
    p = ops_reduce.plan(1 << 28, 4, 132, bps)
    assert p.grid > 0 and ops_reduce.relative_bound(p, np.float32) <= 1e-5


def test_multi_block_bound_holds_for_a_host_model_of_reduce7():
    """Simulate reduce7 (strip-mined, float32 accumulation) on the host for a small multi-block plan; its error
    against float64 must be within gamma_h sum |x| with h = tree_depth of that plan."""
    rng = np.random.default_rng(5)
    n = 3 * 512 * 8 * 4 * 2 + 4 * 100 + 3  # 6 full tiles of float4 x 8 x 512, a partial tile, a 3-element tail
    x = ((rng.random(n) + 0.5) * np.where(rng.random(n) < 0.5, -1, 1)).astype(np.float32)
    p = ops_reduce.plan(n, 4, 1, 4, reduce.LIBRARY)
    assert p.grid == 4 and p.mapping == 1
    vec = x[: n // 4 * 4].reshape(-1, 4)
    tail = x[n // 4 * 4:]
    tile, full = p.block * p.unroll, vec.shape[0] // (p.block * p.unroll)
    partials = []
    for b in range(p.grid):
        acc = np.zeros(p.block, np.float32)
        g = b * p.block + np.arange(p.block)
        acc[g < tail.size] += tail[g[g < tail.size]]
        for t in range(b, full + 1, p.grid):
            idx = t * tile + np.arange(p.block)[:, None] + p.block * np.arange(p.unroll)[None, :]
            v = np.where((idx < vec.shape[0])[..., None], vec[np.minimum(idx, vec.shape[0] - 1)], np.float32(0))
            h = (v[..., 0] + v[..., 1]) + (v[..., 2] + v[..., 3])  # hsum of each float4
            while h.shape[1] > 1:  # pairwise over the batch
                h = h[:, : h.shape[1] // 2] + h[:, h.shape[1] // 2:]
            acc += h[:, 0]
        while acc.size > 1:
            acc = acc[: acc.size // 2] + acc[acc.size // 2:]
        partials.append(acc[0])
    total = np.float32(0)
    for v in partials:
        total = np.float32(total + v)
    err = abs(float(total) - math.fsum(x.astype(np.float64)))
    assert err <= ops_reduce.relative_bound(p, np.float32) * float(np.abs(x.astype(np.float64)).sum())


# ------------------------------------------------------------------ transpose: variant choice

@pytest.mark.parametrize("rows,cols,dtype,vector", [
    (16384, 16384, np.float32, True), (64, 4, np.int32, True), (4097, 31, np.float32, False),
    (1, 1024, np.float32, False), (6, 2, np.float64, True), (3, 2, np.float64, False), (8, 8, np.float64, True),
])
def test_transpose_variant_choice(rows, cols, dtype, vector):
    chosen = ops_transpose.choose_variant(rows, cols, dtype, 256, 512)
    assert (chosen in (transpose.LIBRARY_VECTORIZED, transpose.LIBRARY_TALL)) == vector


@pytest.mark.parametrize("rows,cols,dtype,tall", [
    (16380, 16388, np.float32, True),    # output rows of 65520 bytes: 16 bytes off a sector
    (16384, 16388, np.float32, False),   # output rows of 65536 bytes start on a sector
    (16388, 16384, np.int32, True), (16392, 16384, np.float32, False),
    (16380, 16388, np.float64, False),   # float64 keeps square tiles (a tall one would be 64 KiB)
])
def test_transpose_takes_tall_tiles_where_output_rows_start_off_a_sector(rows, cols, dtype, tall):
    chosen = ops_transpose.choose_variant(rows, cols, dtype, 256, 512)
    assert chosen is (transpose.LIBRARY_TALL if tall else transpose.LIBRARY_VECTORIZED)


def test_tall_tiles_spec_and_grid():
    assert transpose.LIBRARY_TALL.spec("float").name == "transpose_vec<float, float4, 64, 4, 32, 128>"
    assert transpose.LIBRARY_VECTORIZED.spec("double").name == "transpose_vec<double, double2, 64, 4, 16>"
    assert transpose.VECTORIZED.spec("float").name == "transpose_vec<float, float4, 64, 8>"  # the template's defaults
    assert transpose.LIBRARY_TALL.grid(16380, 16388) == (257, 128)  # 64-wide columns, 128-row bands
    assert transpose.LIBRARY_VECTORIZED.grid(16380, 16388) == (257, 256)


def test_transpose_misaligned_storage_falls_back():
    assert ops_transpose.choose_variant(64, 64, np.float32, 260, 512) is transpose.LIBRARY_FALLBACK


def test_transpose_grid_respects_the_y_limit():
    assert transpose.COARSENED.grid(10**7, 1) == (1, transpose.MAX_GRID_Y)
    assert transpose.VECTORIZED.grid(4097, 31) == (1, 65)
    assert transpose.NAIVE.grid(1, 1) == (1, 1)


# ------------------------------------------------------------------ host models of the other families

def test_branch_conditions_match_the_slide():
    tid = np.arange(256)
    slide_div, slide_uniform = divergence.SLIDE
    assert slide_div.takes_a(tid).sum() == 253  # threads 3..255
    assert np.array_equal(slide_uniform.takes_a(tid), tid >= 96)  # warps 3..7
    for v in divergence.VARIANTS:
        warps = [set(v.takes_a(tid[w * 32:(w + 1) * 32]).tolist()) for w in range(8)]
        assert any(len(s) > 1 for s in warps) == v.divergent, v.name
        assert v.divergent_warps == sum(len(s) > 1 for s in warps), v.name
    assert slide_div.divergent_warps == 1 and divergence.SWEEP[0].divergent_warps == 8


def test_divergence_host_paths_are_bounded():
    from gpumemlab.experiments.divergence import path_a, path_b

    x = np.linspace(0, 1, 101, dtype=np.float32)
    a, b = path_a(x, 200), path_b(x, 200)
    assert np.all((a > 0.45) & (a < 0.55)) and np.all((b > 0.25) & (b < 0.35))


def test_ulp_error_helper():
    from gpumemlab.experiments.intrinsics import ulp_error

    ref = np.array([1.0, 1.0, 0.75])
    got = np.array([1.0, 1.0 + 2.0**-23, 0.75 - 2 * 2.0**-24], np.float32)
    assert ulp_error(got, ref).tolist() == [0.0, 1.0, 2.0]


def test_intrinsics_catalog_is_one_template():
    names = {s.name.split("<")[0] for s in intrinsics.KERNELS}
    assert names == {"math_fn"} and len(intrinsics.KERNELS) == 12  # 6 functions x (accurate, fast)


# ------------------------------------------------------------------ input validation before the GPU

@pytest.mark.parametrize("bad", [np.ones(4, np.float32), [1.0, 2.0], 3.0, "x"])
def test_sum_rejects_host_and_non_arrays(bad):
    import gpumemlab

    with pytest.raises(TypeError) as info:
        gpumemlab.sum(bad)
    assert "\n" not in str(info.value) and "x:" in str(info.value)


@pytest.mark.parametrize("bad", [np.ones((4, 4), np.float32), [[1.0]], None])
def test_transpose_rejects_host_and_non_arrays(bad):
    import gpumemlab

    with pytest.raises(TypeError) as info:
        gpumemlab.transpose(bad)
    assert "\n" not in str(info.value)


def test_host_array_message_says_what_to_do():
    import gpumemlab

    with pytest.raises(TypeError, match="NumPy .host. array"):
        gpumemlab.sum(np.zeros(3))


def test_experiments_are_registered():
    from gpumemlab.experiments import registry

    reg = registry()
    for name in ("reduce", "transpose", "divergence", "intrinsics", "launch_config"):
        assert name in reg and reg[name].seed != "-" and reg[name].seed_claim != "-"


# ------------------------------------------------------------------ findings on synthetic records

def _rec(experiment, variant, params, t, gbps=None, kind="kernel", **kw):
    from gpumemlab.bench.records import Record

    return Record(experiment=experiment, variant=variant, params=params, bytes=None, flops=None,
                  time_s=dict(median=t), gbps=gbps, gflops=None, pct_of_ceiling=kw.pop("pct", None), ceiling=None,
                  verified=True, kind=kind, **kw)


def test_findings_render_from_records():
    from gpumemlab.experiments import registry

    reg = registry()
    n = 1 << 28
    red = [_rec("reduce", s.name, dict(n=n), 1e-3 / (i + 1), 1000.0 * (i + 1)) for i, s in enumerate(reduce.LADDER)]
    red += [_rec("reduce", "gpumemlab.sum", dict(n=n), 1e-4, 3000.0, pct=95.0),
            _rec("reduce", "cupy.sum", dict(n=n), 1e-4, 2950.0, kind="baseline")]
    lines = list(reg["reduce"].findings(red))
    assert any("6.0x" in s for s in lines) and any("gpumemlab.sum = 1.02x cupy.sum (2950 GB/s, separate medians)" in s for s in lines)

    p = dict(n=16384, dtype="float32")
    tr = [_rec("transpose", v.name, p, 1e-3 / (i + 1), 100.0 * (i + 1)) for i, v in enumerate(transpose.LADDER)]
    tr += [_rec("transpose", "gpumemlab.transpose", p, 1e-4, 3000.0, extra=dict(pct_of_copy_in_run=95.0)),
           _rec("transpose", "cupy.ascontiguousarray(x.T)", p, 3e-4, 1000.0, kind="baseline")]
    lines = list(reg["transpose"].findings(tr))
    assert any("95.0% of the best copy" in s for s in lines) and any("3.00x cupy" in s for s in lines)

    warps = divergence.BLOCK // 32
    dv = [_rec("divergence", v.name, dict(n=1, granularity=v.granularity), 2.0 if v.alternate and v.divergent else 1.0,
               extra=dict(divergent=v.divergent),
               model=dict(divergent_warps_per_block=v.divergent_warps, warps_per_block=warps,
                          predicted_slowdown=1.0 + v.divergent_warps / warps)) for v in divergence.VARIANTS]
    lines = list(reg["divergence"].findings(dv))
    # the slide's `threadIdx.x > 2` splits warp 0 only: 1 of 8 warps runs both paths -> 1 + 1/8 (256-thread blocks)
    assert any("1 of 8 warps per block diverge; model 1.125x" in s for s in lines)
    assert any("2.00x" in s and "8 of 8 warps; model 2x" in s for s in lines)

    acc = dict(max_ulp=1.0)
    it = [_rec("intrinsics", f.label(fast), dict(function=f.name, fast=fast), 1.0 if fast else 4.0,
               extra=dict(accuracy=acc)) for f in intrinsics.FUNCTIONS for fast in (False, True)]
    found = list(reg["intrinsics"].findings(it))
    assert len(found) == len(intrinsics.FUNCTIONS) == 6
    assert found[5].startswith("__fdividef(1, x) 4.0x the throughput of __frcp_rn; max error 1 vs 1 ulp")

    lc = [_rec("launch_config", f"block {b}", dict(sweep="block_size", block=b), 1.0, 100.0 * b) for b in (32, 256)]
    lc += [_rec("launch_config", "natural registers", dict(sweep="registers"), 1.0, model=dict(registers=78,
                spill_store_bytes=0, driver_occupancy_pct=37.5), speedup_vs_naive=1.0)]
    assert any("78 registers" in s for s in reg["launch_config"].findings(lc))


# ------------------------------------------------------------------ sum(axis=...): axes and plans (no GPU)

@pytest.mark.parametrize("axis,ndim,want", [(None, 3, (0, 1, 2)), (-1, 3, (2,)), ((2, 0), 3, (0, 2)), (0, 1, (0,)),
                                            ((), 2, ())])
def test_normalize_axis(axis, ndim, want):
    assert _axes.normalize_axis(axis, ndim) == want


@pytest.mark.parametrize("axis,exc,msg", [(3, UsageError, "axis 3 is out of bounds for array of dimension 3"),
                                          ((1, -2), UsageError, "axis: duplicate value in (1, -2)"),
                                          ("0", InputTypeError, "axis: expected an int or a tuple of ints, got str")])
def test_normalize_axis_errors(axis, exc, msg):
    with pytest.raises(exc) as e:
        _axes.normalize_axis(axis, 3)
    assert str(e.value) == msg


@pytest.mark.parametrize("shape,axes,want", [((16384, 16384), (0,), (1, 16384, 16384)), ((4, 5, 6), (1,), (4, 5, 6)),
                                             ((4, 5, 6), (0, 2), None), ((4, 1, 6), (0, 2), (1, 24, 1)),
                                             ((4, 5, 6), (), (120, 1, 1)), ((2, 3, 4, 5), (1, 2), (2, 12, 5))])
def test_collapse(shape, axes, want):
    assert _axes.collapse(shape, axes) == want


def test_result_shape_keepdims():
    assert _axes.result_shape((4, 5, 6), (0, 2), True) == (1, 5, 1)
    assert _axes.result_shape((4, 5, 6), (0, 2), False) == (5,)


def test_axis_plans_pick_the_path_from_the_shape():
    rows = reduce_axis.plan((16384, 16384), (1,), 4, 4, True, 1000)
    assert [(p.kind, p.vec, p.tpr, p.splits) for p in rows] == [("rows", True, reduce.ROW_BLOCK, 1)]
    cols = reduce_axis.plan((16384, 16384), (0,), 4, 4, True, 1000)[0]
    assert (cols.kind, cols.width, cols.splits, cols.per_split) == ("cols", 4, 32, 512)  # 4 waves of 1000 blocks
    assert reduce_axis.plan((16384, 16384), (0,), 4, 4, False, 1000)[0].width == 1  # misaligned: scalar loads
    few = reduce_axis.plan((3, 1 << 24), (1,), 4, 4, True, 1000)[0]
    # ceil(4 * 1000 / 3) splits of each row, capped at 16 loads per thread: 2^22 / 4096
    assert (few.kind, few.tpr, few.splits) == ("rows", reduce.ROW_BLOCK, 1024)
    thin = reduce_axis.plan((1 << 24, 3), (1,), 4, 4, True, 1000)[0]  # rows of 12 bytes: a thread each
    assert (thin.kind, thin.tpr, thin.vec, thin.grid) == ("rows", 1, False, ((1 << 24) // reduce.ROW_BLOCK, 1))
    widest = reduce_axis.plan((1000, 32), (1,), 4, 4, True, 1000)[0]  # 128 bytes: still a thread, float4 loads
    assert (widest.tpr, widest.vec, widest.grid) == (1, True, (4, 1))
    assert reduce_axis.plan((1000, 16), (1,), 8, 8, True, 1000)[0].tpr == 1  # float64: 128 bytes
    assert reduce_axis.plan((1000, 33), (1,), 4, 4, True, 1000)[0].tpr == 32
    assert reduce_axis.plan((1000, 17), (1,), 8, 8, True, 1000)[0].tpr == 32
    two = reduce_axis.plan((256, 256, 4096), (0, 2), 4, 8, True, 1000)
    assert [(p.kind, p.outer, p.n, p.inner, p.width) for p in two] == [("rows", 65536, 4096, 1, 4),
                                                                       ("cols", 1, 256, 256, 2)]
    # column blocks from a quarter wave of resident blocks up: one split (no second launch); below, 4 waves' worth
    assert reduce_axis.plan((512, 512, 256), (1,), 4, 4, True, 792)[0].splits == 1  # 1024 column blocks
    quarter = [reduce_axis.plan((outer, 2048, 256), (1,), 4, 4, True, 1000)[0] for outer in (125, 124)]
    assert [(p.kind, p.grid, p.splits, p.per_split) for p in quarter] == [("cols", (250, 1), 1, 2048),
                                                                          ("cols", (248, 16), 16, 128)]
    assert reduce_axis.plan((5, 1, 7), (1,), 4, 4, True, 1000)[0].kind == "cast"
    assert reduce_axis.plan((4, 1, 6), (0, 2), 4, 4, True, 1000)[0].kind == "full"


def test_axis_plans_for_few_columns_and_for_many():
    # a few columns over long runs: sum_cols_narrow, periods of lcm(4, inner) floats, 2 waves of 1000 blocks
    narrow = reduce_axis.plan((1 << 24, 3), (0,), 4, 4, True, 1000)[0]
    assert (narrow.kind, narrow.vec, narrow.width, narrow.per_split, narrow.splits, narrow.grid) == (
        "narrow", True, 4, 12, 2000, (1, 2000))
    several = reduce_axis.plan((1000, 4096, 5), (1,), 4, 4, True, 1000)[0]
    assert (several.kind, several.per_split, several.splits, several.grid) == ("narrow", 20, 2, (1000, 2))
    odd_runs = reduce_axis.plan((5, 3001, 3), (1,), 4, 4, True, 1000)[0]  # runs of 9003 floats: scalar loads
    assert (odd_runs.kind, odd_runs.vec, odd_runs.per_split, odd_runs.splits) == ("narrow", False, 3, 12)
    assert reduce_axis.plan((1 << 20, 5), (0,), 8, 8, True, 1000)[0].per_split == 10  # float64: lcm(2, 5)
    assert reduce_axis.plan((1 << 20, 3), (0,), 4, 4, False, 1000)[0].vec is False  # a misaligned base
    short = reduce_axis.plan((100, 1000, 3), (1,), 4, 4, True, 1000)[0]  # 250 periods a run: too short
    assert short.kind == "cols"
    assert reduce_axis.plan((1 << 20, 9), (0,), 4, 4, True, 1000)[0].kind == "cols"  # 9 columns: not built
    # columns enough for 2 waves of threads (2 x 1000 blocks x 256): a thread per 16 bytes of columns
    many = reduce_axis.plan((3, 1 << 24), (0,), 4, 4, True, 1000)[0]
    assert (many.kind, many.vec, many.width, many.grid) == ("thread", True, 4, (16384, 1))
    scalar = reduce_axis.plan((3, 3_000_001), (0,), 4, 4, True, 1000)[0]
    assert (scalar.kind, scalar.vec, scalar.grid) == ("thread", False, (math.ceil(3_000_001 / 256), 1))
    assert reduce_axis.plan((3, 2_047_996), (0,), 4, 4, True, 1000)[0].kind == "cols"  # one vector short
    assert reduce_axis.plan((3, 2_048_000), (0,), 4, 4, True, 1000)[0].kind == "thread"


def _host_narrow(x: np.ndarray, p) -> np.ndarray:
    """sum_cols_narrow's order of additions in float32 for one run (n, inner): per thread its periods' elements in
    order, then the warp and block sums (pairwise trees, here any order within the bound's depth), the tail, splits."""
    flat, inner, per = x.ravel(), x.shape[1], p.per_split
    periods = flat.size // per
    out = np.zeros(inner, np.float32)
    for s in range(p.splits):
        part = np.zeros(inner, np.float32)
        for t in range(256):
            acc = np.zeros(inner, np.float32)
            for i in range(s * 256 + t, periods, p.splits * 256):
                for k in range(per):
                    acc[k % inner] = np.float32(acc[k % inner] + flat[i * per + k])
            part = (part + acc).astype(np.float32)
        if s == 0:
            for e in range(periods * per, flat.size):
                part[e % inner] = np.float32(part[e % inner] + flat[e])
        out = (out + part).astype(np.float32) if s else part
    return out


def _host_cols(x: np.ndarray, p) -> np.ndarray:
    """sum_cols' order of additions in float32 for a (n, inner) array: threads, then the RB rows, then splits."""
    rb = reduce.COL_ROWS
    out = np.zeros(x.shape[1], np.float32)
    for s in range(p.splits):
        part = np.zeros(x.shape[1], np.float32)
        for y in range(rb):
            acc = np.zeros(x.shape[1], np.float32)
            for j in range(s * p.per_split + y, min(x.shape[0], (s + 1) * p.per_split), rb):
                acc = (acc + x[j]).astype(np.float32)
            part = (part + acc).astype(np.float32) if y else acc
        out = (out + part).astype(np.float32) if s else part
    return out


@pytest.mark.parametrize("shape,seed,kind,model", [((3000, 64), 5, "cols", _host_cols),
                                                   ((20_003, 3), 7, "narrow", _host_narrow)])
def test_column_sum_bound_holds_for_a_host_model(shape, seed, kind, model):
    rng = np.random.default_rng(seed)
    x = (rng.random(shape) * 2 - 1).astype(np.float32) * np.float32(1e3)
    p = reduce_axis.plan(x.shape, (0,), 4, 4, True, 8)[0]  # few resident blocks: splits
    assert p.kind == kind and p.splits > 1 and (kind != "narrow" or x.size % p.per_split)  # narrow: a tail too
    got = model(x, p).astype(np.float64)
    want = x.astype(np.float64).sum(axis=0)
    bound = reduce_axis.relative_bound((p,), np.float32) * np.abs(x.astype(np.float64)).sum(axis=0)
    assert np.all(np.abs(got - want) <= bound)
    assert reduce_axis.relative_bound((p,), np.int64) == 0.0


@pytest.mark.parametrize("rows,cols,ctype,short_rows,chunk,pitch", [
    (3, 70000, "float", True, 1024, 1035), (70000, 3, "float", False, 1024, 1035), (1, 9, "double", True, 4096, 4128),
    (31, 517, "int", True, 128, 130), (6, 2, "float", False, 2048, 2064)])
def test_thin_launch_geometry(rows, cols, ctype, short_rows, chunk, pitch):
    t = transpose.thin_launch(rows, cols, ctype)
    s = min(rows, cols)
    assert (t.chunk, t.pitch, t.grid) == (chunk, pitch, math.ceil(max(rows, cols) / chunk))
    assert t.spec.name.endswith(f"{str(short_rows).lower()}>") and t.shmem == s * pitch * (8 if ctype == "double" else 4)
    assert s * chunk <= transpose.THIN_ELEMS and all((f * t.magic) >> 32 == f // s for f in range(0, s * chunk, 7)
                                                     if s > 1)


@pytest.mark.parametrize("rows,cols,min_blocks,chunk,pitch", [
    (3, 70000, 264, 256, 267), (70000, 3, 264, 256, 267), (31, 517, 264, 32, 34), (3, 1 << 22, 264, 1024, 1035),
    (2, 100, 264, 32, 48)])
def test_thin_blocks_shrink_until_every_sm_has_some(rows, cols, min_blocks, chunk, pitch):
    t = transpose.thin_launch(rows, cols, "float", min_blocks)
    assert (t.chunk, t.pitch, t.grid) == (chunk, pitch, math.ceil(max(rows, cols) / chunk))


def test_full_reductions_with_another_accumulator_take_a_split_row():
    default = reduce_axis.plan((1 << 20,), (0,), 4, 4, True, 1000, full_ok=True)[0]
    other = reduce_axis.plan((1 << 20,), (0,), 4, 8, True, 1000, full_ok=False)[0]
    assert default.kind == "full"
    assert (other.kind, other.outer, other.tpr, other.splits) == ("rows", 1, reduce.ROW_BLOCK, 64)  # 2^18 vectors / 4096


@pytest.mark.parametrize("rows,cols,thin", [(3, 1 << 22, True), (1 << 22, 31, True), (3, 70_000, True),
                                            (32, 1 << 22, False), (1 << 21, 2, True), (2, 2, True), (40, 50, False)])
def test_transpose_thin_path_choice(rows, cols, thin):
    spec = ops_transpose.launch_plan(rows, cols, "float32", True, 132)[0]
    assert spec.name.startswith("transpose_thin") == thin


def test_narrow_splits_take_one_launch_with_this_streams_workspace(monkeypatch):
    """Split narrow sums are one launch: sum_cols_narrow gets the result, the stream's partials (splits x outer x
    inner of the accumulator) and one ticket per run; no second kernel adds the splits. One split passes the result
    for the unused pointers."""
    from gpumemlab.gpu import runtime
    from gpumemlab.ops import _workspace

    made = []

    class FakeLauncher:
        def __init__(self, kernel, grid, block, n_arrays, *scalars, shmem=0):
            self.args, self.calls = (kernel, grid, block, n_arrays, scalars), []
            made.append(self)

        def __call__(self, *arrays):
            self.calls.append(arrays)

    monkeypatch.setattr(runtime, "Launcher", FakeLauncher)
    asked = []
    monkeypatch.setattr(_workspace, "ticket_workspace", lambda *a: asked.append(a) or ("partials", "tickets"))
    p = reduce_axis.plan((1 << 24, 3), (0,), 4, 4, True, 1000)[0]
    specs = reduce_axis._specs(p, "float", "float")
    assert p.kind == "narrow" and p.splits == 2000 and specs[1] is None
    launch = reduce_axis._pass_launch(p, specs, "float32", np.dtype(np.float64), np.float64(4))
    launch("src", "dst")
    (only,) = made
    assert only.args == (specs[0], (1, 2000), reduce.COL_THREADS, 4, (np.int64(1 << 24), np.float64(4)))
    assert only.calls == [("dst", "partials", "tickets", "src")] and asked == [(2000 * 3, 1, "float64")]
    one = reduce_axis.plan((2000, 1024, 3), (1,), 4, 4, True, 1000)[0]  # 2,000 runs fill two waves alone
    assert (one.kind, one.splits) == ("narrow", 1)
    reduce_axis._pass_launch(one, reduce_axis._specs(one, "float", "float"), "float32", np.dtype(np.float32),
                             np.float32(1))("src", "dst")
    assert made[-1].calls == [("dst", "dst", "dst", "src")] and len(asked) == 1
