"""Batching transfers: many small copies against one copy of the same bytes, the cost of one transfer, and the
size above which a single transfer reaches 90% of the link's best rate (pinned memory, both directions)."""

from __future__ import annotations

from contextlib import ExitStack

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


def derive(records, session):
    for r in records:
        r.extra["per_transfer_s"] = r.median_s / r.params["pieces"]


def findings(records):
    for d in ("H2D", "D2H"):
        single = [r for r in records if r.variant == f"{d} one copy"]
        best = max(single, key=lambda r: r.gbps)
        smallest = min(single, key=lambda r: r.params["bytes"])
        reach = fraction_size(single, best.gbps)
        where = quoted_size(next(r for r in single if r.params["bytes"] == reach)) if reach else "no size measured"
        yield sentence(f"{d}: one transfer costs at least ", q(field(smallest, "time_s", "median") * 1e6, ".1f"),
                       " us (", quoted_size(smallest), "); the best single copy reaches ",
                       q(field(best, "gbps"), ".1f"), " GB/s (", quoted_size(best), "); ",
                       q(constant(_transfers.__name__, "REACH") * 100, ".0f"), "% of it from ", where)
        for r in records:
            if r.params["direction"] == d and r.params["pieces"] > 1:
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
    params=dict(min_kib=1, max_mib=64, total_kib=4096, pieces_kib=[4, 64]),
    group_by=("direction",),
    plot=Plot(x="bytes", y="gbps", series="variant", logx=True,
              title="transfer_batching: GB/s (bytes crossing the link) vs size, pinned"),
    findings=findings,
    derive=derive,
    order=210,
)
