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


# transpose_vec's SPAN: lanes per output row of one store instruction. The template's default, 8, writes a 64-wide float
# tile row as two 128-byte pieces (as first written); the library's 16 writes its 256 bytes in one instruction, which
# an H200 measured 1.3-2.5 points of the copy faster on every shape (docs/notes/reduce_transpose.md, "one store instruction")
KERNEL_SPAN, LIBRARY_SPAN = 8, 16


def vec_spec(ctype: str, tile: int, minb: int, pipe: bool = False, order: int = 0, group: int = 1,
             span: int = KERNEL_SPAN, rows: int = 0) -> KernelSpec:
    """transpose_vec's instantiation, trailing template defaults left out (ORDER and G spelled together)."""
    tail = [str(pipe).lower(), str(order), str(group), str(span), str(rows or tile)]
    defaults = ["false", "0", "1", str(KERNEL_SPAN), str(tile)]
    while tail and tail[-1] == defaults[len(tail) - 1]:
        tail.pop()
    if len(tail) == 2:
        tail.append(str(group))
    return KernelSpec(SRC, f"transpose_vec<{', '.join([ctype, VECTOR[ctype][0], str(tile), str(minb)] + tail)}>")


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
    span: int = KERNEL_SPAN  # vector kernels: lanes per output row of a store instruction (SPAN in transpose.cu)
    rows: int = 0            # vector kernels: tile rows (TR in transpose.cu; 0: the tile side)

    @property
    def model_block(self) -> tuple[int, int, int]:
        """The threads one analyzed access spans: a warp of the block's first row."""
        return (self.block[0] if self.vector else TILE, 1, 1)

    def spec(self, ctype: str = "float") -> KernelSpec:
        if self.vector:
            return vec_spec(ctype, self.tile, self.minb or VECTOR[ctype][2], span=self.span, rows=self.rows)
        return KernelSpec(SRC, f"{self.kernel}<{ctype}, {self.targs}>")

    def grid(self, rows: int, cols: int) -> tuple[int, int]:
        tile_rows = self.rows or self.tile
        return (max(1, math.ceil(cols / self.tile)), max(1, min(math.ceil(rows / tile_rows), MAX_GRID_Y)))

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
LIBRARY_VECTORIZED = replace(VECTORIZED, name="vectorized 64x64, 4 blocks/SM, 256-byte stores (library)", minb=4,
                             span=LIBRARY_SPAN)
# and, for 4-byte elements whose output rows start off a 32-byte sector (rows * 4 % 32 != 0), 128 x 64 tiles: each
# 512-byte output row in one store instruction leaves fewer partially written sectors. On an H200 at 16380 x 16388
# 81.3% of the copy against 73.2%, on an H100 85.5% against 77.6%; on sector-aligned pitches they measured 0.1-0.4
# points below the square tiles, hence only there (docs/notes/reduce_transpose.md, "128 x 64 tiles adopted"). A float64 tile of that
# size would be 64 KiB of shared memory: float64 keeps the square tiles.
LIBRARY_TALL = replace(LIBRARY_VECTORIZED, name="vectorized 64 wide x 128 rows, 512-byte stores (library, off-sector "
                       "pitches)", span=32, rows=128)
TALL_CTYPES = ("float", "int")
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
    span: int = LIBRARY_SPAN  # lanes per output row of a store instruction (8: 128-byte pieces, as first written)
    rows: int = 0  # tile rows (0: the tile side): a taller tile writes longer output runs

    def __post_init__(self):
        if (self.tile not in (64, 128) or self.minb < 1 or self.tiles_per_block < 1 or self.span not in (8, 16, 32)
                or self.tile_rows % 32 or self.tile_rows * 4 // 16 % self.span):
            raise ValueError(f"transpose_vec: tile 64 or 128, minb and tiles_per_block >= 1, span 8, 16 or 32 "
                             f"dividing the tile's float4s per row; got {self}")
        if self.order not in ORDER_NAMES or (self.order == ORDER_GROUPED) != (self.group > 1) or self.group < 1:
            raise ValueError(f"transpose_vec: order {tuple(ORDER_NAMES)} with group > 1 exactly for the grouped "
                             f"order; got order={self.order} group={self.group}")

    @property
    def tile_rows(self) -> int:
        return self.rows or self.tile

    @property
    def name(self) -> str:
        order = ORDER_NAMES[self.order] + (f" G={self.group}" if self.order == ORDER_GROUPED else "")
        rows = f"x{self.rows} rows" if self.rows else ""
        return (f"tile={self.tile}{rows} minb={self.minb} pipe={int(self.pipe)} tiles/block={self.tiles_per_block} "
                f"order={order}" + (f" span={self.span}" if self.span != LIBRARY_SPAN else ""))

    def spec(self, ctype: str = "float") -> KernelSpec:
        """The template instantiation, trailing defaults left out (the default is LIBRARY_VECTORIZED's spec)."""
        return vec_spec(ctype, self.tile, self.minb, self.pipe, self.order, self.group, self.span, self.rows)

    def grid(self, rows: int, cols: int) -> tuple[int, int]:
        tiles_y = math.ceil(rows / self.tile_rows)
        return (max(1, math.ceil(cols / self.tile)), max(1, min(math.ceil(tiles_y / self.tiles_per_block), MAX_GRID_Y)))

    def shmem(self, ctype: str = "float") -> int:
        """Dynamic shared memory bytes of the launch: the tile when it exceeds 48 KiB, else 0 (a static tile)."""
        size = {"float": 4, "int": 4, "double": 8}[ctype]
        nbytes = self.tile * self.tile_rows * size
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

    def runs(by_band: dict, side: int) -> float:
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
        return sum(lengths) / len(lengths) * side * elem

    in_bands, out_bands = {}, {}
    for x, y in tiles:
        in_bands.setdefault(y, []).append(x)   # tile row y of `in`: its tiles x side by side along the rows
        out_bands.setdefault(x, []).append(y)  # tile row x of `out` (= tile column x of `in`)
    return dict(blocks=len(tiles), in_bands=len(in_bands), out_bands=len(out_bands),
                in_run_bytes=runs(in_bands, geom.tile), out_run_bytes=runs(out_bands, geom.tile_rows))


# tools/transpose_probe.py's geometries, float32 only. Session 23's: blocks per SM, PIPE, 128 x 128 tiles in
# dynamic shared memory, tiles per block (its 128-tile PIPE variant at 2 blocks/SM spilled on sm_100/sm_120: that
# one is at 1 block/SM here). The block orders (issue 11, DRAM page locality) at MINB 6: the remap's registers
# would take the library's 39 (sm_90) to 47, 5 blocks per SM instead of 6, so the orders and their row-order
# control get __launch_bounds__(256, 6): 40 registers, 6 blocks per SM on sm_80..sm_120 like the library.
ORDER_MINB = 6
ORDER_GROUPS = (2, 4, 8, 16, 32)
# (measured with 8 lanes per output row of a store, as the library then had: kept so)
_S8 = dict(span=KERNEL_SPAN)
PROBE_SESSION23 = [VecGeometry(64, 4, **_S8), VecGeometry(64, 2, **_S8),
                   VecGeometry(64, 4, True, tiles_per_block=2, **_S8), VecGeometry(128, 1, **_S8),
                   VecGeometry(128, 2, **_S8), VecGeometry(128, 3, **_S8),
                   VecGeometry(128, 1, True, tiles_per_block=4, **_S8), VecGeometry(128, 3, tiles_per_block=4, **_S8)]
PROBE_ORDERS = ([VecGeometry(minb=ORDER_MINB, **_S8)]
                + [VecGeometry(minb=ORDER_MINB, order=ORDER_GROUPED, group=g, **_S8) for g in ORDER_GROUPS]
                + [VecGeometry(minb=ORDER_MINB, order=ORDER_DIAGONAL, **_S8)])
# store spans (issue 11, session 25): the library before (8 lanes per output row: two 128-byte pieces) against its 16.
# A 128-tile's 512-byte rows in one instruction need 1 block per SM to compile without spills on every arch, and lost
# (82-86% of the copy), so they are not kept
PROBE_SPANS = [VecGeometry(**_S8)]
# 128 x 64 tiles (issue 11, session 25): 512-byte output rows, written by one store instruction each (span 32) or two
PROBE_TALL = [VecGeometry(rows=128, minb=m, span=sp) for m in (3, 4) for sp in (16, 32)]
# and 64 x 128 tiles: 512-byte input runs per load instruction, 256-byte output runs
PROBE_TALL += [VecGeometry(128, m, rows=64) for m in (3, 4)]
PROBE_GEOMETRIES = PROBE_SESSION23 + PROBE_ORDERS + PROBE_SPANS + PROBE_TALL

KERNELS = ([v.spec(CTYPES[d]) for v in LADDER + [LIBRARY_VECTORIZED] for d in DTYPES]
           + [LIBRARY_TALL.spec(c) for c in TALL_CTYPES]
           + [KernelSpec(SRC, f"transpose_thin<{CTYPES[d]}, {str(short).lower()}>") for d in DTYPES
              for short in (True, False)]
           + list(dict.fromkeys(g.spec("float") for g in PROBE_GEOMETRIES)))
