"""Instantiations of the matmul kernels: the seeds' ladder (``matmul_ladder.cu``), the register-blocked SGEMM
(``sgemm.cu``) with its tuning space, and the matrix-vector kernels (``gemv.cu``); the ladder's variant table, each
row with its launch recipe (geometry and argument list as data).

The register-blocked kernel's parameters form a declared space (kernel_tuner style: a dict of
allowed values plus restrictions); a small curated subset, :data:`CANDIDATES`, is instantiated and
timed on the device by ``gpumemlab tune matmul``, which stores the chosen point per device name and shape in
``kernels/tuned/matmul.json``.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

from . import KernelSpec

SRC = "matmul_ladder.cu"
SGEMM_SRC = "sgemm.cu"
GEMV_SRC = "gemv.cu"
SOURCES = (SRC, SGEMM_SRC, GEMV_SRC)

# --- the ladder -------------------------------------------------------------------------------
NAIVE = KernelSpec(SRC, "naive<false>")
NAIVE_COL_MAJOR = KernelSpec(SRC, "naive<true>")
TRANSPOSE = KernelSpec(SRC, "transpose_naive")
SIMPLE_MULTIPLY = KernelSpec(SRC, "simple_multiply")
COALESCED_MULTIPLY = KernelSpec(SRC, "coalesced_multiply")
SHARED_AB_MULTIPLY = KernelSpec(SRC, "shared_ab_multiply")
AAT_SIMPLE = KernelSpec(SRC, "aat_simple")
TILE_DIM = 32  # w of Best Practices 9.2.3 (simple/coalesced/shared_ab and the A A^T trio)
TILES = (8, 16, 32)
BLOCK_SIZES = (2, 4) + TILES  # seed 000's BLOCK_SIZE exercise: square blocks, warps filled or not
COARSE_FACTORS = (1, 2, 4, 8)
COARSE_TILE = 32


def tiled(tile: int) -> KernelSpec:
    if tile not in BLOCK_SIZES:
        raise ValueError(f"tiled<{tile}> is not instantiated (tiles: {BLOCK_SIZES})")
    return KernelSpec(SRC, f"tiled<{tile}>")


def corner_turning(tile: int = 32, pad: int = 1) -> KernelSpec:
    if (tile, pad) not in ((32, 0), (32, 1)):
        raise ValueError(f"corner_turning<{tile}, {pad}> is not instantiated")
    return KernelSpec(SRC, f"corner_turning<{tile}, {pad}>")


def coarsened(coarse: int, tile: int = COARSE_TILE) -> KernelSpec:
    if coarse not in COARSE_FACTORS or tile != COARSE_TILE:
        raise ValueError(f"coarsened<{tile}, {coarse}> is not instantiated (factors: {COARSE_FACTORS})")
    return KernelSpec(SRC, f"coarsened<{tile}, {coarse}>")


def aat_tiled(pad: int) -> KernelSpec:
    if pad not in (0, 1):
        raise ValueError("aat_tiled<PAD>: PAD is 0 (32x32 tile) or 1 (32x33)")
    return KernelSpec(SRC, f"aat_tiled<{pad}>")


# --- the register-blocked kernel's parameter space -------------------------------------------------
TUNE_PARAMS = {
    "BM": [32, 64, 128, 256], "BN": [32, 64, 128, 256], "BK": [8, 16],
    "WM": [32, 64], "WN": [32, 64], "WNITER": [1, 2, 4], "TM": [4], "TN": [4],
    "STAGES": [2, 3, 4], "ALOAD": [0, 1], "DBUF": [0, 1], "ORDER": [0, 1, 2], "PIN": [0, 1],
}
# split-K factors (tuning, chooser): up to 256, since one small tile with K = 65536 took the largest factor swept
# (64: 64 blocks for 132 SMs) on the H100 and the H200; the tuning space keeps slices >= MIN_SPLIT_DEPTH
SPLIT_FACTORS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
MIN_SPLIT_DEPTH = 128    # K rows per split-K slice at least: shallower slices spend more on the epilogue than they save
SPLIT_WAVES = 4          # split-K only while tiles x splits fill at most this many waves of resident blocks
SMEM_LIMIT = 96 * 1024   # dynamic shared memory a config may ask for (fits sm_80 and sm_90 opt-in limits)
MAX_ACCUMULATORS = 128   # outputs per thread: more would spill


_NAME = re.compile(r"(\d+)x(\d+)x(\d+)_w(\d+)x(\d+)_i(\d+)_t(\d+)x(\d+)_s(\d+)_a(\d+)_b(\d+)(_d1)?(?:_o(\d+))?"
                   r"(?:_p(\d+))?")  # RBConfig.name, read back


@dataclass(frozen=True)
class RBConfig:
    """One point of the space: block tile BM x BN x BK, warp tile WM x WN, WNITER sub-tiles along N,
    TM x TN register blocks, STAGES-deep cp.async ring, ALOAD 0 (A by 4-byte cp.async) or 1 (A by
    16-byte loads through registers), MINB blocks per SM promised to ptxas (``__launch_bounds__``),
    DBUF 1: shared-memory fragments double-buffered in registers across k steps and tiles (the
    barrier before a tile's last step), ORDER: the outer product's visiting order (0 row by row, 1 column
    by column, 2 column by column serpentine), which steers ptxas's schedule, PIN 1: fragment loads pinned
    in program order (volatile), so ptxas cannot sink them next to their FFMAs."""

    bm: int
    bn: int
    bk: int
    wm: int
    wn: int
    wniter: int
    stages: int
    aload: int
    minb: int = 1
    tm: int = 4
    tn: int = 4
    ragged_minb: int | None = None  # MINB of the VEC = 1 instantiation (its scalar loads need more registers)
    dbuf: int = 0
    order: int = 0
    pin: int = 0

    @property
    def name(self) -> str:
        return (f"{self.bm}x{self.bn}x{self.bk}_w{self.wm}x{self.wn}_i{self.wniter}"
                f"_t{self.tm}x{self.tn}_s{self.stages}_a{self.aload}_b{self.minb}" + ("_d1" if self.dbuf else "")
                + (f"_o{self.order}" if self.order else "") + (f"_p{self.pin}" if self.pin else ""))

    @classmethod
    def from_name(cls, name: str) -> "RBConfig":
        """A candidate by its name, or any valid point of the space written the same way (so a sweep can try a
        configuration before it is a candidate); ValueError for a name that is neither."""
        for cfg in CANDIDATES:
            if cfg.name == name:
                return cfg
        m = _NAME.fullmatch(name)
        if m is None:
            raise ValueError(f"unknown register_blocked config {name!r}")
        bm, bn, bk, wm, wn, wniter, tm, tn, stages, aload, minb, dbuf, order, pin = m.groups()
        cfg = cls(int(bm), int(bn), int(bk), int(wm), int(wn), int(wniter), int(stages), int(aload), int(minb),
                  int(tm), int(tn), dbuf=int(bool(dbuf)), order=int(order or 0), pin=int(pin or 0))
        problems = cfg.problems(4)
        if problems:
            raise ValueError(f"register_blocked config {name!r} is outside the space: {'; '.join(problems)}")
        return cfg

    @property
    def threads(self) -> int:
        return (self.bm // self.wm) * (self.bn // self.wn) * 32

    @property
    def wmiter(self) -> int:
        return (self.wm * self.wn) // (32 * self.tm * self.tn * self.wniter)

    @property
    def thread_tile(self) -> tuple[int, int]:
        return self.wmiter * self.tm, self.wniter * self.tn

    @property
    def smem_bytes(self) -> int:
        return self.smem_for()

    def smem_for(self, tb: int = 0) -> int:
        """Dynamic shared memory of the instantiation; ``tb`` 1: B's tile padded by 4 floats (column-major B)."""
        return self.stages * (self.bk * (self.bm + 4) + self.bk * (self.bn + 4 * tb)) * 4

    def layout_problems(self, vec: int, ta: int, tb: int) -> list[str]:
        """Why the TA/TB instantiation cannot be built (empty: it can); mirrors TileCopy's static_assert."""
        out = []
        if ta and (self.threads % (self.bm // vec) or (self.bm * self.bk) % (self.threads * vec)):
            out.append("a column-major A tile does not split evenly over the threads")
        if tb and (self.threads % self.bk or (self.bk * self.bn) % self.threads):
            out.append("a column-major B tile does not split evenly over the threads")
        if self.smem_for(tb) > SMEM_LIMIT:
            out.append(f"{self.smem_for(tb)} B of shared memory")
        return out

    def problems(self, vec: int = 4) -> list[str]:
        """Why this point is outside the space (empty: valid); mirrors the kernel's static_asserts."""
        out = []
        if self.bm % self.wm or self.bn % self.wn:
            out.append("warp tile does not divide the block tile")
            return out
        if self.threads not in (128, 256):
            out.append(f"{self.threads} threads (want 128 or 256)")
        wmiter = self.wmiter
        if wmiter < 1 or wmiter * 32 * self.tm * self.tn * self.wniter != self.wm * self.wn:
            out.append("warp tile does not split into 32 threads")
            return out
        wsubm, wsubn = self.wm // wmiter, self.wn // self.wniter
        if wsubn % self.tn or (wsubn // self.tn) * (wsubm // self.tm) != 32:
            out.append("warp sub-tile is not 32 threads")
        elif wsubn // self.tn < 2 or wsubm // self.tm < 2:
            out.append("interleaved lanes need at least 2 lanes along M and along N")
        if self.tm % 4 or self.tn % 4:
            out.append("register blocks must be float4 wide")
        if ((self.bm * self.bk) % self.threads or (self.bk * self.bn) % (self.threads * vec)
                or self.threads % (self.bn // vec) or self.threads % self.bk):
            out.append("tile loads do not split evenly over the threads")
        kq = self.bk // 4
        if self.aload == 1 and vec == 4 and ((self.bm * self.bk) % (4 * self.threads) or self.threads % (16 * kq)
                                             or kq % 2 or self.bm % 16):
            out.append("A tile does not split into one float4 per thread")
        if self.smem_bytes > SMEM_LIMIT:
            out.append(f"{self.smem_bytes} B of shared memory")
        if self.thread_tile[0] * self.thread_tile[1] > MAX_ACCUMULATORS:
            out.append("too many accumulators per thread")
        if self.stages < 2:
            out.append("at least two stages")
        if self.dbuf not in (0, 1):
            out.append("DBUF is 0 or 1")
        if self.order not in (0, 1, 2):
            out.append("ORDER is 0, 1 or 2")
        if self.pin not in (0, 1):
            out.append("PIN is 0 or 1")
        return out

    def spec(self, vec: int, split: bool = False, ta: int = 0, tb: int = 0, strided: int = 0) -> KernelSpec:
        """The instantiation: ``vec`` 4 (aligned fast path) or 1 (any N, K); ``split``: split-K (atomic epilogue);
        ``strided`` 1: operands with their own pitches and batch steps, ``ta``/``tb`` 1 (strided only): A / B read
        column-major (:data:`LAYOUTS`)."""
        if vec not in (1, 4):
            raise ValueError("vec is 4 (aligned fast path) or 1 (any N, K)")
        if ta not in (0, 1) or tb not in (0, 1) or strided not in (0, 1) or ((ta or tb) and not strided):
            raise ValueError("ta and tb are 0 (row-major) or 1 (column-major, strided instantiations only)")
        minb = self.minb if vec == 4 or self.ragged_minb is None else self.ragged_minb
        args = [self.bm, self.bn, self.bk, self.wm, self.wn, self.wniter, self.tm, self.tn, self.stages, vec,
                self.aload, minb, "true" if split else "false", self.dbuf, self.order, self.pin, ta, tb, strided]
        while args[-1] == 0 and len(args) > 14:  # later flags default to 0: keep older names (and caches) stable
            args.pop()
        return KernelSpec(SGEMM_SRC, f"register_blocked<{', '.join(map(str, args))}>")


def split_chunk(k: int, step: int, splits: int) -> tuple[int, int]:
    """(K depth per split, a multiple of ``step``; effective splits): no split is left empty, so the effective
    factor can be below the one asked for."""
    splits = max(1, min(int(splits), math.ceil(k / step)))
    chunk = math.ceil(math.ceil(k / step) / splits) * step
    return chunk, math.ceil(k / chunk)


def tiles(cfg: RBConfig, m: int, n: int) -> int:
    """Block tiles of an M x N output (the grid's x extent)."""
    return math.ceil(m / cfg.bm) * math.ceil(n / cfg.bn)


@dataclass(frozen=True)
class Operands:
    """How the register-blocked kernel reads A and B in place: ``ta``/``tb`` 1 for a column-major operand (a
    transposed or Fortran-ordered view), ``lda``/``ldb`` the elements between its rows (between its columns when
    column-major; None: the dense row-major pitch, K and N), and ``batch`` products in one launch (grid z) whose
    operands lie ``batch_a``/``batch_b`` elements apart (0: broadcast); C is dense, M x N per product."""

    ta: int = 0
    tb: int = 0
    lda: int | None = None
    ldb: int | None = None
    batch: int = 1
    batch_a: int = 0
    batch_b: int = 0


DENSE = Operands()
LAYOUTS = ((0, 0), (1, 0), (0, 1), (1, 1))  # (ta, tb) of the strided instantiations
MAX_GRID_Z = 65535


@dataclass(frozen=True)
class RBLaunch:
    """One launch of the register-blocked kernel: ``spec`` on a (tiles, splits, batch) grid of ``threads`` with
    ``smem`` bytes of dynamic shared memory; the arguments are ``C, A, B`` then ``scalars`` (M, N, K, K chunk, lda,
    ldb, batch strides of A and B). A split launch adds its partial tiles into C, which must be zeroed first."""

    spec: KernelSpec
    grid: tuple[int, int, int]
    threads: int
    smem: int
    scalars: tuple
    splits: int


def rb_launch(cfg: RBConfig, m: int, n: int, k: int, vec: int, splits: int = 1, ops: Operands = DENSE) -> RBLaunch:
    """The launch of ``cfg`` for M x N x K with ``vec``-wide loads, (up to) ``splits`` split-K slices and the
    operands read as ``ops`` says (at most :data:`MAX_GRID_Z` products per launch)."""
    import numpy as np

    if not 1 <= ops.batch <= MAX_GRID_Z:
        raise ValueError(f"a launch takes 1 to {MAX_GRID_Z} products, not {ops.batch}")
    chunk, splits = split_chunk(k, cfg.bk, splits)
    lda = (m if ops.ta else k) if ops.lda is None else ops.lda
    ldb = (k if ops.tb else n) if ops.ldb is None else ops.ldb
    strided = int(ops != DENSE)
    return RBLaunch(cfg.spec(vec, split=splits > 1, ta=ops.ta, tb=ops.tb, strided=strided),
                    (tiles(cfg, m, n), splits, ops.batch),
                    cfg.threads, cfg.smem_for(ops.tb),
                    (m, n, k, chunk, lda, ldb, np.int64(ops.batch_a), np.int64(ops.batch_b)), splits)


def space() -> list[RBConfig]:
    """Every valid point of :data:`TUNE_PARAMS` (minb: as many 256-thread blocks as 128 registers allow)."""
    p = TUNE_PARAMS
    out = []
    for bm, bn, bk, wm, wn, wni, tm, tn, st, al, db, order, pin in itertools.product(
            p["BM"], p["BN"], p["BK"], p["WM"], p["WN"], p["WNITER"], p["TM"], p["TN"], p["STAGES"], p["ALOAD"],
            p["DBUF"], p["ORDER"], p["PIN"]):
        cfg = RBConfig(bm, bn, bk, wm, wn, wni, st, al, 1, tm, tn, dbuf=db, order=order, pin=pin)
        if not cfg.problems(4) and not cfg.problems(1):
            out.append(cfg)
    return out


# The instantiated subset. The big tiles are 8 x 16 per thread (64 x 64 warp tiles, BK 16, A through
# registers, fragments double-buffered: DBUF) on 128 x 256 (256 threads, 1 block/SM: cuBLAS's shape) or
# 128 x 128 (128 threads, 2 blocks/SM); each with ORDER 2 + PIN 1, the pair that keeps the fragment
# loads a k step ahead (ptxas otherwise sinks the A loads next to their FFMAs: short-scoreboard stalls),
# and the controls that switch one or both off. The small tiles are for problems whose big tiles leave
# SMs idle.
CANDIDATES = [
    RBConfig(128, 256, 16, 64, 64, 4, stages=2, aload=1, minb=1, dbuf=1, order=2, pin=1),
    RBConfig(128, 128, 16, 64, 64, 4, stages=2, aload=1, minb=2, ragged_minb=1, dbuf=1, order=2, pin=1),
    RBConfig(128, 256, 16, 64, 64, 4, stages=2, aload=1, minb=1, dbuf=1, pin=1),
    RBConfig(128, 256, 16, 64, 64, 4, stages=2, aload=1, minb=1, dbuf=1),
    RBConfig(128, 128, 16, 64, 64, 4, stages=2, aload=1, minb=2, ragged_minb=1, dbuf=1, pin=1),
    RBConfig(128, 128, 16, 64, 64, 4, stages=2, aload=1, minb=2, ragged_minb=1, dbuf=1, order=2),
    RBConfig(128, 128, 16, 64, 64, 4, stages=2, aload=1, minb=2, ragged_minb=1, dbuf=1),
    RBConfig(64, 128, 8, 32, 64, 2, stages=3, aload=0, minb=3, order=2, pin=1),
    # skinny tiles: the H200 shape sweep's fastest point on most shapes with M or N <= 1024 and on large K
    RBConfig(32, 128, 16, 32, 32, 1, stages=3, aload=0, minb=4, order=2, pin=1),
    RBConfig(128, 32, 16, 32, 32, 1, stages=3, aload=0, minb=4, order=2, pin=1),
    RBConfig(64, 64, 8, 32, 32, 2, stages=3, aload=0, minb=4, order=2, pin=1),
]
# Used when no tuned entry fits the device: the H100 tuning winner (128 x 256, 8 x 16 per thread, ORDER 2, PIN 1).
DEFAULT = CANDIDATES[0]
SMALL = CANDIDATES[-1]   # the default's fallback when the default's tiles leave SMs idle


# --- matrix-vector products (M = 1 or N = 1): memory-bound, one parameterized pair of kernels ---------
# Split k ranges are added by the last block of each block of outputs from partials in a kept per-stream workspace
# (one launch, deterministic: gemv.cu)

def gemv_rows(vec: int, split: bool = False) -> KernelSpec:
    """N = 1: one warp per row of A (``vec`` 4: float4 loads, K % 4 == 0 and aligned; 1: any K); ``split``: k ranges
    per block row."""
    if vec not in (1, 4):
        raise ValueError("gemv vec is 4 or 1")
    return KernelSpec(GEMV_SRC, f"gemv_rows<{vec}, {'true' if split else 'false'}>")


SKINNY_ROWS = (1, 2, 4, 8)  # gemv_cols instantiations: M up to 8 rows of A share each read of B


def skinny_rows(m: int) -> int:
    """The gemv_cols instantiation for M rows of A: the smallest of SKINNY_ROWS that holds them."""
    for rows in SKINNY_ROWS:
        if m <= rows:
            return rows
    raise ValueError(f"gemv_cols takes M <= {SKINNY_ROWS[-1]}, got {m}")


def gemv_cols(vec: int, split: bool, rows: int = 1) -> KernelSpec:
    """M <= ``rows``: 32 x 8 threads per VEC x 32 columns of B; ``split``: k ranges per block row."""
    if vec not in (1, 4):
        raise ValueError("gemv vec is 4 or 1")
    if rows not in SKINNY_ROWS:
        raise ValueError(f"gemv_cols rows is one of {SKINNY_ROWS}")
    return KernelSpec(GEMV_SRC, f"gemv_cols<{vec}, {'true' if split else 'false'}, {rows}>")


GEMV_KERNELS = ([gemv_rows(v, s) for v in (4, 1) for s in (False, True)]
                + [gemv_cols(v, s, r) for v in (4, 1) for s in (False, True) for r in SKINNY_ROWS])


# --- the variant table: one row per rung (kernel, launch geometry, layout of B, reuse for the OP/B model) ---

@dataclass(frozen=True)
class Variant:
    """One rung: ``layout`` of B it reads ("row", "col": B stored column-major, "bt": B transposed
    first, timed), ``op`` "ab" (C = A B) or "aat" (C = A A^T), ``reuse`` = outputs per block that
    share each loaded A and B element (rows, cols) for the OP/B model, ``k32``: Best Practices
    kernels that need K = 32 and M, N multiples of 32. Every rung does 2 M N K flops.

    Launch recipe: the grid covers N (x, ``coarse`` columns per thread) by M (y) in ``block``-sized blocks
    (C = A A^T: M by M), and ``args`` names the kernel's arguments in order (``b``: B in the rung's layout)."""

    name: str
    spec: KernelSpec | None
    block: tuple[int, int]
    layout: str = "row"
    op: str = "ab"
    reuse: tuple[int, int] = (1, 1)
    k32: bool = False
    coarse: int = 1
    seed: str = ""
    intensity: tuple | None = None  # (kernel, tile, coarsen) for model.intensity.matmul_intensity
    args: tuple[str, ...] = ("out", "a", "b", "m", "n", "k")

    def op_per_byte(self, config: RBConfig | None = None) -> float:
        """Seed 000's global-memory OP/B, from ``model.intensity``: the analyzer's kernel formula where it knows
        the rung, else the reuse factors (register_blocked: ``config``'s BM x BN block tile)."""
        from ..model.intensity import matmul_intensity, reuse_intensity

        if self.intensity is not None:
            return float(matmul_intensity(*self.intensity))
        return reuse_intensity(*((config.bm, config.bn) if config is not None and self.spec is None else self.reuse))


K32_ARGS = ("out", "a", "b", "n")  # Best Practices 9.2.3: K = w = 32, A is M x 32, B 32 x N
AAT_ARGS = ("out", "a", "m")       # C = A A^T, A is M x 32
# transposed_b's first step, Bt = B^T (N x K): a K by N grid of 32 x 8 blocks
TRANSPOSE_BLOCK = (32, 8)
TRANSPOSE_ARGS = ("bt", "b", "k", "n")


def _ladder() -> dict[str, Variant]:
    v = [
        Variant("naive", NAIVE, (32, 8), seed="000/002: one thread per output", intensity=("naive", 1, 1)),
        Variant("naive_col_major", NAIVE_COL_MAJOR, (32, 8), layout="col", seed="000: N column-major, uncoalesced",
                intensity=("naive", 1, 1)),
        Variant("transposed_b", NAIVE_COL_MAJOR, (32, 8), layout="bt", seed="004: transpose B first",
                intensity=("naive", 1, 1)),
        Variant("simple_multiply", SIMPLE_MULTIPLY, (32, 32), k32=True, seed="003 BPG 9.2.3.2", args=K32_ARGS),
        # coalesced_multiply: A tile shared by the 32 threads of a row, B read by each thread
        Variant("coalesced_multiply", COALESCED_MULTIPLY, (32, 32), reuse=(1, 32), k32=True, seed="003 BPG 9.2.3.2",
                args=K32_ARGS),
        Variant("shared_ab_multiply", SHARED_AB_MULTIPLY, (32, 32), reuse=(32, 32), k32=True, seed="003 BPG 9.2.3.2",
                args=K32_ARGS),
    ]
    v += [Variant(f"tiled_{t}", tiled(t), (t, t), reuse=(t, t), seed="002: shared-memory tiles",
                  intensity=("tiled", t, 1)) for t in TILES]
    v += [Variant("corner_turning_unpadded", corner_turning(32, 0), (32, 32), layout="col", reuse=(32, 32),
                  seed="000 exercise: corner turning, 32-way bank conflict on the transposed store",
                  intensity=("corner_turning", 32, 1)),
          Variant("corner_turning", corner_turning(32, 1), (32, 32), layout="col", reuse=(32, 32),
                  seed="000 exercise: corner turning, padded tile", intensity=("corner_turning", 32, 1))]
    v += [Variant(f"coarsened_{c}", coarsened(c), (32, 32), reuse=(32, 32 * c), coarse=c,
                  seed="000: thread coarsening", intensity=("coarsened", 32, c)) for c in COARSE_FACTORS]
    v += [Variant("aat_simple", AAT_SIMPLE, (32, 32), op="aat", k32=True, seed="003 BPG 9.2.3.3", args=AAT_ARGS),
          Variant("aat_shared", aat_tiled(0), (32, 32), op="aat", reuse=(32, 32), k32=True, seed="003 BPG 9.2.3.3",
                  args=AAT_ARGS),
          Variant("aat_padded", aat_tiled(1), (32, 32), op="aat", reuse=(32, 32), k32=True, seed="003 BPG 9.2.3.3",
                  args=AAT_ARGS)]
    v += [Variant("register_blocked", None, (0, 0), reuse=(DEFAULT.bm, DEFAULT.bn),
                  seed="register blocking, cp.async pipeline, warp tiling")]
    return {x.name: x for x in v}


VARIANTS = _ladder()
AB_VARIANTS = tuple(n for n, v in VARIANTS.items() if v.op == "ab")
AAT_VARIANTS = tuple(n for n, v in VARIANTS.items() if v.op == "aat")
# the C = A B ladder in the seeds' order (the Best Practices w = 32 kernels are measured on their own)
LADDER = tuple(n for n in AB_VARIANTS if not VARIANTS[n].k32)
TEACHING = LADDER[:-1]  # every rung but register_blocked: seconds per call at 8192

KERNELS = ([NAIVE, NAIVE_COL_MAJOR, TRANSPOSE, SIMPLE_MULTIPLY, COALESCED_MULTIPLY, SHARED_AB_MULTIPLY]
           + [tiled(t) for t in BLOCK_SIZES] + [corner_turning(32, 0), corner_turning(32, 1)]
           + [coarsened(c) for c in COARSE_FACTORS] + [AAT_SIMPLE, aat_tiled(0), aat_tiled(1)]
           + [cfg.spec(v, sp) for cfg in CANDIDATES for v in (4, 1) for sp in (False, True)] + GEMV_KERNELS
           + [cfg.spec(v, sp, ta, tb, 1) for cfg in CANDIDATES for v in (4, 1) for sp in (False, True)
              for ta, tb in LAYOUTS])
