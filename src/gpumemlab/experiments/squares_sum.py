"""Sum of squares: each thread a contiguous chunk vs interleaved (grid-stride) access."""

from __future__ import annotations

import numpy as np

from ..bench.verify import device_random_nonzero
from ..gpu import runtime
from ..kernels import squares_sum as K
from ._cite import claim, field, q, sentence
from ._declare import Case, Check, Claim, Experiment, seed
from ._model import predict_global


def cases(session, params):
    import cupy

    configs = {"seed": (1, params["seed_n"]),  # one block of 256 threads, as in the guide
               "full": (params["blocks_per_sm"] * session.sm_count,
                        session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 4, "squares_sum"))}
    for config in params["configs"]:
        blocks, n = configs[config]
        threads = blocks * K.BLOCK
        data = device_random_nonzero(n, np.int32, session.seed)
        want = int((data.astype(cupy.int64) ** 2).sum())
        partial = cupy.empty(threads, np.int32)  # one partial sum per thread, added on the host side of the check
        lets = (("tid", "blockIdx.x*blockDim.x + threadIdx.x"), ("i", "0"), ("chunk", str(-(-n // threads))),
                ("threads", str(threads)))
        for layout in params["layouts"]:
            kernel = runtime.get_kernel(K.LAYOUTS[layout])
            yield Case(layout, lambda kernel=kernel, partial=partial, data=data, n=n, blocks=blocks:
                       runtime.launch(kernel, blocks, K.BLOCK, partial, data, np.int64(n)),
                       Check(partial, want, view=lambda p: p.astype(cupy.int64).sum()),
                       params=dict(config=config, blocks=blocks, threads=K.BLOCK, n=n), reads=4 * n,
                       ceiling="read_gbps",
                       model=predict_global(K.ACCESS[layout], "int data[]", block=(K.BLOCK, 1, 1), lets=lets))


def findings(records):
    for config in dict.fromkeys(r.params["config"] for r in records):
        t = {r.variant: field(r, "time_s", "median") for r in records if r.params["config"] == config}
        if "chunked" in t and "interleaved" in t:
            yield sentence(f"{config} configuration: interleaved access is ", q(t['chunked'] / t['interleaved'], ".1f"),
                           "x faster (seed: ", q(claim("15"), ".0f"), "x)")


EXPERIMENT = Experiment(
    name="squares_sum",
    title="Sum of squares: per-thread contiguous chunk vs interleaved access",
    claims=(Claim("Reading the array every THREAD_NUM elements (interleaved) is 15x faster than per-thread chunks.",
                  seed("004", "vendor guide, squaresSum example")),),
    cases=cases,
    params=dict(configs=["seed", "full"], layouts=["chunked", "interleaved"], seed_n=1 << 20,
                blocks_per_sm=8, l2_factor=8.0),
    naive="chunked",
    group_by=("config",),
    modern_note="Per-thread chunks make each warp touch 32 different sectors per load; L1 keeps some of those lines "
                "for the next iterations, which softens (but does not remove) the penalty on modern GPUs.",
    findings=findings,
    order=60,
)
