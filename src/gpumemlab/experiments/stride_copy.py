"""strideCopy: bandwidth of a copy where thread i touches element i*stride."""

from __future__ import annotations

import numpy as np

from ..bench.session import blocks_for
from ..bench.verify import check_equal_device, device_random_nonzero, poison
from ..gpu import runtime
from ..kernels import copy as K
from . import Experiment, Plot
from ._model import predict_global

BLOCK = 256


def run(session, params):
    import cupy

    smax = max(params["strides"])
    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 2 * 4 * smax, "stride_copy")
    n -= n % BLOCK
    src = device_random_nonzero(n * smax, np.float32, session.seed)
    out = cupy.empty_like(src)
    kernel = runtime.get_kernel(K.STRIDE_COPY)
    grid = blocks_for(n, BLOCK)
    records = []
    for stride in params["strides"]:
        def fn(stride=stride):
            runtime.launch(kernel, grid, BLOCK, out, src, stride, np.int64(n))

        def check(fn=fn, stride=stride):
            poison(out)
            fn()
            check_equal_device(out[: n * stride: stride], src[: n * stride: stride], what=f"stride_copy stride={stride}")

        model = predict_global("idata[(blockIdx.x*blockDim.x + threadIdx.x)*stride]", "float idata[]",
                               block=(BLOCK, 1, 1), lets=(("stride", str(stride)),))
        rec = session.measure(experiment="stride_copy", variant="stride_copy", params=dict(stride=stride, n=n),
                              run=fn, bytes=2 * 4 * n, verify=check, model=model)
        records.append(rec)
    base = next((r for r in records if r.params["stride"] == 1), None)
    for r in records:  # efficiency relative to the unit-stride copy of the same run
        if base:
            r.extra["efficiency_vs_stride1_pct"] = 100.0 * base.median_s / r.median_s
    return records


def findings(records):
    by = {r.params["stride"]: r for r in records}
    if 1 in by and 2 in by:
        yield f"stride 2 runs at {100 * by[1].median_s / by[2].median_s:.0f}% of the unit-stride bandwidth (seed: 50% load/store efficiency)"
    worst = max(by)
    if worst > 2 and 1 in by:
        yield f"stride {worst} runs at {100 * by[1].median_s / by[worst].median_s:.1f}% of unit stride: one 32-byte sector per 4-byte element"


EXPERIMENT = Experiment(
    name="stride_copy",
    title="Strided access: copy with a stride of 1..32 floats",
    seed="003 Best Practices 9.2.1.4, strideCopy figure",
    seed_claim="Stride 2 gives 50% load/store efficiency (8 sectors per warp); bandwidth keeps falling until each thread "
               "needs its own 32-byte sector (stride >= 8), where a warp moves 32 sectors for 128 useful bytes.",
    run=run,
    params=dict(strides=list(range(1, 33)), l2_factor=4.0),
    plot=Plot(x="stride", y="gbps", series="variant", title="stride_copy: effective GB/s (read+write) vs stride"),
    findings=findings,
    order=30,
)
