"""``gpumemlab.matmul``: C = A B in FP32 on CuPy arrays, by any rung of the seeds' ladder.

The variants are data (``kernels.matmul.VARIANTS``): name, kernel, launch geometry, the layout of B
it reads and its reuse factors for the OP/B model. The experiments time :func:`plan` objects (the kernel
launches alone, operands already in the variant's layout); :func:`matmul` is validation + plan + run.

Edge cases follow NumPy: M == 0 or N == 0 gives an empty (M, N) result, K == 0 gives zeros.
``variant="auto"`` runs ``register_blocked`` with the configuration tuned for this device
(``kernels/tuned/matmul.json``, written by ``gpumemlab tune matmul``; an entry of the same chip
under another name is borrowed) or a default one. When N or K is not a multiple of 4 (or an operand is not
16-byte aligned), :func:`route` picks between the scalar-load kernel and padded copies of A and/or B read by
the float4 kernel (:func:`pad_decision`); :func:`options` forces either for experiments and probes.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cache, lru_cache
from collections.abc import Callable

import numpy as np

from ..errors import UsageError
from . import _workspace as W
from ._checks import on_arrays_device
from ..kernels import KERNEL_DIR, KernelSpec
from ..kernels import matmul as K
from ..kernels.matmul import AAT_VARIANTS, AB_VARIANTS, VARIANTS

TUNED_PATH = KERNEL_DIR / "tuned" / "matmul.json"
MAX_GRID_Y = 65535


MATMUL_VARIANTS = ("auto",) + AB_VARIANTS


# ---------------------------------------------------------------- tuned configuration

@cache
def tuned_table() -> dict:
    """{device name: entry as :func:`choose` reads it} from kernels/tuned/matmul.json ({} if absent or unreadable)."""
    from ..tune.table import matmul_view, read_devices

    return {name: matmul_view(e) for name, e in read_devices(TUNED_PATH, "matmul").items()}


def tuned_entry(device: dict) -> dict | None:
    """The tuned entry for this device name; else one tuned on a GPU of the same compute capability
    and SM count (same chip, e.g. H100 SXM and H200), marked ``borrowed_from``; else None."""
    table = tuned_table()
    if device["name"] in table:
        return table[device["name"]]
    for name, entry in sorted(table.items()):
        d = entry.get("device", {})
        if list(d.get("cc", [])) == list(device.get("cc", [])) and d.get("sm_count") == device.get("sm_count"):
            return dict(entry, borrowed_from=name)
    return None


def _tiles(cfg: K.RBConfig, m: int, n: int) -> int:
    return math.ceil(m / cfg.bm) * math.ceil(n / cfg.bn)


@dataclass(frozen=True)
class Choice:
    """A register_blocked configuration and its split-K factor for one problem shape."""

    config: K.RBConfig
    splits: int = 1


MIN_SPLIT_DEPTH = 256  # a split-K slice shorter than this spends more on its prologue than it saves
SWEEP_SPLITS = K.SPLIT_FACTORS  # the split-K factors the shape sweep measures and the chooser may pick


def split_chunk(k: int, bk: int, splits: int) -> tuple[int, int]:
    """(k_chunk, effective splits): the K depth per split, a multiple of BK, with no empty split."""
    splits = max(1, min(int(splits), math.ceil(k / bk)))
    chunk = math.ceil(math.ceil(k / bk) / splits) * bk
    return chunk, math.ceil(k / chunk)


def _split_options(cfg: K.RBConfig, m: int, n: int, k: int, slots: int) -> list[int]:
    """Split-K factors worth trying: only when the tiles fill less than half of one wave."""
    tiles = _tiles(cfg, m, n)
    out = [1]
    for s in SWEEP_SPLITS[1:]:  # up to 64: the shape sweeps' winners on large K (H100, H200)
        if tiles * s <= slots and k // s >= MIN_SPLIT_DEPTH:
            out.append(s)
    return out


SHAPES_PATH = KERNEL_DIR / "tuned" / "matmul_shapes.json"


def _float4_shape(shape: str) -> bool:
    """A measured shape whose operands the float4 kernel read (N and K multiples of 4)."""
    _, n, k = (int(x) for x in shape.split("x"))
    return n % 4 == 0 and k % 4 == 0


@cache
def shape_times() -> dict:
    """{device name: {"MxNxK": the winner's kernel median in s}} from kernels/tuned/matmul_shapes.json ({} if
    absent)."""
    import json

    try:
        data = json.loads(SHAPES_PATH.read_text())
        return {dev: {s: float(w["median_s"]) for s, w in e["winners"].items() if w.get("median_s")}
                for dev, e in data["devices"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


@cache
def shape_table() -> dict:
    """{device name: {"MxNxK": (config name, splits)}} from kernels/tuned/matmul_shapes.json, written by
    ``tools/matmul_zoo.py --install`` (the fastest measured point per zoo shape); {} if absent or unreadable."""
    import json

    try:
        data = json.loads(SHAPES_PATH.read_text())
        return {dev: {s: (w["config"], int(w["splits"])) for s, w in e["winners"].items()}
                for dev, e in data["devices"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _log_distance(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    return sum(abs(math.log2(x / y)) for x, y in zip(a, b))


def nearest_measured(m: int, n: int, k: int, winners: dict) -> Choice | None:
    """The winner of the measured shape nearest to M x N x K (sum of |log2| ratios of M, N and K), with its
    split-K factor scaled to keep the same depth per split; None without a known winner. (Restricting the search to
    shapes that load the same way, float4 or scalar, was tried on the H200 and made held-out shapes slower, so size
    alone decides.)"""
    known = {c.name: c for c in K.CANDIDATES}
    best = None
    for shape, (name, splits) in winners.items():
        if name not in known:
            continue
        mnk = tuple(int(x) for x in shape.split("x"))
        d = _log_distance((m, n, k), mnk)
        if best is None or d < best[0]:
            best = (d, known[name], splits, mnk[2])
    if best is None:
        return None
    _, cfg, splits, k0 = best
    return Choice(cfg, _scaled_splits(k, k0, splits))


def _scaled_splits(k: int, k0: int, splits: int) -> int:
    """The split factor that keeps the slice depth measured at K = ``k0`` with ``splits`` (1 stays 1)."""
    depth = k0 / splits  # the measured slice depth; a deeper K keeps it by splitting more
    return max(1, min(SWEEP_SPLITS[-1], round(k / depth))) if splits > 1 else 1


# The wave model that checks the nearest shape's winner against the other measured configurations: blocks of one
# launch spread evenly over the SMs, so the busiest SM runs ceil(blocks / SMs) of them and its FMA pipes set the time;
# below WAVE_FULL_THREADS resident threads an SM is not busier for having fewer blocks (one 128-thread block alone
# leaves its pipes waiting on latency), so fewer blocks count as that many.
WAVE_FULL_THREADS = 256  # 8 warps: two per scheduler, each thread with 32+ independent FFMAs per k step
WAVE_MARGIN = 0.10       # another configuration must be predicted this much faster than the nearest winner
WAVE_REACH = 2.0         # evidence from shapes at most this far (sum of |log2| ratios of M, N, K)


def busiest_sm_work(cfg: K.RBConfig, m: int, n: int, k: int, splits: int, sms: int) -> int:
    """Multiply-adds the busiest SM does for one launch (the wave model above): ceil(blocks / SMs), at least the
    blocks that fill an SM, times BM x BN x the K depth of a split."""
    chunk, splits = split_chunk(k, cfg.bk, splits)
    per_sm = math.ceil(_tiles(cfg, m, n) * splits / sms)
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
    atomically; scaling 768^3's 6 splits down to 777x1001x513 chose 3 splits at 0.83x cuBLAS where unsplit ran
    0.97x, docs/notes/matmul.md). An exactly measured shape keeps its winner. None without a usable winner."""
    known = {c.name: c for c in K.CANDIDATES}
    rows = []
    for shape, (name, splits) in winners.items():
        if name in known and times.get(shape):
            mnk = tuple(int(x) for x in shape.split("x"))
            rows.append((_log_distance((m, n, k), mnk), mnk, known[name], int(splits), float(times[shape])))
    if not rows:
        return None
    rows.sort(key=lambda r: r[0])
    d0, mnk0, cfg0, s0, _ = rows[0]
    plain = Choice(cfg0, _scaled_splits(k, mnk0[2], s0))
    if d0 == 0:
        return plain, {}
    evidence = {}
    for d, mnk, cfg, splits, t in rows:  # nearest first: each configuration's nearest split and unsplit evidence
        key = (cfg.name, splits > 1)
        if key not in evidence and (d <= reach or cfg == cfg0):
            evidence[key] = (mnk, cfg, splits, t)
    predicted, kind = {}, {}
    for mnk, cfg, splits, t in evidence.values():
        s = _scaled_splits(k, mnk[2], splits)
        options = {s} | ({x for x in (s - 1, s + 1) if 2 <= x <= SWEEP_SPLITS[-1]} if splits > 1 else set())
        base = busiest_sm_work(cfg, *mnk, splits, sms)
        for x in sorted(options):
            c, same = Choice(cfg, x), (x > 1) == (splits > 1)
            if c not in predicted or (same and not kind[c]):  # evidence of the same kind (split or not) wins
                predicted[c], kind[c] = t * busiest_sm_work(cfg, m, n, k, x, sms) / base, same
    # the nearest winner's tiles at their best predicted split factor: its own split factor, rescaled to this K, is
    # a model output too, so the prediction alone decides between split factors; another configuration (tiles
    # differ in speed per multiply-add, which the model does not count) must be predicted ``margin`` faster
    mine = min((c for c in predicted if c.config == cfg0), key=predicted.get, default=plain)
    best = min(predicted, key=predicted.get)
    if best.config != cfg0 and predicted[best] < predicted[mine] * (1.0 - margin):
        return best, predicted
    return mine, predicted


def choose(m: int, n: int, k: int, device: dict | None = None, entry: dict | None = None,
           winners: dict | None = None, *, waves: bool | None = None, times: dict | None = None,
           float4_only: bool = False) -> Choice:
    """The register_blocked configuration (and split-K factor) for an M x N x K product on this device.

    First the shape sweep of this device (``winners``, by default :func:`shape_table`'s unless ``entry`` is passed): the measured winner of the nearest
    measured shape; with ``waves`` (default: :func:`options`' waves == "all") checked by :func:`wave_choice` against
    the other measured configurations (``times``: the winners' medians, by default :func:`shape_times`' when the winners
    are the table's; without times no check). ``float4_only``: only shapes the float4 kernel was measured on (for
    the padded route, which runs it), unless there are none.
    Else, with a tuned entry (:func:`tuned_entry`): the measured winner if this exact shape was
    tuned, else the least predicted time = waves x time per wave, where a wave is ``blocks_per_sm x SMs`` tiles
    (x splits) and a tile's time comes from the configuration's measured large-size rate. Without either: the
    default, or the small-tile configuration when the default's tiles leave SMs idle.
    """
    if device is None:
        from ..gpu import runtime

        device = runtime.device_info()
    if waves is None:
        waves = _OPTIONS["waves"] == "all"
    if winners is None:  # an explicit tuned entry is asked about on its own (tests, table migrations)
        winners = {} if entry is not None else shape_table().get(device["name"], {})
        if times is None and entry is None:
            times = shape_times().get(device["name"], {})
    if float4_only:
        winners = {s: w for s, w in winners.items() if _float4_shape(s)} or winners
    if winners:
        got = None
        if waves and times:
            got = wave_choice(m, n, k, winners, times, int(device["sm_count"]))
            got = got[0] if got else None
        if got is None:
            got = nearest_measured(m, n, k, winners)
        if got is not None:
            return got
    if entry is None:
        entry = tuned_entry(device)
    sms = int(device["sm_count"])
    known = {c.name: c for c in K.CANDIDATES}
    if entry:
        tuned = entry.get("shapes", {}).get(f"{m}x{n}x{k}", {})
        if tuned.get("winner") in known:
            return Choice(known[tuned["winner"]], int(tuned.get("splits", 1)))
        best = None
        for c in entry.get("configs", []):
            cfg, rate, occ = known.get(c.get("name")), c.get("rate_gflops"), c.get("blocks_per_sm")
            if cfg is None or not rate or not occ:
                continue
            slots = occ * sms
            for s in _split_options(cfg, m, n, k, slots):
                waves = math.ceil(_tiles(cfg, m, n) * s / slots)
                t = waves * (2.0 * cfg.bm * cfg.bn * math.ceil(k / s)) / (rate * 1e9 / slots)
                if best is None or t < best[0]:
                    best = (t, Choice(cfg, s))
        if best is not None:
            return best[1]
    if _tiles(K.DEFAULT, m, n) < sms:
        return Choice(K.SMALL)
    return Choice(K.DEFAULT)


# ---------------------------------------------------------------- N or K unaligned: scalar loads or padded copies

ROUTES = ("auto", "direct", "pad")  # options(route=...): the decision below, always the loads as given, always padded
WAVES = ("unaligned", "all", "off")  # options(waves=...): where wave_choice checks the nearest winner
# Default "direct": on the H200 (docs/notes/matmul.md, unaligned shapes) the padded route never beat the
# scalar-load kernel with the wave check, whose tiles, not its loads, were what the unaligned shapes had lost; "auto"
# (the copy-share model below) stays for other GPUs and for sweeps
_OPTIONS = {"route": "direct", "waves": "unaligned"}
# options(gemv=...): how the matrix-vector kernels add split k ranges (GEMV_EPILOGUES): "ticket" (default: one launch,
# partials in a kept per-stream workspace added by the last block to arrive, deterministic) or "atomic" (a memset of
# C, then atomicAdd: two launches). Kept apart from _OPTIONS, the tile routes' record (describe)
_GEMV = {"epilogue": "ticket"}
# route="auto" pads when the copies' ideal DRAM time is at most this share of the product's ideal FP32 time (an
# assumption of the model, not a measurement: on the H200 the padded multiply ran no faster than the scalar one)
PAD_MAX_COPY_SHARE = 0.10


GEMV_EPILOGUES = K.GEMV_EPILOGUES  # options(gemv=...)


@contextmanager
def options(route: str | None = None, waves: str | None = None, gemv: str | None = None):
    """Process-wide choices of :func:`matmul` for the block (experiments, probes): ``route`` "auto" (the model of
    :func:`pad_decision`), "direct" (N, K as given: scalar loads when unaligned) or "pad" (padded copies whenever N or
    K is unaligned); ``waves``: where :func:`wave_choice` checks the nearest shape's winner: "unaligned" (the scalar
    and padded routes), "all" or "off" (the winner as is, the chooser before the wave model); ``gemv``: how the
    matrix-vector kernels add split k ranges, "ticket" or "atomic" (:func:`gemv_launch`)."""
    if route is not None and route not in ROUTES:
        raise UsageError(f"matmul: route {route!r}; expected one of {', '.join(ROUTES)}")
    if waves is not None and waves not in WAVES:
        raise UsageError(f"matmul: waves {waves!r}; expected one of {', '.join(WAVES)}")
    if gemv is not None and gemv not in GEMV_EPILOGUES:
        raise UsageError(f"matmul: gemv {gemv!r}; expected one of {', '.join(GEMV_EPILOGUES)}")
    before, gemv_before = dict(_OPTIONS), dict(_GEMV)
    if route is not None:
        _OPTIONS["route"] = route
    if waves is not None:
        _OPTIONS["waves"] = waves
    if gemv is not None:
        _GEMV["epilogue"] = gemv
    try:
        yield dict(_OPTIONS)
    finally:
        _OPTIONS.update(before)
        _GEMV.update(gemv_before)


@dataclass(frozen=True)
class PadGeometry:
    """Padded copies for M x N x K: A (M x K) into pitch ``lda``, B (K x N) into pitch ``ldb`` (multiples of 4
    floats, extra columns zero), each copied only when its pitch grows or it is not 16-byte aligned."""

    m: int
    n: int
    k: int
    lda: int
    ldb: int
    copy_a: bool
    copy_b: bool

    @property
    def needed(self) -> bool:
        return self.copy_a or self.copy_b

    @property
    def copy_bytes(self) -> int:
        """DRAM bytes the copies move: each copied operand read once and written at its padded pitch."""
        return 4 * ((self.m * (self.k + self.lda) if self.copy_a else 0)
                    + (self.k * (self.n + self.ldb) if self.copy_b else 0))

    @property
    def rows(self) -> tuple[int, int]:
        """pad_pitch4's (rows of A, rows of B): 0 for an operand read in place."""
        return (self.m if self.copy_a else 0), (self.k if self.copy_b else 0)

    @property
    def blocks(self) -> int:
        ra, rb = self.rows
        return K.pad_blocks(ra, self.k) + K.pad_blocks(rb, self.n)


def pad_geometry(m: int, n: int, k: int, a_aligned: bool = True, b_aligned: bool = True) -> PadGeometry:
    lda, ldb = K.pad_pitch(k), K.pad_pitch(n)
    return PadGeometry(m, n, k, lda, ldb, lda != k or not a_aligned, ldb != n or not b_aligned)


@dataclass(frozen=True)
class PadDecision:
    """Whether ``route="auto"`` pads, and the model's numbers: copy bytes over theoretical DRAM bandwidth against
    2 M N K over the FP32 peak (both from device attributes)."""

    pad: bool
    reason: str
    copy_bytes: int = 0
    flops: float = 0.0
    copy_s: float | None = None
    gemm_s: float | None = None

    @property
    def share(self) -> float | None:
        return self.copy_s / self.gemm_s if self.copy_s is not None and self.gemm_s else None


def _device_peaks(device: dict) -> tuple[float | None, float | None]:
    """(FP32 peak in GFLOP/s, theoretical DRAM GB/s) from device attributes (model.peaks, as the suite's ceilings);
    None where an attribute or the lane count is missing."""
    from ..model.peaks import fp32_peak_gflops, theoretical_dram_gbps

    try:
        return fp32_peak_gflops(device), theoretical_dram_gbps(device)
    except (KeyError, TypeError):
        return None, None


def pad_decision(m: int, n: int, k: int, device: dict, aligned: bool = True) -> PadDecision:
    geom = pad_geometry(m, n, k, aligned, aligned)
    flops = 2.0 * m * n * k
    if not geom.needed:
        return PadDecision(False, "float4 loads without copies", 0, flops)
    peak, dram = _device_peaks(device)
    if not peak or not dram:
        return PadDecision(False, "no FP32 peak or DRAM bandwidth for this device", geom.copy_bytes, flops)
    copy_s, gemm_s = geom.copy_bytes / (dram * 1e9), flops / (peak * 1e9)
    pad = copy_s <= PAD_MAX_COPY_SHARE * gemm_s
    why = (f"copies {copy_s / gemm_s:.3f} of the ideal product time "
           f"({'<=' if pad else '>'} {PAD_MAX_COPY_SHARE})")
    return PadDecision(pad, why, geom.copy_bytes, flops, copy_s, gemm_s)


@dataclass(frozen=True)
class Route:
    """How ``variant="auto"`` runs M x N x K: ``kind`` "gemv", "float4" (aligned), "scalar" (vec 1 loads) or "pad"
    (copies, then the float4 kernel with padded pitches); the tile choice, the pad geometry and the decision."""

    kind: str
    choice: Choice | None = None
    geometry: PadGeometry | None = None
    decision: PadDecision | None = None

    def as_dict(self) -> dict:
        """A JSON-ready record of the decision (probes and experiments write it next to their timings)."""
        out = dict(kind=self.kind)
        if self.choice is not None:
            out.update(config=self.choice.config.name, splits=self.choice.splits)
        if self.geometry is not None:
            out["pad"] = dict(asdict(self.geometry), copy_bytes=self.geometry.copy_bytes)
        if self.decision is not None:
            out["decision"] = dict(asdict(self.decision), share=self.decision.share)
        return out


def route(m: int, n: int, k: int, aligned: bool = True, device: dict | None = None, mode: str | None = None,
          waves: str | None = None) -> Route:
    """The route of ``variant="auto"`` (``mode``/``waves``: default :func:`options`' settings). ``aligned``: A, B and
    C all 16-byte aligned (otherwise the padded route copies both operands)."""
    mode = _OPTIONS["route"] if mode is None else mode
    waves = _OPTIONS["waves"] if waves is None else waves
    if mode not in ROUTES or waves not in WAVES:
        raise UsageError(f"matmul: route {mode!r}, waves {waves!r}; expected one of {', '.join(ROUTES)} and "
                         f"one of {', '.join(WAVES)}")
    if is_gemv(m, n):
        return Route("gemv")
    if device is None:
        from ..gpu import runtime

        device = runtime.device_info()
    if aligned and n % 4 == 0 and k % 4 == 0:
        return Route("float4", choose(m, n, k, device, waves=waves == "all"))
    decision = pad_decision(m, n, k, device, aligned)
    unaligned_waves = waves != "off"
    if mode == "pad" or (mode == "auto" and decision.pad):
        return Route("pad", choose(m, n, k, device, waves=unaligned_waves, float4_only=True),
                     pad_geometry(m, n, k, aligned, aligned), decision)
    return Route("scalar", choose(m, n, k, device, waves=unaligned_waves), None, decision)


def describe(m: int, n: int, k: int, aligned: bool = True, device: dict | None = None) -> dict:
    """:func:`route` as a record, with the options in force (what a probe writes next to its timings)."""
    return dict(route(m, n, k, aligned, device).as_dict(), options=dict(_OPTIONS))


SCRATCH_KEEP = 4  # padded operand sets kept (per device, stream and shape); older ones go back to CuPy's pool
_SCRATCH: OrderedDict = OrderedDict()


def pad_scratch(geom: PadGeometry):
    """(A copy or None, B copy or None) for ``geom`` on the current device and stream, kept between calls: calls on
    one stream are ordered, so one set serves them all; another stream gets its own set."""
    from ..gpu import runtime

    _, _, current, device = runtime._launch_api()
    key = (device(), current().ptr, geom)
    got = _SCRATCH.get(key)
    if got is None:
        import cupy

        got = (cupy.empty((geom.m, geom.lda), cupy.float32) if geom.copy_a else None,
               cupy.empty((geom.k, geom.ldb), cupy.float32) if geom.copy_b else None)
        _SCRATCH[key] = got
        while len(_SCRATCH) > SCRATCH_KEEP:
            _SCRATCH.popitem(last=False)  # CuPy's pool reuses a block only on the stream it was allocated on
    else:
        _SCRATCH.move_to_end(key)
    return got


def release_scratch() -> None:
    """Drop the kept padded copies and GEMV workspaces (their memory returns to CuPy's pool)."""
    _SCRATCH.clear()
    W._workspace.cache_clear()


class _PadRun:
    """The padded route's per-call work: pad_pitch4 into the kept scratch, then the GEMM launch on the copies."""

    __slots__ = ("geom", "copy")

    def __init__(self, geom: PadGeometry):
        from ..gpu import runtime

        self.geom = geom
        ra, rb = geom.rows
        self.copy = runtime.Launcher(runtime.get_kernel(K.PAD_COPY), (geom.blocks,), K.PAD_BLOCK, 4,
                                     ra, geom.k, rb, geom.n)

    def __call__(self, gemm, out, a, b) -> None:
        sa, sb = pad_scratch(self.geom)
        sa, sb = (a if sa is None else sa), (b if sb is None else sb)
        self.copy(sa, a, sb, b)  # an operand read in place has 0 rows: its pointers are never dereferenced
        gemm(out, sa, sb)


# ---------------------------------------------------------------- plans (what the timer runs)

@dataclass
class Plan:
    """Launches for one variant on fixed operands: ``run()`` enqueues everything the variant does
    (for transposed_b: transpose + multiply); ``parts`` names the pieces (timed separately)."""

    variant: str
    run: Callable[[], None]
    parts: dict[str, Callable[[], None]] = field(default_factory=dict)
    config: K.RBConfig | None = None
    vec: int | None = None
    splits: int = 1
    keep: tuple = ()  # scratch and prepared operands the launches use
    epilogue: str | None = None  # gemv with split k ranges: how they are added ("ticket" or "atomic")


def _grid2d(variant: str, nx: int, ny: int, block: tuple[int, int], per_x: int = 1) -> tuple[int, int]:
    gx = max(1, math.ceil(nx / (block[0] * per_x)))
    gy = max(1, math.ceil(ny / block[1]))
    if gy > MAX_GRID_Y:
        raise UsageError(f"matmul: {variant} launches a 2-D grid with {gy} rows of blocks (limit {MAX_GRID_Y}); "
                         "use variant='auto'")
    return gx, gy


def _aligned16(*arrays) -> bool:
    return all(x.data.ptr % 16 == 0 for x in arrays)


def column_major(b):
    """B (K x N, row-major) stored column-major: an N x K row-major array (the untimed layout change)."""
    import cupy

    return cupy.ascontiguousarray(b.T)


def register_blocked_plan(a, b, out, config: K.RBConfig | None = None, vec: int | None = None,
                          splits: int | None = None, pad: bool = False) -> Plan:
    """``pad``: copy A and/or B into padded scratch first (part "pad", in ``run``) and read them by float4 (any
    N, K); the scratch is the plan's own."""
    from ..gpu import runtime

    m, k = a.shape
    n = b.shape[1]
    if config is None:
        unaligned = pad or not (n % 4 == 0 and k % 4 == 0 and _aligned16(a, b, out))  # as route() decides
        waves = _OPTIONS["waves"] == "all" or (_OPTIONS["waves"] == "unaligned" and unaligned)
        choice = choose(m, n, k, waves=waves, float4_only=pad)
        config, splits = choice.config, (choice.splits if splits is None else splits)
    cfg = config
    geom = pad_geometry(m, n, k, _aligned16(a), _aligned16(b)) if pad else None
    if geom is not None and not geom.needed:
        geom = None  # nothing to pad: the plain float4 kernel
    fast = geom is not None or (n % 4 == 0 and k % 4 == 0 and _aligned16(a, b, out))
    vec = vec or (4 if fast else 1)
    if vec == 4 and not fast:
        raise UsageError("register_blocked vec=4 needs N % 4 == 0, K % 4 == 0 and 16-byte aligned arrays")
    chunk, splits = split_chunk(k, cfg.bk, splits or 1)
    spec = cfg.spec(vec, split=splits > 1, pad=geom is not None)
    kernel = runtime.get_kernel(spec)
    _allow_smem(kernel, spec, cfg.smem_bytes)
    grid, threads, smem = (_tiles(cfg, m, n), splits), cfg.threads, cfg.smem_bytes
    pa, pb, keep, parts = a, b, (), {}
    if geom is not None:
        import cupy

        sa = cupy.empty((m, geom.lda), cupy.float32) if geom.copy_a else None
        sb = cupy.empty((k, geom.ldb), cupy.float32) if geom.copy_b else None
        pa, pb, keep = (a if sa is None else sa), (b if sb is None else sb), (sa, sb)
        ckernel, (ra, rb) = runtime.get_kernel(K.PAD_COPY), geom.rows

        def pad_copy():  # an operand read in place has 0 rows: its pointers are never dereferenced
            runtime.launch(ckernel, (geom.blocks,), K.PAD_BLOCK, pa, a, pb, b, ra, k, rb, n)

        parts["pad"] = pad_copy

    def launch():  # on CuPy's current stream, like everything else around it
        runtime.launch(kernel, grid, threads, out, pa, pb, m, n, k, chunk, shmem=smem)

    def zero_then_launch():  # split-K partial tiles are added into C
        import cupy

        cupy.cuda.runtime.memsetAsync(out.data.ptr, 0, out.nbytes, cupy.cuda.get_current_stream().ptr)
        launch()

    multiply = zero_then_launch if splits > 1 else launch
    if geom is None:
        return Plan("register_blocked", multiply, config=cfg, vec=vec, splits=splits)

    def both():
        parts["pad"]()
        multiply()

    parts["multiply"] = multiply
    return Plan("register_blocked", both, parts=parts, config=cfg, vec=vec, splits=splits, keep=keep)


GEMV_MIN_DEPTH = 64     # rows of B per split at least: shorter slices spend more on the epilogue than they save
GEMV_THREADS = 256      # gemv_cols blocks are 32 x 8, gemv_rows 8 warps
# gemv_rows (N = 1) splits K when its 8-row blocks number fewer than this many per SM (1024 x 1 x 8192 has 128 blocks:
# most SMs then hold one block of 8 warps, too few loads in flight), into k ranges of at least GEMV_ROWS_MIN_DEPTH
GEMV_ROWS_SPLIT_BELOW = 2
GEMV_ROWS_MIN_DEPTH = 1024


def gemv_splits(n: int, k: int, vec: int, slots: int) -> tuple[int, int]:
    """(k_chunk, splits) for ``gemv_cols``: as many k ranges as let the ceil(N / (32 vec)) column blocks fill the
    ``slots`` (SMs x resident blocks of the kernel) once; more would start a second, mostly empty wave."""
    col_blocks = math.ceil(n / (32 * vec))
    want = max(1, min(slots // col_blocks, k // GEMV_MIN_DEPTH))
    return split_chunk(k, 8, want)


@dataclass(frozen=True)
class GemvLaunch:
    """One launch of the memory-bound path; ``scalars`` follow the ``c, a, b, work, ticket`` pointers. ``splits > 1``:
    the k ranges are added by ``epilogue`` (None: one range), "atomic" (C zeroed first: :attr:`zero_first`) or
    "ticket" (a workspace of :attr:`workspace` partials and tickets); ``outputs``: M x N."""

    spec: KernelSpec
    grid: tuple
    block: tuple
    scalars: tuple
    vec: int
    splits: int = 1
    epilogue: str | None = None
    outputs: int = 0

    @property
    def zero_first(self) -> bool:
        """A memset of C before the kernel (the atomic epilogue adds into C)."""
        return self.epilogue == "atomic"

    @property
    def workspace(self) -> tuple[int, int] | None:
        """(partial floats, tickets) of the ticket epilogue: each split's partial of each output, one ticket per block
        of outputs (grid x); None for the other launches."""
        return (self.splits * self.outputs, self.grid[0]) if self.epilogue == "ticket" else None


def _gemv(spec_of, grid: tuple, block: tuple, scalars: tuple, vec: int, splits: int, epilogue: str,
          outputs: int) -> GemvLaunch:
    """The launch, its kernel ``spec_of(split, epilogue)``; the epilogue is kept only when K is split."""
    split = splits > 1
    return GemvLaunch(spec_of(split, epilogue), grid, block, scalars, vec, splits, epilogue if split else None, outputs)


def gemv_launch(m: int, n: int, k: int, aligned: bool, sms: int, blocks_per_sm: int | None = None,
                epilogue: str | None = None) -> GemvLaunch:
    """N = 1 (``gemv_rows``: A times a column vector) or M <= 8 (``gemv_cols``: a few rows of A share each read
    of B). ``aligned``: A, B and C are 16-byte aligned. ``blocks_per_sm``: resident blocks per SM of the split kernel
    (None: the driver's occupancy answer for it; 2 for 8 rows, whose registers allow no more). ``epilogue``: how split
    k ranges are added, "ticket" or "atomic" (None: :func:`options`' gemv)."""
    epilogue = _GEMV["epilogue"] if epilogue is None else epilogue
    if n == 1:
        vec = 4 if k % 4 == 0 and aligned else 1
        row_blocks = math.ceil(m / 8)
        splits, chunk = 1, k
        if row_blocks < GEMV_ROWS_SPLIT_BELOW * sms:  # too few rows to keep every SM reading: split K
            if blocks_per_sm is None:
                from ..gpu import runtime

                blocks_per_sm = runtime.max_active_blocks(K.gemv_rows(vec, True, epilogue), GEMV_THREADS)
            want = min(sms * max(1, blocks_per_sm) // row_blocks, k // GEMV_ROWS_MIN_DEPTH)
            chunk, splits = split_chunk(k, 32 * vec, want)
        return _gemv(lambda s, e: K.gemv_rows(vec, s, e), (row_blocks, splits), (256, 1), (m, k, chunk), vec, splits,
                     epilogue, m)
    if m > K.SKINNY_ROWS[-1]:
        raise UsageError(f"matmul: the gemv path needs M <= {K.SKINNY_ROWS[-1]} or N == 1; got M={m}, N={n}")
    vec, rows = (4 if n % 4 == 0 and aligned else 1), K.skinny_rows(m)
    if blocks_per_sm is None:
        from ..gpu import runtime

        blocks_per_sm = runtime.max_active_blocks(K.gemv_cols(vec, True, rows, epilogue), GEMV_THREADS)
    chunk, splits = gemv_splits(n, k, vec, sms * max(1, blocks_per_sm))
    return _gemv(lambda s, e: K.gemv_cols(vec, s, rows, e), (math.ceil(n / (32 * vec)), splits), (32, 8),
                 (m, n, k, chunk), vec, splits, epilogue, m * n)


def is_gemv(m: int, n: int) -> bool:
    """Shapes the auto path sends to the memory-bound GEMV kernels instead of the tiles."""
    return n == 1 or m <= K.SKINNY_ROWS[-1]


# ---------------------------------------------------------------- the ticket epilogue's workspace

def gemv_workspace(partials: int, tickets: int):
    """(float32 partials, zeroed uint32 tickets) for the ticket epilogue on CuPy's current stream and device
    (:func:`._workspace.ticket_workspace`). Size: splits x M x N partials, and the splits never make more blocks than
    the GPU holds at once, so at most SMs x resident blocks x 32 VEC x M floats (about 1 MiB on an H100 for 8 rows)."""
    return W.ticket_workspace(partials, tickets)


class GemvRun:
    """A :class:`GemvLaunch` prepared once (:class:`runtime.Launcher`); ``run(out, a, b)`` on CuPy's current stream
    also zeroes C first (atomic epilogue) or passes this stream's workspace (ticket epilogue)."""

    __slots__ = ("launch", "zero", "workspace")

    def __init__(self, g: GemvLaunch):
        from ..gpu import runtime

        self.zero, self.workspace = g.zero_first, g.workspace
        if self.workspace is None:  # work and ticket are never read: null pointers, prepared with the scalars
            self.launch = runtime.Launcher(g.spec, g.grid, g.block, 3, np.uint64(0), np.uint64(0), *g.scalars)
        else:
            self.launch = runtime.Launcher(g.spec, g.grid, g.block, 5, *g.scalars)

    def __call__(self, out, a, b) -> None:
        if self.workspace is not None:
            self.launch(out, a, b, *gemv_workspace(*self.workspace))
            return
        if self.zero:  # split k ranges are added into C
            from ._checks import cupy_module

            cupy = cupy_module()
            cupy.cuda.runtime.memsetAsync(out.data.ptr, 0, out.nbytes, cupy.cuda.get_current_stream().ptr)
        self.launch(out, a, b)


def gemv_plan(a, b, out, sms: int | None = None, epilogue: str | None = None) -> Plan:
    """The plan of :func:`gemv_launch` for these operands (``epilogue``: as there)."""
    from ..gpu import runtime

    m, k = a.shape
    n = b.shape[1]
    if sms is None:
        sms = int(runtime.device_info()["sm_count"])
    g = gemv_launch(m, n, k, _aligned16(a, b) if n == 1 else _aligned16(a, b, out), sms, epilogue=epilogue)
    run = GemvRun(g)
    return Plan("gemv", lambda: run(out, a, b), vec=g.vec, splits=g.splits, epilogue=g.epilogue)


_SMEM_SET: set = set()


def _allow_smem(kernel, spec: KernelSpec, nbytes: int) -> None:
    from ..gpu import runtime

    if nbytes > 48 * 1024 and spec not in _SMEM_SET:
        runtime.set_max_dynamic_shared(kernel, nbytes)
        _SMEM_SET.add(spec)


def plan(variant: str, a, b, out, config: K.RBConfig | None = None) -> Plan:
    """A plan for ``out = a @ b`` (``op == "aat"``: ``out = a @ a.T``, ``b`` ignored).

    Operands must already be validated (float32, C-contiguous, matching shapes, M, N, K >= 1).
    Layout changes that a variant needs (B column-major) are done here, untimed; the transpose of
    ``transposed_b`` is part of ``run``.
    """
    import cupy

    from ..gpu import runtime

    if variant == "auto":
        if b is not None and is_gemv(a.shape[0], b.shape[1]):
            return gemv_plan(a, b, out)  # a matrix-vector (or few-row) product: memory-bound, no tile to fill
        r = route(a.shape[0], b.shape[1], a.shape[1], _aligned16(a, b, out))
        return register_blocked_plan(a, b, out, r.choice.config, splits=r.choice.splits, pad=r.kind == "pad")
    v = VARIANTS.get(variant)
    if v is None:
        raise UsageError(f"matmul: unknown variant {variant!r}; expected one of {', '.join(MATMUL_VARIANTS + AAT_VARIANTS)}")
    if v.name == "register_blocked":
        return register_blocked_plan(a, b, out, config)
    m, k = a.shape
    n = m if v.op == "aat" else b.shape[1]
    if v.k32:
        if k != K.TILE_DIM or m % K.TILE_DIM or n % K.TILE_DIM:
            raise UsageError(f"matmul: {variant} (Best Practices 9.2.3, w = 32) needs K == 32 and M, N multiples "
                             f"of 32; got M={m}, N={n}, K={k}")
    kernel = runtime.get_kernel(v.spec)
    bx, by = v.block
    if v.op == "aat":
        grid = _grid2d(variant, m, m, v.block)
        return Plan(variant, lambda: runtime.launch(kernel, grid, (bx, by), out, a, m))
    if v.k32:
        grid = _grid2d(variant, n, m, v.block)
        return Plan(variant, lambda: runtime.launch(kernel, grid, (bx, by), out, a, b, n))
    grid = _grid2d(variant, n, m, v.block, per_x=v.coarse)
    if v.layout == "row":
        return Plan(variant, lambda: runtime.launch(kernel, grid, (bx, by), out, a, b, m, n, k))
    if v.layout == "col":
        bcm = column_major(b)
        return Plan(variant, lambda: runtime.launch(kernel, grid, (bx, by), out, a, bcm, m, n, k), keep=(bcm,))
    # transposed_b: Bt = B^T by the seed's transpose, then the column-major multiply on Bt
    bt = cupy.empty((n, k), dtype=cupy.float32)
    tkernel = runtime.get_kernel(K.TRANSPOSE)
    tgrid = _grid2d(variant, k, n, (32, 8))

    def transpose():
        runtime.launch(tkernel, tgrid, (32, 8), bt, b, k, n)

    def multiply():
        runtime.launch(kernel, grid, (bx, by), out, a, bt, m, n, k)

    def both():
        transpose()
        multiply()

    return Plan(variant, both, parts=dict(transpose=transpose, multiply=multiply), keep=(bt,))


# ---------------------------------------------------------------- the public function

def _overlaps(x, y) -> bool:
    x0, y0 = x.data.ptr, y.data.ptr
    return x0 < y0 + y.nbytes and y0 < x0 + x.nbytes


def validate(a, b, out=None, variant: str = "auto"):
    """Check the arguments of :func:`matmul`; return (a, b, out-or-None) as CuPy arrays.

    InputTypeError (a TypeError): not a GPU array, dtype not float32. UsageError (a ValueError): unknown
    variant, not 2-D, inner dimensions differ, not C-contiguous, out of the wrong shape or overlapping an input.
    """
    from ._checks import as_device_array, check_out

    if not isinstance(variant, str) or variant not in MATMUL_VARIANTS:
        raise UsageError(f"matmul: unknown variant {variant!r}; expected one of {', '.join(MATMUL_VARIANTS)}")
    a = as_device_array(a, "a", _FLOAT32, ndim=2)
    b = as_device_array(b, "b", _FLOAT32, ndim=2)
    if a.shape[1] != b.shape[0]:
        raise UsageError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not align "
                         f"(a.shape[1] = {a.shape[1]} != b.shape[0] = {b.shape[0]})")
    if out is not None:
        out = check_out(out, (a.shape[0], b.shape[1]), np.float32)
        if out.size and (_overlaps(out, a) or _overlaps(out, b)):
            raise UsageError("out: overlaps an input; pass a separate output array")
    return a, b, out


_FLOAT32 = (np.float32,)


@lru_cache(maxsize=4096)
def _auto_launch(m: int, n: int, k: int, aligned: bool, device_name: str, mode: str = "auto",
                 waves: str = "unaligned", gemv: str = "ticket"):
    """(prepared launch of ``out, a, b``, whether C is zeroed first, padded-route runner or None) for variant "auto",
    once per shape, alignment class, device and :func:`options`; each call then only writes its pointers. N = 1 or
    M <= 8: the GEMV kernels (:class:`GemvRun`, which zeroes C itself where its epilogue needs it); otherwise
    :func:`route`'s choice with the steps of :func:`register_blocked_plan` (vector width, K chunk, kernel,
    shared-memory opt-in)."""
    from ..gpu import runtime

    if is_gemv(m, n):  # memory-bound: a warp per row of A (N = 1), or columns of B shared by M <= 8 rows
        g = gemv_launch(m, n, k, aligned, int(runtime.device_info()["sm_count"]), epilogue=gemv)
        return GemvRun(g), False, None
    r = route(m, n, k, aligned, mode=mode, waves=waves)
    cfg = r.choice.config
    chunk, splits = split_chunk(k, cfg.bk, r.choice.splits)
    spec = cfg.spec(1 if r.kind == "scalar" else 4, split=splits > 1, pad=r.kind == "pad")
    kernel = runtime.get_kernel(spec)
    _allow_smem(kernel, spec, cfg.smem_bytes)
    launch = runtime.Launcher(kernel, (_tiles(cfg, m, n), splits), cfg.threads, 3, m, n, k, chunk,
                              shmem=cfg.smem_bytes)
    return launch, splits > 1, (_PadRun(r.geometry) if r.kind == "pad" else None)


@on_arrays_device
def matmul(a, b, out=None, variant: str = "auto"):
    """``a @ b`` for float32 GPU arrays (M x K times K x N, row-major), into ``out`` if given.

    ``variant``: "auto" (the tuned register-blocked kernel) or a ladder name (``AB_VARIANTS``).
    Returns the (M, N) CuPy array. Runs on CuPy's current stream, so it is ordered like any CuPy
    operation around it.

    NaN and Inf: each output is an IEEE sum of products, as with cuBLAS: a NaN in row i of ``a`` or
    column j of ``b`` makes the outputs of that row / column NaN; Inf times a non-zero gives a signed
    Inf, Inf times 0 and Inf - Inf give NaN (no zero of the operands is skipped).
    """
    from ._checks import cupy_module

    a, b, out = validate(a, b, out, variant)
    m, k = a.shape
    n = b.shape[1]
    if out is None:
        out = cupy_module().empty((m, n), dtype=np.float32)
    if m == 0 or n == 0:
        return out
    if k == 0:
        out.fill(0)
        return out
    if variant == "auto":  # prepared once per shape; the call binds this call's arrays
        from ..gpu import runtime

        aligned = (a.data.ptr | b.data.ptr | out.data.ptr) % 16 == 0
        launch, zero, pad = _auto_launch(m, n, k, aligned, runtime.device_info()["name"], _OPTIONS["route"],
                                         _OPTIONS["waves"], _GEMV["epilogue"])
        if zero:  # split-K partial tiles are added into C
            cupy = cupy_module()
            cupy.cuda.runtime.memsetAsync(out.data.ptr, 0, out.nbytes, cupy.cuda.get_current_stream().ptr)
        if pad is None:
            launch(out, a, b)
        else:  # N or K unaligned: padded copies of A and/or B, then the float4 kernel on them
            pad(launch, out, a, b)
    else:
        plan(variant, a, b, out).run()
    return out
