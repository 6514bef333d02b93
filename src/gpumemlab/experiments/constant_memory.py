"""Constant memory: a 1-D convolution whose taps are read from __constant__ memory (broadcast or serialized),
a global pointer or __ldg, with the analyzer's requests per warp next to each timing."""

from __future__ import annotations

import numpy as np

from ..bench.verify import device_random_nonzero, random_nonzero
from ..gpu import runtime
from ..gpu.constant import write_symbol
from ..kernels import blocks_for
from ..kernels import constant as K
from ._cite import field, join, q, sentence
from ._declare import Case, Check, Claim, Experiment, outside, seed
from ._model import predict_global

INDEX_EXPR = {"uniform": "k", "per_lane": "(k + threadIdx.x % 32) % TAPS"}


def predict(space: str, index: str, taps: int) -> dict:
    """The analyzer's count for the tap load: constant-cache requests per warp, or global sectors per request."""
    lets = (("k", "5"), ("TAPS", str(taps)))
    access = f"taps[{INDEX_EXPR[index]}]"
    if space == "constant":
        from ..model.constant import constant_requests

        try:
            return {"access": access, **constant_requests(access, f"__constant__ float taps[{taps}]",
                                                          block=(K.BLOCK, 1, 1), lets=lets)}
        except Exception as exc:  # the model is advisory: never fail a measurement for it
            return {"error": f"{type(exc).__name__}: {exc}"}
    return predict_global(access, f"float taps[{taps}]", block=(K.BLOCK, 1, 1), lets=lets)


def reference(cupy, x, taps, n: int, index: str):
    """float64 on the GPU with CuPy: out[i] = sum_k taps[t(k)] x[i + k], t(k) = k or (k + i % 32) % taps."""
    xd, td = x.astype(cupy.float64), taps.astype(cupy.float64)
    lane = cupy.arange(n) % 32
    acc = cupy.zeros(n, cupy.float64)
    for k in range(td.size):
        acc += (td[k] if index == "uniform" else td[(k + lane) % td.size]) * xd[k:k + n]
    return acc


def cases(session, params):
    import cupy

    taps = params["taps"]
    n = (params["quick_n"] if session.quick else params["n"])
    x = device_random_nonzero(n + taps - 1, np.float32, session.seed)
    h_taps = random_nonzero(taps, np.float32, np.random.default_rng(session.seed + 1))
    d_taps = cupy.asarray(h_taps)
    for index in K.INDEXES:  # each kernel is loaded as a module of its own, with its own c_taps
        write_symbol(K.conv1d("constant", index, taps), K.SYMBOL, h_taps)
    out = cupy.empty(n, np.float32)
    grid = blocks_for(n, K.BLOCK)
    tol = 1e-5 * float(np.abs(h_taps).sum())  # float32 sums of 64 products of |x| < 1.5
    for index in K.INDEXES:
        want = reference(cupy, x, d_taps, n, index)
        for space in K.SPACES:
            spec = K.conv1d(space, index, taps)
            run = lambda spec=spec: runtime.launch(spec, grid, K.BLOCK, out, x, d_taps, np.int64(n))  # noqa: E731
            yield Case(f"{space} {index}", run, Check(out, want.get(), rtol=1e-5, atol=tol),
                       params=dict(n=n, taps=taps, index=index, space=space), reads=4 * (n + taps - 1) + 4 * taps,
                       writes=4 * n, flops=2 * n * taps, ceiling=None, model=predict(space, index, taps))


def findings(records):
    by = {r.variant: r for r in records}
    if "constant uniform" in by and "constant per_lane" in by:
        u, p = by["constant uniform"], by["constant per_lane"]
        yield sentence("__constant__ taps: lane-dependent index ",
                       q(field(p, "time_s", "median") / field(u, "time_s", "median"), ".1f"),
                       "x slower than the uniform index (analyzer: ", q(field(p, "model", "requests_per_warp"), ".0f"),
                       " vs ", q(field(u, "model", "requests_per_warp"), ".0f"), " requests per warp)")
    for index in ("uniform", "per_lane"):
        row = [by.get(f"{s} {index}") for s in ("constant", "global", "ldg")]
        if all(row):
            rates = (sentence(f"{r.params['space']} ", q(field(r, "gflops"), ".0f"), " GFLOP/s") for r in row)
            yield sentence(f"{index} index: ", join(", ", rates))


EXPERIMENT = Experiment(
    name="constant_memory",
    title="Constant memory: broadcast vs serialized reads of __constant__ taps, vs global and __ldg",
    claims=(Claim("Constant memory is off-chip, cached and read-only, visible to all threads and the host; its "
                  "latency is below global, local and texture memory.",
                  seed("003", "Best Practices 9.2, device memory spaces table")),
            Claim("A constant-memory read is served at the cost of one read per distinct address in the warp: "
                  "a broadcast when all threads read the same address, serialized otherwise.",
                  outside("NVIDIA, CUDA C++ Programming Guide, 'Device Memory Accesses', constant memory"))),
    cases=cases,
    params=dict(n=2**25, quick_n=2**20, taps=64),
    naive="global uniform",
    group_by=(),
    findings=findings,
    order=62,
)
