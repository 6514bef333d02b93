"""Best Practices 9.2.3.2 and 9.2.3.3: shared memory in C = A B with w = 32 (simpleMultiply,
coalescedMultiply, sharedABMultiply) and in C = A A^T (strided reads, then a transposed tile with
and without the 32 x 33 padding), reported as effective bandwidth the way the guide does."""

from __future__ import annotations

import math

import numpy as np

from ..bench.verify import device_random_nonzero
from ..kernels.matmul import TILE_DIM
from ._cite import claim, field, join, q, sentence
from ._declare import Claim, Experiment, outside, seed
from ._matmul import CUBLAS, Operands

AB = ("simple_multiply", "coalesced_multiply", "shared_ab_multiply")
AAT = ("aat_simple", "aat_shared", "aat_padded")


def cases(session, params):
    import cupy

    # C (M x M floats) far above L2, so the write of C is a DRAM stream as on the guide's V100
    m = int(math.isqrt(session.fit_elements(session.dram_bytes(params["l2_factor"]) // 4, 24, "matmul_shared_ab")))
    m -= m % TILE_DIM
    a = device_random_nonzero((m, TILE_DIM), np.float32, session.seed)
    b = device_random_nonzero((TILE_DIM, m), np.float32, session.seed + 1)
    out = cupy.empty((m, m), dtype=cupy.float32)
    for op, names, rhs in (("ab", AB, b), ("aat", AAT, None)):
        ops = Operands(session, a, rhs, out, dict(op=op, m=m, n=m, k=TILE_DIM), bandwidth=True)
        yield ops.cublas()
        for name in names:
            yield ops.rung(name, naive=name == names[0])


def _write_share(rec):
    """Percent of ``rec``'s time that writing C (m x n floats) alone takes at the copy ceiling its record names
    (the ceiling read back from the record: gbps over pct_of_ceiling)."""
    c_bytes = field(rec, "params", "m") * field(rec, "params", "n") * 4
    ceiling_bytes_per_s = field(rec, "gbps") / field(rec, "pct_of_ceiling") * 1e11  # GB/s x 1e9, per 100%
    return c_bytes / ceiling_bytes_per_s / field(rec, "time_s", "median") * 100


def findings(records):
    by = {r.variant: r for r in records if r.variant != CUBLAS}
    by.update({f"{CUBLAS} {r.params['op']}": r for r in records if r.variant == CUBLAS})  # one per product

    def bandwidths(variants):
        return join(" / ", (q(field(by[v], "gbps"), ",.1f") for v in variants))
    if all(v in by for v in AB):
        guide = join(" / ", (q(claim(x), ".1f") for x in ("119.9", "144.4", "195.5")))
        yield sentence("effective bandwidth simple / coalesced / shared_ab: ", bandwidths(AB),
                       " GB/s (V100 in the guide: ", guide, ")")
        simple, coalesced = by["simple_multiply"], by["coalesced_multiply"]
        yield sentence("coalescedMultiply takes ", q(field(coalesced, "time_s", "median") /
                                                      field(simple, "time_s", "median"), ".2f"),
                       "x the time of simpleMultiply (the guide's V100: ", q(claim("119.9") / claim("144.4"), ".2f"),
                       "x)")
        cublas = by.get(f"{CUBLAS} ab")
        vs_cublas = [] if cublas is None else [", and cuBLAS does the product in ", q(
            field(cublas, "time_s", "median") / field(simple, "time_s", "median") * 100, ".0f"), "% of it"]
        yield sentence("writing C alone at the copy ceiling would take ", q(_write_share(simple), ".0f"),
                       "% of simpleMultiply's time", *vs_cublas, ": C's write does not bound these kernels")
    if all(v in by for v in AAT):
        tile = q(field(by["aat_shared"], "params", "k"), ".0f")  # the tile is TILE_DIM = k square
        yield sentence("A A^T simple / shared (", tile, "x", tile, ") / padded (", tile,
                       f"x{by['aat_shared'].params['k'] + 1}): ", bandwidths(AAT), " GB/s; padding removes the ", tile,
                       "-way bank conflict (", q(field(by["aat_shared"], "time_s", "median") /
                                                 field(by["aat_padded"], "time_s", "median"), ".2f"), "x)")


EXPERIMENT = Experiment(
    name="matmul_shared_ab",
    title="Shared memory in C = AB (w = 32) and C = AA^T: effective bandwidth",
    claims=(Claim("V100: simpleMultiply 119.9 GB/s, coalescedMultiply (A tile in shared memory, __syncwarp) 144.4 GB/s, "
                  "sharedABMultiply 195.5 GB/s.", seed("003", "Best Practices 9.2.3.2")),
            Claim("C = AA^T shows both strided global access (A's columns read TILE_DIM floats apart waste "
                  "bandwidth) and shared-memory bank conflicts.", seed("003", "Best Practices 9.2.3.3")),
            Claim("Reading the transposed tile from a 32x32 shared array conflicts in every bank; a 32x33 tile removes "
                  "the conflicts.", outside("NVIDIA, CUDA C++ Best Practices Guide, 9.2.3.3 (beyond the seed's notes)"))),
    cases=cases,
    params=dict(l2_factor=8.0),
    naive="simple_multiply",
    group_by=("op",),
    modern_note="C's write does not bound these kernels (the findings compare it with their time), and cuBLAS does "
                "the same product several times faster, so the three kernels are limited by their own instruction "
                "streams: a load from L1, L2 or shared memory per FMA. In simpleMultiply a warp's A element is one "
                "address (an L1 broadcast), so staging A's tile in shared memory (coalescedMultiply) saves no DRAM "
                "access and adds a store and a __syncwarp; that is the likely reason it is not faster here, but no "
                "counters were taken for this experiment: the cause is not measured.",
    findings=findings,
    order=72,
)
