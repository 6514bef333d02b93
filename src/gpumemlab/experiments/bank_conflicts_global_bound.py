"""Bank conflicts when global memory binds vs when shared memory binds: bank_stride<STRIDE> (banks.cu) moves
the same floats coalesced at every stride; ``reps`` shared-memory round trips per float decide which side
binds. Next to each measurement: the analyzer's wavefronts per request and a two-line bound (DRAM time at
the copy ceiling vs shared-memory time at one wavefront per SM per clock)."""

from __future__ import annotations

import numpy as np

from ..bench.verify import device_random_nonzero
from ..errors import UsageError
from ..gpu import runtime
from ..kernels import banks as K
from ._cite import field, join, q, sentence
from ._declare import Case, Check, Claim, Experiment, Plot, seed
from ._model import overlap, predict_shared

NAIVE = "stride 1"


def expected(src, reps: int):
    """bank_stride's result: reps float32 additions of 1, in order, as the kernel does them."""
    out = src.copy()
    for _ in range(reps):
        out += np.float32(1.0)
    return out


def shared_model(stride: int) -> dict:
    pred = predict_shared(K.SLOT_ACCESS, f"__shared__ float ws[{K.SHARED_WORDS}]", block=(K.BLOCK, 1, 1),
                          lets=[f"STRIDE={stride}"])
    if "wavefronts" in pred:  # the analyzer counts one block: one request per warp
        pred["wavefronts_per_request"] = pred["wavefronts"] / (K.BLOCK // 32)
    return pred


def cases(session, params):
    bad = [s for s in params["strides"] if s not in K.STRIDES]
    if bad:
        raise UsageError(f"bank_conflicts_global_bound: stride {bad[0]} is not instantiated; strides: "
                         f"{', '.join(map(str, K.STRIDES))}")

    import cupy

    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 8, "bank_conflicts_global_bound")
    src = device_random_nonzero(n, np.float32, session.seed)
    dst = cupy.empty_like(src)
    for reps in params["reps"]:
        want = expected(src, reps)
        for stride in params["strides"]:
            spec = K.bank_stride(stride)
            kernel = runtime.get_kernel(spec)
            grid = session.sm_count * max(1, runtime.max_active_blocks(kernel, K.BLOCK))
            model = shared_model(stride)
            yield Case(f"stride {stride}",
                       lambda kernel=kernel, grid=grid, reps=reps: runtime.launch(kernel, grid, K.BLOCK, dst, src,
                                                                                  np.int64(n), np.int32(reps)),
                       Check(dst, want), params=dict(reps=reps, stride=stride, ways=model.get("ways")),
                       reads=src.nbytes, writes=src.nbytes, model=model, naive=stride == 1,
                       extra=dict(kernel=spec.name, grid=grid, n=n, shared_ops_per_float=2 * reps))


def derive(records, session):
    """The bound each record should hit: DRAM (bytes / copy ceiling) or shared memory (wavefronts at one per SM
    per clock), whichever is longer; the measured time as a multiple of that bound."""
    copy = (session.ceilings.get("copy_gbps") or {}).get("value")
    info = session.device
    clock_hz = info["sm_clock_khz"] * 1e3
    for r in records:
        m = r.model or {}
        if not copy or not m.get("wavefronts_per_request"):
            continue
        warp_ops = r.extra["n"] / 32 * r.extra["shared_ops_per_float"]
        shared_s = warp_ops * m["wavefronts_per_request"] / (info["sm_count"] * clock_hz)
        dram_s = r.bytes / (copy * 1e9)
        r.extra.update(model_shared_s=shared_s, model_dram_s=dram_s,
                       model_bound="shared" if shared_s > dram_s else "global",
                       time_over_model_bound=r.time_s["median"] / max(shared_s, dram_s))


def findings(records):
    for reps in dict.fromkeys(r.params["reps"] for r in records):
        rows = [r for r in records if r.params["reps"] == reps]
        base = next(r for r in rows if r.params["stride"] == 1)
        parts = []
        for r in rows:
            ratio = field(r, "time_s", "median") / field(base, "time_s", "median")
            tie = ", a tie (p10-p90 overlap)" if r is not base and overlap(r, base) else ""
            parts.append(sentence(q(field(r, "params", "ways"), ".0f"), "-way ", q(ratio, ".2f"),
                                  f"x ({r.extra.get('model_bound', '?')}-bound by the model{tie})"))
        ceiling = (("; conflict-free at ", q(field(base, "pct_of_ceiling"), ".0f"), "% of the copy ceiling")
                   if base.pct_of_ceiling is not None else ())
        yield sentence(q(field(base, "params", "reps"), ".0f"), " shared round trip(s) per float, time vs "
                       "conflict-free: ", join(", ", parts), *ceiling)


EXPERIMENT = Experiment(
    name="bank_conflicts_global_bound",
    title="Bank-conflict cost when global memory binds vs when shared memory binds",
    claims=(Claim("Performance impact of bank conflicts: shared memory intensive apps up to 30%; little to no impact "
                  "if performance is limited by global memory.", seed("001", "slide 'Shared memory bank conflicts'")),),
    cases=cases,
    params=dict(strides=list(K.STRIDES), reps=[1, 16], l2_factor=4.0),
    naive=NAIVE,
    group_by=("reps",),
    modern_note="Since compute capability 2.0 a warp's 32 lanes (not a half-warp's 16) meet 32 banks; an N-way "
                "conflict costs N wavefronts, so the cost appears once N wavefronts per request exceed what the "
                "global traffic leaves idle. Its grid-stride copy loads one 4-byte element per thread per iteration and "
                "uses it (the shared-memory round trips) before the next: like offset_copy's seed kernel it keeps one "
                "load in flight per thread and stays "
                "well below the copy ceiling at stride 1 (occupancy_sweep: float x1) - the bound here is bytes in "
                "flight, the same for every stride, so the strides compare like for like.",
    plot=Plot(x="stride", y="gbps", series="reps", logx=True, title="bank_stride: GB/s vs shared-memory stride"),
    findings=findings,
    derive=derive,
    order=72,
)
