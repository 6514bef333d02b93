"""Every registered experiment, declared and run by the suite's runner in quick mode on the GPU: every record
verified, every finding produced, no model error, and the records shaped like a committed full run's
(same variants, params keys, kinds, ceilings, model and extra keys)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpumemlab.experiments import registry

pytestmark = pytest.mark.gpu

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "results" / "nvidia-h200" / "results.json.xz"
# sweeps trimmed to the points their findings compare (the kernels are the same at every point)
TRIMMED = {"offset_copy": dict(offsets=[0, 1, 8]), "stride_copy": dict(strides=[1, 2, 8])}


@pytest.fixture(scope="module")
def committed_shapes():
    from gpumemlab.bench.records import RunResults

    shapes = {}
    for r in RunResults.load(COMMITTED).results:
        shapes.setdefault(r.experiment, set()).add(_shape(r))
    return shapes


def _shape(r) -> tuple:
    return (r.variant, tuple(sorted(r.params)), r.kind, r.ceiling, tuple(sorted(r.model or {})),
            tuple(sorted(r.extra)))


def _run(session, name):
    import cupy

    from gpumemlab.suite.runner import run_experiment

    exp = registry()[name]
    why = exp.requires(session.device) if exp.requires is not None else None
    if why:  # as the suite does: this machine cannot run it (p2p on one GPU), tests/gpu/test_multi_gpu.py covers it
        pytest.skip(why)
    try:
        return exp, run_experiment(session, exp, dict(exp.params, **TRIMMED.get(name, {})))
    finally:
        cupy.get_default_memory_pool().free_all_blocks()


@pytest.mark.parametrize("name", list(registry()))
def test_experiment_quick(session, committed_shapes, name):
    exp, records = _run(session, name)
    assert records and all(r.verified for r in records)
    assert all(r.median_s > 0 and r.time_s["n"] >= 10 for r in records)
    assert all(r.gbps > 0 for r in records if r.bytes)
    assert not [r.variant for r in records if r.model and "error" in r.model]
    found = exp.describe(records)["findings"]
    assert found and not any("(no finding" in f for f in found), found
    if name in committed_shapes:  # an experiment newer than the committed runs has nothing to compare with yet
        # records with a "gpus" parameter exist only on machines with several GPUs (the committed run has one)
        changed = {_shape(r) for r in records if "gpus" not in r.params} - committed_shapes[name]
        assert not changed, f"{name}: records shaped unlike the committed run: {sorted(changed)}"
    if exp.naive:
        assert any(r.speedup_vs_naive == pytest.approx(1.0) for r in records if r.variant == exp.naive)


def test_aos_align16_counts_its_padding(session):
    _, records = _run(session, "aos_soa")
    by = {r.variant: r for r in records}
    n = by["aos_direct"].params["n"]
    assert by["aos_align16"].bytes == 32 * n and by["aos_direct"].bytes == 24 * n


def test_matmul_quick_against_cublas(session):
    _, records = _run(session, "matmul")
    base = next(r for r in records if r.kind == "baseline")
    assert base.variant == "cuBLAS SGEMM" and base.params == dict(m=512, n=512, k=512)
    ours = [r for r in records if r.kind == "kernel"]
    assert [r.variant for r in ours] == list(registry()["matmul"].params["variants"])
    for r in ours:
        assert r.extra["pct_of_cublas"] == pytest.approx(100.0 * r.gflops / base.gflops)
        assert r.baselines["cuBLAS SGEMM"]["ratio"] == pytest.approx(r.gflops / base.gflops)
        assert r.model["model_bytes"] == pytest.approx(r.flops / r.model["op_per_byte"])
    fast = ours[-1]
    assert fast.variant == "register_blocked" and "cuBLAS SGEMM" in fast.extra["head_to_head"]
    assert ours[2].extra["transpose_s"] > 0  # transposed_b: its transpose timed on its own


def test_matmul_sizes_and_shared_ab_quick(session):
    _, sizes = _run(session, "matmul_sizes")
    assert sorted({r.params["size"] for r in sizes}) == [128, 256, 512, 1024]
    for size in (128, 1024):
        group = [r for r in sizes if r.params["size"] == size]
        assert {r.variant for r in group} == {"cuBLAS SGEMM", "naive", "tiled_32", "coarsened_4", "register_blocked"}
        assert next(r for r in group if r.variant == "naive").speedup_vs_naive == pytest.approx(1.0)
    assert not any("head_to_head" in r.extra for r in sizes)
    _, shared = _run(session, "matmul_shared_ab")
    for op, naive in (("ab", "simple_multiply"), ("aat", "aat_simple")):
        group = {r.variant: r for r in shared if r.params["op"] == op}
        assert group[naive].speedup_vs_naive == pytest.approx(1.0) and "cuBLAS SGEMM" in group
        m = group[naive].params["m"]
        reads = 4 * (m * 32 + (32 * m if op == "ab" else 0))
        assert group[naive].bytes == reads + 4 * m * m
