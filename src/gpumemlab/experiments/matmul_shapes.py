"""The matmul shape zoo: ``gpumemlab.matmul(a, b)`` against ``cupy.matmul(a, b)`` (cuBLAS,
FP32, TF32 off) on every shape of ``tune.matmul.ZOO``, timed as users call them: CUDA events on the work stream around
the Python call (host dispatch included), interleaved A B, B A, ... in the same run.

M = 1 and N = 1 are matrix-vector products (0.5 flop per byte of the matrix): judged by DRAM bandwidth against
the copy ceiling, L2 flushed between samples; the GEMMs are judged by FLOP rate with warm operands, as a
user's back-to-back calls see them."""

from __future__ import annotations

import numpy as np

from ..bench.timer import TimerConfig
from ..bench.verify import device_random_nonzero
from ._cite import field, join, q, sentence
from ._declare import Case, Claim, Experiment, Plot, seed
from ._library import returning
from ._matmul import Reference
from ._model import shape_set_summary, store_ratios
from ..tune.matmul import ZOO
from ..tune.table import mnk_name

OURS, CUPY = "gpumemlab.matmul", "cupy.matmul"
MEMORY_BOUND = ("m1", "n1")
# one call of the largest shapes takes a tenth of a second or more: ten interleaved rounds are enough
SLOW = TimerConfig(warmup=1, min_samples=10, batch=1, min_time_s=0.0, max_time_s=1.0)


def _checker(run, result, reset, ref: Reference, what: str):
    def check():
        from ..gpu import runtime

        reset()
        run()
        runtime.synchronize()
        ref.check(result(), what)
    return check


def cases(session, params):
    import cupy

    import gpumemlab

    for i, (group, m, n, k) in enumerate(ZOO):
        flops = 2.0 * m * n * k
        if flops > params["max_flops"] or (session.quick and flops > params["quick_max_flops"]):
            continue
        a = device_random_nonzero((m, k), np.float32, session.seed + i)
        b = device_random_nonzero((k, n), np.float32, session.seed + i + 1000)
        ref = Reference(a, b)
        memory = group in MEMORY_BOUND
        common = dict(params=dict(index=i, group=group, shape=mnk_name(m, n, k), m=m, n=n, k=k), flops=flops,
                      cold_l2=memory, ceiling="copy_gbps" if memory else "sgemm_cublas_gflops",
                      timer=SLOW if flops > params["slow_flops"] else None)
        if memory:
            common.update(reads=4.0 * (m * k + k * n), writes=4.0 * m * n)

        def make(variant, run, result, reset, kind="kernel", **kw):
            return Case(variant, run, _checker(run, result, reset, ref, variant), kind=kind, **common, **kw)

        yield returning(make, OURS, lambda a=a, b=b: gpumemlab.matmul(a, b), versus=(CUPY,))
        yield returning(make, CUPY, lambda a=a, b=b: cupy.matmul(a, b), kind="baseline")


def derive(records, session):
    """ratio_to_cublas on our record: the interleaved median of t_cupy / t_ours, with its verdict."""
    store_ratios(records, "ratio_to_cublas", lambda r: CUPY)


def _shape(r):
    """'MxNxK' of a record, each side quoted from its params."""
    return join("x", (q(field(r, "params", side), ".0f") for side in ("m", "n", "k")))


def findings(records):
    ours = [r for r in records if r.variant == OURS and r.extra.get("ratio_to_cublas")]
    if not ours:
        return
    yield shape_set_summary(ours, "ratio_to_cublas", "cuBLAS", _shape)
    square = sorted((r for r in ours if r.params["group"] == "square"), key=lambda r: r.params["m"])
    if len(square) > 1:  # the seed's figure: close at 128 x 128, a gap that grows with the size
        yield sentence("square shapes, this hand-written SGEMM over cuBLAS: ", _shape(square[0]), " ",
                       q(field(square[0], "extra", "ratio_to_cublas"), ".2f"), "x, ", _shape(square[-1]), " ",
                       q(field(square[-1], "extra", "ratio_to_cublas"), ".2f"), "x")
    for r in ours:
        gb = [", ", q(field(r, "gbps"), ".0f"), " GB/s"] if r.params["group"] in MEMORY_BOUND and r.gbps else []
        yield sentence(f"{r.params['group']} ", _shape(r), ": ", q(field(r, "extra", "ratio_to_cublas"), ".2f"),
                       f"x cuBLAS ({r.extra['verdict']})", *gb)


EXPERIMENT = Experiment(
    name="matmul_shapes",
    title=f"matmul shape zoo: gpumemlab.matmul vs cupy.matmul (cuBLAS) as users call them, {len(ZOO)} shapes",
    claims=(Claim("A hand-written SGEMM against cuBLAS: \"For 128 x 128 matrices, the performance is very close. As "
                  "the matrix size increases, the gap between cuBLAS and our code increases drastically.\"",
                  seed("002", "blog 'GPU shared memory', Figure 1")),),
    cases=cases,
    params=dict(max_flops=1e13, slow_flops=1e12, quick_max_flops=2e10),
    group_by=("shape",),
    plot=Plot(x="index", y="ratio_to_cublas", series="group",
              title="gpumemlab.matmul / cuBLAS per zoo shape (interleaved, library calls as users time them)"),
    modern_note="Small and thin shapes leave most SMs idle with large tiles, so the choice of tile and split-K "
                "decides the ratio; M = 1 and N = 1 are bounded by DRAM bandwidth, not by FMA rate.",
    findings=findings,
    derive=derive,
    order=73,
)
