"""Matrix transpose ladder (cuda-samples `transpose`; seeds 001/003) against copies of the same bytes.

Effective bandwidth = 2 x matrix bytes / time (each element read once and written once). The ceilings are
measured in the same run: cudaMemcpy D2D and the 16-byte copy kernel of copy.cu on the same bytes.
"""

from __future__ import annotations

import numpy as np

from ..bench.session import attach_baseline, speedups
from ..bench.verify import check_equal_device, device_random_nonzero, poison
from ..gpu import runtime
from ..kernels import transpose as K
from ..ops import transpose as ops_transpose
from . import Experiment, Plot
from ._model import head_to_head_findings, predict_global, predict_shared
from . import _torch
from .vector_copy import copy_kernel_runner, memcpy_runner

NAIVE = K.NAIVE.name


def variant_runner(variant: K.TransposeVariant, ctype: str, out, x):
    rows, cols = x.shape
    kernel = runtime.get_kernel(variant.spec(ctype))
    grid = variant.grid(rows, cols)
    return lambda: runtime.launch(kernel, grid, variant.block, out, x, rows, cols)


def variant_model(v, side: int) -> dict | None:
    """The access each ladder step is about: the strided global write of the naive kernel, else the
    column read from the shared tile (32 x 32: 32-way conflicts; 32 x 33: conflict-free)."""
    if v is K.NAIVE:
        return predict_global("out[threadIdx.x * n + threadIdx.y]", "float out[]", block=(32, 1, 1),
                              lets=(("n", str(side)),))
    if v in (K.COALESCED, K.PADDED, K.COARSENED):
        width = 33 if v is not K.COALESCED else 32
        return predict_shared("tile[threadIdx.x][threadIdx.y]", f"__shared__ float tile[32][{width}]", block=(32, 1, 1))
    if v is K.VECTORIZED:  # 16-byte global loads and stores, consecutive lanes adjacent
        return predict_global("in[blockIdx.x*blockDim.x + threadIdx.x]", "float4 in[]", block=(v.block[0], 1, 1))
    return predict_global("in[blockIdx.x*32 + threadIdx.x]", "float in[]", block=(32, 1, 1))  # the copies


def run(session, params):
    with session.stream:  # every CuPy call of the experiment on the stream its kernels use
        return _run(session, params)


def _run(session, params):
    import cupy

    torch = _torch.torch_module()
    records = []
    for dtype_name in params["dtypes"]:
        dtype = np.dtype(dtype_name)
        side = params["n"]
        if session.quick:  # ~2 x L2 per matrix, a multiple of 64
            side = max(64, int((session.dram_bytes(2) / dtype.itemsize) ** 0.5) // 64 * 64)
        side = int(session.fit_elements(side * side, 3 * dtype.itemsize, "transpose") ** 0.5) // 64 * 64
        x = device_random_nonzero((side, side), dtype, session.seed)
        out = cupy.empty_like(x)
        runtime.synchronize()
        nbytes = 2 * x.nbytes
        ctype = K.CTYPES[dtype.name]
        common = dict(n=side, dtype=dtype.name, mib=round(x.nbytes / 2**20, 1))

        def verified(fn, what, expected):
            def check():
                poison(out)
                fn()
                check_equal_device(out, expected, what=what)
            return check

        def measure(variant, fn, verify, kind="kernel", extra=None, model=None):
            return session.measure(experiment="transpose", variant=variant, params=common, run=fn, bytes=nbytes,
                                   verify=verify, ceiling="copy_gbps", kind=kind, extra=extra, model=model)

        # ceilings of this run: the same bytes copied
        memcpy = memcpy_runner(out, x)
        ceilings = [measure("cudaMemcpy D2D (ceiling)", memcpy, verified(memcpy, "memcpy", x), kind="baseline")]
        flat_out, flat_x = out.reshape(-1).view(np.float32), x.reshape(-1).view(np.float32)
        vcopy = copy_kernel_runner(session, "float4", 4, flat_out, flat_x)
        ceilings.append(measure("copy_vec float4 x4 (ceiling)", vcopy, verified(vcopy, "copy_vec", x),
                                kind="baseline"))
        copy_best = max(r.gbps for r in ceilings)

        ours = []
        for v in K.LADDER:
            fn = variant_runner(v, ctype, out, x)
            expected = x.T if v.transposes else x
            ours.append(measure(v.name, fn, verified(fn, v.name, expected),
                                extra=dict(technique=v.technique, tile=v.tile, block=list(v.block)),
                                model=variant_model(v, side)))

        box = {}

        def library():
            box["out"] = ops_transpose.transpose(x)

        def verify_library():
            box.clear()
            library()
            check_equal_device(box["out"], x.T, what="gpumemlab.transpose")
        chosen = ops_transpose.choose_variant(side, side, dtype, x.data.ptr, out.data.ptr)
        ours.append(measure("gpumemlab.transpose", library, verify_library, extra=dict(kernel=chosen.name),
                            model=variant_model(chosen, side)))

        bases = []

        def cupy_t():
            box["cupy"] = cupy.ascontiguousarray(x.T)

        def verify_cupy():
            box.clear()
            cupy_t()
            check_equal_device(box["cupy"], x.T, what="cupy.ascontiguousarray(x.T)")
        bases.append(measure("cupy.ascontiguousarray(x.T)", cupy_t, verify_cupy, kind="baseline"))
        if torch is not None:
            t = _torch.as_tensor(x)

            def torch_t():
                box["torch"] = t.t().contiguous()
            fn = _torch.on_work_stream(session, torch_t)

            def verify_torch():
                box.clear()
                fn()
                check_equal_device(cupy.asarray(box["torch"]), x.T, what="torch.t().contiguous()")
            bases.append(measure("torch.t().contiguous()", fn, verify_torch, kind="baseline",
                                 extra=dict(torch=_torch.version())))
        for r in ours + bases:
            r.extra["pct_of_copy_in_run"] = 100.0 * r.gbps / copy_best
        for b in ceilings + bases:
            attach_baseline(ours, b)
        base_fns = {"cudaMemcpy D2D": memcpy, "cupy.ascontiguousarray(x.T)": cupy_t,
                    **({"torch.t().contiguous()": fn} if torch is not None else {})}
        ours[-1].extra["head_to_head"] = {name: session.head_to_head(library, f) for name, f in base_fns.items()}
        records += ceilings + ours + bases
        box.clear()
    speedups(records, naive=NAIVE, keys=("n", "dtype"))
    return records


def findings(records):
    for key in sorted({(r.params["n"], r.params["dtype"]) for r in records}):
        rs = {r.variant: r for r in records if (r.params["n"], r.params["dtype"]) == key}
        lib = rs["gpumemlab.transpose"]
        yield (f"{key[0]}^2 {key[1]}: gpumemlab.transpose {lib.gbps:.0f} GB/s = {lib.extra['pct_of_copy_in_run']:.1f}% "
               f"of the best copy of the same bytes in this run")
        yield (f"padding the tile (32x33) vs 32x32: {rs[K.COALESCED.name].median_s / rs[K.PADDED.name].median_s:.2f}x; "
               f"shared tile vs naive: {rs[NAIVE].median_s / rs[K.COALESCED.name].median_s:.2f}x")
        for b in ("cupy.ascontiguousarray(x.T)", "torch.t().contiguous()"):
            if b in rs:
                yield f"gpumemlab.transpose is {lib.gbps / rs[b].gbps:.2f}x {b} ({rs[b].gbps:.0f} GB/s)"
        yield from head_to_head_findings(f"{key[0]}^2 {key[1]}: gpumemlab.transpose", lib)


EXPERIMENT = Experiment(
    name="transpose",
    title="Matrix transpose: naive -> shared tile -> padded -> coarsened -> vectorized, vs copy, CuPy, PyTorch",
    seed="003 (coalescing through shared memory, bank conflicts and padding) and 001 ('Matrix Transpose' SDK "
         "example, shared memory banks); NVIDIA cuda-samples transpose",
    seed_claim="Staging a tile in shared memory makes both the read and the write coalesced; padding the tile to "
               "TILE x (TILE+1) removes the column-read bank conflicts; a good transpose approaches the copy "
               "bandwidth of the same bytes.",
    run=run,
    params=dict(n=16384, dtypes=["float32"]),
    naive=NAIVE,
    group_by=("n", "dtype"),
    modern_note="On H100-class GPUs the L2 absorbs part of the naive kernel's scattered writes and the bank "
                "conflicts cost less than a DRAM round trip, so the remaining gap to copy is bytes in flight per "
                "thread and the width of each access (16-byte loads and stores).",
    plot=Plot(x="n", y="gbps", series="variant"),
    findings=findings,
    order=55,
)
