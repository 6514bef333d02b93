"""Texture objects over float32 2-D images (seed 001, "Two CUDA Texture Types"): pitched linear memory
(the image's own memory, zero-copy) or a CUDA array (a copy in the texture unit's block-linear layout).

A :class:`Texture` holds its ``cudaTextureObject_t`` (``handle``, passed to kernels as a 64-bit argument) and
whatever the object reads from; the object is destroyed when the Texture is dropped.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import cache

from . import runtime

ADDRESS = ("clamp", "wrap", "mirror", "border")
FILTERS = ("point", "linear")
LAYOUTS = ("pitch", "array")


@dataclass(frozen=True)
class Texture:
    obj: object            # cupy.cuda.texture.TextureObject
    source: object         # the CuPy array or CUDAarray the object reads
    layout: str
    filter: str
    address: str
    normalized: bool
    shape: tuple[int, int]

    @property
    def handle(self) -> int:
        import numpy as np

        return np.uint64(self.obj.ptr)


def limits() -> dict:
    """Alignment and size limits of 2-D textures on the current device (bytes / texels)."""
    return _limits(runtime.current_ordinal())


@cache
def _limits(ordinal: int) -> dict:
    def a(name):
        return runtime.attribute(name, ordinal)

    return dict(pitch_alignment=a("TEXTURE_PITCH_ALIGNMENT"), base_alignment=a("TEXTURE_ALIGNMENT"),
                linear_width=a("MAXIMUM_TEXTURE2D_LINEAR_WIDTH"), linear_height=a("MAXIMUM_TEXTURE2D_LINEAR_HEIGHT"),
                linear_pitch=a("MAXIMUM_TEXTURE2D_LINEAR_PITCH"),
                array_width=a("MAXIMUM_TEXTURE2D_WIDTH"), array_height=a("MAXIMUM_TEXTURE2D_HEIGHT"))


def pitch_ok(ptr: int, pitch_bytes: int) -> bool:
    """Whether memory at ``ptr`` with rows ``pitch_bytes`` apart can back a pitched texture as is."""
    lim = limits()
    return ptr % lim["base_alignment"] == 0 and pitch_bytes % lim["pitch_alignment"] == 0


def padded_width(width: int) -> int:
    """Row length in floats that meets the device's texture pitch alignment."""
    step = max(1, limits()["pitch_alignment"] // 4)
    return -(-width // step) * step


def fits(shape: tuple[int, int], layout: str) -> str | None:
    """Why an image of ``shape`` (rows, cols) cannot be a texture of ``layout``, or None."""
    lim = limits()
    h, w = shape
    wmax, hmax = (lim["linear_width"], lim["linear_height"]) if layout == "pitch" else (
        lim["array_width"], lim["array_height"])
    if w > wmax or h > hmax:
        return f"a {h} x {w} image exceeds this GPU's {layout} texture limit of {hmax} x {wmax} texels"
    return None


def _descriptors(filter: str, address: str, normalized: bool):
    from cupy.cuda import runtime as rt
    from cupy.cuda import texture as tx

    if filter not in FILTERS or address not in ADDRESS:
        raise ValueError(f"texture: filter {filter!r} / address {address!r} not one of {FILTERS} / {ADDRESS}")
    mode = getattr(rt, f"cudaAddressMode{address.capitalize()}")
    fmode = rt.cudaFilterModeLinear if filter == "linear" else rt.cudaFilterModePoint
    channel = tx.ChannelFormatDescriptor(32, 0, 0, 0, rt.cudaChannelFormatKindFloat)
    tex = tx.TextureDescriptor(addressModes=(mode, mode), filterMode=fmode, readMode=rt.cudaReadModeElementType,
                               borderColors=(0.0, 0.0, 0.0, 0.0), normalizedCoords=int(bool(normalized)))
    return channel, tex


def unowned_view(image):
    """A CuPy view of ``image``'s memory that does not keep the image alive (for cached texture objects)."""
    import cupy

    mem = cupy.cuda.UnownedMemory(image.data.ptr, image.nbytes, None)
    return cupy.ndarray(image.shape, image.dtype, cupy.cuda.MemoryPointer(mem, 0), strides=image.strides)


def pitched_texture(image, *, filter: str = "linear", address: str = "clamp", normalized: bool = False,
                    width: int | None = None) -> Texture:
    """A texture over the rows of the 2-D float32 ``image`` in place (cudaResourceTypePitch2D).

    ``image``'s row pitch must meet :func:`pitch_ok`; ``width`` (default: all columns) lets a padded buffer
    expose only its first columns.
    """
    from cupy.cuda import runtime as rt
    from cupy.cuda import texture as tx

    h, cols = image.shape
    w = cols if width is None else int(width)
    pitch = image.strides[0]
    if image.strides[1] != 4 or not pitch_ok(image.data.ptr, pitch):
        raise ValueError(f"pitched texture: rows {pitch} bytes apart at address {image.data.ptr:#x} do not meet "
                         f"the device's texture alignment {limits()}")
    channel, tex = _descriptors(filter, address, normalized)
    res = tx.ResourceDescriptor(rt.cudaResourceTypePitch2D, arr=image, chDesc=channel, width=w, height=h,
                                pitchInBytes=pitch)
    return Texture(tx.TextureObject(res, tex), image, "pitch", filter, address, normalized, (h, w))


# cudaArrayTextureGather (CUDA runtime API, cudaMalloc3DArray flags): lets tex2Dgather read the array (CuPy names
# no constant for it)
ARRAY_TEXTURE_GATHER = 0x08


def gather_fits(shape: tuple[int, int]) -> bool:
    """Whether an image of ``shape`` (rows, cols) fits this GPU's limit for gather-capable CUDA arrays."""
    width, height = _gather_limits(runtime.current_ordinal())
    return shape[1] <= width and shape[0] <= height


@cache
def _gather_limits(ordinal: int) -> tuple[int, int]:
    return (runtime.attribute("MAXIMUM_TEXTURE2D_GATHER_WIDTH", ordinal),
            runtime.attribute("MAXIMUM_TEXTURE2D_GATHER_HEIGHT", ordinal))


def cuda_array(image, *, gather: bool = False):
    """A CUDA array (the texture unit's block-linear layout) holding a copy of the 2-D float32 ``image``, made on
    CuPy's current stream; ``gather``: allocated for tex2Dgather (see :func:`gather_fits`)."""
    import cupy
    from cupy.cuda import runtime as rt
    from cupy.cuda import texture as tx

    h, w = image.shape
    channel = tx.ChannelFormatDescriptor(32, 0, 0, 0, rt.cudaChannelFormatKindFloat)
    arr = tx.CUDAarray(channel, w, h, 0, ARRAY_TEXTURE_GATHER if gather else 0)
    arr.copy_from(cupy.ascontiguousarray(image), cupy.cuda.get_current_stream())
    return arr


def array_object(arr, shape: tuple[int, int], *, filter: str = "linear", address: str = "clamp",
                 normalized: bool = False) -> Texture:
    """A texture object over the CUDA array ``arr`` of ``shape`` (rows, cols), e.g. from :func:`cuda_array`."""
    from cupy.cuda import runtime as rt
    from cupy.cuda import texture as tx

    _, tex = _descriptors(filter, address, normalized)
    res = tx.ResourceDescriptor(rt.cudaResourceTypeArray, cuArr=arr)
    return Texture(tx.TextureObject(res, tex), arr, "array", filter, address, normalized, tuple(shape))


def array_texture(image, *, filter: str = "linear", address: str = "clamp", normalized: bool = False) -> Texture:
    """A texture over a CUDA array holding a copy of ``image`` (made on CuPy's current stream)."""
    return array_object(cuda_array(image), image.shape, filter=filter, address=address, normalized=normalized)


class TextureCache:
    """At most ``size`` textures, least recently used dropped first (and with it its texture object)."""

    def __init__(self, size: int = 32):
        self.size = int(size)
        self._items: OrderedDict = OrderedDict()

    def get(self, key, make):
        item = self._items.pop(key, None)
        if item is None:
            item = make()
        self._items[key] = item
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        return item

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


def _object(res, *, dims: int, filter: str = "point", normalized_read: bool = False):
    """A texture object over ``res``: clamp addressing in every dimension, integer-sized coordinates."""
    from cupy.cuda import runtime as rt
    from cupy.cuda import texture as tx

    if filter not in FILTERS:
        raise ValueError(f"texture: filter {filter!r} not one of {FILTERS}")
    tex = tx.TextureDescriptor(addressModes=(rt.cudaAddressModeClamp,) * dims,
                               filterMode=rt.cudaFilterModeLinear if filter == "linear" else rt.cudaFilterModePoint,
                               readMode=rt.cudaReadModeNormalizedFloat if normalized_read else rt.cudaReadModeElementType,
                               normalizedCoords=0)
    return tx.TextureObject(res, tex)


def _channel(dtype):
    import numpy as np
    from cupy.cuda import runtime as rt
    from cupy.cuda import texture as tx

    dtype = np.dtype(dtype)
    kinds = {"f": rt.cudaChannelFormatKindFloat, "u": rt.cudaChannelFormatKindUnsigned,
             "i": rt.cudaChannelFormatKindSigned}
    if dtype.kind not in kinds or dtype.itemsize not in (1, 2, 4):
        raise ValueError(f"texture: no channel format for {dtype}")
    return tx.ChannelFormatDescriptor(8 * dtype.itemsize, 0, 0, 0, kinds[dtype.kind])


def linear_texture(array, *, normalized_read: bool = False) -> Texture:
    """A 1-D texture over the contiguous ``array``'s own memory (cudaResourceTypeLinear), read with
    ``tex1Dfetch`` at integer indices: no filtering, no address modes (seed 001, 'Two CUDA Texture Types').
    ``normalized_read``: 8- and 16-bit integers come back as floats in [0, 1] ([-1, 1] signed)."""
    from cupy.cuda import runtime as rt
    from cupy.cuda import texture as tx

    res = tx.ResourceDescriptor(rt.cudaResourceTypeLinear, arr=array, chDesc=_channel(array.dtype),
                                sizeInBytes=array.nbytes)
    return Texture(_object(res, dims=1, normalized_read=normalized_read), array, "linear", "point", "clamp", False,
                   (array.size,))


def volume_texture(data, *, filter: str = "linear") -> Texture:
    """A texture over a CUDA array holding a copy of the 1-D or 3-D (depth, rows, cols) float32 ``data``,
    read with ``tex1D`` / ``tex3D`` at texel centers + 0.5, clamp addressing."""
    import cupy

    from cupy.cuda import runtime as rt
    from cupy.cuda import texture as tx

    if data.ndim not in (1, 3):
        raise ValueError(f"volume_texture: 1-D or 3-D data, got {data.ndim}-D")
    shape = tuple(data.shape)
    w, h, d = (shape[0], 0, 0) if data.ndim == 1 else (shape[2], shape[1], shape[0])
    arr = tx.CUDAarray(_channel(data.dtype), w, h, d)
    arr.copy_from(cupy.ascontiguousarray(data), cupy.cuda.get_current_stream())
    res = tx.ResourceDescriptor(rt.cudaResourceTypeArray, cuArr=arr)
    return Texture(_object(res, dims=data.ndim, filter=filter), arr, "array", filter, "clamp", False, shape)
