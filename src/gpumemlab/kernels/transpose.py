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


def vec_spec(ctype: str, tile: int, minb: int, span: int = KERNEL_SPAN, rows: int = 0) -> KernelSpec:
    """transpose_vec's instantiation, trailing template defaults (SPAN 8, square tile) left out."""
    tail = [str(span), str(rows or tile)]
    defaults = [str(KERNEL_SPAN), str(tile)]
    while tail and tail[-1] == defaults[len(tail) - 1]:
        tail.pop()
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

# The library's layouts move bytes: one word type per element size (transpose_strided, gather_strided), so every
# dtype of that size shares an instantiation. 64 x 64 tiles keep 16 loads in flight a thread and write 64-element
# output runs, which cross fewer partially written sectors on odd pitches than 32-element ones; 16-byte words keep
# 32 x 32 tiles (a 64-wide one would be 65 KiB of shared memory). STRIDED_TILE_32: the 32 x 8 form, for comparison.
WORDS = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long", 16: "uint4"}
STRIDED_TILE = {1: (64, 4), 2: (64, 4), 4: (64, 4), 8: (64, 4), 16: (32, 8)}  # (TILE, BLOCK_ROWS)
STRIDED_TILE_32 = (32, 8)
GATHER_BLOCK, GATHER_UNROLL = 256, 4


def strided_spec(size: int, tile: tuple | None = None) -> KernelSpec:
    """transpose_strided for elements of ``size`` bytes, with the library's tile or ``tile`` = (TILE, BLOCK_ROWS)."""
    side, rows = tile or STRIDED_TILE[size]
    return KernelSpec(SRC, f"transpose_strided<{WORDS[size]}, {side}, {rows}>")


def gather_spec(size: int, wide: bool) -> KernelSpec:
    """gather_strided for elements of ``size`` bytes; ``wide``: 64-bit indices (2^32 elements or more)."""
    return KernelSpec(SRC, f"gather_strided<{WORDS[size]}, {'unsigned long long' if wide else 'unsigned'}>")


KERNELS = ([v.spec(CTYPES[d]) for v in LADDER + [LIBRARY_VECTORIZED] for d in DTYPES]
           + [LIBRARY_TALL.spec(c) for c in TALL_CTYPES]
           + [KernelSpec(SRC, f"transpose_thin<{CTYPES[d]}, {str(short).lower()}>") for d in DTYPES
              for short in (True, False)]
           + [strided_spec(size) for size in WORDS] + [strided_spec(s, STRIDED_TILE_32) for s in (4, 8)]
           + [gather_spec(size, wide) for size in WORDS for wide in (False, True)])
