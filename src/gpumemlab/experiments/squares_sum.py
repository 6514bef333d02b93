"""Sum of squares: each thread a contiguous chunk vs interleaved (grid-stride) access."""

from __future__ import annotations

import numpy as np

from ..bench.session import speedups
from ..bench.verify import device_random_nonzero, poison
from ..errors import VerificationError
from ..gpu import runtime
from ..kernels import squares_sum as K
from . import Experiment
from ._model import predict_global

BLOCK = 256


def run(session, params):
    import cupy

    configs = {"seed": (1, params["seed_n"]),  # one block of 256 threads, as in the guide
               "full": (params["blocks_per_sm"] * session.sm_count,
                        session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 4, "squares_sum"))}
    records = []
    for config in params["configs"]:
        blocks, n = configs[config]
        data = device_random_nonzero(n, np.int32, session.seed)
        want = int((data.astype(cupy.int64) ** 2).sum())
        partial = cupy.empty(blocks * BLOCK, np.int32)
        chunk = -(-n // (blocks * BLOCK))
        group = []
        for layout in params["layouts"]:
            kernel = runtime.get_kernel(K.LAYOUTS[layout])

            def fn(kernel=kernel):
                runtime.launch(kernel, blocks, BLOCK, partial, data, np.int64(n))

            def check(fn=fn, layout=layout):
                poison(partial)
                fn()
                got = int(partial.astype(cupy.int64).sum())
                if got != want:
                    raise VerificationError(f"squares_sum_{layout}: {got} != {want}")

            access = ("data[tid*chunk + i]" if layout == "chunked" else "data[tid + i*threads]")
            model = predict_global(access, "int data[]", block=(BLOCK, 1, 1),
                                   lets=(("tid", "blockIdx.x*blockDim.x + threadIdx.x"), ("i", "0"),
                                         ("chunk", str(chunk)), ("threads", str(blocks * BLOCK))))
            group.append(session.measure(experiment="squares_sum", variant=layout,
                                         params=dict(config=config, blocks=blocks, threads=BLOCK, n=n),
                                         run=fn, bytes=4 * n, verify=check, model=model, ceiling="read_gbps"))
        speedups(group, naive="chunked", keys=("config",))
        records += group
        del data, partial
    return records


def findings(records):
    for config in dict.fromkeys(r.params["config"] for r in records):
        t = {r.variant: r.median_s for r in records if r.params["config"] == config}
        if "chunked" in t and "interleaved" in t:
            yield f"{config} configuration: interleaved access is {t['chunked'] / t['interleaved']:.1f}x faster (seed: 15x)"


EXPERIMENT = Experiment(
    name="squares_sum",
    title="Sum of squares: per-thread contiguous chunk vs interleaved access",
    seed="004 vendor guide, squaresSum",
    seed_claim="Reading the array every THREAD_NUM elements (interleaved) is 15x faster than per-thread chunks.",
    run=run,
    params=dict(configs=["seed", "full"], layouts=["chunked", "interleaved"], seed_n=1 << 20,
                blocks_per_sm=8, l2_factor=8.0),
    naive="chunked",
    group_by=("config",),
    modern_note="Per-thread chunks make each warp touch 32 different sectors per load; L1 keeps some of those lines "
                "for the next iterations, which softens (but does not remove) the penalty on modern GPUs.",
    findings=findings,
    order=60,
)
