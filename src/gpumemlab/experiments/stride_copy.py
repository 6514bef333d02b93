"""strideCopy: bandwidth of a copy where thread i touches element i*stride."""

from __future__ import annotations

from ..kernels import copy as K
from ._copies import BLOCK, indexed_copy_cases, relative_to, variants
from ._declare import Claim, Experiment, Plot, seed


def cases(session, params):
    strides = params["strides"]
    smax = max(strides)
    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 2 * 4 * smax, "stride_copy")
    n -= n % BLOCK
    return indexed_copy_cases(session, "stride_copy", K.STRIDE_COPY, "stride", strides, K.STRIDE_ACCESS, n,
                              n * smax, lambda stride: slice(0, n * stride, stride),
                              lambda stride: (0, stride), params["ilp"])


def findings(records):
    for variant, recs in variants(records).items():
        by = {r.params["stride"]: r for r in recs}
        if 1 not in by:
            continue
        one = by[1]
        at = f"stride 1 at {one.pct_of_ceiling:.0f}% of the copy ceiling" if one.pct_of_ceiling else "stride 1"
        if 2 in by:
            yield (f"{variant}: {at}; stride 2 runs at {100 * one.median_s / by[2].median_s:.0f}% of the unit-stride "
                   f"bandwidth (seed: 50% load/store efficiency)")
        worst = max(by)
        if worst > 2:
            yield (f"{variant}: stride {worst} runs at {100 * one.median_s / by[worst].median_s:.1f}% of unit stride: "
                   f"one 32-byte sector per 4-byte element")


EXPERIMENT = Experiment(
    name="stride_copy",
    title="Strided access: copy with a stride of 1..32 floats",
    claims=(Claim("Stride 2 gives 50% load/store efficiency (8 sectors per warp); bandwidth keeps falling until each "
                  "thread needs its own 32-byte sector (stride >= 8), where a warp moves 32 sectors for 128 useful "
                  "bytes.", seed("003", "Best Practices 9.2.1.4, strideCopy figure")),),
    cases=cases,
    params=dict(strides=list(range(1, 33)), l2_factor=4.0, ilp=[8]),
    plot=Plot(x="stride", y="gbps", series="variant", title="stride_copy: effective GB/s (read+write) vs stride"),
    findings=findings,
    derive=relative_to("stride", 1, "efficiency_vs_stride1_pct"),
    order=30,
)
