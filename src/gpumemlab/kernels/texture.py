"""Instantiations of texture.cu (texture sampling and its software reference)."""

from . import KernelSpec

SRC = "texture.cu"
ADDRESS_MODES = {"clamp": 0, "wrap": 1, "mirror": 2, "border": 3}
SAMPLE_TEX = KernelSpec(SRC, "sample_tex")
# the other texture types: a 1-D gather (global loads of float or uint8, tex1Dfetch on linear memory, tex1D on a
# 1-D CUDA array) and trilinear sampling of a volume (software, tex3D)
LOOKUP_GLOBAL = {t: KernelSpec(SRC, f"lookup_global<{c}>") for t, c in (("float32", "float"), ("uint8", "unsigned char"))}
LOOKUP_FETCH = KernelSpec(SRC, "lookup_fetch")
LOOKUP_TEX1D = KernelSpec(SRC, "lookup_tex1d")
SAMPLE3D_SOFT = KernelSpec(SRC, "sample3d_soft")
SAMPLE3D_TEX = KernelSpec(SRC, "sample3d_tex")
BLOCK = 256

# Where sample_exact reads a sample's 2x2 texels (texture.cu's Source): the pitched image through plain loads,
# __ldg, or one aligned float4 per row; a CUDA-array texture through four point fetches or one tex2Dgather.
SOURCES = {"global": 0, "ldg": 1, "row4": 2, "points": 3, "gather": 4}
TEXTURE_SOURCES = ("points", "gather")  # these read a texture object (a CUDA array), the others the image itself
GATHER_ADDRESS = ("clamp", "mirror", "border")  # wrap's seam splits the footprint (texture.cu): points instead
# (VEC, UNROLL): samples per coordinate load x loads per thread; the tiled kernels' geometries
GEOMETRIES = ((1, 1), (1, 2), (1, 4), (1, 8), (2, 1), (2, 2), (2, 4))


def sample_soft(address: str, linear: bool, ldg: bool = False) -> KernelSpec:
    if address not in ADDRESS_MODES:
        raise ValueError(f"sample_soft: no address mode {address!r}")
    return KernelSpec(SRC, f"sample_soft<{ADDRESS_MODES[address]}, {int(bool(linear))}, {int(bool(ldg))}>")


def _geometry(vec: int, unroll: int) -> tuple[int, int]:
    if (vec, unroll) not in GEOMETRIES:
        raise ValueError(f"texture: no geometry vec={vec} unroll={unroll}; one of {GEOMETRIES}")
    return vec, unroll


def _streaming(stream: bool) -> tuple[tuple[str, str], ...]:
    """texture.cu's SAMPLE_STREAM: evict-first loads of the coordinates and stores of the output."""
    return (("SAMPLE_STREAM", "1"),) if stream else ()


def sample_tex_tiled(vec: int, unroll: int, stream: bool = False) -> KernelSpec:
    vec, unroll = _geometry(vec, unroll)
    return KernelSpec(SRC, f"sample_tex_tiled<{vec}, {unroll}>", defines=_streaming(stream))


def sample_exact(address: str, linear: bool, source: str, fp32: bool, vec: int, unroll: int,
                 stream: bool = False) -> KernelSpec:
    if address not in ADDRESS_MODES:
        raise ValueError(f"sample_exact: no address mode {address!r}")
    if source not in SOURCES:
        raise ValueError(f"sample_exact: no source {source!r}; one of {', '.join(SOURCES)}")
    if source == "gather" and address not in GATHER_ADDRESS:
        raise ValueError(f"sample_exact: gather supports only {GATHER_ADDRESS} addressing, not {address!r}")
    vec, unroll = _geometry(vec, unroll)
    return KernelSpec(SRC, f"sample_exact<{ADDRESS_MODES[address]}, {int(bool(linear))}, {SOURCES[source]}, "
                           f"{int(bool(fp32))}, {vec}, {unroll}>", defines=_streaming(stream))


# Declared (compiled for every arch by CI): the kernels as first written, every tiled texture geometry, and the
# exact kernel's variants for clamp addressing and bilinear filtering (the library's default mode), the default
# plans' kernels with the streaming hints (Plan(streaming=True): measured no faster on an H200, docs/notes/sample2d.md)
# plus one tiled geometry of every other address mode and filter. Other instantiations compile on use.
KERNELS = [SAMPLE_TEX, *LOOKUP_GLOBAL.values(), LOOKUP_FETCH, LOOKUP_TEX1D, SAMPLE3D_SOFT, SAMPLE3D_TEX] + [sample_soft(a, lin) for a in ADDRESS_MODES for lin in (False, True)] + [
    sample_soft("clamp", lin, True) for lin in (False, True)] + [
    sample_tex_tiled(v, u) for v, u in GEOMETRIES] + [
    sample_exact("clamp", True, s, f, v, u) for s in SOURCES for f in (False, True) for v, u in GEOMETRIES] + [
    sample_tex_tiled(1, 8, True)] + [sample_exact("clamp", True, "ldg", True, 1, u, True) for u in (1, 4)] + [
    sample_exact(a, lin, s, True, 2, 2) for a in ADDRESS_MODES for lin in (False, True) for s in SOURCES
    if (a, lin) != ("clamp", True) and (s != "gather" or a in GATHER_ADDRESS)]
