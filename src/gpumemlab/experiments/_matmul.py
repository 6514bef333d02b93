"""What the three matmul experiments share: the float64 reference and its FP32 checks, cuBLAS SGEMM as the
baseline, one Case per ladder rung (from the variant table), and the derived ratios to cuBLAS."""

from __future__ import annotations

import numpy as np

from ..bench.timer import TimerConfig, time_gpu
from ..errors import VerificationError
from ..kernels import matmul as K
from ..ops.matmul import launch as ops
from ._declare import Case

CUBLAS = "cuBLAS SGEMM"
TOL = 1e-5          # ||C - C64|| / (||A|| ||B||): an FP32 product's error, far above rounding, far below a bug
TF32_GUARD = 1e-4   # ||C - C64|| / ||C64||: FP32 sums land far below, TF32 inputs (2^-11) near 3e-4
# rungs whose one call takes tens of milliseconds or more at 4096: a few samples are plenty
FEW_SAMPLES = TimerConfig(warmup=1, min_samples=10, batch=10, min_time_s=0.0, max_time_s=0.5)


class Reference:
    """C64 = A B (or A A^T) in float64 on the GPU, and the checks against it: every element within gamma_k |A| |B|
    (bench.verify.matmul_bound: FP32 in any order), then the two norms (TF32 errors grow as sqrt(k) and pass the
    elementwise bound, not the norm guard)."""

    def __init__(self, a, b=None):
        import cupy

        from ..bench.verify import matmul_bound

        a64 = a.astype(cupy.float64)
        b64 = a64.T if b is None else b.astype(cupy.float64)
        self.c64 = a64 @ b64
        self.bound = matmul_bound(a64, b64, cupy.float32, xp=cupy)
        self.scale = float(cupy.linalg.norm(a64)) * float(cupy.linalg.norm(b64))
        self.c_norm = float(cupy.linalg.norm(self.c64))

    def errors(self, out) -> tuple[float, float]:
        """(error relative to ||A|| ||B||, error relative to ||C64||); NaN/inf anywhere gives inf."""
        import cupy

        if not bool(cupy.isfinite(out).all()):
            return float("inf"), float("inf")
        d = float(cupy.linalg.norm(out.astype(cupy.float64) - self.c64))
        return d / (self.scale or 1.0), d / (self.c_norm or 1.0)

    def check(self, out, what: str, tol: float = TOL) -> float:
        import cupy

        if out.shape != self.c64.shape:
            raise VerificationError(f"{what}: shape {out.shape} != expected {self.c64.shape}")
        bad = int(out.size - cupy.count_nonzero(cupy.isfinite(out)))
        if bad:
            raise VerificationError(f"{what}: {bad} of {out.size} outputs are NaN/inf (unwritten or wrong)")
        over = cupy.abs(out.astype(cupy.float64) - self.c64) > self.bound
        nover = int(cupy.count_nonzero(over))
        if nover:
            at = tuple(int(v) for v in np.unravel_index(int(cupy.argmax(over.ravel())), over.shape))  # CuPy's: arrays
            raise VerificationError(f"{what}: {nover} of {out.size} elements beyond gamma_k |A||B|; first at "
                                    f"{at}: got {float(out[at])!r}, expected {float(self.c64[at])!r} "
                                    f"+- {float(self.bound[at]):.3g}")
        err, rel = self.errors(out)
        if not err < tol:
            raise VerificationError(f"{what}: ||C - C64|| / (||A|| ||B||) = {err:.3e} above {tol:.0e}")
        if not rel < TF32_GUARD:
            raise VerificationError(f"{what}: ||C - C64|| / ||C64|| = {rel:.3e}: not FP32 accuracy (TF32?)")
        return err

    def verifier(self, fn, out, what: str):
        """poison -> run -> check, fenced by device-wide synchronizations (untimed: no stream can race it)."""
        from ..bench.verify import poison
        from ..gpu import runtime

        def check():
            with runtime.work_stream():
                poison(out)
                runtime.synchronize()
                fn()
                runtime.synchronize()
                self.check(out, what)
        return check


def cublas_runner(a, b, out):
    from ..ops.blas import cublas_sgemm, tf32_disabled

    tf32_disabled()
    return lambda: cublas_sgemm(a, b, out)


class Operands:
    """A, B (None: C = A A^T), C and the float64 reference of one problem. ``bandwidth``: False to count flops
    against cuBLAS (the model then charges the OP/B formula's bytes), True to report the bytes each case must
    move (each input read once, C written once) against the copy ceiling, as Best Practices 9.2.3 does."""

    def __init__(self, session, a, b, out, params: dict, bandwidth: bool = False):
        self.session, self.a, self.b, self.out, self.params = session, a, b, out, params
        self.nbytes = 4 * (a.size + (0 if b is None else b.size)) if bandwidth else None  # bytes read
        self.ref = Reference(a, b)
        m, k = a.shape
        n = m if b is None else b.shape[1]
        self.flops = 2.0 * m * n * k

    def _common(self) -> dict:
        if self.nbytes is None:
            return dict(params=self.params, flops=self.flops, cold_l2=False, ceiling="sgemm_cublas_gflops")
        return dict(params=self.params, flops=self.flops, reads=self.nbytes, writes=4 * self.out.size, cold_l2=True,
                    ceiling="copy_gbps")

    def cublas(self) -> Case:
        """cuBLAS SGEMM on the same operands (A^T as an ordinary operand for C = A A^T)."""
        import cupy

        bt = cupy.ascontiguousarray(self.a.T) if self.b is None else self.b
        run = cublas_runner(self.a, bt, self.out)
        notes = None if self.nbytes else "cuBLAS sgemm, CUBLAS_DEFAULT_MATH (TF32 off), checked to FP32 accuracy"
        return Case(CUBLAS, run, self.ref.verifier(run, self.out, CUBLAS), kind="baseline", notes=notes,
                    **self._common())

    def rung(self, variant: str, timer: TimerConfig | None = None, naive: bool = False,
             head_to_head: bool = False) -> Case:
        """One ladder rung from the variant table, timed as its plan (the launches alone); ``head_to_head``:
        also timed interleaved against cuBLAS."""
        p = ops.plan(variant, self.a, self.b, self.out)
        opb = K.VARIANTS[variant].op_per_byte(p.config)
        if self.nbytes is None:
            model = {"op_per_byte": opb, "model_bytes": self.flops / opb, "how": "seed 000 OP/B formula"}
        else:
            model = {"op_per_byte": opb, "how": "seed 000 OP/B formula (reuse factors)"}
        extra = {}
        if p.config is not None:
            extra.update(config=p.config.name, vec=p.vec, splits=p.splits, threads=p.config.threads,
                         smem_bytes=p.config.smem_bytes)
        # transposed_b: the transpose timed on its own too (it is included in the record's time)
        after = self._time_part(p.parts["transpose"], timer) if p.parts else None
        return Case(variant, p.run, self.ref.verifier(p.run, self.out, variant), model=model, extra=extra,
                    timer=timer, after=after, naive=naive,
                    versus=(CUBLAS,) if head_to_head else (),
                    **self._common())

    def _time_part(self, part, timer: TimerConfig | None):
        def after(rec):
            rec.extra["transpose_s"] = time_gpu(part, stream=self.session.stream,
                                                cfg=timer or self.session.timer).stats.median
        return after


def vs_cublas(keys: tuple[str, ...]):
    """A ``derive``: % of cuBLAS (same run, same group), % of FP32 peak and speedup over the previous rung."""
    def derive(records, session):
        peak = (session.ceilings.get("fp32_peak_gflops") or {}).get("value")
        for key in dict.fromkeys(tuple(r.params.get(k) for k in keys) for r in records):
            group = [r for r in records if tuple(r.params.get(k) for k in keys) == key]
            base = next((r for r in group if r.variant == CUBLAS), None)
            if peak and base is not None and base.gflops:
                base.extra["pct_of_fp32_peak"] = 100.0 * base.gflops / peak
            prev = None
            for r in (r for r in group if r.kind == "kernel"):
                if base is not None and base.gflops and r.gflops:
                    r.extra["pct_of_cublas"] = 100.0 * r.gflops / base.gflops
                if peak and r.gflops:
                    r.extra["pct_of_fp32_peak"] = 100.0 * r.gflops / peak
                if prev is not None and r.median_s > 0:
                    r.extra["speedup_vs_previous"] = prev.median_s / r.median_s
                prev = r
    return derive
