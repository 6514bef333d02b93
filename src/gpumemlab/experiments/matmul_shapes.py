"""The matmul shape zoo: ``gpumemlab.matmul(a, b)`` against ``cupy.matmul(a, b)`` (cuBLAS, FP32, TF32 off) and
``torch.matmul`` on the same memory, timed as users call them: CUDA events on the work stream around the Python call
(host dispatch included), interleaved A B, B A, ... in the same run.

Two parts: the tuner's zoo (``tune.matmul.ZOO``) and a held-out part declared here that ``gpumemlab tune matmul``
never sees (transformer projections, thin sides of 2 to 64, odd sizes between the tuned ones, batched stacks,
transposed and Fortran-ordered operands, matrix-vector products both ways). A case whose operands are not in C order
is also timed against the library on C-ordered copies of the same operands (``ratio_to_c_order``).

M = 1 and N = 1 are matrix-vector products (0.5 flop per byte of the matrix): judged by DRAM bandwidth against
the copy ceiling, L2 flushed between samples; the GEMMs are judged by FLOP rate with warm operands, as a
user's back-to-back calls see them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..bench.timer import TimerConfig
from ..bench.verify import device_random_nonzero
from ._cite import count, field, geomean, join, q, sentence
from ._declare import Case, Claim, Experiment, Plot, seed
from ._library import returning
from ._matmul import Reference
from ._model import shape_set_summary, store_ratios
from . import _torch
from ..tune.matmul import ZOO
from ..tune.table import mnk_name

OURS, CUPY, TORCH, C_ORDER = "gpumemlab.matmul", "cupy.matmul", "torch.matmul", "gpumemlab.matmul (C order)"
PEERS = (CUPY, TORCH)
MEMORY_BOUND = ("m1", "n1", "matvec")
# one call of the largest shapes takes a tenth of a second or more: ten interleaved rounds are enough
SLOW = TimerConfig(warmup=1, min_samples=10, batch=1, min_time_s=0.0, max_time_s=1.0)


@dataclass(frozen=True)
class Shape:
    """One zoo case: ``batch`` leading sides of A and of B (NumPy broadcasting), ``layout`` "nn" (C order), "tn" /
    "nt" / "tt" (A and/or B a transposed view), "ff" (both Fortran-ordered); ``vector``: "a" or "b" is 1-D;
    ``held_out``: never tuned."""

    group: str
    m: int
    n: int
    k: int
    layout: str = "nn"
    batch_a: tuple = ()
    batch_b: tuple = ()
    vector: str = ""
    held_out: bool = True

    @property
    def name(self) -> str:
        lead = "x".join(map(str, self.batch_a)) + "|" + "x".join(map(str, self.batch_b)) if self.batch_a or self.batch_b \
            else ""
        return (f"[{lead}] " if lead else "") + mnk_name(self.m, self.n, self.k) + \
            ("" if self.layout == "nn" else f" {self.layout}") + (f" {self.vector}-vector" if self.vector else "")

    @property
    def products(self) -> int:
        lead = np.broadcast_shapes(self.batch_a, self.batch_b) if self.batch_a or self.batch_b else ()
        return math.prod(lead)

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.products


def _d(tokens, d, groups=("qkv", "out", "up", "down")):
    """Transformer projections of ``tokens`` x d: fused QKV (3d), output (d), MLP up (4d) and down (back to d)."""
    shapes = dict(qkv=(tokens, 3 * d, d), out=(tokens, d, d), up=(tokens, 4 * d, d), down=(tokens, d, 4 * d))
    return [Shape("transformer", *shapes[g]) for g in groups]


HELD_OUT = (
    _d(1, 4096, ("qkv", "down")) + _d(16, 768) + _d(128, 1024, ("qkv", "up")) + _d(512, 2048, ("out", "down"))
    + _d(2048, 5120, ("qkv",)) + _d(4096, 768, ("up", "down")) + _d(16384, 1024, ("qkv",)) + _d(1000, 8192, ("out",))
    + [Shape("vocab", t, v, d) for t, v, d in ((1, 32000, 4096), (128, 50257, 768), (512, 128256, 2048),
                                                (2048, 32000, 4096))]
    + [Shape("thin", m, n, k) for m, n, k in ((4096, 2, 4096), (8192, 7, 2048), (2048, 33, 8192), (16384, 64, 1024),
                                               (3, 4096, 4096), (12, 8192, 1024), (48, 4096, 4096), (64, 5000, 3000),
                                               (1000, 13, 1000), (2, 11008, 4096))]
    + [Shape("odd", m, n, k) for m, n, k in ((1500, 1500, 1500), (2500, 1700, 900), (5000, 3001, 2000),
                                              (333, 4444, 555), (6000, 6000, 6000), (129, 257, 4099))]
    + [Shape("batched", m, n, k, batch_a=ba, batch_b=bb) for m, n, k, ba, bb in (
        (128, 128, 64, (32,), (32,)), (512, 512, 512, (8,), (8,)), (64, 64, 64, (64,), (64,)),
        (1024, 1024, 64, (16,), (16,)), (197, 64, 197, (96,), (96,)), (256, 768, 768, (8,), ()),
        (100, 100, 100, (4, 6), (1, 6)), (7, 9, 11, (500,), (500,)))]
    + [Shape("batched", m, n, k, "tn" if i % 2 else "nt", batch_a=(b,), batch_b=(b,)) for i, (m, n, k, b) in enumerate(
        ((128, 128, 64, 32), (512, 512, 512, 8), (197, 197, 64, 96), (1024, 64, 1024, 16)))]
    + [Shape("layout", m, n, k, lay) for m, n, k in ((4096, 4096, 4096), (2048, 2048, 2048), (1001, 999, 1003),
                                                      (4096, 64, 4096), (1024, 8192, 1024))
       for lay in ("tn", "nt", "tt")]
    + [Shape("layout", m, n, k, "ff") for m, n, k in ((3000, 3000, 3000), (777, 1001, 513))]
    + [Shape("matvec", m, n, k, lay, vector=v) for m, n, k, lay, v in (
        (4096, 1, 4096, "tn", "b"), (1, 8192, 8192, "nt", "a"), (16384, 1, 4096, "nn", "b"),
        (1, 11008, 4096, "nn", "a"), (3000, 1, 1000, "tn", "b"), (1, 1000, 3000, "nt", "a"))]
)
TUNED = tuple(Shape(group, m, n, k, held_out=group in ("odd",)) for group, m, n, k in ZOO)
SHAPES = TUNED + tuple(HELD_OUT)


def operand(shape: tuple, lead: tuple, trans: bool, fortran: bool, seed_: int):
    """A ``lead + shape`` float32 operand in the asked layout: a transposed view of a C-ordered block, a
    Fortran-ordered array, or C order."""
    import cupy

    if trans:
        return device_random_nonzero(lead + shape[::-1], np.float32, seed_).swapaxes(-1, -2)
    x = device_random_nonzero(lead + shape, np.float32, seed_)
    return cupy.asfortranarray(x) if fortran else x


def build(s: Shape, seed_: int):
    """(a, b) of shape ``s`` in its layout (1-D where ``s.vector`` says)."""
    ta, tb = s.layout[0] == "t", s.layout[1] == "t"
    ff = s.layout == "ff"
    a = operand((s.k,) if s.vector == "a" else (s.m, s.k), s.batch_a, ta and s.vector != "a", ff, seed_)
    b = operand((s.k,) if s.vector == "b" else (s.k, s.n), s.batch_b, tb and s.vector != "b", ff, seed_ + 1000)
    return a, b


def _checker(run, result, reset, ref: Reference, what: str):
    def check():
        from ..gpu import runtime

        reset()
        run()
        runtime.synchronize()
        ref.check(result(), what)
    return check


def cases(session, params):
    import cupy

    import gpumemlab

    groups = set(params["groups"])
    for i, s in enumerate(SHAPES):
        if "all" not in groups and s.group not in groups:
            continue
        if s.flops > params["max_flops"] or (session.quick and s.flops > params["quick_max_flops"]):
            continue
        a, b = build(s, session.seed + i)
        ref = Reference(a, b)
        memory = s.group in MEMORY_BOUND
        common = dict(params=dict(index=i, group=s.group, shape=s.name, m=s.m, n=s.n, k=s.k, layout=s.layout,
                                  vector=s.vector, products=s.products, held_out=s.held_out),
                      flops=s.flops, cold_l2=memory, ceiling="copy_gbps" if memory else "sgemm_cublas_gflops",
                      timer=SLOW if s.flops > params["slow_flops"] else None)
        if memory:
            common.update(reads=4.0 * (a.size + b.size), writes=4.0 * s.m * s.n * s.products)

        def make(variant, run, result, reset, kind="kernel", **kw):
            return Case(variant, run, _checker(run, result, reset, ref, variant), kind=kind, **common, **kw)

        versus = [CUPY]
        bases = [returning(make, CUPY, lambda a=a, b=b: cupy.matmul(a, b), kind="baseline")]
        if _torch.torch_module() is not None:
            ta, tb = _torch.as_tensor(a), _torch.as_tensor(b)
            torch = _torch.torch_module()
            bases.append(returning(make, TORCH, _torch.on_work_stream(session, lambda ta=ta, tb=tb: torch.matmul(ta, tb)),
                                   kind="baseline", extra=dict(torch=_torch.version())))
            versus.append(TORCH)
        if s.layout != "nn":  # the same product on C-ordered copies (made once, untimed)
            ca, cb = cupy.ascontiguousarray(a), cupy.ascontiguousarray(b)
            bases.append(returning(make, C_ORDER, lambda ca=ca, cb=cb: gpumemlab.matmul(ca, cb), kind="baseline"))
            versus.append(C_ORDER)
        yield returning(make, OURS, lambda a=a, b=b: gpumemlab.matmul(a, b), versus=tuple(versus))
        yield from bases


RATIOS = (("ratio_to_cublas", CUPY), ("ratio_to_torch", TORCH), ("ratio_to_c_order", C_ORDER))


def derive(records, session):
    """On our record: ratio_to_cublas / ratio_to_torch / ratio_to_c_order, each the interleaved median of
    t_peer / t_ours (its verdict in ``verdict`` for cuBLAS), and ``worst_peer``: the smaller of the first two."""
    for key, peer in reversed(RATIOS):  # cuBLAS last: its verdict is the one kept
        store_ratios(records, key, lambda r, peer=peer: peer)
    for r in records:
        peers = [r.extra[k] for k, _ in RATIOS[:2] if r.extra.get(k)]
        if r.variant == OURS and peers:
            r.extra["worst_peer"] = min(peers)


def _shape(r):
    """'[P x] MxNxK[ layout]' of a record, each number quoted from its params (P: products of a batch)."""
    mnk = join("x", (q(field(r, "params", side), ".0f") for side in ("m", "n", "k")))
    p = r.params
    lead = [q(field(r, "params", "products"), ".0f"), " x "] if p.get("products", 1) > 1 else []
    tail = [f" {p['layout']}"] if p.get("layout", "nn") != "nn" else []
    return sentence(*lead, mnk, *tail, *([f" {p['vector']}-vector"] if p.get("vector") else []))


def _geomean_line(label: str, rows, key: str, peer: str):
    if not rows:
        return None
    worst = min(rows, key=lambda r: r.extra[key])
    return sentence(label, ": ", q(count(rows), ".0f"), " shapes, geometric mean ",
                    q(geomean([field(r, "extra", key) for r in rows]), ".2f"), f"x {peer}, worst ", _shape(worst), " ",
                    q(field(worst, "extra", key), ".2f"), "x")


def findings(records):
    ours = [r for r in records if r.variant == OURS and r.extra.get("ratio_to_cublas")]
    if not ours:
        return
    yield shape_set_summary(ours, "ratio_to_cublas", "cuBLAS", _shape)
    for part, rows in (("held out", [r for r in ours if r.params.get("held_out")]),
                       ("tuned", [r for r in ours if not r.params.get("held_out")])):
        for key, peer in RATIOS[:2]:
            line = _geomean_line(f"{part} {peer}", [r for r in rows if r.extra.get(key)], key, peer)
            if line is not None:
                yield line
    worst = [r for r in ours if r.extra.get("worst_peer")]
    if worst:
        w = min(worst, key=lambda r: r.extra["worst_peer"])
        yield sentence("worst peer ratio (the slower of cuBLAS and PyTorch per shape): ", _shape(w), " ",
                       q(field(w, "extra", "worst_peer"), ".2f"), "x")
    line = _geomean_line("batched stacks", [r for r in ours if r.params.get("products", 1) > 1], "ratio_to_cublas",
                         CUPY)
    if line is not None:
        yield line
    line = _geomean_line("operands not in C order vs the same product in C order",
                         [r for r in ours if r.extra.get("ratio_to_c_order")], "ratio_to_c_order", "C order")
    if line is not None:
        yield line
    square = sorted((r for r in ours if r.params["group"] == "square"), key=lambda r: r.params["m"])
    if len(square) > 1:  # the seed's figure: close at 128 x 128, a gap that grows with the size
        yield sentence("square shapes, this hand-written SGEMM over cuBLAS: ", _shape(square[0]), " ",
                       q(field(square[0], "extra", "ratio_to_cublas"), ".2f"), "x, ", _shape(square[-1]), " ",
                       q(field(square[-1], "extra", "ratio_to_cublas"), ".2f"), "x")
    for r in ours:
        gb = [", ", q(field(r, "gbps"), ".0f"), " GB/s"] if r.params["group"] in MEMORY_BOUND and r.gbps else []
        extra = []
        for key, name in (("ratio_to_torch", "PyTorch"), ("ratio_to_c_order", "C order")):
            if r.extra.get(key):
                extra += [f", {name} ", q(field(r, "extra", key), ".2f"), "x"]
        yield sentence(f"{r.params['group']} ", _shape(r), ": ", q(field(r, "extra", "ratio_to_cublas"), ".2f"),
                       f"x cuBLAS ({r.extra['verdict']})", *extra, *gb)


EXPERIMENT = Experiment(
    name="matmul_shapes",
    title=f"matmul shape zoo: gpumemlab.matmul vs cupy.matmul (cuBLAS) and torch.matmul as users call them, "
          f"{len(SHAPES)} shapes ({len(HELD_OUT)} held out from tuning)",
    claims=(Claim("A hand-written SGEMM against cuBLAS: \"For 128 x 128 matrices, the performance is very close. As "
                  "the matrix size increases, the gap between cuBLAS and our code increases drastically.\"",
                  seed("002", "blog 'GPU shared memory', Figure 1")),),
    cases=cases,
    params=dict(max_flops=1e13, slow_flops=1e12, quick_max_flops=2e10, groups=["all"]),
    group_by=("shape",),
    plot=Plot(x="index", y="ratio_to_cublas", series="group",
              title="gpumemlab.matmul / cuBLAS per zoo shape (interleaved, library calls as users time them)"),
    modern_note="Small and thin shapes leave most SMs idle with large tiles, so the choice of tile and split-K "
                "decides the ratio; M = 1 and N = 1 are bounded by DRAM bandwidth, not by FMA rate. Transposed "
                "operands are read in place by the same tiles (a column-major operand copied coalesced into shared "
                "memory, the seeds' corner turning).",
    findings=findings,
    derive=derive,
    order=73,
)
