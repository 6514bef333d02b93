"""Array of structures vs structure of arrays: float3 read directly, through shared memory, padded, SoA."""

from __future__ import annotations

import numpy as np

from ..bench.session import blocks_for, speedups
from ..bench.verify import check_equal_device, device_random_nonzero
from ..gpu import runtime
from ..kernels import coalescing as K
from . import Experiment
from ._model import predict_global

BLOCK = K.AOS_BLOCK
DELTA = np.array([1.0, 2.0, 3.0], dtype=np.float32)  # what each kernel adds to x, y, z


def run(session, params):
    import cupy

    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 12, 80, "aos_soa")  # all layouts + reference
    pts0 = device_random_nonzero((n, 3), np.float32, session.seed)  # the points, x y z
    want = pts0 + cupy.asarray(DELTA)
    grid = blocks_for(n, BLOCK)
    aos = cupy.empty((n, 3), np.float32)
    aos16 = cupy.zeros((n, 4), np.float32)
    soa = cupy.empty((3, n), np.float32)
    # SoA rows n*4 bytes apart can map x[i], y[i], z[i] to the same DRAM channel when n*4 is a large
    # power-of-two multiple (seed 000's interleaving); soa_padded staggers the rows by PAD floats.
    soa_pad = cupy.empty((3, n + params["pad_floats"]), np.float32)

    layouts = {
        "aos_direct": (aos, lambda: runtime.launch(K.AOS_DIRECT, grid, BLOCK, aos, n)),
        "aos_shared": (aos, lambda: runtime.launch(K.AOS_SHARED, grid, BLOCK, aos, n)),
        "aos_align16": (aos16, lambda: runtime.launch(K.AOS_ALIGN16, grid, BLOCK, aos16, n)),
        "soa": (soa, lambda: runtime.launch(K.SOA, grid, BLOCK, soa[0], soa[1], soa[2], n)),
        "soa_padded": (soa_pad, lambda: runtime.launch(K.SOA, grid, BLOCK, soa_pad[0], soa_pad[1], soa_pad[2], n)),
    }
    load = {"aos_direct": lambda: aos.__setitem__(Ellipsis, pts0),
            "aos_shared": lambda: aos.__setitem__(Ellipsis, pts0),
            "aos_align16": lambda: aos16[:, :3].__setitem__(Ellipsis, pts0),
            "soa": lambda: soa.__setitem__(Ellipsis, pts0.T),
            "soa_padded": lambda: soa_pad[:, :n].__setitem__(Ellipsis, pts0.T)}
    view = {"aos_direct": lambda: aos, "aos_shared": lambda: aos,
            "aos_align16": lambda: aos16[:, :3], "soa": lambda: soa.T, "soa_padded": lambda: soa_pad[:, :n].T}
    models = {
        "aos_direct": predict_global("a[blockIdx.x*blockDim.x + threadIdx.x].x", "float3 a[]", block=(BLOCK, 1, 1)),
        "aos_shared": predict_global("a[blockIdx.x*blockDim.x*3 + threadIdx.x]", "float a[]", block=(BLOCK, 1, 1)),
        "aos_align16": predict_global("a[blockIdx.x*blockDim.x + threadIdx.x]", "float4 a[]", block=(BLOCK, 1, 1)),
        "soa": predict_global("x[blockIdx.x*blockDim.x + threadIdx.x]", "float x[]", block=(BLOCK, 1, 1)),
    }
    models["soa_padded"] = models["soa"]
    records = []
    for name in params["variants"]:
        _, fn = layouts[name]

        def check(fn=fn, name=name):
            load[name]()
            fn()
            check_equal_device(cupy.ascontiguousarray(view[name]()), want, what=name)

        records.append(session.measure(experiment="aos_soa", variant=name, params=dict(n=n), run=fn,
                                       bytes=24 * n, verify=check, model=models[name],
                                       notes="moves 32 B/point (padding)" if name == "aos_align16" else None))
    speedups(records, naive="aos_direct")
    return records


def findings(records):
    t = {r.variant: r.median_s for r in records}
    if "aos_direct" in t and "aos_shared" in t:
        yield (f"float3 read directly takes {t['aos_direct'] / t['aos_shared']:.2f}x the time of the shared-memory "
               f"staged version (seed, G80: 3,302 / 359 us = 9.2x)")
    if "soa" in t and "aos_direct" in t:
        yield f"structure of arrays takes {t['soa'] / t['aos_direct']:.2f}x the time of direct AoS"
    if "soa" in t and "soa_padded" in t:
        yield (f"staggering the SoA rows (row pitch not a large power-of-two multiple) changes its time by "
               f"{t['soa'] / t['soa_padded']:.2f}x: above 1 means the three streams were camping on the same DRAM channels")


EXPERIMENT = Experiment(
    name="aos_soa",
    title="float3 structures: AoS direct, AoS through shared memory, __align__(16), SoA",
    seed="001 slides, 'Coalescing: Timing Results' and 'Structures of size != 4, 8, or 16 bytes'",
    seed_claim="G80, 4K blocks x 256 threads: 3,302 us float3 uncoalesced vs 359 us coalesced through shared memory (9x).",
    run=run,
    params=dict(variants=["aos_direct", "aos_shared", "aos_align16", "soa", "soa_padded"], l2_factor=8.0,
                pad_floats=1088),
    naive="aos_direct",
    modern_note="On Volta and later the three 4-byte loads of a float3 hit the same 32-byte sectors through L1, so "
                "direct AoS is no longer 9x slower; the padded struct moves a third more bytes than it uses.",
    findings=findings,
    order=50,
)
