"""float / float2 / float4 copy kernels against cudaMemcpy device-to-device."""

from __future__ import annotations

import numpy as np

from ..bench.verify import device_random_nonzero
from ._copies import BLOCK, copy_kernel_runner, memcpy_runner
from ._cite import field, q, sentence
from ._claims import COALESCED_WORDS
from ._declare import Case, Check, Claim, Experiment, seed
from ._model import predict_global


def cases(session, params):
    import cupy

    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 8, "vector_copy")
    n -= n % 16
    src = device_random_nonzero(n, np.float32, session.seed)
    out = cupy.empty_like(src)
    common = dict(n=n, mib=src.nbytes / 2**20)
    moved = dict(reads=src.nbytes, writes=src.nbytes)
    yield Case("cudaMemcpy D2D", memcpy_runner(out, src), Check(out, src), params=common, kind="baseline", **moved)
    for vtype in params["types"]:
        for unroll in params["unroll"]:
            yield Case(f"{vtype} x{unroll}", copy_kernel_runner(session, vtype, unroll, out, src), Check(out, src),
                       params=dict(common, type=vtype, unroll=unroll), **moved,
                       model=predict_global("src[blockIdx.x*blockDim.x + threadIdx.x]", f"{vtype} src[]",
                                            block=(BLOCK, 1, 1)))


def findings(records):
    base = next(r for r in records if r.kind == "baseline")
    best = max((r for r in records if r.kind == "kernel"), key=lambda r: r.gbps)
    memcpy = field(base, "gbps")
    yield sentence(f"best copy kernel ({best.variant}) reaches ", q(100 * (field(best, "gbps") / memcpy), ".1f"),
                   "% of cudaMemcpy D2D in the same run")
    for r in records:
        if r.variant.endswith("x1") and r.kind == "kernel":
            yield sentence(f"{r.variant}: ", q(100 * (field(r, "gbps") / memcpy), ".0f"), "% of cudaMemcpy (one "
                           f"thread per {r.params['type']}, one load in flight each; {r.params['type']} x4 is the same "
                           "kernel with four per thread)")


EXPERIMENT = Experiment(
    name="vector_copy",
    title="Vector copies (float, float2, float4) vs cudaMemcpy D2D",
    claims=(COALESCED_WORDS,
            Claim("Batching can help performance: a thread that reads/writes multiple elements increases overlap "
                  "opportunities.", seed("001", "slide 'Global memory optimization'"))),
    cases=cases,
    params=dict(types=["float", "float2", "float4"], unroll=[1, 4], l2_factor=8.0),
    naive="float x1",
    modern_note="'T xU': U elements of T per thread, all U loads in flight before the first store (copy_vec); the "
                "grid covers the array once, so x1 launches one thread per element.",
    findings=findings,
    order=10,
)
