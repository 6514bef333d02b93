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
"""

from __future__ import annotations

import numpy as np

from ..errors import UsageError
from ._checks import as_device_array, check_out

MODES = ("linear", "nearest")
ADDRESS = ("clamp", "wrap", "mirror", "border")
MAP_COORDINATES_MODE = {"clamp": "nearest", "wrap": "grid-wrap", "mirror": "reflect", "border": "grid-constant"}
CACHE_SIZE = 32  # texture objects kept (least recently used dropped, destroying the object)

_textures = None
_scratch = None


def _caches():
    global _textures, _scratch
    if _textures is None:
        from ..gpu.texture import TextureCache

        _textures, _scratch = TextureCache(CACHE_SIZE), TextureCache(4)
    return _textures, _scratch


def clear_cache() -> None:
    """Destroy every cached texture object and padded copy."""
    if _textures is not None:
        _textures.clear()
        _scratch.clear()


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


def _check_args(image, coords, mode, address):
    import cupy

    if mode not in MODES:
        raise UsageError(f"mode {mode!r} not supported; expected one of {', '.join(MODES)}")
    if address not in ADDRESS:
        raise UsageError(f"address {address!r} not supported; expected one of {', '.join(ADDRESS)}")
    img = as_device_array(image, "image", (np.float32,), ndim=2, contiguous=False)
    if img.shape[0] == 0 or img.shape[1] == 0:
        raise UsageError(f"image: an empty image of shape {img.shape} has nothing to sample")
    if max(img.shape) >= 2**31:
        raise UsageError(f"image: shape {img.shape} exceeds 2^31 - 1 pixels per side")
    if img.strides[1] != 4 or img.strides[0] % 4 or img.strides[0] < 4 * img.shape[1]:
        img = cupy.ascontiguousarray(img)  # the kernels read rows of contiguous pixels
    pts = as_device_array(coords, "coords", (np.float32,), contiguous=False)
    if pts.ndim < 1 or pts.shape[-1] != 2:
        raise UsageError(f"coords: expected shape (..., 2) of (row, col), got {pts.shape}")
    return img, cupy.ascontiguousarray(pts)


def _texture(img, mode: str, address: str, normalized_tex: bool):
    """A cached pitched texture over ``img`` (or over a padded copy made now, when its rows are misaligned)."""
    from ..gpu import texture as T

    textures, scratch = _caches()
    filt = "linear" if mode == "linear" else "point"
    h, w = img.shape
    why = T.fits((h, w), "pitch")
    if why:
        raise UsageError(f"image: {why}; use exact=True")
    src = img
    if not T.pitch_ok(img.data.ptr, img.strides[0]):
        import cupy

        src = scratch.get(("pad", h, w), lambda: cupy.empty((h, T.padded_width(w)), np.float32))
        src[:, :w] = img
    key = (src.data.ptr, h, w, src.strides[0], filt, address, normalized_tex)
    return textures.get(key, lambda: T.pitched_texture(T.unowned_view(src), filter=filt, address=address,
                                                        normalized=normalized_tex, width=w))


def sample2d(image, coords, *, mode: str = "linear", address: str = "clamp", normalized: bool = False,
             exact: bool = False, out=None):
    """Sample the 2-D float32 ``image`` at ``coords``.

    Args:
        image: a (rows, cols) float32 GPU array.
        coords: a float32 GPU array of shape (..., 2) holding (row, col) pairs (see the module for units).
        mode: ``"linear"`` (bilinear) or ``"nearest"`` (the pixel at floor(p + 0.5)).
        address: ``"clamp"``, ``"wrap"``, ``"mirror"`` or ``"border"`` for points outside the image.
        normalized: coordinates as fractions of the image instead of pixels.
        exact: software interpolation in double (map_coordinates' results) instead of the texture unit.
        out: a float32 C-contiguous GPU array of shape ``coords.shape[:-1]`` to write (default: a new one).

    Returns:
        A float32 array of shape ``coords.shape[:-1]``.

    Raises:
        TypeError: a host array or a dtype other than float32. UsageError: a bad shape, mode or address.

    See also: ``cupyx.scipy.ndimage.map_coordinates`` (``order=1``; modes in ``MAP_COORDINATES_MODE``).
    """
    import cupy

    from ..gpu import runtime
    from ..kernels import blocks_for
    from ..kernels import texture as K

    img, pts = _check_args(image, coords, mode, address)
    out = cupy.empty(pts.shape[:-1], np.float32) if out is None else check_out(out, pts.shape[:-1], np.float32)
    n = out.size
    if n == 0:
        return out
    (rs, ro, cs, co), normalized_tex = coordinate_map(img.shape, bool(normalized), bool(exact), address)
    scalars = (np.float32(rs), np.float32(ro), np.float32(cs), np.float32(co))
    grid = blocks_for(n, K.BLOCK)
    if exact:
        runtime.launch(K.sample_soft(address, mode == "linear"), grid, K.BLOCK, out, img,
                       np.int64(img.strides[0] // 4), np.int32(img.shape[0]), np.int32(img.shape[1]), pts,
                       np.int64(n), *scalars)
    else:
        tex = _texture(img, mode, address, normalized_tex)
        runtime.launch(K.SAMPLE_TEX, grid, K.BLOCK, out, tex.handle, pts, np.int64(n), *scalars)
    return out
