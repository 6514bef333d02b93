"""Matrix transpose ladder (cuda-samples `transpose`; seeds 001/003) against copies of the same bytes.

Effective bandwidth = 2 x matrix bytes / time (each element read once and written once). The ceilings are
measured in the same run: cudaMemcpy D2D and the 16-byte copy kernel of copy.cu on the same bytes.
"""

from __future__ import annotations

import numpy as np

from ..bench.verify import device_random_nonzero
from ..gpu import runtime
from ..kernels import CTYPES
from ..kernels import transpose as K
from ..ops import transpose as ops_transpose
from ._copies import copy_kernel_runner, memcpy_runner
from ._cite import constant, field, q, sentence
from ._claims import SHARED_MEMORY_TRANSPOSE
from ._declare import Case, Check, Claim, Experiment, Plot, outside
from ._library import library_vs_baselines, versus_baselines
from ._model import predict_global, predict_shared

NAIVE = K.NAIVE.name
MEMCPY = "cudaMemcpy D2D (ceiling)"
COPY_KERNEL = "copy_vec float4 x4 (ceiling)"
TILE = K.PADDED.tile  # the shared tile's side in the padded (and unpadded) kernel


def variant_runner(variant: K.TransposeVariant, ctype: str, out, x):
    rows, cols = x.shape
    kernel = runtime.get_kernel(variant.spec(ctype))
    grid = variant.grid(rows, cols)
    return lambda: runtime.launch(kernel, grid, variant.block, out, x, rows, cols)


def variant_model(v: K.TransposeVariant, side: int) -> dict | None:
    """The analyzer's answer for the access the ladder step is about (from the variant table)."""
    predict = predict_shared if v.space == "shared" else predict_global
    return predict(v.access, v.decl, block=v.model_block, lets=(("n", str(side)),))


def cases(session, params):
    import cupy

    for dtype_name in params["dtypes"]:
        dtype = np.dtype(dtype_name)
        side = params["n"]
        if session.quick:  # ~2 x L2 per matrix, a multiple of 64
            side = max(64, int((session.dram_bytes(2) / dtype.itemsize) ** 0.5) // 64 * 64)
        side = int(session.fit_elements(side * side, 3 * dtype.itemsize, "transpose") ** 0.5) // 64 * 64
        x = device_random_nonzero((side, side), dtype, session.seed)
        out = cupy.empty_like(x)
        common = dict(n=side, dtype=dtype.name, mib=round(x.nbytes / 2**20, 1))
        moved = dict(params=common, reads=x.nbytes, writes=x.nbytes)

        # ceilings of this run: the same bytes copied
        flat_out, flat_x = out.reshape(-1).view(np.float32), x.reshape(-1).view(np.float32)
        yield Case(MEMCPY, memcpy_runner(out, x), Check(out, x), kind="baseline", **moved)
        yield Case(COPY_KERNEL, copy_kernel_runner(session, "float4", 4, flat_out, flat_x), Check(out, x),
                   kind="baseline", **moved)
        for v in K.LADDER:
            yield Case(v.name, variant_runner(v, CTYPES[dtype.name], out, x), Check(out, x.T if v.transposes else x),
                       extra=dict(technique=v.technique, tile=v.tile, block=list(v.block)),
                       model=variant_model(v, side), **moved)
        chosen = ops_transpose.choose_variant(side, side, dtype, x.data.ptr, out.data.ptr)

        def make(variant, run, result, reset, kind="kernel", extra=None, **kw):
            if kind == "kernel":  # gpumemlab.transpose: the ladder step it chose for this shape
                extra, kw["model"] = dict(kernel=chosen.name), variant_model(chosen, side)
            return Case(variant, run, Check(result, x.T, reset=reset), kind=kind, extra=extra or {}, **moved, **kw)
        yield from library_vs_baselines(session, x, make, ("gpumemlab.transpose", ops_transpose.transpose),
                                        ("cupy.ascontiguousarray(x.T)", lambda a: cupy.ascontiguousarray(a.T)),
                                        ("torch.t().contiguous()", lambda t: t.t().contiguous()), versus=(MEMCPY,))


def derive(records, session):
    """Each record's bandwidth as a percentage of the best copy of the same bytes (same run, same group)."""
    for key in {(r.params["n"], r.params["dtype"]) for r in records}:
        group = [r for r in records if (r.params["n"], r.params["dtype"]) == key]
        copy_best = max(r.gbps for r in group if r.variant in (MEMCPY, COPY_KERNEL))
        for r in group:
            if r.variant not in (MEMCPY, COPY_KERNEL):
                r.extra["pct_of_copy_in_run"] = 100.0 * r.gbps / copy_best


def findings(records):
    for key in sorted({(r.params["n"], r.params["dtype"]) for r in records}):
        rs = {r.variant: r for r in records if (r.params["n"], r.params["dtype"]) == key}
        lib = rs["gpumemlab.transpose"]
        shape = sentence(q(field(lib, "params", "n"), ".0f"), f"^2 {key[1]}: gpumemlab.transpose")
        yield sentence(shape, " ", q(field(lib, "gbps"), ".0f"), " GB/s = ",
                       q(field(lib, "extra", "pct_of_copy_in_run"), ".1f"),
                       "% of the best copy of the same bytes in this run")
        t = {v: field(rs[v], "time_s", "median") for v in (NAIVE, K.COALESCED.name, K.PADDED.name)}
        tile = q(constant(__name__, "TILE"), ".0f")
        yield sentence("padding the tile (", tile, f"x{TILE + 1}) vs ", tile, "x", tile,
                       ": ", q(t[K.COALESCED.name] / t[K.PADDED.name], ".2f"), "x; shared tile vs naive: ",
                       q(t[NAIVE] / t[K.COALESCED.name], ".2f"), "x")
        yield from versus_baselines(shape, lib, rs)


EXPERIMENT = Experiment(
    name="transpose",
    title="Matrix transpose: naive -> shared tile -> padded -> coarsened -> vectorized, vs copy, CuPy, PyTorch",
    claims=(SHARED_MEMORY_TRANSPOSE,
            Claim("Staging a tile in shared memory makes both the read and the write coalesced; padding the tile to "
                  "TILE x (TILE+1) removes the column-read bank conflicts; a good transpose approaches the copy "
                  "bandwidth of the same bytes.",
                  outside("Greg Ruetsch and Paulius Micikevicius, 'Optimizing Matrix Transpose in CUDA' "
                          "(NVIDIA CUDA samples)"))),
    cases=cases,
    params=dict(n=16384, dtypes=["float32"]),
    naive=NAIVE,
    group_by=("n", "dtype"),
    modern_note="On H100-class GPUs the L2 absorbs part of the naive kernel's scattered writes and the bank "
                "conflicts cost less than a DRAM round trip, so the remaining gap to copy is bytes in flight per "
                "thread and the width of each access (16-byte loads and stores).",
    plot=Plot(x="n", y="gbps", series="variant"),
    findings=findings,
    derive=derive,
    order=55,
)
