"""strideCopy: bandwidth of a copy where thread i touches element i*stride."""

from __future__ import annotations

from ..kernels import copy as K
from ._copies import BLOCK, indexed_copy_cases, relative_to
from ._declare import Claim, Experiment, Plot, seed


def cases(session, params):
    strides = params["strides"]
    smax = max(strides)
    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 2 * 4 * smax, "stride_copy")
    n -= n % BLOCK
    return indexed_copy_cases(session, "stride_copy", K.STRIDE_COPY, "stride", strides, K.STRIDE_ACCESS, n,
                              n * smax, lambda stride: slice(0, n * stride, stride))


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
    claims=(Claim("Stride 2 gives 50% load/store efficiency (8 sectors per warp); bandwidth keeps falling until each "
                  "thread needs its own 32-byte sector (stride >= 8), where a warp moves 32 sectors for 128 useful "
                  "bytes.", seed("003", "Best Practices 9.2.1.4, strideCopy figure")),),
    cases=cases,
    params=dict(strides=list(range(1, 33)), l2_factor=4.0),
    plot=Plot(x="stride", y="gbps", series="variant", title="stride_copy: effective GB/s (read+write) vs stride"),
    findings=findings,
    derive=relative_to("stride", 1, "efficiency_vs_stride1_pct"),
    order=30,
)
