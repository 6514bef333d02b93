"""Privatization (seed 000, checklist): a histogram counted with global atomics vs private copies in shared memory.

Every kernel variant reads the same int32 keys with the same scalar loads, on the grid of its own resident blocks
(a private copy takes shared memory, which can cost occupancy), so what differs is where the atomic updates land:
the one global copy (L2 atomics, serialized on equal keys), a private copy per block or a private copy per warp
(shared-memory atomics, added into the global copy once per block). Three key distributions set the contention:
uniform over the bins, skewed (half the keys in the first 1/256 of the bins) and one key for all (constant). Then
``gpumemlab.bincount`` against ``cupy.bincount`` and ``torch.bincount`` as users call them (host clock: each call
reads its result's length back).
"""

from __future__ import annotations

import numpy as np

from ..gpu import runtime
from ..kernels import histogram as K
from ..ops import histogram as ops_histogram
from ._cite import field, q, sentence
from ._declare import Case, Check, Claim, Experiment, Plot, seed
from ._library import library_vs_baselines, versus_baselines
from ._model import predict_global

SKEW_POWER = 8  # skewed keys: bins * u^8 for uniform u, so P(key < bins / 256) = 1/2


def keys(n: int, bins: int, distribution: str, seed_value: int):
    """``n`` int32 keys in [0, bins) drawn on the GPU."""
    import cupy

    rng = cupy.random.default_rng(seed_value)
    if distribution == "uniform":
        return rng.integers(0, bins, n, dtype=cupy.int32)
    if distribution == "skewed":
        return (rng.random(n, dtype=cupy.float64) ** SKEW_POWER * bins).astype(cupy.int32).clip(0, bins - 1)
    if distribution == "constant":
        return cupy.full(n, bins // 3, cupy.int32)
    raise ValueError(f"unknown distribution {distribution!r}")


def kernel_run(variant: K.Variant, x, bins: int, buf, grid: int | None = None):
    """(run, grid): zero the histogram (and its range slots), then count ``x`` with ``variant``'s kernel on ``grid``
    blocks (default: as many as are resident at once with its shared memory)."""
    kernel = runtime.get_kernel(variant.spec("int32"))
    shmem = variant.shared_bytes(bins)
    if shmem > runtime.DEFAULT_DYNAMIC_SMEM:
        runtime.set_max_dynamic_shared(kernel, shmem)
    if grid is None:
        grid = runtime.device_info()["sm_count"] * max(1, runtime.max_active_blocks(kernel, K.BLOCK, shmem))
    count = np.int64(bins) if variant.private is None else np.int32(bins)
    hist, rng = buf[:bins], buf[bins:]

    def run():
        buf.fill(0)
        runtime.launch(kernel, grid, K.BLOCK, hist, rng, x, np.int64(x.size), count, shmem=shmem)
    return run, grid


def cases(session, params):
    import cupy

    n = session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 4 * 1.5, "histogram")
    if session.quick:
        n = min(n, 1 << 24)
    model = predict_global(K.KEY_ACCESS, "int keys[]", block=(K.BLOCK, 1, 1))
    for bins in params["bins"]:
        for distribution in params["distributions"]:
            x = keys(n, bins, distribution, session.seed)
            want = cupy.bincount(x, minlength=bins)
            common = dict(bins=bins, distribution=distribution, n=n)
            for variant in K.LADDER:
                shmem = variant.shared_bytes(bins)
                if shmem > session.device["shared_per_block_optin_bytes"]:
                    continue
                buf = cupy.empty(bins + 2, cupy.int64)
                run, grid = kernel_run(variant, x, bins, buf)
                yield Case(variant.label, run, Check(buf, want, view=lambda b, bins=bins: b[:bins]),
                           params=common, reads=4 * n, writes=8 * bins, ceiling="read_gbps",
                           model=model, naive=variant.private is None,
                           extra=dict(shared_bytes=shmem, grid=grid, blocks_per_sm=grid / session.sm_count))

            def make(variant, run, value, reset, kind="kernel", **kw):
                check = Check(value, want, reset=reset)
                return Case(variant, run, check, params=common, reads=4 * n, writes=8 * bins, ceiling="read_gbps",
                            kind=kind, clock="host", **kw)
            yield from library_vs_baselines(
                session, x, make, ("gpumemlab.bincount", lambda a, bins=bins: ops_histogram.bincount(a, bins)),
                ("cupy.bincount", lambda a, bins=bins: cupy.bincount(a, minlength=bins)),
                ("torch.bincount", lambda t, bins=bins: t.bincount(minlength=bins)))


def findings(records):
    groups = dict.fromkeys((r.params["bins"], r.params["distribution"]) for r in records)
    for bins, distribution in groups:
        rs = {r.variant: r for r in records if (r.params["bins"], r.params["distribution"]) == (bins, distribution)}
        label = sentence(f"{distribution} keys, ", q(field(next(iter(rs.values())), "params", "bins"), ".0f"),
                         " bins")
        naive = rs.get(K.GLOBAL.label)
        for variant in (K.BLOCK_PRIVATE, K.WARP_PRIVATE):
            r = rs.get(variant.label)
            if naive is not None and r is not None:
                yield sentence(label, f": {variant.label} ", q(field(naive, "time_s", "median") /
                                                                field(r, "time_s", "median"), ".2f"),
                               "x the global atomics (", q(field(r, "gbps"), ".0f"), " vs ",
                               q(field(naive, "gbps"), ".0f"), " GB/s of keys; ",
                               q(field(r, "extra", "blocks_per_sm"), ".0f"), " vs ",
                               q(field(naive, "extra", "blocks_per_sm"), ".0f"), " blocks per SM)")
        lib = rs.get("gpumemlab.bincount")
        if lib is not None:
            yield from versus_baselines(sentence(label, ": gpumemlab.bincount"), lib, rs)


EXPERIMENT = Experiment(
    name="histogram",
    title="Privatization: a histogram with global atomics vs private per-block and per-warp copies",
    claims=(Claim("Privatisation. Idea: Less contention of writes to a shared copy of data and serialization of "
                  "atomic updates. Strategy: Apply partial updates to a private copy of the data and then updataing "
                  "the universal copy when done.", seed("000", "Checklist of optimizations, Privatisation")),),
    cases=cases,
    params=dict(bins=[256, 4096], distributions=["uniform", "skewed", "constant"], l2_factor=8.0),
    naive=K.GLOBAL.label,
    group_by=("bins", "distribution"),
    modern_note="Hopper's L2 atomics are fast for keys spread over many addresses; the global copy loses where "
                "equal keys meet in one L2 slice (skewed data, one key), which private copies absorb in shared "
                "memory. One copy per warp also spreads a warp's own collisions.",
    plot=Plot(x="distribution", y="gbps", series="variant"),
    findings=findings,
    order=58,
)
