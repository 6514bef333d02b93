"""``gpumemlab.transpose``: NumPy's ``transpose(x, axes)`` into a new C-contiguous array, for every dtype of 1, 2,
4, 8 or 16 bytes and any strided view, read in place (no copy first).

The view and the permutation are folded to their fewest sides first (:mod:`._layout`): a layout that folds to one
run is a device copy, a batch of 2-D swaps takes ``transpose_strided`` (a padded shared tile, read through the
input's strides, one word type per element size), layouts with no side to read coalesced take ``gather_strided``.

A C-contiguous matrix of 4- or 8-byte words takes the tuned 2-D kernels: a side below 32 takes the thin kernel (both
sides coalesced without a 32-wide tile; blocks made small enough that there are two per SM). Other shapes whose both sides are
multiples of the 16-byte vector width (4 floats or ints, 2 doubles), with 16-byte aligned storage, take the
vectorized 64x64 kernel (128 x 64 tiles for 4-byte elements whose output rows start off a 32-byte sector); every
other shape takes the padded, coarsened 32x8 tile kernel. Like ``cupy.ascontiguousarray(x.T)``, but with coalesced
16-byte stores.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..errors import InputTypeError, UsageError
from ..gpu import runtime
from ..kernels import CTYPES
from ..kernels import transpose as K
from . import _checks, _layout
from ._checks import as_device_array, on_arrays_device

DTYPES = (np.float32, np.float64, np.int32)  # the 2-D ladder's instantiations (the experiment's dtypes)
# every dtype of a size the layouts move (by itemsize: the kernels are instantiated per word, not per dtype)
LAYOUT_DTYPES = tuple(np.dtype(d) for d in ("bool", "int8", "uint8", "int16", "uint16", "float16", "int32", "uint32",
                                            "float32", "int64", "uint64", "float64", "complex64", "complex128"))
MATRIX_DTYPE = {4: "float32", 8: "float64"}  # the tuned 2-D kernels move 4- and 8-byte words as float / double
SECTOR = 32  # bytes: the unit of a partially written output run
INT32_MAX = 2**31 - 1


def choose_variant(rows: int, cols: int, dtype, in_ptr: int, out_ptr: int) -> K.TransposeVariant:
    """The ladder step the library uses for this shape and these addresses (pure; no GPU)."""
    ctype = CTYPES[np.dtype(dtype).name]
    w = K.VECTORIZED.width(ctype)
    aligned = in_ptr % 16 == 0 and out_ptr % 16 == 0
    if aligned and rows % w == 0 and cols % w == 0 and rows >= w and cols >= w:
        off_sector = rows * np.dtype(dtype).itemsize % SECTOR != 0  # output rows start off a 32-byte sector
        return K.LIBRARY_TALL if off_sector and ctype in K.TALL_CTYPES else K.LIBRARY_VECTORIZED
    return K.LIBRARY_FALLBACK


THIN_BLOCKS_PER_SM = 2  # the thin kernel's blocks shrink until there are this many per SM


@lru_cache(maxsize=1024)
def launch_plan(rows: int, cols: int, dtype_name: str, aligned: bool, sm_count: int):
    """(kernel spec, grid, block, shared bytes, extra arguments) on a GPU of ``sm_count`` SMs: the thin kernel when a
    side is at most ``THIN_MAX``, else the ladder step of :func:`choose_variant`."""
    ctype = CTYPES[dtype_name]
    if min(rows, cols) <= K.THIN_MAX:
        t = K.thin_launch(rows, cols, ctype, THIN_BLOCKS_PER_SM * sm_count)
        return t.spec, t.grid, K.THIN_BLOCK, t.shmem, t.args
    variant = choose_variant(rows, cols, dtype_name, 0 if aligned else 4, 0)
    return variant.spec(ctype), variant.grid(rows, cols), variant.block, 0, ()


def _matrix_launch(rows: int, cols: int, dtype_name: str, aligned: bool):
    """``run(out, x)`` of the tuned 2-D kernels for a C-contiguous rows x cols matrix (both sides above 1)."""
    spec, grid, block, shmem, extra = launch_plan(rows, cols, dtype_name, aligned, runtime.device_info()["sm_count"])
    return runtime.Launcher(spec, grid, block, 2, rows, cols, *extra, shmem=shmem)


# A matrix the vector kernels cannot take goes to transpose_strided's 64 x 64 tiles from this many waves of resident
# blocks, smaller ones to the 32 x 8 coarsened kernel: the wide tiles measured faster on odd matrices of several waves
# and slower on those under about one (docs/notes/library-layouts.md, "Odd matrices")
WIDE_TILE_WAVES = 2


def tile_waves(move: _layout.Move, resident_blocks: int) -> float:
    """Waves of ``resident_blocks`` (the whole GPU's) in transpose_strided's grid for ``move`` (pure)."""
    tile = K.STRIDED_TILE[move.size][0]
    na, nb = move.tile[:2]
    return -(-na // tile) * -(-nb // tile) * _layout.batch_count(move) / max(1, resident_blocks)


def _resident_tiles(size: int) -> int:
    tile, block_rows = K.STRIDED_TILE[size]
    return runtime.device_info()["sm_count"] * runtime.max_active_blocks(K.strided_spec(size), tile * block_rows)


def _tile_launch(move: _layout.Move, shape: tuple | None = None):
    """transpose_strided's launch for ``move``, with the library's tile or ``shape`` = (TILE, BLOCK_ROWS)."""
    na, nb, sa, sb, ob = move.tile
    tile, block_rows = shape or K.STRIDED_TILE[move.size]
    batch = list(move.batch) + [(1, 0, 0)] * (_layout.MAX_BATCH - len(move.batch))
    nbatch = _layout.batch_count(move)
    grid = (-(-na // tile), min(-(-nb // tile), K.MAX_GRID_Y), min(nbatch, K.MAX_GRID_Y))
    scalars = ([np.int32(na), np.int32(nb), np.int64(sa), np.int64(sb), np.int64(ob), np.int64(nbatch)]
               + [np.int64(n) for n, _, _ in batch[:3]] + [np.int64(i) for _, i, _ in batch]
               + [np.int64(o) for _, _, o in batch])
    return runtime.Launcher(K.strided_spec(move.size, (tile, block_rows)), grid, (tile, block_rows), 2, *scalars)


def _gather_launch(move: _layout.Move):
    count = math.prod(n for n, _ in move.sides)
    wide = count > 2**32 - 1
    index = np.uint64 if wide else np.uint32
    sides = list(move.sides) + [(1, 0)] * (_layout.MAX_DIMS - len(move.sides))
    grid = min(-(-count // (K.GATHER_BLOCK * K.GATHER_UNROLL)), INT32_MAX)
    return runtime.Launcher(K.gather_spec(move.size, wide), grid, K.GATHER_BLOCK, 2, index(count),
                            np.int32(len(move.sides)), *[index(n) for n, _ in sides[:5]], *[np.int64(s) for _, s in sides])


def _copy_launch(nbytes: int):
    def run(out, x):
        out.data.copy_from_device_async(x.data, nbytes)
    return run


@lru_cache(maxsize=1024)
def prepared(shape: tuple, strides: tuple, dtype: np.dtype, axes, align: int):
    """(result shape, ``run(out, x)`` or None for an empty result) for an array of this shape, byte strides and
    dtype moved into C order along ``axes`` (as given: None, a tuple, or ``"copy"`` for the identity), with input
    and output addresses ``align`` bytes past 16 (their OR). Checks dtype and axes once per key; keyed by the dtype
    object (``dtype.name`` costs microseconds per call)."""
    if dtype not in LAYOUT_DTYPES:
        names = ", ".join(d.name for d in LAYOUT_DTYPES)
        raise InputTypeError(f"x: dtype {dtype} not supported; expected one of {names}")
    ndim = len(shape)
    order = tuple(range(ndim)) if axes == "copy" else _layout.normalize_axes(axes, ndim)
    out_shape = tuple(shape[a] for a in order)
    count = math.prod(shape)
    if count == 0:
        return out_shape, None
    move = _layout.layout(shape, strides, dtype.itemsize, order, align)
    if move.kind == "copy":
        return out_shape, _copy_launch(count * dtype.itemsize)
    if move.kind == "matrix":
        rows, cols, dtype_name = move.rows, move.cols, MATRIX_DTYPE[move.size]
        if max(rows, cols) > INT32_MAX:
            raise UsageError(f"x: each side must be below 2^31 elements, got shape {shape}")
        fallback = choose_variant(rows, cols, dtype_name, align, 0) is K.LIBRARY_FALLBACK
        if min(rows, cols) <= K.THIN_MAX or not fallback or tile_waves(move, _resident_tiles(move.size)) < WIDE_TILE_WAVES:
            return out_shape, _matrix_launch(rows, cols, dtype_name, align == 0)
    if move.kind in ("matrix", "tile"):  # the large matrices the vector kernels cannot take: 64-wide tiles
        return out_shape, _tile_launch(move)
    return out_shape, _gather_launch(move)


def moved(x, axes, out=None):
    """``x`` moved into a C-contiguous array along ``axes`` (see :func:`prepared`): a new one, or ``out``."""
    arr = x if type(x) is _checks._NDARRAY else as_device_array(x, "x", None, contiguous=False)
    ptr = arr.data.ptr
    if out is None:  # launches follow CuPy's current stream, like CuPy's own ops
        out_shape, run = prepared(arr.shape, arr.strides, arr.dtype, axes, ptr & 15)
        dst = _checks._NDARRAY(out_shape, arr.dtype)
    else:
        dst = as_device_array(out, "out", (arr.dtype,))
        out_shape, run = prepared(arr.shape, arr.strides, arr.dtype, axes, (ptr | dst.data.ptr) & 15)
        if dst.shape != out_shape:
            raise UsageError(f"out: shape {dst.shape} != expected {out_shape}")
    if run is not None:
        run(dst, arr)
    return dst


@on_arrays_device
def transpose(x, axes=None):
    """Return ``numpy.transpose(x, axes)`` as a new C-contiguous CuPy array.

    ``x``: a GPU array of any dtype of 1, 2, 4, 8 or 16 bytes (bool, int8-int64, uint8-uint64, float16, float32,
    float64, complex64, complex128), any shape and any strides (views of every kind: sliced, stepped, reversed,
    broadcast), read in place. ``axes``: None reverses the axes; else a permutation of ``range(x.ndim)`` (negative
    counting from the end). Elements are moved bit for bit: NaN payloads (signalling NaNs too), +-Inf and -0.0 come
    out unchanged.
    """
    if axes is not None and type(axes) is not tuple:
        try:
            axes = tuple(axes)
        except TypeError:
            raise InputTypeError(f"axes: expected None or a sequence of ints, got {axes!r}") from None
    return moved(x, axes)
