"""cudaMallocPitch + cudaMemcpy2D against a packed array whose rows are not a multiple of the alignment
(e.g. 1001 floats): the upload, a row-wise kernel over both (aligned vs unaligned row starts), the pitch the
driver chose, and the analyzer's sectors per request for the first access of a row."""

from __future__ import annotations

from contextlib import ExitStack

import numpy as np

from ..bench.verify import device_random_nonzero
from ..gpu import host, runtime
from ..kernels import host as K
from ._cite import field, q, sentence
from ._declare import Case, Check, Claim, Experiment, Plot, seed
from ._model import predict_global, record_verdict
from ._transfers import MIB

BLOCK = 256


def row_model(pitch_elems: int) -> dict:
    """The analyzer on a warp's first load of row 1: aligned iff the row pitch is a multiple of 32 floats."""
    return predict_global("in[row * pitch + threadIdx.x]", "float in[]", block=(BLOCK, 1, 1),
                          lets=(("row", "1"), ("pitch", str(pitch_elems))))


def largest_power_of_two(n: int) -> int:
    return n & -n


def cases(session, params):
    import cupy

    rows = params["rows"] if not session.quick else min(params["rows"], 1024)
    kernel = runtime.get_kernel(K.ROW_SCALE)
    grid = min(rows, 32 * session.sm_count)
    for cols in params["cols"]:
        with ExitStack() as stack:
            ref = device_random_nonzero((rows, cols), np.float32, session.seed)
            src = stack.enter_context(host.host_array((rows, cols), np.float32)).array
            host.copy_async(src, ref)
            packed_in, packed_out = cupy.empty_like(ref), cupy.empty_like(ref)
            p_in = stack.enter_context(host.pitched(rows, cols))
            p_out = stack.enter_context(host.pitched(rows, cols))
            pin, pout = p_in.cupy(), p_out.cupy()
            pitch = p_in.pitch
            layout = dict(pitch_bytes=pitch, row_bytes=4 * cols, pad_bytes=pitch - 4 * cols,
                          pitch_alignment=largest_power_of_two(pitch))
            common = dict(rows=rows, cols=cols, mib=4 * rows * cols / MIB)
            nbytes = 4 * rows * cols

            def upload_pitched():
                host.copy_2d_async(p_in, pitch, src, 4 * cols, 4 * cols, rows)
            yield Case("cudaMemcpy2D H2D into pitched", upload_pitched, Check(pin, ref), params=common,
                       reads=nbytes, ceiling=None, cold_l2=False, extra=dict(layout, mechanism="CE"))
            yield Case("cudaMemcpy H2D packed", lambda: host.copy_async(packed_in, src), Check(packed_in, ref),
                       params=common, reads=nbytes, ceiling=None, cold_l2=False, extra=dict(layout, mechanism="CE"))
            upload_pitched()
            host.copy_async(packed_in, src)
            # the like-for-like ceiling: a device copy of the same bytes in the same run (the run's copy ceiling is
            # a float4 copy of a working set far above L2)
            yield Case("cudaMemcpy D2D (same bytes)", lambda: cupy.copyto(packed_out, packed_in),
                       Check(packed_out, ref), params=common, reads=nbytes, writes=nbytes, kind="baseline",
                       extra=dict(layout, mechanism="CE"))
            for variant, out, inp, pitch_elems in (("row_scale pitched", pout, pin, pitch // 4),
                                                   ("row_scale packed", packed_out, packed_in, cols)):
                def run(out=out, inp=inp, pe=pitch_elems):
                    runtime.launch(kernel, grid, BLOCK, out, inp, cols, rows, np.int64(pe), np.int64(pe))

                yield Case(variant, run, Check(out, 2 * ref), params=common, reads=nbytes, writes=nbytes,
                           model=row_model(pitch_elems), extra=dict(layout))


def findings(records):
    for cols in sorted({r.params["cols"] for r in records}):
        g = {r.variant: r for r in records if r.params["cols"] == cols}
        pit, pac = g["row_scale pitched"], g["row_scale packed"]

        def layout(key):
            return q(field(pit, "extra", key), ".0f")
        per_row = (q(field(pit, "params", "cols"), ".0f"), " floats per row")
        yield sentence(*per_row, " (", layout("row_bytes"), " B): cudaMallocPitch chose a pitch of ",
                       layout("pitch_bytes"), " B (+", layout("pad_bytes"), " B, a multiple of ",
                       layout("pitch_alignment"), "); the analyzer predicts ",
                       q(field(pit, "model", "sectors_per_request"), "g"), " sectors per request at a pitched row "
                       "start vs ", q(field(pac, "model", "sectors_per_request"), "g"), " packed")
        same = g.get("cudaMemcpy D2D (same bytes)")
        vs_copy = (("; a device copy of the same bytes: ", q(field(same, "gbps"), ".0f"), " GB/s (row_scale pitched at ",
                    q(100 * (field(pit, "gbps") / field(same, "gbps")), ".0f"), "% of it)") if same is not None else ())
        yield sentence(*per_row, ": row_scale ", q(field(pit, "gbps"), ".0f"), " GB/s pitched vs ",
                       q(field(pac, "gbps"), ".0f"), " GB/s packed (",
                       q(100 * (field(pac, "gbps") / field(pit, "gbps")), ".0f"),
                       f"%, {'a tie within the noise' if record_verdict(pac, pit) == 'tie' else record_verdict(pac, pit)})",
                       *vs_copy, "; upload: cudaMemcpy2D ",
                       q(field(g["cudaMemcpy2D H2D into pitched"], "gbps"), ".1f"), " GB/s vs 1-D ",
                       q(field(g["cudaMemcpy H2D packed"], "gbps"), ".1f"), " GB/s")


EXPERIMENT = Experiment(
    name="pitched_copy",
    title="cudaMallocPitch and cudaMemcpy2D vs a packed 2-D array",
    claims=(
        Claim("For multi-dimensional data use cudaMallocPitch: the first element of every row is aligned, because "
              "it pads each row so that the row's bytes plus the padding are a multiple of 256.",
              seed("004", "'Consider alignment for global memory access'")),
        Claim("Misaligned accesses are split into more operations and reduce memory access performance.",
              seed("004", "'Consider alignment for global memory access'")),
    ),
    cases=cases,
    params=dict(rows=16384, cols=[1001, 1024]),
    group_by=("cols",),
    modern_note="Since compute capability 6.0, a misaligned warp load costs one extra 32-byte sector, and L1/L2 "
                "catch most of it: the packed layout loses little; cudaMemcpy2D pays per row.",
    plot=Plot(x="cols", y="gbps", series="variant", title="pitched_copy: GB/s vs row width"),
    findings=findings,
    order=240,
)
