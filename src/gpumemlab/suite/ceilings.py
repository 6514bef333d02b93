"""Hardware ceilings: what the datasheet formula promises and what this device really does.

Theoretical numbers come from device attributes (never typed in); measured ones from copies,
a read-only sum and cuBLAS SGEMM timed with the same harness as every experiment.
"""

from __future__ import annotations

import numpy as np

from ..bench.stats import gb_per_s, gflop_per_s
from ..bench.timer import TimerConfig, time_gpu
from ..bench.verify import check_close, check_equal_device, device_random_nonzero, poison
from ..gpu import runtime
from ..kernels import blocks_for
from ..kernels import copy as K
from ..model.peaks import FP32_LANES_PER_SM, fp32_peak_gflops, theoretical_dram_gbps  # noqa: F401 (re-exported)

def _entry(value, unit: str, how: str) -> dict:
    return dict(value=value, unit=unit, how=how)


def measure_ceilings(session, quick: bool = False) -> dict:
    """Measure and return the ceilings dict; also stores it on ``session.ceilings``."""
    import cupy

    info = session.device
    out = {"dram_theoretical_gbps": _entry(theoretical_dram_gbps(info), "GB/s",
                                           "memory clock x bus width x 2")}
    peak = fp32_peak_gflops(info)
    if peak:
        out["fp32_peak_gflops"] = _entry(peak, "GFLOP/s", "SMs x boost clock x FP32 lanes x 2")
    cfg = TimerConfig(min_samples=10, min_time_s=0.02 if quick else 0.1, max_time_s=0.5)
    flusher = session.flusher()
    stream = session.stream

    n = session.fit_elements(session.dram_bytes(8.0) // 4, 8, "copy ceiling")
    n -= n % 16
    src = device_random_nonzero(n, np.float32, 7)
    dst = cupy.empty_like(src)
    nbytes = 2 * src.nbytes

    def memcpy():
        dst.data.copy_from_device_async(src.data, src.nbytes)

    poison(dst)
    memcpy()
    check_equal_device(dst, src, what="cudaMemcpy D2D")
    t_memcpy = time_gpu(memcpy, stream=stream, flusher=flusher, cfg=cfg).stats.median
    out["memcpy_gbps"] = _entry(gb_per_s(nbytes, t_memcpy), "GB/s",
                                f"cudaMemcpyAsync D2D of {src.nbytes / 2**20:.0f} MiB, read+write, cold L2")

    best = None
    for unroll in K.UNROLLS:
        kernel = runtime.get_kernel(K.copy_vec("float4", unroll))
        nv = n // 4
        grid = blocks_for(nv, K.BLOCK * unroll)

        def run(kernel=kernel, grid=grid, nv=nv):
            runtime.launch(kernel, grid, K.BLOCK, dst, src, np.int64(nv))

        poison(dst)
        run()
        check_equal_device(dst, src, what=f"copy_vec<float4, {unroll}>")
        t = time_gpu(run, stream=stream, flusher=flusher, cfg=cfg).stats.median
        if best is None or t < best[0]:
            best = (t, unroll)
    out["copy_kernel_gbps"] = _entry(gb_per_s(nbytes, best[0]), "GB/s",
                                     f"copy_vec<float4, {best[1]}>, read+write, cold L2")
    copy_best = max(out["memcpy_gbps"]["value"], out["copy_kernel_gbps"]["value"])
    out["copy_gbps"] = _entry(copy_best, "GB/s", "best measured device copy (read+write)")

    # read-only: float4 loads summed per thread (the per-thread partials are a negligible write);
    # the best of a few unrolls and grid sizes, since no single shape saturates every GPU
    block, nv = 256, n // 4
    want = float(src.astype(cupy.float64).sum())
    best = None
    for unroll in K.READ_UNROLLS:
        kernel = runtime.get_kernel(K.read_sum(unroll))
        for blocks_per_sm in (4, 8, 16):
            grid = blocks_per_sm * info["sm_count"]
            partial = cupy.empty(grid * block, dtype=cupy.float32)

            def read(kernel=kernel, grid=grid, partial=partial):
                runtime.launch(kernel, grid, block, partial, src, np.int64(nv))

            poison(partial)
            read()
            total = float(partial.astype(cupy.float64).sum())
            check_close(np.array([total]), np.array([want]), what=f"read_sum<{unroll}>", rtol=1e-4,
                        atol=1e-3 * np.sqrt(n))
            t = time_gpu(read, stream=stream, flusher=flusher, cfg=cfg).stats.median
            if best is None or t < best[0]:
                best = (t, unroll, grid)
    how = f"read_sum<{best[1]}> (float4 loads), {best[2]} blocks, cold L2"
    # the library's reduction is a read-only pass too: the ceiling is the best reader measured
    from ..ops.reduce import sum as library_sum

    check_close(np.array([float(library_sum(src))]), np.array([want]), what="gpumemlab.sum", rtol=1e-4,
                atol=1e-3 * np.sqrt(n))
    t_sum = time_gpu(lambda: library_sum(src), stream=stream, flusher=flusher, cfg=cfg).stats.median
    if t_sum < best[0]:
        best, how = (t_sum,), "gpumemlab.sum (float4 loads, strip-mined), cold L2"
    out["read_gbps"] = _entry(gb_per_s(src.nbytes, best[0]), "GB/s", how)
    del src, dst

    out["sgemm_cublas_gflops"] = _entry(*_cublas_sgemm(stream, 2048 if quick else 4096, cfg))
    session.ceilings = out
    return out


def _cublas_sgemm(stream, size: int, cfg: TimerConfig):
    import cupy

    from ..ops.blas import cublas_sgemm, tf32_disabled

    a = device_random_nonzero((size, size), np.float32, 11)
    b = device_random_nonzero((size, size), np.float32, 12)
    c = cupy.empty((size, size), dtype=cupy.float32)
    tf32_disabled()
    cublas_sgemm(a, b, c)
    ref = a[:64].astype(cupy.float64) @ b.astype(cupy.float64)
    err = float(cupy.linalg.norm(c[:64] - ref) / cupy.linalg.norm(ref))
    if not err < 1e-5:
        raise RuntimeError(f"cuBLAS SGEMM check failed (relative error {err:.2e}): TF32 may be on")
    t = time_gpu(lambda: cublas_sgemm(a, b, c), stream=stream, cfg=cfg).stats.median
    return gflop_per_s(2 * size**3, t), "GFLOP/s", f"cuBLAS SGEMM {size}^3, FP32 (TF32 off)"


# A measured ceiling as a fraction of its datasheet figure (both count every byte moved, read+write for a copy):
# below the low end the measurement went wrong (a copy that moves half its bytes, a throttled GPU), above the high
# end the datasheet formula or the byte count did.
PLAUSIBLE = {"copy_gbps": ("dram_theoretical_gbps", 0.5, 1.05), "read_gbps": ("dram_theoretical_gbps", 0.5, 1.05),
             "sgemm_cublas_gflops": ("fp32_peak_gflops", 0.3, 1.05)}


def implausible_ceilings(ceilings: dict) -> list[str]:
    """One line per measured ceiling outside its PLAUSIBLE fraction of the datasheet figure. A ceiling a record
    raised is checked twice: as measured (``measured_as``, which a record can hide) and as raised."""
    out = []
    for name, (peak_name, lo, hi) in PLAUSIBLE.items():
        c, peak = ceilings.get(name), (ceilings.get(peak_name) or {}).get("value")
        if not c or not peak:
            continue
        values = [("measured", c.get("measured_as", c["value"]))] + ([("raised", c["value"])] if "measured_as" in c
                                                                        else [])
        for what, value in values:
            if not lo <= value / peak <= hi:
                out.append(f"{name} {what} {value:.4g} {c.get('unit', '')} is {value / peak:.3f}x {peak_name} "
                           f"({peak:.4g}), outside {lo}-{hi}x")
    return out


def raise_ceilings(ceilings: dict, records: list) -> bool:
    """A ceiling is the best this run measured: a verified record with no doubt flagged about its median (noisy,
    throttled, ...) above the one it is compared with raises it (the entry then names that record under ``set_by``;
    the report names its run), and every record's percentage is taken against the final values.
    Returns whether a ceiling was raised."""
    raised = False
    for name, c in ceilings.items():
        field = "gflops" if c.get("unit") == "GFLOP/s" else "gbps"
        own = c.get("measured_as", c["value"])  # what the ceiling measurement itself gave: raising starts there again
        above = [r for r in records if r.ceiling == name and r.verified and not r.flags
                 and (getattr(r, field) or 0) > own]
        before = c["value"]
        if above:
            best = max(above, key=lambda r: getattr(r, field))
            c.update(measured_as=own, value=getattr(best, field),
                     set_by=dict(experiment=best.experiment, variant=best.variant, params=best.params))
        elif "measured_as" in c:  # raised before by a record that no longer qualifies
            c["value"] = c.pop("measured_as")
            c.pop("set_by", None)
        raised |= c["value"] != before
    for r in records:
        c = ceilings.get(r.ceiling) if r.ceiling else None
        achieved = (r.gflops if c and c.get("unit") == "GFLOP/s" else r.gbps) if c else None
        if achieved and c["value"]:
            r.pct_of_ceiling = 100.0 * achieved / c["value"]
    return raised
