"""The tile chooser of ``gpumemlab.matmul``: a tuned table entry in, a register-blocked configuration and split-K
factor out. Pure (no GPU): the entry is a device's entry of ``kernels/tuned/matmul.json`` (``gpumemlab tune
matmul``), its chosen point per tuned shape being the evidence.

The rule: the chosen point of the tuned shape nearest to M x N x K (sum of |log2| ratios of M, N and K), its split-K
factor scaled to keep the same K depth per split; for the scalar-load route (N or K not a multiple of 4) that choice
is checked by a wave model against the other tuned shapes' winners (:func:`wave_choice`). Without an entry for the
device's chip: the default tiles, or the small ones when the default's leave SMs idle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from ...kernels import KERNEL_DIR
from ...kernels import matmul as K
from ...tune import table

TUNED_PATH = KERNEL_DIR / "tuned" / "matmul.json"


@dataclass(frozen=True)
class Choice:
    """A register_blocked configuration and its split-K factor for one problem shape."""

    config: K.RBConfig
    splits: int = 1


@dataclass(frozen=True)
class Route:
    """How ``variant="auto"`` runs M x N x K: ``kind`` "gemv", "float4" (aligned) or "scalar" (vec 1 loads), and the
    tile choice."""

    kind: str
    choice: Choice | None = None


# ---------------------------------------------------------------- the table

@cache
def tuned_devices() -> dict:
    """{device name: entry} of kernels/tuned/matmul.json ({} if absent or not valid)."""
    return table.read_devices(TUNED_PATH, "matmul")


def tuned_entry(device: dict, devices: dict | None = None) -> dict | None:
    """This device's entry (or its chip's, marked ``borrowed_from``); None without one."""
    return table.device_entry(tuned_devices() if devices is None else devices, device)


def evidence(entry: dict | None) -> tuple[dict, dict]:
    """({shape: (config name, splits)}, {shape: the chosen point's median s}) of a tuned entry; shapes whose
    configuration is not a candidate any more are left out."""
    if not entry:
        return {}, {}
    known = {c.name for c in K.CANDIDATES}
    # the chosen point's own record: same name, shape, round and rate (a converted entry may hold earlier points
    # of the same name)
    medians = {(p["name"], p["shape"], p["round"], p["gflops"]): p["median_s"] for p in entry.get("points", [])
               if p.get("verified")}
    winners, times = {}, {}
    for shape, c in entry.get("chosen", {}).items():
        name = c["params"]["config"]
        if name in known:
            winners[shape] = (name, int(c["params"].get("splits", 1)))
            t = medians.get((c["name"], shape, c["round"], c.get("gflops")))
            if t:
                times[shape] = float(t)
    return winners, times


# ---------------------------------------------------------------- the nearest tuned shape

def _log_distance(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    return sum(abs(math.log2(x / y)) for x, y in zip(a, b))


def scaled_splits(k: int, k0: int, splits: int) -> int:
    """The split factor that keeps the slice depth measured at K = ``k0`` with ``splits`` (1 stays 1)."""
    depth = k0 / splits  # the measured slice depth; a deeper K keeps it by splitting more
    return max(1, min(K.SPLIT_FACTORS[-1], round(k / depth))) if splits > 1 else 1


def nearest_measured(m: int, n: int, k: int, winners: dict) -> Choice | None:
    """The winner of the measured shape nearest to M x N x K (of equally near ones, the first by name), with its
    split-K factor scaled to keep the same depth per split; None without a known winner. (Restricting the search to shapes that load the same way, float4 or
    scalar, was tried on the H200 and made held-out shapes slower, so size alone decides.)"""
    known = {c.name: c for c in K.CANDIDATES}
    best = None
    for shape, (name, splits) in sorted(winners.items()):  # ties: the first shape name
        if name not in known:
            continue
        mnk = table.parse_mnk(shape)
        d = _log_distance((m, n, k), mnk)
        if best is None or d < best[0]:
            best = (d, known[name], splits, mnk[2])
    if best is None:
        return None
    _, cfg, splits, k0 = best
    return Choice(cfg, scaled_splits(k, k0, splits))


# ---------------------------------------------------------------- the wave check (scalar route)

# The wave model that checks the nearest shape's winner against the other measured configurations: blocks of one
# launch spread evenly over the SMs, so the busiest SM runs ceil(blocks / SMs) of them and its FMA pipes set the time;
# below WAVE_FULL_THREADS resident threads an SM is not busier for having fewer blocks (one 128-thread block alone
# leaves its pipes waiting on latency), so fewer blocks count as that many.
WAVE_FULL_THREADS = 256  # 8 warps: two per scheduler, each thread with 32+ independent FFMAs per k step
WAVE_MARGIN = 0.10       # another configuration must be predicted this much faster than the nearest winner
WAVE_REACH = 2.0         # evidence from shapes at most this far (sum of |log2| ratios of M, N, K)


def busiest_sm_work(cfg: K.RBConfig, m: int, n: int, k: int, splits: int, sms: int, batch: int = 1) -> int:
    """Multiply-adds the busiest SM does for one launch of ``batch`` products (the wave model above): ceil(blocks /
    SMs), at least the blocks that fill an SM, times BM x BN x the K depth of a split."""
    chunk, splits = K.split_chunk(k, cfg.bk, splits)
    per_sm = math.ceil(K.tiles(cfg, m, n) * splits * batch / sms)
    return max(per_sm, max(1, WAVE_FULL_THREADS // cfg.threads)) * cfg.bm * cfg.bn * chunk


def wave_choice(m: int, n: int, k: int, winners: dict, times: dict, sms: int, margin: float = WAVE_MARGIN,
                reach: float = WAVE_REACH) -> tuple[Choice, dict] | None:
    """The nearest measured shape's winner (:func:`nearest_measured`) at the split factor the wave model predicts
    fastest, unless it predicts another measured configuration at least ``margin`` faster on M x N x K; (choice,
    {candidate: predicted s}).

    Each configuration's evidence is the measured shape nearest to M x N x K that it won (within ``reach``), its
    predicted time that shape's median (``times``) scaled by :func:`busiest_sm_work`; split factors: the one that
    keeps the evidence's slice depth and, where the evidence split K, one more and one fewer. A configuration has
    two: the nearest shape it won split and the nearest it won unsplit, because the multiply-add count scales time
    only between launches with the same fixed costs (a split launch also zeroes C and adds its partial tiles
    atomically; docs/notes/matmul.md, unaligned shapes). For the same reason the nearest winner's tiles are split
    only where a split factor is predicted ``margin`` faster than their unsplit launch (where one is predicted). An
    exactly measured shape keeps its winner. None without a usable winner."""
    known = {c.name: c for c in K.CANDIDATES}
    rows = []
    for shape, (name, splits) in sorted(winners.items()):  # ties: the first shape name
        if name in known and times.get(shape):
            mnk = table.parse_mnk(shape)
            rows.append((_log_distance((m, n, k), mnk), mnk, known[name], int(splits), float(times[shape])))
    if not rows:
        return None
    rows.sort(key=lambda r: r[0])
    d0, mnk0, cfg0, s0, _ = rows[0]
    plain = Choice(cfg0, scaled_splits(k, mnk0[2], s0))
    if d0 == 0:
        return plain, {}
    found = {}
    for d, mnk, cfg, splits, t in rows:  # nearest first: each configuration's nearest split and unsplit evidence
        key = (cfg.name, splits > 1)
        if key not in found and (d <= reach or cfg == cfg0):
            found[key] = (mnk, cfg, splits, t)
    predicted, kind = {}, {}
    for mnk, cfg, splits, t in found.values():
        s = scaled_splits(k, mnk[2], splits)
        options = {s} | ({x for x in (s - 1, s + 1) if 2 <= x <= K.SPLIT_FACTORS[-1]} if splits > 1 else set())
        base = busiest_sm_work(cfg, *mnk, splits, sms)
        for x in sorted(options):
            c, same = Choice(cfg, x), (x > 1) == (splits > 1)
            if c not in predicted or (same and not kind[c]):  # evidence of the same kind (split or not) wins
                predicted[c], kind[c] = t * busiest_sm_work(cfg, m, n, k, x, sms) / base, same
    # the nearest winner's tiles at their best predicted split factor: its own split factor, rescaled to this K, is
    # a model output too, so the prediction decides between split factors; splitting at all, and another
    # configuration (tiles differ in speed per multiply-add, which the model does not count), must be predicted
    # ``margin`` faster
    mine = min((c for c in predicted if c.config == cfg0), key=predicted.get, default=plain)
    unsplit = Choice(cfg0, 1)
    if mine.splits > 1 and unsplit in predicted and predicted[mine] > predicted[unsplit] * (1.0 - margin):
        mine = unsplit
    best = min(predicted, key=predicted.get)
    if best.config != cfg0 and predicted[best] < predicted[mine] * (1.0 - margin):
        return best, predicted
    return mine, predicted


# ---------------------------------------------------------------- the choice

def default_choice(m: int, n: int, sms: int) -> Choice:
    """Without a tuned entry: the default tiles, or the small ones when the default's leave SMs idle."""
    return Choice(K.SMALL) if K.tiles(K.DEFAULT, m, n) < sms else Choice(K.DEFAULT)


def choose(m: int, n: int, k: int, entry: dict | None, sms: int, waves: bool = False) -> Choice:
    """The register_blocked configuration and split-K factor for an M x N x K product from a tuned ``entry`` (None:
    :func:`default_choice`) on a GPU of ``sms`` SMs; ``waves``: check the nearest winner with the wave model (the
    scalar route asks for it)."""
    return pick(m, n, k, *evidence(entry), sms, waves)


def pick(m: int, n: int, k: int, winners: dict, times: dict, sms: int, waves: bool = False) -> Choice:
    """:func:`choose` from the evidence itself (:func:`evidence`'s two dicts)."""
    got = None
    if waves and times:
        got = wave_choice(m, n, k, winners, times, sms)
        got = got[0] if got else None
    if got is None:
        got = nearest_measured(m, n, k, winners)
    return got if got is not None else default_choice(m, n, sms)


FILL_MARGIN = 0.25  # other tiles replace the tuned ones only where the wave model gives them a quarter of the work


def fill_choice(m: int, n: int, k: int, batch: int, base: Choice, sms: int) -> Choice:
    """The tiles for one launch of ``batch`` M x N x K products: ``base`` (the tuned choice; for a stack, the one for
    the stack taken as one taller product) unless the candidate whose tiles leave the busiest SM the least work (the
    wave model, unsplit; of equals, the first candidate) gives it at most :data:`FILL_MARGIN` of base's: tiles much
    larger than a product's M or N waste most of their multiply-adds (which a taller product hides), and a nearest
    tuned shape's big tiles can fill a fraction of the SMs (512 x 2048 x 2048 on 128 x 256 tiles: 32 blocks)."""
    def work(c: Choice) -> int:
        return busiest_sm_work(c.config, m, n, k, c.splits, sms, batch)

    best = min((Choice(cfg) for cfg in K.CANDIDATES), key=work)
    return best if work(best) <= FILL_MARGIN * work(base) else base


def is_gemv(m: int, n: int) -> bool:
    """Shapes the auto path sends to the memory-bound GEMV kernels instead of the tiles."""
    return n == 1 or m <= K.SKINNY_ROWS[-1]


def route(m: int, n: int, k: int, aligned: bool, entry: dict | None, sms: int) -> Route:
    """The route of ``variant="auto"``. ``aligned``: A, B and C all 16-byte aligned. An unaligned N or K runs the
    scalar-load kernel with the wave check: on the H200 padded copies read by the float4 kernel never beat it, the
    unaligned shapes had lost on their tiles, not their loads (docs/notes/matmul.md, unaligned shapes)."""
    if is_gemv(m, n):
        return Route("gemv")
    if aligned and n % 4 == 0 and k % 4 == 0:
        return Route("float4", fill_choice(m, n, k, 1, choose(m, n, k, entry, sms), sms))
    return Route("scalar", fill_choice(m, n, k, 1, choose(m, n, k, entry, sms, waves=True), sms))
