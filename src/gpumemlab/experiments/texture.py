"""Texture memory: 2-D gathers through the texture unit vs global loads, hardware bilinear filtering vs the same
interpolation in software, address modes, pitched linear memory vs CUDA arrays, `gpumemlab.sample2d` against
`cupyx.scipy.ndimage.map_coordinates`, and the seed's other texture types (tex1Dfetch on linear memory, tex1D,
tex3D, the normalized-float read mode)."""

from __future__ import annotations

import numpy as np

from ..bench.verify import device_random_nonzero
from ..errors import VerificationError
from ..gpu import runtime
from ..gpu import texture as T
from ..kernels import blocks_for
from ..kernels import texture as K
from ..ops.sample import MAP_COORDINATES_MODE, ArrayImage, coordinate_map, sample2d
from ._cite import Finding, Num, constant, field, join, q, sentence
from ._declare import Case, Check, Claim, Experiment, outside, seed

WEIGHT_BITS = "9-bit fixed-point weights with 8 fractional bits"


def smooth_warp(cupy, h: int, w: int, angle: float = 0.3, scale: float = 1.1, wobble: float = 3.0):
    """(h, w, 2) float32 (row, col): a rotation and scale about the center plus a mild sinusoidal distortion."""
    r, c = cupy.meshgrid(cupy.arange(h, dtype=cupy.float32), cupy.arange(w, dtype=cupy.float32), indexing="ij")
    cy, cx = (h - 1) / 2, (w - 1) / 2
    ca, sa = np.float32(scale * np.cos(angle)), np.float32(scale * np.sin(angle))
    rr = cy + ca * (r - cy) - sa * (c - cx) + wobble * cupy.sin(c * np.float32(2 * np.pi / 512))
    cc = cx + sa * (r - cy) + ca * (c - cx) + wobble * cupy.sin(r * np.float32(2 * np.pi / 512))
    return cupy.stack([rr, cc], -1).astype(cupy.float32)


def uniform_points(cupy, h: int, w: int, n: int, seed: int):
    gen = cupy.random.default_rng(seed)
    return (gen.random((n, 2), dtype=cupy.float32) * cupy.asarray([h - 1, w - 1], cupy.float32))


def _mismatch_check(run, out, expected, max_fraction: float, what: str, extra: dict):
    """Point sampling through the texture unit may round a tie (p + 0.5 on an integer) the other way."""
    def check():
        out.fill(np.nan)
        run()
        want = expected() if callable(expected) else expected
        bad = int((out != want).sum())
        extra["mismatch_fraction"] = bad / out.size
        if bad > max_fraction * out.size or bool(np.isnan(out).any()):
            raise VerificationError(f"{what}: {bad} of {out.size} samples differ from the reference")
    return check


def _error_check(run, out, expected, tol: float, what: str, extra: dict, repeat: bool = False):
    """Bilinear: the error against the float64 interpolation is recorded; above ``tol`` it fails. ``repeat``: the
    call checked is a second one, after the first has finished (sample2d lays a call out from what the previous
    call on the same points observed: the check sees the layout the timing repeats)."""
    def check():
        import cupy

        from ..gpu import runtime

        if repeat:
            run()
            runtime.synchronize()
        out.fill(np.nan)
        run()

        want = cupy.asarray(expected() if callable(expected) else expected)
        err = abs(out.astype(np.float64) - want)
        extra["max_abs_error"] = float(err.max())
        extra["rms_error"] = float((err ** 2).mean() ** 0.5)
        if not extra["max_abs_error"] <= tol:
            raise VerificationError(f"{what}: max error {extra['max_abs_error']:.3e} above {tol:.1e}")
    return check


def cases(session, params):
    import cupy
    from cupyx.scipy.ndimage import map_coordinates

    side = params["quick_image"] if session.quick else params["image"]
    img = device_random_nonzero(side * side, np.float32, session.seed).reshape(side, side)
    lo, hi = float(img.min()), float(img.max())
    spread = hi - lo
    arrays = {}

    def tex_for(layout, filt, address, normalized):
        key = (layout, filt, address, normalized)
        if key not in arrays:
            make = T.pitched_texture if layout == "pitch" else T.array_texture
            arrays[key] = make(img, filter=filt, address=address, normalized=normalized)
        return arrays[key]

    def tex_run(out, pts, layout, filt, address, normalized=False):
        tex = tex_for(layout, filt, address, normalized or address in ("wrap", "mirror"))
        scal = coordinate_map(img.shape, normalized, False, address)[0]
        grid = blocks_for(out.size, K.BLOCK)
        return lambda: runtime.launch(K.SAMPLE_TEX, grid, K.BLOCK, out, tex.handle, pts, np.int64(out.size),
                                      *map(np.float32, scal))

    def soft_run(out, pts, address, linear, ldg=False, normalized=False):
        spec = K.sample_soft(address, linear, ldg)
        scal = coordinate_map(img.shape, normalized, True, address)[0]
        grid = blocks_for(out.size, K.BLOCK)
        return lambda: runtime.launch(spec, grid, K.BLOCK, out, img, np.int64(side), np.int32(side), np.int32(side),
                                      pts, np.int64(out.size), *map(np.float32, scal))

    def mc_run(out, pts_t, order, address="clamp"):
        mode = MAP_COORDINATES_MODE[address]
        return lambda: map_coordinates(img, pts_t, output=out, order=order, mode=mode, cval=0.0)

    # ---------------- gathers with 2-D locality (point sampling through a smooth warp) and bilinear filtering
    warp = smooth_warp(cupy, side, side).reshape(-1, 2)
    warp_t = cupy.ascontiguousarray(warp.T)
    n = warp.shape[0]
    out = cupy.empty(n, np.float32)
    common = dict(image=side, points=n, coords="smooth warp")
    nearest = lambda: map_coordinates(img, warp_t, order=0, mode="nearest")  # noqa: E731
    moved = dict(reads=8 * n + 4 * side * side, writes=4 * n)  # coordinates, the image once, the output
    for variant, run in (("global loads", soft_run(out, warp, "clamp", False)),
                         ("__ldg loads", soft_run(out, warp, "clamp", False, ldg=True)),
                         ("tex2D pitched", tex_run(out, warp, "pitch", "point", "clamp")),
                         ("tex2D CUDA array", tex_run(out, warp, "array", "point", "clamp"))):
        extra = {}
        chk = (Check(out, nearest) if not variant.startswith("tex")
               else _mismatch_check(run, out, nearest, 1e-4, variant, extra))
        yield Case(variant, run, chk, params=dict(common, section="gather", filter="point"), extra=extra,
                   ceiling=None, **moved)
    exact = lambda: map_coordinates(img, warp_t, order=1, mode="nearest").astype(np.float64)  # noqa: E731
    # baselines checked against the same interpolation in float64 (image and coordinates): unwritten or wrong fails
    in64 = lambda pts_t: map_coordinates(img.astype(np.float64), pts_t.astype(np.float64), order=1,  # noqa: E731
                                         mode="nearest")
    base = mc_run(out, warp_t, 1)
    yield Case("map_coordinates order=1", base, _error_check(base, out, lambda: in64(warp_t), 1e-5 * spread,
                                                             "map_coordinates order=1", {}),
               params=dict(common, section="filter", filter="linear"), kind="baseline", ceiling=None, **moved)
    for variant, run in (("software bilinear", soft_run(out, warp, "clamp", True)),
                         ("tex2D bilinear pitched", tex_run(out, warp, "pitch", "linear", "clamp")),
                         ("tex2D bilinear CUDA array", tex_run(out, warp, "array", "linear", "clamp"))):
        extra = dict(weights=WEIGHT_BITS if variant.startswith("tex") else "double")
        tol = 1e-6 * spread if variant.startswith("software") else spread / 64
        yield Case(variant, run, _error_check(run, out, exact, tol, variant, extra),
                   params=dict(common, section="filter", filter="linear"), extra=extra, ceiling=None,
                   versus=("map_coordinates order=1",), **moved)

    # ---------------- address modes and normalized coordinates, against NumPy in float64
    small = params["address_image"]
    host = img[:small, :small + 7].get()  # a non-square, misaligned-width image
    sub = cupy.asarray(host)
    gen = np.random.default_rng(session.seed)
    rc = np.stack([gen.uniform(-small, 2 * small, 4096), gen.uniform(-small, 2 * (small + 7), 4096)], -1)
    rc = rc.astype(np.float32)
    pts_small = cupy.asarray(rc)
    o = cupy.empty(len(rc), np.float32)
    for address in MAP_COORDINATES_MODE:
        want = reference_sample(host, rc, address, True)
        for normalized in (False, True):
            p = pts_small if not normalized else cupy.asarray((rc + 0.5) / np.array(host.shape, np.float32))
            for exact_path in (True, False):
                run = lambda p=p, a=address, nz=normalized, e=exact_path: sample2d(  # noqa: E731
                    sub, p, address=a, normalized=nz, exact=e, out=o)
                extra = dict(weights="double" if exact_path else WEIGHT_BITS)
                variant = f"{'exact' if exact_path else 'texture'} {address}{' normalized' if normalized else ''}"
                tol = 1e-5 * spread if exact_path else spread / 64
                yield Case(variant, run, _error_check(run, o, want, tol, variant, extra),
                           params=dict(section="address", address=address, normalized=normalized, points=len(rc),
                                       image=f"{host.shape[0]}x{host.shape[1]}"),
                           extra=extra, ceiling=None, cold_l2=False)

    # ---------------- sample2d vs map_coordinates(order=1): a smooth warp and uniformly random points
    rnd = uniform_points(cupy, side, side, params["quick_random"] if session.quick else params["random"],
                         session.seed)
    snapshot = ArrayImage(img)  # a copy in a CUDA array, made once: its cost is the case below
    yield Case("ArrayImage(image): the copy", lambda: ArrayImage(img), _snapshot_check(cupy, img, session.seed),
               reads=img.nbytes, writes=img.nbytes,
               params=dict(image=side, section="sample2d", coords="-"), kind="baseline", ceiling=None)
    for name, pts in (("smooth warp", warp), ("uniform random", rnd)):
        pts_t = cupy.ascontiguousarray(pts.T)
        m = pts.shape[0]
        res = cupy.empty(m, np.float32)
        ref = lambda pts_t=pts_t: map_coordinates(img, pts_t, order=1, mode="nearest").astype(np.float64)  # noqa
        grp = dict(image=side, points=m, coords=name, section="sample2d")
        # the least DRAM traffic: coordinates and output, plus the image once (warp) or one 32-byte sector per
        # point when the points are scattered (random)
        touched = side * side * 4 if name == "smooth warp" else min(32 * m, side * side * 4)
        mv = dict(reads=8 * m + touched, writes=4 * m)
        base = mc_run(res, pts_t, 1)
        yield Case("map_coordinates order=1", base, _error_check(base, res, lambda pts_t=pts_t: in64(pts_t),
                                                                 1e-5 * spread, "map_coordinates order=1", {}),
                   params=grp, kind="baseline", **mv)  # against the copy ceiling: the bound on any speed-up
        # the warp's coordinates as users hold them, one (row, col) per output pixel: sample2d's rows order
        shaped = (pts.reshape(side, side, 2), res.reshape(side, side)) if name == "smooth warp" else (pts, res)
        for exact_path, source in ((False, img), (True, img), (False, snapshot), (True, snapshot)):
            run = lambda p=shaped[0], o=shaped[1], e=exact_path, src=source: sample2d(  # noqa: E731
                src, p, exact=e, out=o)
            variant = ("sample2d exact" if exact_path else "sample2d texture") + (
                " (ArrayImage)" if source is snapshot else "")
            extra = dict(weights="float32 (map_coordinates' arithmetic)" if exact_path else WEIGHT_BITS)
            tol = 1e-6 * spread if exact_path else spread / 64
            yield Case(variant, run, _error_check(run, res, ref, tol, variant, extra, repeat=True), params=grp,
                       extra=extra, versus=("map_coordinates order=1",), **mv)


    yield from texture_types(session, params)


def texture_types(session, params):
    """The seed's other texture types: a 1-D gather from a lookup table through global loads, tex1Dfetch on linear
    memory (also an 8-bit table in the normalized-float read mode) and tex1D on a 1-D CUDA array; trilinear sampling
    of a volume in software and through tex3D on a 3-D CUDA array."""
    import cupy
    from cupyx.scipy.ndimage import map_coordinates

    n = params["quick_lookups"] if session.quick else params["lookups"]
    size = params["table"]
    gen = cupy.random.default_rng(session.seed + 11)
    idx = gen.integers(0, size, n, dtype=np.int32)
    out = cupy.empty(n, np.float32)
    grid = blocks_for(n, K.BLOCK)
    table = device_random_nonzero(size, np.float32, session.seed + 12)
    bytes8 = gen.integers(0, 256, size, dtype=np.int64).astype(np.uint8)
    fetch, tex1d = T.linear_texture(table), T.volume_texture(table, filter="point")
    fetch8 = T.linear_texture(bytes8, normalized_read=True)
    want = lambda: table[idx]  # noqa: E731
    want8 = lambda: bytes8[idx].astype(np.float64) / 255  # noqa: E731
    common = dict(section="types", coords="random 1-D indices", points=n, table=size)
    for variant, dtype, run, expected, tol in (
            ("1-D global loads", "float32", lambda: runtime.launch(K.LOOKUP_GLOBAL["float32"], grid, K.BLOCK, out,
                                                                     table, idx, np.int64(n), np.float32(1)), want, 0),
            ("tex1Dfetch (linear memory)", "float32", lambda: runtime.launch(K.LOOKUP_FETCH, grid, K.BLOCK, out,
                                                                               fetch.handle, idx, np.int64(n)), want, 0),
            ("tex1D (1-D CUDA array)", "float32", lambda: runtime.launch(K.LOOKUP_TEX1D, grid, K.BLOCK, out,
                                                                           tex1d.handle, idx, np.int64(n)), want, 0),
            ("uint8 global loads / 255", "uint8", lambda: runtime.launch(K.LOOKUP_GLOBAL["uint8"], grid, K.BLOCK, out,
                                                                           bytes8, idx, np.int64(n),
                                                                           np.float32(1 / 255)), want8, 1e-6),
            ("tex1Dfetch normalized float (uint8)", "uint8", lambda: runtime.launch(
                K.LOOKUP_FETCH, grid, K.BLOCK, out, fetch8.handle, idx, np.int64(n)), want8, 1e-6)):
        extra = dict(tolerance=tol)  # the runs' closures keep their texture objects alive
        yield Case(variant, run, _error_check(run, out, expected, tol, variant, extra),
                   params=dict(common, dtype=dtype), ceiling=None, extra=extra,
                   reads=4 * n + np.dtype(dtype).itemsize * size, writes=4 * n)

    side = params["quick_volume"] if session.quick else params["volume"]
    vol = device_random_nonzero(side ** 3, np.float32, session.seed + 13).reshape(side, side, side)
    spread = float(vol.max() - vol.min())
    m = params["quick_lookups"] if session.quick else params["lookups"]
    pts = gen.random((m, 3), dtype=np.float32) * np.float32(side - 1)
    pts_t = cupy.ascontiguousarray(pts.T)
    res = cupy.empty(m, np.float32)
    tex3 = T.volume_texture(vol, filter="linear")
    exact = lambda: map_coordinates(vol.astype(np.float64), pts_t.astype(np.float64), order=1,  # noqa: E731
                                    mode="nearest")
    g3 = blocks_for(m, K.BLOCK)
    grp = dict(section="types", coords="random 3-D points", points=m, volume=side)
    mv = dict(reads=12 * m + min(32 * m, vol.nbytes), writes=4 * m)
    for variant, run, tol, weights in (
            ("software trilinear (global loads)", lambda: runtime.launch(
                K.SAMPLE3D_SOFT, g3, K.BLOCK, res, vol, np.int32(side), np.int32(side), np.int32(side), pts,
                np.int64(m)), 1e-5 * spread, "float32"),
            ("tex3D trilinear (3-D CUDA array)", lambda: runtime.launch(K.SAMPLE3D_TEX, g3, K.BLOCK, res,
                                                                         tex3.handle, pts, np.int64(m)),
             spread / 64, WEIGHT_BITS)):
        extra = dict(weights=weights)
        yield Case(variant, run, _error_check(run, res, exact, tol, variant, extra), params=grp,
                   extra=extra, ceiling=None, **mv)


def _snapshot_check(cupy, img, seed: int):
    """verify(): a fresh ArrayImage holds the image: nearest samples at 4096 random pixel centers equal its pixels."""
    def verify():
        rng = np.random.default_rng(seed)
        rc = np.stack([rng.integers(0, n, 4096) for n in img.shape], axis=1)
        got = sample2d(ArrayImage(img), cupy.asarray(rc.astype(np.float32)), mode="nearest", exact=True).get()
        want = img[cupy.asarray(rc[:, 0]), cupy.asarray(rc[:, 1])].get()
        if not np.array_equal(got, want):
            raise VerificationError(f"ArrayImage copy: {int((got != want).sum())} of 4096 sampled pixels differ")
    return verify


def reference_sample(host: np.ndarray, rc: np.ndarray, address: str, linear: bool) -> np.ndarray:
    """NumPy float64 sampling at (row, col) points, pixel centers at integers (map_coordinates' convention)."""
    from ..ops.sample import reference_index

    h, w = host.shape
    img = host.astype(np.float64)

    def px(r, c):
        (ri, rok), (ci, cok) = reference_index(r, h, address), reference_index(c, w, address)
        return np.where(rok & cok, img[ri, ci], 0.0)

    r, c = rc[..., 0].astype(np.float64), rc[..., 1].astype(np.float64)
    if not linear:
        return px(np.floor(r + 0.5).astype(np.int64), np.floor(c + 0.5).astype(np.int64))
    r0, c0 = np.floor(r), np.floor(c)
    fr, fc = r - r0, c - c0
    r0, c0 = r0.astype(np.int64), c0.astype(np.int64)
    return ((1 - fr) * ((1 - fc) * px(r0, c0) + fc * px(r0, c0 + 1)) +
            fr * ((1 - fc) * px(r0 + 1, c0) + fc * px(r0 + 1, c0 + 1)))


TARGET_SPEEDUP = 2  # the speed-up over map_coordinates that the bound sentence asks the ceiling about


def sample2d_bound(coords: str, pct) -> Finding:
    """The most any sampler can gain on map_coordinates: its least DRAM traffic at the copy ceiling. ``pct``: the
    baseline's % of the ceiling, a Num (a plain number is printed too, but the citation test rejects it)."""
    pct = pct if isinstance(pct, Num) else Num(float(pct), ("bare",))
    target = constant(__name__, "TARGET_SPEEDUP")
    return sentence(f"bound ({coords}): map_coordinates order=1 moves the least DRAM traffic of this resampling at ",
                    q(pct, ".0f"), "% of the measured copy ceiling, so no implementation can beat it by more than ",
                    q(100 / pct, ".2f"), "x here (a ", q(target, ".0f"), "x speed-up would need ",
                    q(pct * target, ".0f"), "% of the ceiling)")


def findings(records):
    from ._model import head_to_head_findings

    by = {(r.variant, r.params.get("section"), r.params.get("coords")): r for r in records}
    for (variant, section, coords), r in by.items():
        if section == "filter" and "max_abs_error" in r.extra:
            yield sentence(f"{variant}: ", q(field(r, "gbps"), ".0f"), " GB/s, max error ",
                           q(field(r, "extra", "max_abs_error"), ".2e"), " (rms ",
                           q(field(r, "extra", "rms_error"), ".2e"), f"; weights: {r.extra['weights']})")
        if section in ("filter", "sample2d"):
            yield from head_to_head_findings(f"{variant} ({coords})", r)
        if section == "sample2d" and variant.startswith("ArrayImage"):
            yield sentence("ArrayImage(image), the CUDA-array copy a caller makes once per image: ",
                           q(field(r, "time_s", "median") * 1e3, ".3f"), " ms (", q(field(r, "gbps"), ".0f"),
                           " GB/s read + write)")
        elif section == "sample2d":
            yield sentence(f"{variant} ({coords}): ", q(field(r, "gbps"), ".0f"), " GB/s of the least DRAM traffic it "
                           "needs (coordinates, output, image once or one sector per scattered point)")
            if r.kind == "baseline" and r.pct_of_ceiling:
                yield sample2d_bound(coords, field(r, "pct_of_ceiling"))
    gathers = {v: field(r, "time_s", "median") for (v, s, _), r in by.items() if s == "gather"}
    if "global loads" in gathers:
        base = gathers["global loads"]
        yield sentence("point-sampled warp gather, time relative to plain global loads: ",
                       join(", ", (sentence(f"{v} ", q(base / t, ".2f"), "x") for v, t in gathers.items())))
    for coords, base_name in (("random 1-D indices", "1-D global loads"),
                              ("random 3-D points", "software trilinear (global loads)")):
        rows = [r for r in records if r.params.get("section") == "types" and r.params.get("coords") == coords]
        base = next((r for r in rows if r.variant == base_name), None)
        if base is not None:
            yield sentence(f"{coords}, speed relative to {base_name}: ", join(", ", (
                sentence(f"{r.variant} ", q(field(base, "time_s", "median") / field(r, "time_s", "median"), ".2f"),
                         "x (max error ", q(field(r, "extra", "max_abs_error"), ".1e"), ")")
                for r in rows if "max_abs_error" in r.extra)))
    exact = [r for r in records if r.params.get("section") == "address" and r.variant.startswith("exact")
             and "max_abs_error" in r.extra]
    if exact:
        worst = max(exact, key=lambda r: r.extra["max_abs_error"])
        yield sentence("address modes and normalized coordinates: exact path within ",
                       q(field(worst, "extra", "max_abs_error"), ".1e"), " of NumPy float64")


EXPERIMENT = Experiment(
    name="texture",
    title="Texture memory: 2-D gathers, hardware bilinear filtering, address modes, pitched vs CUDA arrays, "
          "tex1Dfetch / tex1D / tex3D and the normalized-float read mode",
    claims=(Claim("Textures cache reads with 2-D locality (helpful when coalescing is a problem), filter in dedicated "
                  "hardware (linear / bilinear) and handle out-of-bounds coordinates by wrap or clamp, with "
                  "integer or normalized coordinates.", seed("001", "slide 'Textures in CUDA'")),
            Claim("Textures bound to linear memory vs CUDA arrays: arrays add filtering and addressing modes.",
                  seed("001", "slide 'Two CUDA Texture Types'")),
            Claim("Linear memory textures are fetched with tex1Dfetch(); array textures with tex1D(), tex2D() or "
                  "tex3D(); both return either the element type or a normalized float.",
                  seed("001", "slide 'CUDA Texturing Steps'")),
            Claim("Linear filtering computes its weights in 9-bit fixed point with 8 bits of fractional value.",
                  outside("NVIDIA, CUDA C++ Programming Guide, appendix 'Texture Fetching', linear filtering"))),
    cases=cases,
    params=dict(image=8192, quick_image=1024, random=2**24, quick_random=2**20, address_image=61, lookups=2**24,
                quick_lookups=2**20, table=2**16, volume=256, quick_volume=64),
    group_by=("section", "coords", "points"),
    modern_note="Pitched 2-D textures over linear memory have filtering and every address mode on current GPUs "
                "(the slide's 'only 1D, no filtering' describes 1-D tex1Dfetch textures). Wrap and mirror need "
                "normalized coordinates. 'uniform random' reads one scattered 2x2 neighbourhood per point: "
                "DRAM-bound by at least one 32-byte sector per point plus 12 bytes of coordinates and output.",
    findings=findings,
    order=61,
)
