"""`gpumemlab.sample2d`: sample a float32 image at arbitrary (row, col) points, through the texture unit or
exactly in software.

Conventions are those of ``scipy.ndimage.map_coordinates`` (and CuPy's): coordinate (r, c) is the center of
pixel [r, c]; with ``normalized=True`` coordinates are fractions of the image, u in [0, 1) covering the
width, so pixel c's center is at u = (c + 0.5) / width (CUDA's normalized texture coordinates). Address modes
and their ``map_coordinates(mode=...)`` equivalents (``MAP_COORDINATES_MODE``):

- ``clamp``: the edge pixel repeats (``'nearest'``);
- ``wrap``: the image repeats with period width (``'grid-wrap'``; scipy's ``'wrap'`` uses period width - 1);
- ``mirror``: the image reflects about its edges, edge pixel repeated (``'reflect'``, also ``'grid-mirror'``);
- ``border``: zero outside the image, interpolated against (``'grid-constant'`` with ``cval=0``).

``exact=False`` reads through a texture object over the image's own memory (a pitched 2-D texture: no copy,
so later writes to the image are seen; an image whose rows are not aligned as the texture unit needs is
copied to a padded buffer on each call). Bilinear weights are then 9-bit fixed point (8 fractional bits;
CUDA C++ Programming Guide, "Texture Fetching" appendix, linear filtering): an error up to about 1/256 of
the difference between neighbouring pixels. ``exact=True`` interpolates in double in software and matches
``map_coordinates(order=1)`` (``order=0`` for ``mode="nearest"``) to float32 rounding.

How the work is laid out is a :class:`Plan` (``plan=``; default :func:`default_plan`; :data:`FIRST_WRITTEN` gives
the kernels as first written): samples per thread with every load issued before the first use, two samples per
16-byte coordinate load, a 2-D block order for coordinates shaped like an image (``(..., rows, cols, 2)``), where the
exact path reads its texels from and in which precision it weights them. An :class:`ArrayImage` (a copy of the
image in a CUDA array, the texture unit's block-linear layout: a 32-byte sector holds a 4 x 2 texel tile instead of
8 x 1, so a scattered 2x2 footprint touches fewer sectors) is sampled like the image itself; the exact path then
selects texels with point-sampled or gathered texture fetches and weights them in software.

With the default plan on the image itself (bilinear, coordinates in pixels) sample2d learns what kind of points a
coordinate buffer holds: a few blocks of a call report, from the points they already read, how many neighbours lie
apart, and where most did the next call on the same buffer caps its resident samples per SM (scattered gathers from
DRAM go faster with fewer requests in flight; local ones need every thread). A first call, or a buffer whose last
report is not in yet, runs the local layout. The samples are the same either way. Calls with fewer samples than the
cap holds (SCATTERED_SAMPLES_PER_SM on every SM) would run the same blocks per SM either way and observe nothing.

A call is prepared once per arrays (pointers, shapes, strides) and options: its checks, plan, texture object and
packed kernel arguments are kept (:class:`Call`, at most CALLS), so that a repeated call, the common case, costs an
output allocation and one launch.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from ..errors import InputTypeError, UsageError
from ..gpu import host, observe
from . import _checks
from ._checks import as_device_array, check_out, on_arrays_device

MODES = ("linear", "nearest")
ADDRESS = ("clamp", "wrap", "mirror", "border")
MAP_COORDINATES_MODE = {"clamp": "nearest", "wrap": "grid-wrap", "mirror": "reflect", "border": "grid-constant"}
CACHE_SIZE = 32  # texture objects kept (least recently used dropped, destroying the object)

_textures = None
_scratch = None

ORDERS = ("flat", "rows")
PLAN_SOURCES = ("auto", "global", "ldg", "row4", "points", "gather")
WEIGHTS = ("double", "float")


@dataclass(frozen=True)
class Plan:
    """How :func:`sample2d` lays out its work on the GPU (kernels/texture.cu).

    samples: samples per thread (1, 2, 4 or 8); every coordinate load goes out before the first fetch and every
        fetch before the first store (memory-level parallelism).
    vector: two samples per 16-byte coordinate load and 8-byte store (used where n, the row length and the
        pointers allow; otherwise one).
    order: ``"flat"`` (a block takes consecutive samples) or ``"rows"``: with coordinates of shape
        ``(..., rows, cols, 2)``, a thread's samples lie in neighbouring rows (a block covers a tile of the output,
        whose fetches overlap in the image); ``"flat"`` for any other shape.
    source: exact path only, where the 2x2 texels come from. On the image itself: ``"global"`` (plain loads, as
        first written), ``"ldg"`` (read-only cache) or ``"row4"`` (one aligned float4 per row, where the image's
        base and pitch are 16-byte aligned; ``"ldg"`` otherwise). On an :class:`ArrayImage`: ``"points"`` (four
        point fetches at texel centers) or ``"gather"`` (one tex2Dgather; not for wrap addressing, whose seam
        splits the 2x2 footprint, nor nearest: ``"points"`` there). ``"auto"``: ``"global"``, or on an
        ArrayImage ``"gather"`` where it applies.
    weights: exact path only, ``"double"`` (weights and sums in double) or ``"float"`` (map_coordinates' float32
        arithmetic).
    streaming: load the coordinates and store the output with the evict-first hint (each is touched once), leaving
        L2 to the image's texels, which scattered samples re-read.
    """

    samples: int = 1
    vector: bool = False
    order: str = "flat"
    source: str = "auto"
    weights: str = "double"
    streaming: bool = False

    def __post_init__(self):
        if self.samples not in (1, 2, 4, 8):
            raise UsageError(f"plan: samples={self.samples!r} not supported; expected 1, 2, 4 or 8")
        for name, value, allowed in (("order", self.order, ORDERS), ("source", self.source, PLAN_SOURCES),
                                     ("weights", self.weights, WEIGHTS)):
            if value not in allowed:
                raise UsageError(f"plan: {name} {value!r} not supported; expected one of {', '.join(allowed)}")


# The defaults, measured on an H200 (docs/notes/sample2d.md): eight samples per thread in
# rows order (a block's fetches overlap in the image) for the texture path; for the exact path map_coordinates'
# float32 arithmetic through the read-only cache, four samples per thread where the coordinates are shaped like an
# image and one where they are flat (scattered points: more samples per thread cost occupancy, not traffic)
TEXTURE_PLAN = Plan(samples=8, order="rows")
EXACT_PLAN = Plan(samples=4, order="rows", source="ldg", weights="float")
EXACT_FLAT_PLAN = Plan(source="ldg", weights="float")
FIRST_WRITTEN = Plan()  # the kernels as first written (one sample per thread, flat, double weights)

# Scattered points. A DRAM-bound gather of scattered points ties map_coordinates only with about 1,000 resident
# samples per SM; local gathers need every resident thread (H100 and H200: docs/notes/sample2d.md, "capping residency").
# Which kind a call has is seen by the previous call on the same coordinates (texture.cu's observe): where most of
# its observed neighbours were apart, the default plan becomes a flat one-sample kernel with its residency capped
# (runtime.l1_kept_cap; observed_launch). The results are the same either way.
SCATTERED_SAMPLES_PER_SM = 1024
SCATTERED_ARCHS = (9,)  # compute capability majors where that cap was measured; elsewhere full residency
SCATTERED_FRACTION = 0.5  # of the observed neighbour pairs (texture.cu's OBSERVERS x 32), apart: scattered
OBSERVERS, WARP = 8, 32  # texture.cu's OBSERVERS
BOARD_ROWS = 64  # coordinate buffers whose last observation is kept (least recently used dropped)
OBSERVE_EVERY = 16  # once seen, a buffer's points are observed again on every 16th call (observing costs local
# gathers of one sample per thread ~0.5%: docs/notes/sample2d.md, "the layout learned from the previous call")
_boards: dict = {}


def default_plan(exact: bool, image_shaped: bool, on_array: bool = False) -> Plan:
    """The plan sample2d uses when none is given (on an ArrayImage the exact path's texels come from its CUDA array:
    the source is left to ``"auto"``)."""
    if not exact:
        return TEXTURE_PLAN
    plan = EXACT_PLAN if image_shaped else EXACT_FLAT_PLAN
    return replace(plan, source="auto") if on_array else plan


def scattered(counts, cc_major: int) -> bool:
    """Whether the default plan caps residency for points whose last observation was ``counts`` (texture.cu's
    observe: per observer, how many of 32 neighbour pairs lay apart; None: not seen yet)."""
    return (counts is not None and cc_major in SCATTERED_ARCHS
            and sum(counts) > SCATTERED_FRACTION * WARP * len(counts))


def _observations(pts, n: int, info: dict | None = None):
    """(last counts or None, device address to write this call's observation, or 0 where this call observes
    nothing) for the coordinate buffer ``pts`` (``info``: runtime.device_info() of the current device): unseen
    buffers are observed, seen ones every OBSERVE_EVERY-th call; (None, 0) where the GPU cannot map host memory."""
    from ..gpu import runtime

    board = _board(info or runtime.device_info())
    return (None, 0) if board is None else _observe(board, (pts.data.ptr, n))


def observed(n: int, sm_count: int) -> bool:
    """Whether calls of ``n`` samples learn their points' kind: only where the cap can bind, more samples than
    SCATTERED_SAMPLES_PER_SM on every SM. Fewer run the same blocks per SM capped or not (the flat one-sample grid
    has at most n / 256 blocks), so small calls skip the observation and its bookkeeping."""
    return n > SCATTERED_SAMPLES_PER_SM * sm_count


def _board(info: dict):
    """The observation board of the device ``info`` describes (made on first use), or None where it cannot map
    host memory."""
    board = _boards.get(info["ordinal"])
    if board is None and info["can_map_host_memory"]:
        board = _boards[info["ordinal"]] = observe.Board.mapped(BOARD_ROWS, OBSERVERS)
    return board


def _observe(board, key) -> tuple:
    """(last counts or None, address for this call's observation or 0) of ``key``'s row: one call's bookkeeping."""
    counts, addr, calls = board.row(key)
    last = observe.seen(counts)
    return last, addr if observing(last, calls) else 0


def observing(last, calls: int) -> bool:
    """Whether a call observes its points: where nothing was seen yet, and on every OBSERVE_EVERY-th call (``calls``:
    this one's number on the buffer) once something was."""
    return last is None or calls % OBSERVE_EVERY == 0


def _caches():
    global _textures, _scratch
    if _textures is None:
        from ..gpu.texture import TextureCache

        _textures, _scratch = TextureCache(CACHE_SIZE), TextureCache(4)
    return _textures, _scratch


def clear_cache() -> None:
    """Destroy every cached texture object and padded copy, drop the prepared calls, and forget what calls observed
    of their points."""
    _calls.clear()
    if _textures is not None:
        _textures.clear()
        _scratch.clear()
    for ordinal, board in _boards.items():
        host.synchronize_device(ordinal)  # no kernel in flight still writes its observation into this memory
        board.close()
    _boards.clear()


def reference_index(i, size: int, address: str):
    """NumPy: the pixel index each integer index ``i`` reads under ``address``, and whether it is inside
    (``border`` reads 0 where it is not). The reference the kernels and the texture unit are checked against."""
    i = np.asarray(i, dtype=np.int64)
    if address not in ADDRESS:
        raise UsageError(f"address {address!r} not supported; expected one of {', '.join(ADDRESS)}")
    inside = (i >= 0) & (i < size)
    if address == "wrap":
        return np.mod(i, size), np.ones(i.shape, bool)
    if address == "mirror":  # period 2 * size, the edge pixel repeated: ... 1 0 | 0 1 ... size-1 | size-1 ...
        m = np.mod(i, 2 * size)
        return np.where(m < size, m, 2 * size - 1 - m), np.ones(i.shape, bool)
    return np.clip(i, 0, size - 1), (inside if address == "border" else np.ones(i.shape, bool))


def coordinate_map(shape: tuple[int, int], normalized: bool, exact: bool, address: str) -> tuple[tuple, bool]:
    """(row_scale, row_offset, col_scale, col_offset) taking the caller's coordinates to what the kernel wants,
    and whether the texture uses normalized coordinates (wrap and mirror work only with those).

    Software (``exact``): pixel units, centers at integers. Texture: texel units, centers at +0.5, or
    normalized units, centers at (i + 0.5) / size.
    """
    h, w = shape
    if exact:
        return ((float(h), -0.5, float(w), -0.5) if normalized else (1.0, 0.0, 1.0, 0.0)), False
    if normalized:
        return (1.0, 0.0, 1.0, 0.0), True
    if address in ("wrap", "mirror"):
        return (1.0 / h, 0.5 / h, 1.0 / w, 0.5 / w), True
    return (1.0, 0.5, 1.0, 0.5), False


def _check_modes(mode, address):
    if mode not in MODES:
        raise UsageError(f"mode {mode!r} not supported; expected one of {', '.join(MODES)}")
    if address not in ADDRESS:
        raise UsageError(f"address {address!r} not supported; expected one of {', '.join(ADDRESS)}")


def _check_image(image):
    import cupy

    img = as_device_array(image, "image", (np.float32,), ndim=2, contiguous=False)
    if img.shape[0] == 0 or img.shape[1] == 0:
        raise UsageError(f"image: an empty image of shape {img.shape} has nothing to sample")
    if max(img.shape) >= 2**31:
        raise UsageError(f"image: shape {img.shape} exceeds 2^31 - 1 pixels per side")
    if img.strides[1] != 4 or img.strides[0] % 4 or img.strides[0] < 4 * img.shape[1]:
        img = cupy.ascontiguousarray(img)  # the kernels read rows of contiguous pixels
    return img


def _check_coords(coords):
    import cupy

    pts = as_device_array(coords, "coords", (np.float32,), contiguous=False)
    if pts.ndim < 1 or pts.shape[-1] != 2:
        raise UsageError(f"coords: expected shape (..., 2) of (row, col), got {pts.shape}")
    return cupy.ascontiguousarray(pts)


def _check_args(image, coords, mode, address):
    _check_modes(mode, address)
    return _check_image(image), _check_coords(coords)


class ArrayImage:
    """A float32 image copied into a CUDA array (the texture unit's block-linear layout), for sampling many times:
    ``sample2d(ArrayImage(image), coords, ...)``. A snapshot: writes to ``image`` after the copy are not seen.

    The copy (read and write of the whole image) is made once, on CuPy's current stream; texture objects over it
    are made on first use and kept. ``gather``: allocate for tex2Dgather (default: where the GPU's gather limits
    allow), which the exact path's ``"gather"`` source needs.
    """

    @on_arrays_device  # the CUDA array and its texture objects belong to the image's device
    def __init__(self, image, gather: bool | None = None):
        from ..gpu import texture as T

        img = _check_image(image)
        self.device_id = img.data.device_id
        why = T.fits(img.shape, "array")
        if why:
            raise UsageError(f"image: {why}")
        self.shape = tuple(img.shape)
        self.gather = T.gather_fits(self.shape) if gather is None else bool(gather)
        self.array = T.cuda_array(img, gather=self.gather)
        self._objects: dict = {}
        self._calls: dict = {}  # sample2d's prepared calls on this image

    def texture(self, filter: str, address: str, normalized: bool):
        """The texture object over the array with this filter, address mode and coordinate normalization."""
        from ..gpu import texture as T

        key = (filter, address, bool(normalized))
        tex = self._objects.get(key)
        if tex is None:
            tex = self._objects[key] = T.array_object(self.array, self.shape, filter=filter, address=address,
                                                      normalized=normalized)
        return tex


def _texture(img, mode: str, address: str, normalized_tex: bool):
    """(a cached pitched texture over ``img``, None) or, when ``img``'s rows are misaligned for the texture unit,
    (a cached texture over a padded buffer, that buffer): each call copies the image into it first."""
    from ..gpu import texture as T

    textures, scratch = _caches()
    filt = "linear" if mode == "linear" else "point"
    h, w = img.shape
    why = T.fits((h, w), "pitch")
    if why:
        raise UsageError(f"image: {why}; use exact=True")
    src, pad = img, None
    if not T.pitch_ok(img.data.ptr, img.strides[0]):
        import cupy

        src = pad = scratch.get(("pad", h, w), lambda: cupy.empty((h, T.padded_width(w)), np.float32))
    key = (src.data.ptr, h, w, src.strides[0], filt, address, normalized_tex)
    return textures.get(key, lambda: T.pitched_texture(T.unowned_view(src), filter=filt, address=address,
                                                        normalized=normalized_tex, width=w)), pad


@dataclass(frozen=True)
class Launch:
    """One sample2d launch: the kernel, its grid and the tiling arguments of texture.cu's sample_points."""

    spec: object    # KernelSpec
    grid: int
    tiled: bool     # a tiled kernel (the width/tiles arguments) or one as first written
    vec: int = 1
    unroll: int = 1
    width: int = 0  # samples per row of the tiling
    tiles: int = 1  # tiles (blocks) across a row
    source: str | None = None  # the exact path's texel source


def tiling(n: int, row_length: int | None, plan: Plan, aligned: bool, block: int) -> tuple[int, int, int, int, int]:
    """(vec, unroll, width, tiles, grid) of a tiled launch over ``n`` samples.

    ``row_length``: the samples' row length when the coordinates are shaped like an image (else None); ``aligned``:
    coordinates 16-byte and output 8-byte aligned. Two samples per load need an even n (and an even row length in
    rows order); rows order needs a row length, else the order is flat.
    """
    rows = plan.order == "rows" and row_length is not None and 0 < row_length < 2**31
    vec = 2 if (plan.vector and plan.samples >= 2 and aligned and n % 2 == 0
                and (not rows or row_length % 2 == 0)) else 1
    unroll = plan.samples // vec
    if rows:
        tiles = math.ceil(row_length / (block * vec))
        return vec, unroll, row_length, tiles, tiles * -(-(n // row_length) // unroll)
    width = block * vec
    return vec, unroll, width, 1, max(1, math.ceil(n / (width * unroll)))


def exact_source(plan: Plan, on_array: bool, linear: bool, address: str, gather_ok: bool, row4_ok: bool) -> str:
    """The texel source the exact path uses (see Plan.source); UsageError where the plan's cannot apply."""
    from ..kernels import texture as K

    src = plan.source
    if src == "auto":
        src = "gather" if on_array else "global"
    if on_array and src not in K.TEXTURE_SOURCES:
        raise UsageError(f"plan: source {src!r} reads the image's own memory; an ArrayImage has points or gather")
    if not on_array and src in K.TEXTURE_SOURCES:
        raise UsageError(f"plan: source {src!r} reads a CUDA array; pass an ArrayImage")
    if src == "gather" and not (linear and gather_ok and address in K.GATHER_ADDRESS):
        return "points"
    if src == "row4" and not (linear and row4_ok):
        return "ldg"
    return src


@lru_cache(maxsize=256)
def plan_launch(n: int, row_length: int | None, plan: Plan, exact: bool, linear: bool, address: str,
                on_array: bool, aligned: bool, gather_ok: bool = False, row4_ok: bool = False) -> Launch:
    """The launch :func:`sample2d` makes (pure: CPU-testable). The default plan on the image itself gives the
    kernels as first written (sample_tex, sample_soft)."""
    from ..kernels import blocks_for
    from ..kernels import texture as K

    src = exact_source(plan, on_array, linear, address, gather_ok, row4_ok) if exact else None
    first_written = plan.samples == 1 and plan.order == "flat" and not plan.streaming and (
        not exact or (src in ("global", "ldg") and plan.weights == "double"))
    if first_written:
        spec = K.sample_soft(address, linear, src == "ldg") if exact else K.SAMPLE_TEX
        return Launch(spec, blocks_for(n, K.BLOCK), False, source=src)
    vec, unroll, width, tiles, grid = tiling(n, row_length, plan, aligned, K.BLOCK)
    spec = (K.sample_exact(address, linear, src, plan.weights == "float", vec, unroll, plan.streaming) if exact
            else K.sample_tex_tiled(vec, unroll, plan.streaming))
    return Launch(spec, grid, True, vec, unroll, width, tiles, src)


def launch_for(image, pts, out, *, exact: bool, mode: str, address: str, plan: Plan | None = None) -> Launch:
    """The launch :func:`sample2d` makes for checked arrays (``image``: a pitched float32 CuPy image or an
    ArrayImage; ``pts`` C-contiguous (..., 2); ``out`` its output): kernel, grid and tiling, for tools and tests."""
    return _launch_of(image, pts, out.size, pts.data.ptr % 16 == 0 and out.data.ptr % 8 == 0, exact, mode, address,
                      plan)


def _launch_of(image, pts, n: int, aligned: bool, exact: bool, mode: str, address: str, plan: Plan | None) -> Launch:
    on_array = isinstance(image, ArrayImage)
    row_length = pts.shape[-2] if pts.ndim >= 3 else None
    plan = plan if plan is not None else default_plan(exact, row_length is not None, on_array)
    row4_ok = not on_array and image.data.ptr % 16 == 0 and image.strides[0] % 16 == 0
    gather_ok = on_array and image.gather
    return plan_launch(n, row_length, plan, bool(exact), mode == "linear", address, on_array, aligned, gather_ok,
                       row4_ok)


def observed_launch(img, pts, out, ln: Launch, exact: bool, address: str) -> tuple[Launch, int, int]:
    """(launch, device address for this call's observation, dynamic shared bytes) of the default plan on the image
    itself (bilinear, coordinates in pixels): ``ln``, or a flat one-sample launch with its residency capped where
    the last call on these coordinates saw them scattered (:func:`scattered`; :func:`scattered_launch`)."""
    from ..gpu import runtime

    info = runtime.device_info()
    if not observed(out.size, info["sm_count"]):
        return ln, 0, 0
    counts, seen = _observations(pts, out.size, info)
    if scattered(counts, info["cc"][0]):
        capped = scattered_launch(out.size, exact, address, pts.data.ptr % 16 == 0 and out.data.ptr % 8 == 0,
                                  info["ordinal"])
        if capped is not None:
            return capped[0], seen, capped[1]
    return ln, seen, 0


@lru_cache(maxsize=256)
def scattered_launch(n: int, exact: bool, address: str, aligned: bool, ordinal: int) -> tuple[Launch, int] | None:
    """(launch, dynamic shared bytes) for ``n`` scattered points on device ``ordinal`` (current): the exact path's
    flat plan, or the texture path's tiled one-sample kernel, as a copy capped at SCATTERED_SAMPLES_PER_SM resident
    samples per SM (runtime.l1_kept_cap); None where no shared request gives that cap. Cached: a call's host time
    stays that of the plan it replaces."""
    from ..gpu import runtime
    from ..kernels import texture as K

    if exact:
        flat = plan_launch(n, None, EXACT_FLAT_PLAN, True, True, address, False, aligned)
    else:
        vec, unroll, width, tiles, grid = tiling(n, None, FIRST_WRITTEN, False, K.BLOCK)
        flat = Launch(K.sample_tex_tiled(vec, unroll), grid, True, vec, unroll, width, tiles)
    capped = runtime.l1_kept_cap(flat.spec, K.BLOCK, max(1, SCATTERED_SAMPLES_PER_SM // K.BLOCK))
    return (replace(flat, spec=capped[0]), capped[1]) if capped is not None else None


@on_arrays_device
def sample2d(image, coords, *, mode: str = "linear", address: str = "clamp", normalized: bool = False,
             exact: bool = False, out=None, plan: Plan | None = None):
    """Sample the 2-D float32 ``image`` at ``coords``.

    Args:
        image: a (rows, cols) float32 GPU array, or an :class:`ArrayImage` (a copy in a CUDA array).
        coords: a float32 GPU array of shape (..., 2) holding (row, col) pairs (see the module for units).
        mode: ``"linear"`` (bilinear) or ``"nearest"`` (the pixel at floor(p + 0.5)).
        address: ``"clamp"``, ``"wrap"``, ``"mirror"`` or ``"border"`` for points outside the image.
        normalized: coordinates as fractions of the image instead of pixels.
        exact: software interpolation (map_coordinates' results) instead of the texture unit's 8-bit weights.
        out: a float32 C-contiguous GPU array of shape ``coords.shape[:-1]`` to write (default: a new one).
        plan: how the work is laid out (:class:`Plan`); default :func:`default_plan`.

    Returns:
        A float32 array of shape ``coords.shape[:-1]``.

    Raises:
        TypeError: a host array or a dtype other than float32. UsageError: a bad shape, mode, address or plan.

    See also: ``cupyx.scipy.ndimage.map_coordinates`` (``order=1``; modes in ``MAP_COORDINATES_MODE``).
    """
    nd = _checks._NDARRAY
    calls = key = None
    if type(coords) is nd and (out is None or type(out) is nd):
        # a repeated call on the same arrays (pointers, shapes, strides) and options runs its prepared Call
        key = (coords.data.ptr, coords.shape, coords.strides, coords.dtype, mode, address, normalized, exact, plan,
               out is None or out.data.ptr % 8 == 0)
        if type(image) is nd:
            key, calls = (image.data.ptr, image.shape, image.strides, image.dtype, *key), _calls
        elif type(image) is ArrayImage:
            calls = image._calls
        try:
            call = calls.get(key) if calls is not None else None
        except TypeError:  # an unhashable option: _prepare says which
            call = calls = None
        if call is not None:
            return call(image, out)
    call, reusable = _prepare(image, coords, mode, address, normalized, exact, out, plan)
    if reusable and calls is not None:
        with _calls_lock:
            if len(calls) >= CALLS:
                calls.pop(next(iter(calls)))  # the oldest prepared call
            calls[key] = call
    return call(image, out)


CALLS = 128  # prepared calls kept per module (CuPy images) and per ArrayImage; the oldest dropped first
_calls: dict = {}
_calls_lock = threading.Lock()


class Call:
    """One sample2d call prepared for its arrays and options: the launch's arguments packed once
    (runtime.Launcher.over), so that a call allocates its output, copies a misaligned image for the texture unit
    where it must, reads the points' last observation and launches. Holds the texture objects it uses."""

    __slots__ = ("shape", "n", "local", "pad", "board", "key", "cc", "capped", "make_capped", "keep")

    def __init__(self, shape: tuple, n: int):
        self.shape, self.n = shape, n
        self.local = self.pad = self.board = self.key = self.keep = self.make_capped = None
        self.capped, self.cc = False, 0  # capped: False until needed, then a Launcher or None

    def __call__(self, image, out):
        out = _cupy().empty(self.shape, _F32) if out is None else check_out(out, self.shape, np.float32)
        if self.n == 0:
            return out
        if self.pad is not None:  # the texture unit reads a padded copy of a misaligned image
            buf, width = self.pad
            buf[:, :width] = image
        launch, seen = self.local, 0
        if self.board is not None:
            last, seen = _observe(self.board, self.key)
            if scattered(last, self.cc):
                if self.capped is False:
                    self.capped = self.make_capped()
                launch = self.capped or launch
        launch(out, seen)  # slot 0: the output; the last slot of a tiled kernel: the observation
        return out


_F32 = np.dtype(np.float32)


def _prepare(image, coords, mode, address, normalized, exact, out, plan) -> tuple[Call, bool]:
    """Check the arguments (the one-line errors) and prepare the call: (Call, whether it holds for later calls
    with the same arrays: not where the image or the coordinates had to be copied)."""
    from ..gpu import runtime
    from ..kernels import texture as K

    _check_modes(mode, address)
    if plan is not None and not isinstance(plan, Plan):
        raise InputTypeError(f"plan: expected a gpumemlab.sample.Plan or None, got {type(plan).__name__}")
    on_array = isinstance(image, ArrayImage)
    img = None if on_array else _check_image(image)
    pts = _check_coords(coords)
    shape = image.shape if on_array else img.shape
    call = Call(pts.shape[:-1], math.prod(pts.shape[:-1]))
    if out is not None:
        out = check_out(out, call.shape, np.float32)
    reusable = (on_array or img is image) and pts is coords
    if call.n == 0:
        return call, reusable
    exact, linear = bool(exact), mode == "linear"
    (rs, ro, cs, co), normalized_tex = coordinate_map(shape, bool(normalized), exact, address)
    scalars = (np.float32(rs), np.float32(ro), np.float32(cs), np.float32(co))
    aligned = pts.data.ptr % 16 == 0 and (out is None or out.data.ptr % 8 == 0)
    ln = _launch_of(image if on_array else img, pts, call.n, aligned, exact, mode, address, plan)
    # pointers, not arrays: a kept Call must not keep the caller's arrays alive (copies made here it must: below)
    pts_ptr, size = np.uint64(pts.data.ptr), (np.int32(shape[0]), np.int32(shape[1]))
    if not exact:
        filt = "linear" if linear else "point"
        tex, pad = (image.texture(filt, address, normalized_tex), None) if on_array else _texture(
            img, mode, address, normalized_tex)
        call.pad = None if pad is None else (pad, shape[1])
        heads = ((tex.handle,),) * 2  # (tiled, first-written) kernels' arguments before the points
    elif on_array:  # texels addressed in software and fetched at exact positions: one object serves every mode
        tex = image.texture("point", "clamp", False)
        heads = ((np.uint64(0), np.int64(0), tex.handle, *size),) * 2
    else:
        tex, src, pitch = None, np.uint64(img.data.ptr), np.int64(img.strides[0] // 4)
        heads = ((src, pitch, np.uint64(0), *size), (src, pitch, *size))
    call.keep = (tex, call.pad) if reusable else (tex, call.pad, img, pts)

    def launcher(ln: Launch, shmem: int = 0):
        """texture.cu's argument order: out, the image, pts, n, [width, tiles,] scales and offsets[, seen]."""
        if ln.tiled:
            args = (np.uint64(0), *heads[0], pts_ptr, np.int64(call.n), np.int32(ln.width), np.int32(ln.tiles),
                    *scalars, np.uint64(0))
            return runtime.Launcher.over(ln.spec, ln.grid, K.BLOCK, args, (0, len(args) - 1), shmem=shmem)
        args = (np.uint64(0), *heads[1], pts_ptr, np.int64(call.n), *scalars)
        return runtime.Launcher.over(ln.spec, ln.grid, K.BLOCK, args, (0,), shmem=shmem)

    call.local = launcher(ln)
    info = runtime.device_info()
    # the default plan on the image itself (bilinear, pixel coordinates) learns the points' kind where it matters
    if linear and plan is None and not on_array and not normalized_tex and observed(call.n, info["sm_count"]):
        call.board, call.cc, call.key = _board(info), info["cc"][0], (pts.data.ptr, call.n)
        ordinal = info["ordinal"]

        def make_capped():
            capped = scattered_launch(call.n, exact, address, aligned, ordinal)
            return launcher(*capped) if capped is not None else None
        call.make_capped = make_capped
    return call, reusable


def _cupy():
    import cupy

    return cupy
