"""Instantiations of transpose.cu, one ladder step per :class:`TransposeVariant` (kernel + launch geometry).

The experiment and the library read the same table; geometry is ``(tile, block)`` with a 2-D grid
``(ceil(cols / tile), min(ceil(rows / tile), 65535))`` whose y-dimension the kernels grid-stride over.
Every variant reads each element once and writes it once; ``access``/``decl``/``space`` name the access its
ladder step is about, as the analyzer reads it (``n``: the matrix side).
"""

from __future__ import annotations

import math

import numpy as np
from dataclasses import dataclass, replace

from . import CTYPES, KernelSpec

SRC = "transpose.cu"
TILE = 32
BLOCK_ROWS = 8       # the coarsened (cuda-samples) form: 32 x 8 threads, 4 elements per thread
VEC_TILE = 64        # the vectorized kernel's tile (elements per side)
VEC_THREADS = 256
MAX_GRID_Y = 65535

DTYPES = ("float32", "float64", "int32")  # NumPy dtypes with an instantiation (C types in kernels.CTYPES)
# 16-byte vector type, elements per vector, min blocks per SM for __launch_bounds__ (8 x 16 KiB tiles, or
# 4 x 32 KiB for double: all 8 loads of a thread in flight)
VECTOR = {"float": ("float4", 4, 8), "double": ("double2", 2, 4), "int": ("int4", 4, 8)}


@dataclass(frozen=True)
class TransposeVariant:
    name: str
    kernel: str           # template name in transpose.cu
    targs: str            # template arguments after the element type
    tile: int
    block: tuple[int, ...]
    transposes: bool      # False: a copy (same shape out)
    technique: str
    access: str = "in[blockIdx.x*32 + threadIdx.x]"   # the copies' coalesced row read
    decl: str = "float in[]"
    space: str = "global"                              # or "shared": the access is a tile read
    vector: bool = False  # needs rows, cols % W == 0 and 16-byte alignment
    minb: int = 0         # vector kernels: min blocks per SM for __launch_bounds__ (0: VECTOR's)

    @property
    def model_block(self) -> tuple[int, int, int]:
        """The threads one analyzed access spans: a warp of the block's first row."""
        return (self.block[0] if self.vector else TILE, 1, 1)

    def spec(self, ctype: str = "float") -> KernelSpec:
        if self.vector:
            vt, _, minb = VECTOR[ctype]
            return KernelSpec(SRC, f"{self.kernel}<{ctype}, {vt}, {self.targs}, {self.minb or minb}>")
        return KernelSpec(SRC, f"{self.kernel}<{ctype}, {self.targs}>")

    def grid(self, rows: int, cols: int) -> tuple[int, int]:
        return (max(1, math.ceil(cols / self.tile)), max(1, min(math.ceil(rows / self.tile), MAX_GRID_Y)))

    def width(self, ctype: str) -> int:
        """Elements per access: the shape must be a multiple of this (1 for scalar kernels)."""
        return VECTOR[ctype][1] if self.vector else 1


def _v(name, kernel, targs, block_rows, transposes, technique, **model):
    return TransposeVariant(name, kernel, targs, TILE, (TILE, block_rows), transposes, technique, **model)


def _tile_read(width: int) -> dict:
    """The column read from the shared tile (32 x 32: 32-way conflicts; 32 x 33: conflict-free)."""
    return dict(access="tile[threadIdx.x][threadIdx.y]", decl=f"__shared__ float tile[32][{width}]", space="shared")


COPY = _v("copy (tile indexing)", "copy_tile", f"{TILE}, {BLOCK_ROWS}, false", BLOCK_ROWS, False,
          "ceiling: same indexing, no transpose (cuda-samples copy)")
COPY_SHARED = _v("copy through shared memory", "copy_tile", f"{TILE}, {BLOCK_ROWS}, true", BLOCK_ROWS, False,
                 "ceiling with the shared-memory round trip (cuda-samples copySharedMem)")
NAIVE = _v("naive", "transpose_naive", f"{TILE}, {TILE}", TILE, True,
           "reads coalesced, writes strided (cuda-samples transposeNaive)",
           access="out[threadIdx.x * n + threadIdx.y]", decl="float out[]")
COALESCED = _v("coalesced (shared tile)", "transpose_tiled", f"{TILE}, {TILE}, 0", TILE, True,
               "both ways coalesced through a 32x32 tile; 32-way bank conflicts on the column read (seed 003)",
               **_tile_read(32))
PADDED = _v("padded tile (32x33)", "transpose_tiled", f"{TILE}, {TILE}, 1", TILE, True,
            "padding shifts each row by one bank: conflict-free (seed 001/003, transposeNoBankConflicts)",
            **_tile_read(33))
COARSENED = _v("coarsened 32x8 (padded)", "transpose_tiled", f"{TILE}, {BLOCK_ROWS}, 1", BLOCK_ROWS, True,
               "BLOCK_ROWS=8: 4 elements per thread, fewer threads per tile (cuda-samples)", **_tile_read(33))
VECTORIZED = TransposeVariant("vectorized 64x64 (16-byte, swizzled)", "transpose_vec", f"{VEC_TILE}", VEC_TILE,
                              (VEC_THREADS,), True,
                              "16-byte loads and stores, XOR-swizzled shared tile, 4-8 loads in flight per thread",
                              access="in[blockIdx.x*blockDim.x + threadIdx.x]", decl="float4 in[]", vector=True)

LADDER = [COPY, COPY_SHARED, NAIVE, COALESCED, PADDED, COARSENED, VECTORIZED]


@dataclass(frozen=True)
class ThinLaunch:
    """One launch of transpose_thin: a block per ``chunk`` positions of the long side (1-D grid)."""

    spec: KernelSpec
    grid: int
    chunk: int
    pitch: int
    magic: int     # ceil(2^32 / s): f / s as a multiply-high in the kernel
    shmem: int     # bytes of the dynamic tile

    @property
    def args(self) -> tuple:
        return (self.chunk.bit_length() - 1, self.pitch, np.uint32(self.magic))


THIN_MAX = 31       # the thin path takes shapes with a side up to this
THIN_ELEMS = 4096   # elements one block moves at most (16 per thread): 16 KiB of float, 32 KiB of double in its tile
THIN_MIN_CHUNK = 32  # positions of the long side per block at least (one warp's worth)
THIN_BLOCK = (256,)


def thin_launch(rows: int, cols: int, ctype: str, min_blocks: int = 1) -> ThinLaunch:
    """The thin kernel's launch for a rows x cols input with min(rows, cols) <= THIN_MAX: blocks of THIN_ELEMS
    elements, or smaller ones (down to THIN_MIN_CHUNK positions) until there are ``min_blocks`` of them (3 x 70000
    with full-size blocks is 69 blocks: fewer than an H100/H200 has SMs)."""
    short_rows = rows <= cols
    s, long = (rows, cols) if short_rows else (cols, rows)
    if not 1 <= s <= THIN_MAX:
        raise ValueError(f"transpose_thin needs a side of 1..{THIN_MAX}, got {rows} x {cols}")
    chunk = 1 << ((THIN_ELEMS // s).bit_length() - 1)  # a power of two, s * chunk <= THIN_ELEMS < 2^16
    while chunk > THIN_MIN_CHUNK and math.ceil(long / chunk) < min_blocks:
        chunk //= 2
    pitch = chunk + -(-32 // s)
    size = 8 if ctype == "double" else 4
    spec = KernelSpec(SRC, f"transpose_thin<{ctype}, {str(short_rows).lower()}>")
    return ThinLaunch(spec, max(1, math.ceil(long / chunk)), chunk, pitch, -(-(1 << 32) // s) % (1 << 32),
                      s * pitch * size)



# gpumemlab.transpose's vector kernel: 4 blocks per SM as the register target (a same-run comparison of 2, 4 and 8
# on an H100 at 8192^2 and 16384^2 float32: 4 tied 2 and beat 8, the ladder's value; both double variants tied)
LIBRARY_VECTORIZED = replace(VECTORIZED, name="vectorized 64x64, 4 blocks/SM (library)", minb=4)
LIBRARY_FALLBACK = COARSENED  # shapes or alignments the vector kernel cannot take


# transpose_vec's block orders (ORDER in transpose.cu): which tiles run together
ORDER_ROWS, ORDER_GROUPED, ORDER_DIAGONAL = 0, 1, 2
ORDER_NAMES = {ORDER_ROWS: "rows", ORDER_GROUPED: "grouped", ORDER_DIAGONAL: "diagonal"}
STATIC_SHARED_MAX = 48 * 1024  # a larger tile is dynamic shared memory (the launch opts in and passes its size)


@dataclass(frozen=True)
class VecGeometry:
    """One transpose_vec instantiation with its launch geometry, beyond the library's own: tile side, blocks per SM
    (MINB), PIPE, block order (ORDER, G) and tile rows per block (``tiles_per_block``: gridDim.y = row tiles / that).
    The default is the library's kernel and grid (:data:`LIBRARY_VECTORIZED`). ``tools/transpose_probe.py`` times
    them; every one of :data:`PROBE_GEOMETRIES` is in the catalog, so every arch compiles it."""

    tile: int = VEC_TILE
    minb: int = 4
    pipe: bool = False
    order: int = ORDER_ROWS
    group: int = 1
    tiles_per_block: int = 1

    def __post_init__(self):
        if self.tile not in (64, 128) or self.minb < 1 or self.tiles_per_block < 1:
            raise ValueError(f"transpose_vec: tile 64 or 128, minb and tiles_per_block >= 1; got {self}")
        if self.order not in ORDER_NAMES or (self.order == ORDER_GROUPED) != (self.group > 1) or self.group < 1:
            raise ValueError(f"transpose_vec: order {tuple(ORDER_NAMES)} with group > 1 exactly for the grouped "
                             f"order; got order={self.order} group={self.group}")

    @property
    def name(self) -> str:
        order = ORDER_NAMES[self.order] + (f" G={self.group}" if self.order == ORDER_GROUPED else "")
        return (f"tile={self.tile} minb={self.minb} pipe={int(self.pipe)} tiles/block={self.tiles_per_block} "
                f"order={order}")

    def spec(self, ctype: str = "float") -> KernelSpec:
        """The template instantiation, trailing defaults left out (the default is LIBRARY_VECTORIZED's spec)."""
        targs = [ctype, VECTOR[ctype][0], str(self.tile), str(self.minb)]
        if self.pipe or self.order != ORDER_ROWS:
            targs.append(str(self.pipe).lower())
        if self.order != ORDER_ROWS:
            targs += [str(self.order), str(self.group)]
        return KernelSpec(SRC, f"transpose_vec<{', '.join(targs)}>")

    def grid(self, rows: int, cols: int) -> tuple[int, int]:
        tiles_y = math.ceil(rows / self.tile)
        return (max(1, math.ceil(cols / self.tile)), max(1, min(math.ceil(tiles_y / self.tiles_per_block), MAX_GRID_Y)))

    def shmem(self, ctype: str = "float") -> int:
        """Dynamic shared memory bytes of the launch: the tile when it exceeds 48 KiB, else 0 (a static tile)."""
        size = {"float": 4, "int": 4, "double": 8}[ctype]
        nbytes = self.tile * self.tile * size
        return nbytes if nbytes > STATIC_SHARED_MAX else 0


def block_tile(order: int, group: int, w: int, h: int, linear: int) -> tuple[int, int]:
    """(tile column, tile row) that block ``linear`` (blockIdx.y * w + blockIdx.x) of a w x h launch moves: the
    model of transpose.cu's block_tile, for the probe's wave footprints (the GPU tests check the kernel itself)."""
    if order == ORDER_ROWS:
        return linear % w, linear // w
    if order == ORDER_GROUPED:
        band, k = divmod(linear, group * w)
        first = band * group
        band_rows = min(h - first, group)
        return k // band_rows, first + k % band_rows
    y = linear % h
    return (linear // h + y) % w, y


def wave_footprint(geom: VecGeometry, rows: int, cols: int, resident: int, elem: int = 4) -> dict:
    """What the first ``resident`` blocks (those running at once, if blocks start in linear order) touch: the
    tile rows of ``in`` and of ``out`` (row bands), and the mean contiguous run, in bytes, along one row of ``in``
    and of ``out`` (adjacent tiles in one band make one run). The block-order hypothesis: DRAM pages (~1-2 KiB)
    are used whole when both runs are long."""
    w, h = geom.grid(rows, cols)
    tiles = [block_tile(geom.order, geom.group, w, h, i) for i in range(min(resident, w * h))]

    def runs(by_band: dict) -> float:
        lengths = []
        for members in by_band.values():
            members = sorted(members)
            run = 1
            for a, b in zip(members, members[1:]):
                if b == a + 1:
                    run += 1
                else:
                    lengths.append(run)
                    run = 1
            lengths.append(run)
        return sum(lengths) / len(lengths) * geom.tile * elem

    in_bands, out_bands = {}, {}
    for x, y in tiles:
        in_bands.setdefault(y, []).append(x)   # tile row y of `in`: its tiles x side by side along the rows
        out_bands.setdefault(x, []).append(y)  # tile row x of `out` (= tile column x of `in`)
    return dict(blocks=len(tiles), in_bands=len(in_bands), out_bands=len(out_bands), in_run_bytes=runs(in_bands),
                out_run_bytes=runs(out_bands))


# tools/transpose_probe.py's geometries, float32 only. Session 23's: blocks per SM, PIPE, 128 x 128 tiles in
# dynamic shared memory, tiles per block (its 128-tile PIPE variant at 2 blocks/SM spilled on sm_100/sm_120: that
# one is at 1 block/SM here). The block orders (issue 11, DRAM page locality) at MINB 6: the remap's registers
# would take the library's 39 (sm_90) to 47, 5 blocks per SM instead of 6, so the orders and their row-order
# control get __launch_bounds__(256, 6): 40 registers, 6 blocks per SM on sm_80..sm_120 like the library.
ORDER_MINB = 6
ORDER_GROUPS = (2, 4, 8, 16, 32)
PROBE_SESSION23 = [VecGeometry(64, 4), VecGeometry(64, 2), VecGeometry(64, 4, True, tiles_per_block=2),
                   VecGeometry(128, 1), VecGeometry(128, 2), VecGeometry(128, 3),
                   VecGeometry(128, 1, True, tiles_per_block=4), VecGeometry(128, 3, tiles_per_block=4)]
PROBE_ORDERS = ([VecGeometry(minb=ORDER_MINB)]
                + [VecGeometry(minb=ORDER_MINB, order=ORDER_GROUPED, group=g) for g in ORDER_GROUPS]
                + [VecGeometry(minb=ORDER_MINB, order=ORDER_DIAGONAL)])
PROBE_GEOMETRIES = PROBE_SESSION23 + PROBE_ORDERS

KERNELS = ([v.spec(CTYPES[d]) for v in LADDER + [LIBRARY_VECTORIZED] for d in DTYPES]
           + [KernelSpec(SRC, f"transpose_thin<{CTYPES[d]}, {str(short).lower()}>") for d in DTYPES
              for short in (True, False)]
           + list(dict.fromkeys(g.spec("float") for g in PROBE_GEOMETRIES)))


# ---------------------------------------------------------------- transpose_bulk (issue 11, sm_90+)
# transpose_bulk<S, MINB, EMPTY> in transpose.cu: float32 only, 64 x 64 tiles through a ring of S shared stages
# filled by the bulk-copy (TMA) unit, a persistent grid of `blocks_per_sm` blocks per SM (one per resident slot at
# most). Shapes: rows % 4 == 0, cols % 4 == 0, both arrays 16-byte aligned (the library's vector-kernel condition).
BULK_MIN_SM = 90
BULK_TILE = 64
BULK_THREADS = 256
BULK_STAGE_BYTES = (BULK_TILE * BULK_TILE + 4 * (BULK_TILE // 4)) * 4  # 16640: a 64 x 64 float tile + 16 B / 4 rows
BULK_STATIC_BYTES = 128  # static shared memory: the 2 S mbarriers, as ptxas reports it for S <= 8
BULK_STAGES = (2, 3, 4)
# Hopper (sm_90): 228 KiB of shared memory per SM, of which a block takes at most 227 KiB; the driver reserves 1 KiB
# per block (cudaDevAttrReservedSharedMemoryPerBlock); 2048 threads per SM.
SM90_SHARED_PER_SM = 228 * 1024
SM90_RESERVED_PER_BLOCK = 1024
SM90_THREADS_PER_SM = 2048


@dataclass(frozen=True)
class BulkGeometry:
    """One transpose_bulk instantiation and its persistent grid: ``stages`` (S), ``minb`` (__launch_bounds__'s min
    blocks per SM: the register target), ``empty`` (per-stage empty mbarriers instead of a __syncthreads per tile) and
    ``blocks_per_sm`` (0: as many as fit, :func:`bulk_blocks_per_sm`; the probe passes the driver's answer)."""

    stages: int = 2
    minb: int = 6
    empty: bool = True
    blocks_per_sm: int = 0

    def __post_init__(self):
        if not 1 <= self.stages <= 8 or self.minb < 1 or self.blocks_per_sm < 0:
            raise ValueError(f"transpose_bulk: stages 1..8, minb >= 1, blocks_per_sm >= 0; got {self}")

    @property
    def name(self) -> str:
        bps = self.blocks_per_sm or "max"
        return f"bulk S={self.stages} minb={self.minb} {'empty-mbarrier' if self.empty else 'syncthreads'} B/SM={bps}"

    def spec(self) -> KernelSpec:
        return KernelSpec(SRC, f"transpose_bulk<{self.stages}, {self.minb}, {str(self.empty).lower()}>",
                          min_sm=BULK_MIN_SM)

    def shmem(self) -> int:
        """Dynamic shared memory bytes of the launch: the S stages."""
        return self.stages * BULK_STAGE_BYTES

    def resident(self, shared_per_sm: int = SM90_SHARED_PER_SM, reserved: int = SM90_RESERVED_PER_BLOCK) -> int:
        """Blocks per SM the shared memory and thread limits allow (registers aside: MINB keeps them out of it)."""
        per_block = self.shmem() + BULK_STATIC_BYTES + reserved
        return min(shared_per_sm // per_block, SM90_THREADS_PER_SM // BULK_THREADS)

    def grid(self, rows: int, cols: int, sm_count: int, resident: int | None = None) -> int:
        """Blocks of the persistent 1-D grid: blocks_per_sm (or ``resident``, else :meth:`resident`) per SM, at most
        one per tile."""
        per_sm = self.blocks_per_sm or resident or self.resident()
        return max(1, min(bulk_tiles(rows, cols), per_sm * sm_count))


def bulk_tiles(rows: int, cols: int) -> int:
    return math.ceil(rows / BULK_TILE) * math.ceil(cols / BULK_TILE)


def bulk_takes(rows: int, cols: int, dtype_name: str = "float32") -> bool:
    """Whether transpose_bulk takes the shape (alignment of the arrays aside)."""
    return dtype_name == "float32" and rows % 4 == 0 and cols % 4 == 0 and rows >= 1 and cols >= 1


def bulk_tiles_of_block(rows: int, cols: int, grid: int, block: int) -> list[tuple[int, int]]:
    """(row0, col0) of the tiles block ``block`` moves, in order (the kernel's grid-stride walk, for the tests)."""
    tiles_x = math.ceil(cols / BULK_TILE)
    return [((t // tiles_x) * BULK_TILE, (t % tiles_x) * BULK_TILE) for t in range(block, bulk_tiles(rows, cols), grid)]


def bulk_bank_conflict_degree(row_offset=None) -> int:
    """The worst bank conflict of the kernel's transposed shared reads (one warp, one of the 4 loads per float4),
    for a row layout ``row_offset(r) -> float offset`` (default: the kernel's, r * 64 + 4 * (r // 4))."""
    row_offset = row_offset or (lambda r: r * BULK_TILE + 4 * (r // 4))
    worst = 1
    for warp in range(BULK_THREADS // 32):
        for a in range(BULK_TILE // 32):
            for b in range(BULK_TILE // 32):
                for i in range(4):
                    banks: dict[int, set] = {}
                    for lane in range(32):
                        tid = warp * 32 + lane
                        j, kk = tid // 8 + 32 * a, tid % 8 + 8 * b
                        addr = row_offset(4 * kk + i) + j
                        banks.setdefault(addr % 32, set()).add(addr)
                    worst = max(worst, max(len(v) for v in banks.values()))
    return worst


# tools/transpose_probe.py's `bulk` set: S = 2, 3, 4 at the most blocks that fit on sm_90 (6, 4, 3; MINB the same, so
# registers never limit them), the __syncthreads release next to the empty mbarriers at S = 2 and 4, and fewer blocks
# per SM (3 of S = 2: half the tiles in flight; 2 of S = 3 and 4)
PROBE_BULK = [BulkGeometry(2, 6), BulkGeometry(3, 4), BulkGeometry(4, 3), BulkGeometry(2, 6, empty=False),
              BulkGeometry(4, 3, empty=False), BulkGeometry(2, 6, blocks_per_sm=3), BulkGeometry(4, 3, blocks_per_sm=2),
              BulkGeometry(3, 4, blocks_per_sm=2)]

KERNELS += list(dict.fromkeys(g.spec() for g in PROBE_BULK))
