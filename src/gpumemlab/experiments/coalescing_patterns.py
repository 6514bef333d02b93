"""The slides' coalescing timing table: read a float, increment, write back, five access patterns."""

from __future__ import annotations

import math

import numpy as np

from ..bench.verify import device_random_nonzero
from ..gpu import runtime
from ..kernels import blocks_for
from ..kernels import coalescing as K
from ._cite import claim, field, q, sentence
from ._declare import Case, Check, Claim, Experiment, seed
from ._model import predict_global, record_verdict

def scattered_model() -> dict:
    """The random pattern's prediction: a hash puts each lane of a warp in its own 32-byte sector, which the
    analyzer counts for any access whose lanes are 8 or more floats apart (here a[i*8])."""
    pred = predict_global("a[(blockIdx.x*blockDim.x + threadIdx.x) * 8]", "float a[]", block=(K.BLOCK, 1, 1))
    return dict(access="a[hash(i)], modelled as a[i*8]: one sector per lane",
                **{k: pred[k] for k in ("sectors_per_request", "efficiency_pct", "verdict")})


def expected(pattern: str, a0, n: int):
    """The array after one increment<pattern> (the kernels update ``a`` in place)."""
    import cupy

    want = a0.copy()
    if pattern == "misaligned":
        want[1:n + 1] += 1.0
    elif pattern == "partial":
        lane = cupy.arange(n) % 16  # threadIdx.x % 16, as the block is a multiple of 16
        want[:n] += ((lane != 3) & (lane != 13)).astype(np.float32)
    else:  # coalesced, permuted and random each touch every element once (random: a bijection)
        want[:n] += 1.0
    return want


SEED_N = 12 * 1024 * 256  # the slides' "3M floats (12MB)", 12K blocks x 256 threads


def cases(session, params):
    """Two sizes: far above L2 (DRAM-bound, every pattern) and the seed's own 3M floats (all but random, whose
    hash permutes a power of two). The seed's 12 MB fits in a modern L2; the flush before each sample starts it
    in DRAM, so one call reads it from DRAM once."""
    log2n = int(math.ceil(math.log2(max(session.dram_bytes(params["l2_factor"]) // 4, 1 << 20))))
    sizes = [("far above L2", 1 << log2n, params["patterns"])]
    if params["seed_size"]:
        sizes.append(("seed size", SEED_N, [p for p in params["patterns"] if p != "random"]))
    for label, n, patterns in sizes:
        yield from _cases(label, n, log2n, patterns, session)


def _cases(label: str, n: int, log2n: int, patterns, session):
    a0 = device_random_nonzero(n + 32, np.float32, session.seed)
    a = a0.copy()
    grid = blocks_for(n, K.BLOCK)
    for name in patterns:
        p = K.PATTERNS[name]
        kernel = runtime.get_kernel(p.spec)
        touched = n * 14 // 16 if name == "partial" else n
        model = (predict_global(p.access, "float a[]", block=(K.BLOCK, 1, 1), active=p.active) if p.access
                 else scattered_model())
        yield Case(name, lambda kernel=kernel: runtime.launch(kernel, grid, K.BLOCK, a, np.int64(n), log2n),
                   Check(lambda: a, lambda name=name, n=n: expected(name, a0, n),
                         reset=lambda: a.__setitem__(Ellipsis, a0)),
                   params=dict(n=n, size=label, pattern=name), reads=K.BYTES_PER_TOUCH // 2 * touched,
                   writes=K.BYTES_PER_TOUCH // 2 * touched, model=model)


def findings(records):
    """Per size, each pattern's time over coalesced; a ratio whose p10-p90 range (from both records) contains 1
    is a tie and printed as such, never as a ratio."""
    sizes: dict = {}
    for r in records:
        sizes.setdefault(r.params.get("size", "far above L2"), {})[r.variant] = r
    coalesced = claim("356")
    seed = ("(seed: partial ", q(claim("357") / coalesced, ".2f"), "x, permuted or misaligned ",
            q(claim("3,494") / coalesced, ".1f"), "x; no random case)")
    for size, by in sizes.items():
        base = by.get("coalesced")
        if base is None:
            continue
        parts = []
        for v in ("partial", "permuted", "misaligned", "random"):
            if v in by:
                if record_verdict(by[v], base) == "tie":
                    parts += [", " if parts else "", f"{v} a tie within the noise"]
                else:
                    ratio = field(by[v], "time_s", "median") / field(base, "time_s", "median")
                    parts += [", " if parts else "", f"{v} ", q(ratio, ".2f"), "x"]
        yield sentence(f"{size} (n = ", q(field(base, "params", "n"), ".0f"), "): time relative to coalesced: ",
                       *parts, " ", *seed)


EXPERIMENT = Experiment(
    name="coalescing_patterns",
    title="Coalescing: read a float, increment, write back",
    claims=(Claim("3M floats, 12K blocks x 256 threads: 356 us coalesced, 357 us with some threads not participating, "
                  "3,494 us permuted or misaligned (about 10x).", seed("001", "slide 'Coalescing: Timing Results'")),),
    cases=cases,
    params=dict(patterns=list(K.PATTERNS), l2_factor=8.0, seed_size=True),
    group_by=("size",),
    naive="random",
    modern_note="Since compute capability 1.2 (and with 32-byte sectors since 6.0) permutation inside a segment costs "
                "nothing and misalignment costs one extra sector per warp, largely hidden by L1/L2; only a scattered "
                "(random) permutation, where each lane needs its own sector, keeps the seed's order-of-magnitude "
                "penalty. The first working set is sized far above L2; the seed's own 12 MB also runs, and fits in a modern L2. "
                "Every pattern runs the slide's kernel, one 4-byte load per thread and one thread per element, so even "
                "'coalesced' stays well below the copy ceiling: one load in flight per thread is the bound (offset_copy's "
                "'loads in flight' kernels and occupancy_sweep's float x1 show it), the same for every pattern, so the "
                "patterns compare like for like.",
    findings=findings,
    order=40,
)
