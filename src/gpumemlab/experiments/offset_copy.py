"""offsetCopy: bandwidth of a copy whose accesses start `offset` floats past an aligned address."""

from __future__ import annotations

from ..kernels import copy as K
from ._copies import BLOCK, indexed_copy_cases, relative_to, variants
from ._cite import claim, field, mean, q, sentence
from ._declare import Claim, Experiment, Plot, seed


def cases(session, params):
    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 8, "offset_copy")
    n -= n % BLOCK
    offsets = params["offsets"]
    return indexed_copy_cases(session, "offset_copy", K.OFFSET_COPY, "offset", offsets, K.OFFSET_ACCESS, n,
                              n + max(offsets) + 1, lambda offset: slice(offset, offset + n),
                              lambda offset: (offset, 1), params["ilp"])


def findings(records):
    """Per kernel: how close offset 0 runs to the copy ceiling (is the baseline at the hardware's limit?), then
    the misaligned offsets' mean bandwidth over the aligned ones' (offsets that are multiples of 8 floats)."""
    for variant, recs in variants(records).items():
        aligned = [field(r, "gbps") for r in recs if r.params["offset"] % 8 == 0]
        misaligned = [field(r, "gbps") for r in recs if r.params["offset"] % 8]
        zero = next((r for r in recs if r.params["offset"] == 0), None)
        if not aligned or not misaligned:
            continue
        at = (("offset 0 at ", q(field(zero, "pct_of_ceiling"), ".0f"), "% of the copy ceiling")
              if zero and zero.pct_of_ceiling else ("offset 0 not compared with a ceiling",))
        yield sentence(f"{variant}: ", *at, "; misaligned offsets average ",
                       q(100 * (mean(misaligned) / mean(aligned)), ".1f"), "% of the aligned bandwidth (seed, V100 "
                       "near full bandwidth: about ", q(claim("4") / claim("5") * 100, ".0f"),
                       "%, i.e. 4 of 5 sectors useful)")


EXPERIMENT = Experiment(
    name="offset_copy",
    title="Misaligned access: copy with an offset of 0..32 floats",
    claims=(Claim("V100: ~790 GB/s at offset 0 and multiples of 8; about 4/5 of that otherwise (5 sectors per warp "
                  "instead of 4).", seed("003", "Best Practices 9.2.1.3, offsetCopy figure")),),
    cases=cases,
    params=dict(offsets=list(range(33)), l2_factor=8.0, ilp=[4, 8]),
    modern_note="The seed kernel (one 4-byte load per thread) cannot keep enough bytes in flight to reach a modern "
                "GPU's copy ceiling, which hides the extra sector; the 'loads in flight' kernels make the same 4-byte "
                "accesses with several independent loads per thread so that the aligned copy can reach the ceiling "
                "(each finding says how close offset 0 came); where it does, the misaligned/aligned ratio is the "
                "like-for-like test of the seed's 4/5.",
    plot=Plot(x="offset", y="gbps", series="variant", title="offset_copy: GB/s (read+write) vs offset"),
    findings=findings,
    derive=relative_to("offset", 0, "vs_offset0_pct"),
    order=20,
)
