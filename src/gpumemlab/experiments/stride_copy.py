"""strideCopy: bandwidth of a copy where thread i touches element i*stride."""

from __future__ import annotations

from ..kernels import copy as K
from ._copies import BLOCK, indexed_copy_cases, relative_to, variants
from ._cite import claim, constant, field, q, sentence
from ._declare import Claim, Experiment, Plot, seed

# bytes DRAM moves for one 32-byte sector missed in L2 on HBM GPUs: the model's hypothesis (two sectors per fill),
# to be checked with ncu's dram__bytes_read per element
DRAM_FETCH_BYTES = 64


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
        one = field(by[1], "time_s", "median")
        unit = ("stride ", q(field(by[1], "params", "stride"), ".0f"))
        at = (*unit, " at ", q(field(by[1], "pct_of_ceiling"), ".0f"), "% of the copy ceiling") if by[1].pct_of_ceiling else unit
        if 2 in by:
            yield sentence(f"{variant}: ", *at, "; stride ", q(field(by[2], "params", "stride"), ".0f"), " runs at ",
                           q(100 * (one / field(by[2], "time_s", "median")), ".0f"), "% of the unit-stride bandwidth "
                           "(seed: ", q(claim("50"), ".0f"), "% load/store efficiency)")
        worst = max(by)
        if worst > 2:
            w = by[worst]
            element = field(w, "bytes") / field(w, "params", "n") * 0.5  # read + write per element
            fetch = constant(__name__, "DRAM_FETCH_BYTES")
            yield sentence(f"{variant}: stride ", q(field(w, "params", "stride"), ".0f"), " runs at ",
                           q(100 * (one / field(w, "time_s", "median")), ".1f"), "% of unit stride; one ",
                           q(claim("32"), ".0f"), "-byte sector per ", q(element, ".0f"), "-byte element predicts ",
                           q(100 * element / claim("32"), ".1f"), "% (the L1/L2 sector model), DRAM's ",
                           q(fetch, ".0f"), " bytes per missed sector (the model's hypothesis) ",
                           q(100 * element / fetch, ".2f"), "%, and each strided store leaves a partly written "
                           "sector that L2 must fill from DRAM before writing it back (ECC memory): below that")


EXPERIMENT = Experiment(
    name="stride_copy",
    title="Strided access: copy with a stride of 1..32 floats",
    claims=(Claim("Stride 2 gives 50% load/store efficiency (8 sectors per warp); bandwidth keeps falling until each "
                  "thread needs its own 32-byte sector (stride >= 8), where a warp moves 32 sectors for 128 useful "
                  "bytes.", seed("003", "Best Practices 9.2.1.4, strideCopy figure")),),
    cases=cases,
    params=dict(strides=list(range(1, 33)), l2_factor=4.0, ilp=[8]),
    modern_note="The seed's sector model (one 32-byte sector per element at large strides) bounds the loss from "
                "above; this model's hypothesis for the rest, to check with ncu's dram__bytes per element: DRAM is "
                "read 64 bytes per isolated miss (DRAM_FETCH_BYTES, two sectors), and with ECC memory each partly "
                "written sector is filled from DRAM before it is written back.",
    plot=Plot(x="stride", y="gbps", series="variant", title="stride_copy: effective GB/s (read+write) vs stride"),
    findings=findings,
    derive=relative_to("stride", 1, "efficiency_vs_stride1_pct"),
    order=30,
)
