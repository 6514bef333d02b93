"""offsetCopy: bandwidth of a copy whose accesses start `offset` floats past an aligned address."""

from __future__ import annotations

from ..kernels import copy as K
from ._copies import BLOCK, indexed_copy_cases, relative_to
from ._declare import Claim, Experiment, Plot, seed


def cases(session, params):
    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 8, "offset_copy")
    n -= n % BLOCK
    offsets = params["offsets"]
    return indexed_copy_cases(session, "offset_copy", K.OFFSET_COPY, "offset", offsets, K.OFFSET_ACCESS, n,
                              n + max(offsets) + 1, lambda offset: slice(offset, offset + n))


def findings(records):
    aligned = [r.gbps for r in records if r.params["offset"] % 8 == 0]
    misaligned = [r.gbps for r in records if r.params["offset"] % 8]
    ratio = (sum(misaligned) / len(misaligned)) / (sum(aligned) / len(aligned))
    yield (f"misaligned offsets average {100 * ratio:.1f}% of the aligned bandwidth "
           f"(seed, V100: about 80%, i.e. 4 of 5 sectors useful)")


EXPERIMENT = Experiment(
    name="offset_copy",
    title="Misaligned access: copy with an offset of 0..32 floats",
    claims=(Claim("V100: ~790 GB/s at offset 0 and multiples of 8; about 4/5 of that otherwise (5 sectors per warp "
                  "instead of 4).", seed("003", "Best Practices 9.2.1.3, offsetCopy figure")),),
    cases=cases,
    params=dict(offsets=list(range(33)), l2_factor=8.0),
    modern_note="On Volta and later, L1/L2 absorb most of the extra sector per warp: neighbouring warps share the "
                "straddled sector, so DRAM traffic barely grows and the curve is much flatter than the seed's 4/5.",
    plot=Plot(x="offset", y="gbps", series="variant", title="offset_copy: GB/s (read+write) vs offset"),
    findings=findings,
    derive=relative_to("offset", 0, "vs_offset0_pct"),
    order=20,
)
