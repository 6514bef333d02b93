"""Batching transfers: many small copies against one copy of the same bytes, the cost of one transfer, and the
size above which a single transfer reaches 90% of the link's best rate (pinned memory, both directions); and the
seed's packing: non-contiguous regions copied one by one against packed on the host, copied once and unpacked on the
GPU (host clock: the packing is host work)."""

from __future__ import annotations

from contextlib import ExitStack

import numpy as np

from ..errors import VerificationError
from ..gpu import host
from ._declare import Case, Check, Claim, Experiment, Plot, seed
from . import _transfers
from ._cite import constant, field, q, sentence
from ._transfers import KIB, MIB, d2h_check, fraction_size, host_buffer, log_sizes, quoted_size, reference, size_label


def _copies(dst, src, piece: int, count: int, direction: str):
    """``count`` cudaMemcpyAsync calls of ``piece`` bytes each, consecutive pieces of the same buffers."""
    step = piece // 4

    def run():
        for i in range(count):
            lo = i * step
            host.copy_async(dst[lo:lo + step], src[lo:lo + step], piece)
    return run


def cases(session, params):
    import cupy

    hi = max(params["total_kib"] * KIB, (16 if session.quick else params["max_mib"]) * MIB)
    n = hi // 4
    with ExitStack() as stack:
        want = reference(n, session.seed)
        out, scratch = cupy.empty_like(want), cupy.empty_like(want)
        buf = host_buffer(stack, "pinned", n)
        host.copy_async(buf, want)
        total = params["total_kib"] * KIB
        for direction in ("H2D", "D2H"):
            def case(variant, nbytes, piece, count):
                k = nbytes // 4
                if direction == "H2D":
                    run = _copies(out, buf, piece, count, direction)
                    check = Check(out[:k], want[:k])
                else:
                    run = _copies(buf, want, piece, count, direction)
                    check = d2h_check(run, buf[:k], want[:k], scratch[:k], f"{direction} {variant}")
                return Case(f"{direction} {variant}", run, check, reads=nbytes, ceiling=None, cold_l2=False,
                            params=dict(direction=direction, bytes=nbytes, size=size_label(nbytes), piece=piece,
                                        pieces=count),
                            extra=dict(mechanism="CE", direction=direction, memory="pinned"))

            for nbytes in log_sizes(params["min_kib"] * KIB, hi, 4):
                yield case("one copy", nbytes, nbytes, 1)
            for piece_kib in params["pieces_kib"]:
                piece = piece_kib * KIB
                if piece < total and total % piece == 0:
                    yield case(f"{total // piece} x {size_label(piece)}", total, piece, total // piece)
        yield from _packing_cases(stack, total, params["pack_piece_kib"] * KIB, session.seed)


PACKING = ("H2D regions one by one", "H2D packed, one copy, unpacked")


def _packing_cases(stack: ExitStack, total: int, piece: int, seed_value: int):
    """``total`` bytes in regions of ``piece`` bytes, every other piece of a pinned host buffer, to the same places
    on the GPU: a copy per region, or packed into a pinned staging buffer, one copy, and unpacked by a GPU copy."""
    import cupy

    count, k = total // piece, piece // 4
    src = host_buffer(stack, "pinned", 2 * total // 4)
    src[:] = reference(2 * total // 4, seed_value).get()
    dst = cupy.empty(2 * total // 4, np.int32)
    stage_host = host_buffer(stack, "pinned", total // 4).reshape(count, k)
    stage_dev = cupy.empty((count, k), np.int32)
    regions_host, regions_dev = src.reshape(count, 2, k)[:, 0], dst.reshape(count, 2, k)[:, 0]
    want = cupy.asarray(np.ascontiguousarray(regions_host))

    def one_by_one():
        for i in range(count):
            host.copy_async(regions_dev[i], regions_host[i], piece)

    def packed():
        np.copyto(stage_host, regions_host)      # pack on the host
        host.copy_async(stage_dev, stage_host)  # one transfer
        regions_dev[...] = stage_dev             # unpack on the GPU

    for variant, run in zip(PACKING, (one_by_one, packed)):
        def check(run=run, variant=variant):
            dst.fill(-1)
            run()
            if not bool(cupy.array_equal(regions_dev, want)):
                raise VerificationError(f"{variant}: the regions on the GPU differ from the host's")
        yield Case(variant, run, check, reads=total, ceiling=None, cold_l2=False, clock="host",
                   params=dict(direction="H2D", bytes=total, size=size_label(total), piece=piece, pieces=count),
                   extra=dict(mechanism="CE + host pack + SM unpack" if run is packed else "CE", direction="H2D",
                              memory="pinned"))


def derive(records, session):
    for r in records:
        r.extra["per_transfer_s"] = r.median_s / r.params["pieces"]


def findings(records):
    pack = {r.variant: r for r in records if r.variant in PACKING}
    if len(pack) == 2:
        many, packed = (pack[v] for v in PACKING)
        yield sentence(q(field(many, "params", "pieces"), ".0f"), " regions of ", quoted_size(many, "piece"),
                       ": one copy each ", q(field(many, "time_s", "median") * 1e3, ".3f"), " ms; packed on the host, "
                       "one copy, unpacked on the GPU ", q(field(packed, "time_s", "median") * 1e3, ".3f"), " ms (",
                       q(field(many, "time_s", "median") / field(packed, "time_s", "median"), ".1f"),
                       "x as long one by one; host clock)")
    for d in ("H2D", "D2H"):
        single = [r for r in records if r.variant == f"{d} one copy"]
        if not single:
            continue
        best = max(single, key=lambda r: r.gbps)
        smallest = min(single, key=lambda r: r.params["bytes"])
        reach = fraction_size(single, best.gbps)
        where = quoted_size(next(r for r in single if r.params["bytes"] == reach)) if reach else "no size measured"
        yield sentence(f"{d}: a lone copy of ", quoted_size(smallest), " takes ",
                       q(field(smallest, "time_s", "median") * 1e6, ".1f"),
                       " us from issue to completion (its latency; back to back, each copy of a batch costs its issue "
                       "overhead instead, the per-transfer figures below); the best single copy reaches ",
                       q(field(best, "gbps"), ".1f"), " GB/s (", quoted_size(best), "); ",
                       q(constant(_transfers.__name__, "REACH") * 100, ".0f"), "% of it from ", where)
        for r in records:
            if r.params["direction"] == d and r.params["pieces"] > 1 and r.variant not in PACKING:
                one = next((s for s in single if s.params["bytes"] == r.params["bytes"]), None)
                if one is not None:
                    t = field(r, "time_s", "median")
                    yield sentence(f"{r.variant}: ", q(t * 1e3, ".3f"), " ms = ", q(t / field(one, "time_s", "median"),
                                                                                   ".1f"),
                                   "x one ", quoted_size(r), " copy (", q(field(r, "extra", "per_transfer_s") * 1e6,
                                                                          ".2f"), " us per transfer)")


EXPERIMENT = Experiment(
    name="transfer_batching",
    title="Batching small transfers into one",
    claims=(
        Claim("Because of the overhead of each transfer, batching many small transfers into one large transfer "
              "performs much better than making each transfer separately, even if that means packing non-contiguous "
              "regions into a contiguous buffer and unpacking after the transfer.", seed("003", "9.1, data transfer "
                                                                                            "between host and device")),
        Claim("Minimize memory transfers between the host and device: combine multiple transfers into one.",
              seed("004", "'Minimize memory transfers between the host and device'")),
    ),
    cases=cases,
    params=dict(min_kib=1, max_mib=64, total_kib=4096, pieces_kib=[4, 64], pack_piece_kib=4),
    group_by=("direction",),
    plot=Plot(x="bytes", y="gbps", series="variant", logx=True,
              title="transfer_batching: GB/s (bytes crossing the link) vs size, pinned"),
    findings=findings,
    derive=derive,
    order=210,
)
