"""``gpumemlab.matmul``: C = A B in FP32 on CuPy arrays, by any rung of the seeds' ladder.

The variants are data (``kernels.matmul.VARIANTS``): name, kernel, launch geometry, the layout of B
it reads and its reuse factors for the OP/B model. The experiments time :func:`plan` objects (the kernel
launches alone, operands already in the variant's layout); :func:`matmul` is validation + plan + run.

Edge cases follow NumPy: M == 0 or N == 0 gives an empty (M, N) result, K == 0 gives zeros.
``variant="auto"`` runs ``register_blocked`` with the configuration tuned for this device
(``kernels/tuned/matmul.json``, written by ``gpumemlab tune matmul``; an entry of the same chip
under another name is borrowed) or a default one. When N or K is not a multiple of 4 (or an operand is not
16-byte aligned), :func:`route` takes the scalar-load kernel, its tiles checked by :func:`wave_choice`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
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
           winners: dict | None = None, *, waves: bool = False, times: dict | None = None) -> Choice:
    """The register_blocked configuration (and split-K factor) for an M x N x K product on this device.

    First the shape sweep of this device (``winners``, by default :func:`shape_table`'s unless ``entry`` is passed): the measured winner of the nearest
    measured shape; with ``waves`` (:func:`route` asks for unaligned shapes) checked by :func:`wave_choice` against
    the other measured configurations (``times``: the winners' medians, by default :func:`shape_times`' when the winners
    are the table's; without times no check).
    Else, with a tuned entry (:func:`tuned_entry`): the measured winner if this exact shape was
    tuned, else the least predicted time = waves x time per wave, where a wave is ``blocks_per_sm x SMs`` tiles
    (x splits) and a tile's time comes from the configuration's measured large-size rate. Without either: the
    default, or the small-tile configuration when the default's tiles leave SMs idle.
    """
    if device is None:
        from ..gpu import runtime

        device = runtime.device_info()
    if winners is None:  # an explicit tuned entry is asked about on its own (tests, table migrations)
        winners = {} if entry is not None else shape_table().get(device["name"], {})
        if times is None and entry is None:
            times = shape_times().get(device["name"], {})
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


# ---------------------------------------------------------------- N or K unaligned: scalar loads

# An unaligned N or K runs the scalar-load kernel with the wave check: on the H200 padded copies read by the float4
# kernel never beat it, the unaligned shapes had lost on their tiles, not their loads (docs/notes/matmul.md,
# unaligned shapes)

@dataclass(frozen=True)
class Route:
    """How ``variant="auto"`` runs M x N x K: ``kind`` "gemv", "float4" (aligned) or "scalar" (vec 1 loads), and the
    tile choice."""

    kind: str
    choice: Choice | None = None


def route(m: int, n: int, k: int, aligned: bool = True, device: dict | None = None) -> Route:
    """The route of ``variant="auto"``. ``aligned``: A, B and C all 16-byte aligned."""
    if is_gemv(m, n):
        return Route("gemv")
    if device is None:
        from ..gpu import runtime

        device = runtime.device_info()
    if aligned and n % 4 == 0 and k % 4 == 0:
        return Route("float4", choose(m, n, k, device))
    return Route("scalar", choose(m, n, k, device, waves=True))


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
                          splits: int | None = None) -> Plan:
    """The register-blocked kernel on these operands: ``config`` (None: :func:`route`'s choice), ``vec`` 4 (N, K
    multiples of 4, 16-byte aligned) or 1, ``splits`` split-K slices added into C (zeroed first)."""
    from ..gpu import runtime

    m, k = a.shape
    n = b.shape[1]
    fast = n % 4 == 0 and k % 4 == 0 and _aligned16(a, b, out)
    if config is None:
        choice = choose(m, n, k, waves=not fast)  # as route() decides
        config, splits = choice.config, (choice.splits if splits is None else splits)
    cfg = config
    vec = vec or (4 if fast else 1)
    if vec == 4 and not fast:
        raise UsageError("register_blocked vec=4 needs N % 4 == 0, K % 4 == 0 and 16-byte aligned arrays")
    chunk, splits = split_chunk(k, cfg.bk, splits or 1)
    spec = cfg.spec(vec, split=splits > 1)
    kernel = runtime.get_kernel(spec)
    _allow_smem(kernel, spec, cfg.smem_bytes)
    grid, threads, smem = (_tiles(cfg, m, n), splits), cfg.threads, cfg.smem_bytes

    def launch():  # on CuPy's current stream, like everything else around it
        runtime.launch(kernel, grid, threads, out, a, b, m, n, k, chunk, shmem=smem)

    def zero_then_launch():  # split-K partial tiles are added into C
        import cupy

        cupy.cuda.runtime.memsetAsync(out.data.ptr, 0, out.nbytes, cupy.cuda.get_current_stream().ptr)
        launch()

    return Plan("register_blocked", zero_then_launch if splits > 1 else launch, config=cfg, vec=vec, splits=splits)


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
    the k ranges are added by the last block of each block of outputs from a workspace of :attr:`workspace` partials
    and tickets; ``outputs``: M x N."""

    spec: KernelSpec
    grid: tuple
    block: tuple
    scalars: tuple
    vec: int
    splits: int = 1
    outputs: int = 0

    @property
    def workspace(self) -> tuple[int, int] | None:
        """(partial floats, tickets) of a split launch: each split's partial of each output, one ticket per block of
        outputs (grid x); None for an unsplit one."""
        return (self.splits * self.outputs, self.grid[0]) if self.splits > 1 else None


def gemv_launch(m: int, n: int, k: int, aligned: bool, sms: int, blocks_per_sm: int | None = None) -> GemvLaunch:
    """N = 1 (``gemv_rows``: A times a column vector) or M <= 8 (``gemv_cols``: a few rows of A share each read
    of B). ``aligned``: A, B and C are 16-byte aligned. ``blocks_per_sm``: resident blocks per SM of the split kernel
    (None: the driver's occupancy answer for it; 2 for 8 rows, whose registers allow no more)."""
    if n == 1:
        vec = 4 if k % 4 == 0 and aligned else 1
        row_blocks = math.ceil(m / 8)
        splits, chunk = 1, k
        if row_blocks < GEMV_ROWS_SPLIT_BELOW * sms:  # too few rows to keep every SM reading: split K
            if blocks_per_sm is None:
                from ..gpu import runtime

                blocks_per_sm = runtime.max_active_blocks(K.gemv_rows(vec, True), GEMV_THREADS)
            want = min(sms * max(1, blocks_per_sm) // row_blocks, k // GEMV_ROWS_MIN_DEPTH)
            chunk, splits = split_chunk(k, 32 * vec, want)
        return GemvLaunch(K.gemv_rows(vec, splits > 1), (row_blocks, splits), (256, 1), (m, k, chunk), vec, splits, m)
    if m > K.SKINNY_ROWS[-1]:
        raise UsageError(f"matmul: the gemv path needs M <= {K.SKINNY_ROWS[-1]} or N == 1; got M={m}, N={n}")
    vec, rows = (4 if n % 4 == 0 and aligned else 1), K.skinny_rows(m)
    if blocks_per_sm is None:
        from ..gpu import runtime

        blocks_per_sm = runtime.max_active_blocks(K.gemv_cols(vec, True, rows), GEMV_THREADS)
    chunk, splits = gemv_splits(n, k, vec, sms * max(1, blocks_per_sm))
    return GemvLaunch(K.gemv_cols(vec, splits > 1, rows), (math.ceil(n / (32 * vec)), splits), (32, 8),
                      (m, n, k, chunk), vec, splits, m * n)


def is_gemv(m: int, n: int) -> bool:
    """Shapes the auto path sends to the memory-bound GEMV kernels instead of the tiles."""
    return n == 1 or m <= K.SKINNY_ROWS[-1]


# ---------------------------------------------------------------- the split epilogue's workspace

def gemv_workspace(partials: int, tickets: int):
    """(float32 partials, zeroed uint32 tickets) for a split GEMV on CuPy's current stream and device
    (:func:`._workspace.ticket_workspace`). Size: splits x M x N partials, and the splits never make more blocks than
    the GPU holds at once, so at most SMs x resident blocks x 32 VEC x M floats (about 1 MiB on an H100 for 8 rows)."""
    return W.ticket_workspace(partials, tickets)


class GemvRun:
    """A :class:`GemvLaunch` prepared once (:class:`runtime.Launcher`); ``run(out, a, b)`` on CuPy's current stream
    passes this stream's workspace to a split launch."""

    __slots__ = ("launch", "workspace")

    def __init__(self, g: GemvLaunch):
        from ..gpu import runtime

        self.workspace = g.workspace
        if self.workspace is None:  # work and ticket are never read: null pointers, prepared with the scalars
            self.launch = runtime.Launcher(g.spec, g.grid, g.block, 3, np.uint64(0), np.uint64(0), *g.scalars)
        else:
            self.launch = runtime.Launcher(g.spec, g.grid, g.block, 5, *g.scalars)

    def __call__(self, out, a, b) -> None:
        if self.workspace is None:
            self.launch(out, a, b)
        else:
            self.launch(out, a, b, *gemv_workspace(*self.workspace))


def gemv_plan(a, b, out, sms: int | None = None) -> Plan:
    """The plan of :func:`gemv_launch` for these operands."""
    from ..gpu import runtime

    m, k = a.shape
    n = b.shape[1]
    if sms is None:
        sms = int(runtime.device_info()["sm_count"])
    g = gemv_launch(m, n, k, _aligned16(a, b) if n == 1 else _aligned16(a, b, out), sms)
    run = GemvRun(g)
    return Plan("gemv", lambda: run(out, a, b), vec=g.vec, splits=g.splits)


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
        return register_blocked_plan(a, b, out, r.choice.config, splits=r.choice.splits)
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
def _auto_launch(m: int, n: int, k: int, aligned: bool, device_name: str):
    """(prepared launch of ``out, a, b``, whether C is zeroed first) for variant "auto", once per shape, alignment
    class and device; each call then only writes its pointers. N = 1 or M <= 8: the GEMV kernels (:class:`GemvRun`);
    otherwise :func:`route`'s choice with the steps of :func:`register_blocked_plan` (vector width, K chunk, kernel,
    shared-memory opt-in)."""
    from ..gpu import runtime

    if is_gemv(m, n):  # memory-bound: a warp per row of A (N = 1), or columns of B shared by M <= 8 rows
        return GemvRun(gemv_launch(m, n, k, aligned, int(runtime.device_info()["sm_count"]))), False
    r = route(m, n, k, aligned)
    cfg = r.choice.config
    chunk, splits = split_chunk(k, cfg.bk, r.choice.splits)
    spec = cfg.spec(1 if r.kind == "scalar" else 4, split=splits > 1)
    kernel = runtime.get_kernel(spec)
    _allow_smem(kernel, spec, cfg.smem_bytes)
    launch = runtime.Launcher(kernel, (_tiles(cfg, m, n), splits), cfg.threads, 3, m, n, k, chunk,
                              shmem=cfg.smem_bytes)
    return launch, splits > 1


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
        launch, zero = _auto_launch(m, n, k, aligned, runtime.device_info()["name"])
        if zero:  # split-K partial tiles are added into C
            cupy = cupy_module()
            cupy.cuda.runtime.memsetAsync(out.data.ptr, 0, out.nbytes, cupy.cuda.get_current_stream().ptr)
        launch(out, a, b)
    else:
        plan(variant, a, b, out).run()
    return out
