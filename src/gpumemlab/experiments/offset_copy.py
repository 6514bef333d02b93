"""offsetCopy: bandwidth of a copy whose accesses start `offset` floats past an aligned address."""

from __future__ import annotations

import numpy as np

from ..bench.verify import device_random_nonzero
from ..gpu import runtime
from ..kernels import blocks_for
from ..kernels import copy as K
from ._declare import Case, Check, Claim, Experiment, Plot, seed
from ._model import predict_global

BLOCK = 256


def cases(session, params):
    import cupy

    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 8, "offset_copy")
    n -= n % BLOCK
    src = device_random_nonzero(n + max(params["offsets"]) + 1, np.float32, session.seed)
    out = cupy.empty_like(src)
    kernel = runtime.get_kernel(K.OFFSET_COPY)
    grid = blocks_for(n, BLOCK)
    for offset in params["offsets"]:
        window = slice(offset, offset + n)  # the elements this offset copies
        yield Case("offset_copy", lambda offset=offset: runtime.launch(kernel, grid, BLOCK, out, src, offset, np.int64(n)),
                   Check(out, src[window], view=lambda o, window=window: o[window]),
                   params=dict(offset=offset, n=n), reads=4 * n, writes=4 * n,
                   model=predict_global("idata[blockIdx.x*blockDim.x + threadIdx.x + offset]", "float idata[]",
                                        block=(BLOCK, 1, 1), lets=(("offset", str(offset)),)))


def derive(records, session):
    aligned = next((r for r in records if r.params["offset"] == 0), None)
    for r in records if aligned else []:  # bandwidth relative to the aligned copy of the same run
        r.extra["vs_offset0_pct"] = 100.0 * aligned.median_s / r.median_s


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
    derive=derive,
    order=20,
)
