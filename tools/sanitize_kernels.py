#!/usr/bin/env python3
"""Run every reduce, transpose, launch, matmul and on-chip (L2 window, texture, constant) kernel (and the library's
sum, transpose, copy, matmul, persist_l2, sample2d) once on small odd sizes, for compute-sanitizer (memcheck, racecheck, synccheck). Checks every result too and exits 1
on a mismatch, listing them.

    compute-sanitizer --tool racecheck python3 tools/sanitize_kernels.py [reduce transpose launch matmul gemv onchip library layouts lessons peer report]
    SAN_RB_ONLY=1: matmul's register_blocked configurations only (every candidate, plain and split-K, vec 4 and 1)
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import replace

import numpy as np

FAILURES: list[str] = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)


def reduce_kernels(rng):
    import cupy

    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import reduce as R

    for n in (1, 257, 1000, 5003, 70_001):
        x = random_nonzero(n, np.float32, rng)
        xd = cupy.asarray(x)
        for step in R.LADDER:  # one pass each: sizes that leave partial blocks
            blocks = math.ceil(n / step.per_block)
            out = cupy.full(blocks, np.nan, np.float32)
            runtime.launch(step.spec, blocks, R.BLOCK, out, xd, np.int64(n))
            check(abs(float(out.sum()) - x.astype(np.float64).sum()) < 1e-3, f"{step.name} n={n}")
        ticket = cupy.zeros(1, np.uint32)
        for config in R.VECTORIZED + R.TUNING:  # 3 blocks: uneven shares, partial tiles, a misaligned start
            part = cupy.full(3, np.nan, np.float32)
            res = cupy.full(1, np.nan, np.float32)
            if config.kernel == "reduce6":
                runtime.launch(config.spec(), 3, config.block, part, xd[1:], np.int64(n - 1))
                runtime.launch(R.reduce_final("float", "float"), 1, R.FINAL_BLOCK, res, part, np.int64(3))
            else:
                runtime.launch(config.spec(), 3, config.block, res, part, ticket, xd[1:], np.int64(n - 1))
            check(abs(float(res[0]) - x[1:].astype(np.float64).sum()) < 1e-3, f"{config.label} n={n}")


def launch_kernels(rng):
    import cupy

    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import launch as L

    xa = cupy.asarray(random_nonzero(5000, np.float32, rng))
    outs = []
    for spec in [L.NATURAL] + L.SPILL_DEMO:  # the register-pressure kernel, natural and spilling
        o = cupy.full(2 * 64, np.nan, np.float32)
        runtime.launch(spec, 2, 64, o, xa, np.int64(xa.size))
        outs.append(o.get())
    check(all(np.array_equal(o, outs[0]) for o in outs), "accumulators with register limits")


def transpose_kernels(rng):
    import cupy

    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import transpose as T

    for ctype, dtype in ((T.CTYPES[d], d) for d in T.DTYPES):
        library = [T.LIBRARY_VECTORIZED] + ([T.LIBRARY_TALL] if ctype in T.TALL_CTYPES else [])
        for rows, cols in ((33, 65), (64, 64), (132, 68), (1, 9), (260, 132)):  # 132, 260: part tiles of 128 rows
            x = random_nonzero((rows, cols), dtype, rng)
            xd = cupy.asarray(x)
            for v in T.LADDER + library:
                w = v.width(ctype)
                if rows % w or cols % w:
                    continue
                out = cupy.empty((cols, rows) if v.transposes else (rows, cols), dtype)
                runtime.launch(v.spec(ctype), v.grid(rows, cols), v.block, out, xd, rows, cols)
                check(np.array_equal(out.get(), x.T if v.transposes else x), f"{v.name} {ctype} {rows}x{cols}")
        for rows, cols in ((3, 1001), (1001, 3), (31, 517), (517, 31), (1, 9), (6, 2)):  # the thin kernel, both ways
            x = random_nonzero((rows, cols), dtype, rng)
            for min_blocks in (1, 264):  # full-size blocks, and the smallest ones (THIN_MIN_CHUNK)
                out = cupy.empty((cols, rows), dtype)
                t = T.thin_launch(rows, cols, ctype, min_blocks)
                runtime.launch(t.spec, t.grid, T.THIN_BLOCK, out, cupy.asarray(x), rows, cols, *t.args, shmem=t.shmem)
                check(np.array_equal(out.get(), x.T), f"thin {ctype} {rows}x{cols} chunk {t.chunk}")


def matmul_kernels(rng, rb_only: bool):
    import cupy

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments._matmul import Reference
    from gpumemlab.kernels.matmul import CANDIDATES
    from gpumemlab.kernels import matmul as K
    from gpumemlab.ops.matmul import launch as ops

    def run(variant, m, n, k, cfg=None, vec=None, splits=None):
        a = device_random_nonzero((m, k), np.float32, 1)
        b = None if K.VARIANTS[variant].op == "aat" else device_random_nonzero((k, n), np.float32, 2)
        out = cupy.empty((m, m if b is None else n), cupy.float32)
        p = (ops.register_blocked_plan(a, b, out, cfg, vec, splits) if variant == "register_blocked"
             else ops.plan(variant, a, b, out))
        try:
            Reference(a, b).verifier(p.run, out, variant)()
        except Exception as exc:
            check(False, f"{variant} {cfg.name if cfg else ''} {m}x{n}x{k}: {exc}")

    for v in () if rb_only else K.AB_VARIANTS:
        if K.VARIANTS[v].k32:
            run(v, 64, 96, 32)
        elif v != "register_blocked":
            run(v, 67, 45, 37)
    for v in () if rb_only else K.AAT_VARIANTS:
        run(v, 96, 0, 32)
    for cfg in CANDIDATES:
        run("register_blocked", 140, 136, 36, cfg, 4)
        run("register_blocked", 67, 45, 37, cfg, 1)
        run("register_blocked", 72, 68, 100, cfg, 4, 3)
        run("register_blocked", 33, 17, 41, cfg, 1, 2)


def matmul_layout_kernels(rng):
    """Every candidate with A and/or B column-major (odd pitches, vec 4 and 1, split-K) and a broadcast stack."""
    import cupy

    import gpumemlab
    from gpumemlab.bench.verify import device_random_nonzero as rnd, matmul_bound
    from gpumemlab.kernels.matmul import CANDIDATES, LAYOUTS
    from gpumemlab.ops.matmul import Choice

    def run(a, b, what, **kw):
        c64 = cupy.matmul(a.astype(cupy.float64), b.astype(cupy.float64))
        err = cupy.abs(gpumemlab.matmul(a, b, **kw).astype(cupy.float64) - c64)
        check(bool((err <= matmul_bound(a, b, cupy.float32, xp=cupy)).all()), f"matmul layout {what}")

    for cfg in CANDIDATES:
        for ta, tb in LAYOUTS:
            for (m, n, k, pad), splits in (((40, 36, 48, 0), 1), ((37, 45, 41, 3), 2)):
                a = rnd((k, m + pad), np.float32, 1)[:, :m].T if ta else rnd((m, k + pad), np.float32, 1)[:, :k]
                b = rnd((n, k + pad), np.float32, 2)[:, :k].T if tb else rnd((k, n + pad), np.float32, 2)[:, :n]
                run(a, b, f"{cfg.name} ta{ta} tb{tb} {m}x{n}x{k}", config=Choice(cfg, splits))
    run(rnd((3, 1, 21, 19), np.float32, 3), rnd((4, 17, 19), np.float32, 4).swapaxes(1, 2), "broadcast stack")


def lesson_kernels(rng):
    """bank_stride at every stride (a grid-stride tail) and the exercise's small square tiles on odd sizes."""
    import cupy

    from gpumemlab.bench.verify import device_random_nonzero, random_nonzero
    from gpumemlab.experiments._matmul import Reference
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import banks as B
    from gpumemlab.kernels import matmul as M

    x = cupy.asarray(random_nonzero(5003, np.float32, rng))
    for stride in B.STRIDES:
        out = cupy.full_like(x, np.nan)
        runtime.launch(B.bank_stride(stride), 3, B.BLOCK, out, x, np.int64(x.size), np.int32(3))
        check(bool((out == x + np.float32(1) + np.float32(1) + np.float32(1)).all()), f"bank_stride<{stride}>")
    m, n, k = 67, 45, 37
    a, b = device_random_nonzero((m, k), np.float32, 3), device_random_nonzero((k, n), np.float32, 4)
    out = cupy.empty((m, n), cupy.float32)
    for t in M.BLOCK_SIZES:
        run = lambda t=t: runtime.launch(M.tiled(t), (math.ceil(n / t), math.ceil(m / t)), (t, t), out, a, b, m, n, k)  # noqa: E731
        try:
            Reference(a, b).verifier(run, out, f"tiled<{t}>")()
        except Exception as exc:
            check(False, f"tiled<{t}> {m}x{n}x{k}: {exc}")


def gemv_kernels(rng):
    """The N = 1 and M <= 8 paths: float4 and scalar loads, one k range and split k ranges (each run twice, so the
    second needs the tickets the first left at 0), partial blocks."""
    import cupy

    from gpumemlab.bench.verify import device_random_nonzero
    from gpumemlab.experiments._matmul import Reference
    from gpumemlab.ops.matmul import launch as ops

    for m, n, k in ((1, 1000, 3000), (1, 1001, 37), (1, 8, 4096), (1, 4096, 8), (1, 1, 1), (333, 1, 1000),
                    (7, 1, 37), (1, 260, 100_003), (2, 1001, 37), (3, 4096, 1000), (8, 8192, 1024), (5, 3, 5),
                    (1024, 1, 8192), (100, 1, 5003)):  # the last two: N = 1 with K split (float4, scalar)
        a = device_random_nonzero((m, k), np.float32, 1)
        b = device_random_nonzero((k, n), np.float32, 2)
        out = cupy.empty((m, n), cupy.float32)
        ref = Reference(a, b)
        try:
            p = ops.gemv_plan(a, b, out)
            for _ in range(2):
                ref.verifier(p.run, out, "gemv")()
        except Exception as exc:
            check(False, f"gemv {m}x{n}x{k}: {exc}")


def library(rng):
    import cupy

    import gpumemlab
    from gpumemlab.bench.verify import random_nonzero

    for dtype in ("float32", "float64", "int32"):  # the single-block and the two-pass path
        for n in (0, 1, 3001, 70_001, 300_007):
            x = random_nonzero(n, dtype, rng)
            got = float(gpumemlab.sum(cupy.asarray(x)))
            check(abs(got - x.astype(np.float64).sum()) <= 1e-3 * max(1.0, np.abs(x).sum() * 1e-3), f"sum {dtype} {n}")
    # sums along axes: rows (thread, warp, block), columns (split or not; few columns: narrow, scalar runs too; many:
    # a thread per column vector, scalar and float4)
    for dtype in ("float32", "float64", "int32"):
        for shape, axis in (((7, 5003), 1), ((3, 9001), -1), ((5003, 7), 0), ((2000, 33), 0), ((3, 517, 9), 1),
                            ((5, 6, 7), (0, 2)), ((2, 70_001), 1), ((3, 5, 7, 9), (1, 3)), ((1001, 3), 1),
                            ((517, 32), 1), ((999, 16), -1), ((5, 3001, 3), 1), ((70_001, 2), 0),
                            ((2, 2_200_001), 0), ((2, 1 << 22), 0)):
            x = random_nonzero(shape, dtype, rng)
            got = gpumemlab.sum(cupy.asarray(x), axis=axis).get()  # (2, 70_001): split rows
            want = x.astype(np.float64).sum(axis=axis)
            check(np.allclose(got, want, rtol=1e-4, atol=1e-3), f"sum {dtype} {shape} axis={axis}")
    for dtype in ("float32", "float64", "int32"):
        for shape in ((33, 65), (1, 9), (132, 68), (3, 1001), (1001, 3), (31, 517), (517, 31)):
            x = random_nonzero(shape, dtype, rng)
            check(np.array_equal(gpumemlab.transpose(cupy.asarray(x)).get(), x.T), f"transpose {dtype} {shape}")
            check(np.array_equal(gpumemlab.copy(cupy.asarray(x)).get(), x), f"copy {dtype} {shape}")
    for m, n, k in ((67, 45, 37), (1, 1001, 37), (1, 4096, 3000), (333, 1, 1001)):  # tiles, then the GEMV paths
        a = cupy.asarray(random_nonzero((m, k), np.float32, rng))
        b = cupy.asarray(random_nonzero((k, n), np.float32, rng))
        want = a.get().astype(np.float64) @ b.get().astype(np.float64)
        err = np.abs(gpumemlab.matmul(a, b).get() - want).max()
        check(err < 1e-4 * np.abs(want).max(), f"matmul {m}x{n}x{k}: max error {err}")


def layout_kernels(rng):
    """transpose_strided and gather_strided for every word size, through gpumemlab.transpose / copy / sum on odd
    shapes, N-D permutations and strided views (stepped, reversed, broadcast), each against NumPy bit for bit."""
    import cupy

    import gpumemlab

    for dtype in ("uint8", "float16", "float32", "float64", "complex128"):
        base = rng.integers(1, 250, size=(37, 29, 12)).astype(dtype)  # rows of 12: read in wider words
        for view, axes in ((lambda a: a[:, :, 0], None), (lambda a: a, (0, 2, 1)), (lambda a: a, (2, 0, 1)),
                           (lambda a: a, (1, 0, 2)), (lambda a: a[:, ::2], (2, 1, 0)), (lambda a: a[::-1, :, 3:], None),
                           (lambda a: a[::3, ::-2, ::2], (0, 1, 2)), (lambda a: a[:1, :1, :1].reshape(1), None),
                           (lambda a: a[4, 3], None), (lambda a: a[:, 5, :5].T, None),
                           (lambda a: a.reshape(37, 29 * 12), None), (lambda a: a[:, :, 1:9], (1, 0, 2)),
                           (lambda a: a[:3, :2], (1, 2, 0))):
            x = view(base)
            want = np.ascontiguousarray(np.transpose(x, axes))
            got = gpumemlab.transpose(view(cupy.asarray(base)), axes).get()
            check(got.tobytes() == want.tobytes() and got.shape == want.shape, f"transpose {dtype} {x.shape} {axes}")
            check(gpumemlab.copy(view(cupy.asarray(base))).get().tobytes() == np.ascontiguousarray(x).tobytes(),
                  f"copy {dtype} {x.shape} strides {x.strides}")
        wide = np.broadcast_to(base[:, :1, 0], (37, 300))
        check(gpumemlab.copy(cupy.broadcast_to(cupy.asarray(base)[:, :1, 0], (37, 300))).get().tobytes()
              == np.ascontiguousarray(wide).tobytes(), f"copy {dtype} broadcast")
    for dtype in ("float32", "int32"):  # sums of views: the dense block under a transposed view, or a copy first
        x = rng.integers(1, 9, size=(33, 47, 5)).astype(dtype)
        for view, axis in ((lambda a: a.transpose(2, 0, 1), 1), (lambda a: a[::-1].T, (0, 2)), (lambda a: a[:, ::2], 1),
                           (lambda a: a[:, 3:40], None)):
            got = gpumemlab.sum(view(cupy.asarray(x)), axis=axis).get()
            check(np.array_equal(got, view(x).sum(axis=axis, dtype=np.float64)), f"sum {dtype} view axis={axis}")


def onchip_kernels(rng):
    import cupy

    import gpumemlab
    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import l2, runtime
    from gpumemlab.gpu.constant import write_symbol
    from gpumemlab.kernels import constant as C
    from gpumemlab.kernels import l2 as L
    from gpumemlab.kernels import texture as T
    from gpumemlab.experiments.texture import reference_sample
    from gpumemlab.ops import sample as S
    from gpumemlab.ops.sample import default_plan

    n, freq = 5 * L.BLOCK + 3, 37  # a partial last block; persistent re-read n / freq times
    s0 = rng.integers(1, 2**31, n, dtype=np.uint32)
    p = cupy.asarray(rng.integers(1, 2**31, freq, dtype=np.uint32) | 1)
    s = cupy.asarray(s0)
    persist = l2.unsupported_reason() is None
    with (gpumemlab.persist_l2(p) if persist else _nothing()):
        runtime.launch(L.SLIDING_WINDOW, math.ceil(n / L.BLOCK), L.BLOCK, p, s, np.uint32(n), np.uint32(freq))
    check(np.array_equal(s.get(), s0 * np.uint32(2)), "sliding_window streaming")
    image = random_nonzero((37, 53), np.float32, rng)
    coords = (rng.random((301, 2)) * [41, 57] - 2).astype(np.float32)  # some outside: every address mode's path
    grid = (rng.random((7, 43, 2)) * [41, 57] - 2).astype(np.float32)  # shaped like an image: rows order
    sources = {"image": cupy.asarray(image), "ArrayImage": gpumemlab.ArrayImage(cupy.asarray(image))}
    for address in T.ADDRESS_MODES:
        for mode in ("nearest", "linear"):
            for pts in (coords, grid):
                want = reference_sample(image, pts.reshape(-1, 2), address, mode == "linear").reshape(pts.shape[:-1])
                for (name, src), exact in ((s, e) for s in sources.items() for e in (False, True)):
                    got = gpumemlab.sample2d(src, cupy.asarray(pts), mode=mode, address=address, exact=exact).get()
                    # the texture unit's bilinear weights have 8 fractional bits (see tests/gpu/test_onchip.py)
                    tol = 1e-6 if exact or mode == "nearest" else 0.03
                    check(np.allclose(got, want, rtol=1e-6, atol=tol),
                          f"sample2d {name} {mode} {address} exact={exact} coords {pts.shape}")
    for pts, exact in ((p_, e) for p_ in (coords, grid) for e in (False, True)):  # the evict-first hints
        plan = replace(default_plan(exact, pts.ndim == 3), streaming=True)
        want = reference_sample(image, pts.reshape(-1, 2), "clamp", True).reshape(pts.shape[:-1])
        got = gpumemlab.sample2d(sources["image"], cupy.asarray(pts), exact=exact, plan=plan).get()
        check(np.allclose(got, want, rtol=1e-6, atol=1e-6 if exact else 0.03),
              f"sample2d streaming exact={exact} coords {pts.shape}")
    # scattered points sampled twice from one buffer: the second call takes the capped layout (ops/sample.py)
    big = random_nonzero((1000, 1000), np.float32, rng)
    far = (rng.random((2 * T.BLOCK + 7, 2)) * 1004 - 2).astype(np.float32)
    want, big_d, far_d = reference_sample(big, far, "clamp", True), cupy.asarray(big), cupy.asarray(far)
    S.clear_cache()  # no call prepared before the patch below
    observed, S.observed = S.observed, lambda n, sm_count: True  # on 519 points too: the observer's partial grid
    for exact, call in ((e, c) for e in (True, False) for c in ("first", "second")):
        got = gpumemlab.sample2d(big_d, far_d, exact=exact).get()  # get() waits: the call's observation is in
        check(np.allclose(got, want, rtol=1e-6, atol=1e-6 if exact else 0.03),
              f"sample2d scattered points, exact={exact}, {call} call")
    S.observed = observed
    S.clear_cache()
    taps = random_nonzero(64, np.float32, rng)
    x = random_nonzero(1000 + 63, np.float32, rng)
    for spec in C.KERNELS:
        write_symbol(spec, C.SYMBOL, taps)
        out = cupy.full(1000, np.nan, np.float32)
        runtime.launch(spec, math.ceil(1000 / C.BLOCK), C.BLOCK, out, cupy.asarray(x), cupy.asarray(taps),
                       np.int64(1000))
        check(not np.isnan(out.get()).any(), f"{spec.name}: unwritten outputs")


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def report_kernels(rng):
    """copy_vec<T, U> on sizes that leave partial chunks, table_stream under each persist_l2 setting and on a CUDA
    graph node with a window, the 1-D and 3-D texture types, and the sincos / reciprocal intrinsics."""
    import cupy

    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.gpu import l2, runtime
    from gpumemlab.gpu import texture as TX
    from gpumemlab.kernels import copy as CP
    from gpumemlab.kernels import intrinsics as I
    from gpumemlab.kernels import l2 as L
    from gpumemlab.kernels import texture as T

    for vtype, width in CP.VECTOR_TYPES.items():
        for unroll in CP.UNROLLS:
            n = 3 * 256 * unroll + 5  # full chunks, then a tail shorter than a chunk
            src = cupy.asarray(random_nonzero(n * width // 4, np.float32, rng))
            dst = cupy.full_like(src, np.nan)
            runtime.launch(CP.copy_vec(vtype, unroll), 2, 256, dst, src, np.int64(n))
            check(bool((dst == src).all()), f"copy_vec<{vtype}, {unroll}>")
    n, size = 5 * L.BLOCK + 3, 37
    table = cupy.asarray(random_nonzero(size, np.float32, rng))
    stream = cupy.asarray(random_nonzero(n, np.float32, rng))
    want = stream.get() + table.get()[np.arange(n) % size]
    out = cupy.full(n, np.nan, np.float32)
    side_stream = runtime.work_stream()  # capture needs a stream other than the legacy default one
    launch = lambda: runtime.launch(L.TABLE_STREAM, math.ceil(n / L.BLOCK), L.BLOCK, out, stream, table,  # noqa: E731
                                    np.uint32(n), np.uint32(size), stream=side_stream)
    if l2.unsupported_reason() is None:
        graph = l2.WindowedGraph(launch, l2.persisting_window(table.data.ptr, table.nbytes, 1.0), side_stream)
        graph()
        runtime.synchronize()
        check(np.array_equal(out.get(), want) and graph.kernel_nodes == 1, "table_stream on a windowed graph node")
        check(graph.window().num_bytes == table.nbytes, "the graph node's window read back")
        graph.close()
    out.fill(np.nan)
    launch()
    check(np.array_equal(out.get(), want), "table_stream")
    size = 1000
    tab = cupy.asarray(random_nonzero(size, np.float32, rng))
    tab8 = cupy.asarray(rng.integers(0, 256, size).astype(np.uint8))
    idx = cupy.asarray(rng.integers(0, size, 3 * T.BLOCK + 7).astype(np.int32))
    out = cupy.empty(idx.size, np.float32)
    grid = math.ceil(idx.size / T.BLOCK)
    fetch, tex1d, fetch8 = TX.linear_texture(tab), TX.volume_texture(tab, filter="point"), \
        TX.linear_texture(tab8, normalized_read=True)
    for what, args, want in (
            ("lookup_global<float>", (T.LOOKUP_GLOBAL["float32"], tab, np.float32(1)), tab[idx]),
            ("lookup_global<uint8>", (T.LOOKUP_GLOBAL["uint8"], tab8, np.float32(1 / 255)), tab8[idx] / 255.0),
            ("lookup_fetch", (T.LOOKUP_FETCH, fetch.handle), tab[idx]),
            ("lookup_fetch normalized", (T.LOOKUP_FETCH, fetch8.handle), tab8[idx] / 255.0),
            ("lookup_tex1d", (T.LOOKUP_TEX1D, tex1d.handle), tab[idx])):
        out.fill(np.nan)
        spec, *rest = args
        if spec in T.LOOKUP_GLOBAL.values():
            runtime.launch(spec, grid, T.BLOCK, out, rest[0], idx, np.int64(idx.size), rest[1])
        else:
            runtime.launch(spec, grid, T.BLOCK, out, rest[0], idx, np.int64(idx.size))
        check(np.allclose(out.get(), want.get(), rtol=0, atol=1e-6), what)
    side = 9
    vol = cupy.asarray(random_nonzero((side, side + 2, side + 4), np.float32, rng))
    pts = cupy.asarray((rng.random((2 * T.BLOCK + 3, 3)) * [side - 1, side + 1, side + 3]).astype(np.float32))
    from cupyx.scipy.ndimage import map_coordinates

    want = map_coordinates(vol.astype(np.float64), pts.T.astype(np.float64), order=1, mode="nearest").get()
    res = cupy.empty(pts.shape[0], np.float32)
    tex3 = TX.volume_texture(vol)
    g3 = math.ceil(pts.shape[0] / T.BLOCK)
    runtime.launch(T.SAMPLE3D_SOFT, g3, T.BLOCK, res, vol, np.int32(side), np.int32(side + 2), np.int32(side + 4),
                   pts, np.int64(pts.shape[0]))
    check(np.allclose(res.get(), want, atol=1e-5), "sample3d_soft")
    runtime.launch(T.SAMPLE3D_TEX, g3, T.BLOCK, res, tex3.handle, pts, np.int64(pts.shape[0]))
    check(np.allclose(res.get(), want, atol=0.05), "sample3d_tex")
    from gpumemlab.experiments.intrinsics import accuracy

    for f in I.FUNCTIONS[4:]:
        for fast in (False, True):
            acc = accuracy(f, fast, 4 * I.BLOCK + 5, 1)
            check(acc["max_ulp"] <= (f.guide_ulp + 1 if not fast else 64), f"{f.label(fast)}: {acc['max_ulp']} ulp")


def peer_kernels(rng):
    """The p2p experiment's SM copies as local copies (one GPU): partial grids, a partial bulk chunk, one granule."""
    import cupy

    from gpumemlab.bench.verify import random_nonzero
    from gpumemlab.experiments.p2p import sm_copy
    from gpumemlab.gpu import runtime
    from gpumemlab.gpu.compile import runs_on
    from gpumemlab.kernels import peer as K

    copiers = ["x1", "x4", "x8"] + (["bulk"] if runs_on(K.PEER_BULK, runtime.device_arch()) else [])
    for nbytes in (16, 8192 * 4 * 3 + 48, 100_016):
        src = cupy.asarray(random_nonzero(nbytes // 4, np.int32, rng))
        for copier in copiers:
            dst = cupy.zeros_like(src)
            sm_copy(copier, runtime.current_ordinal(), dst, src, nbytes)()
            check(bool((dst == src).all()), f"peer {copier} {nbytes} bytes")


def main(argv: list[str]) -> int:
    rb_only = os.environ.get("SAN_RB_ONLY") == "1"
    groups = dict(reduce=reduce_kernels, transpose=transpose_kernels, launch=launch_kernels,
                  matmul=lambda r: matmul_kernels(r, rb_only), gemv=gemv_kernels, onchip=onchip_kernels, library=library,
                  layouts=layout_kernels, matmul_layouts=matmul_layout_kernels, lessons=lesson_kernels, peer=peer_kernels, report=report_kernels)
    names = argv or (["matmul"] if rb_only else list(groups))
    unknown = [n for n in names if n not in groups]
    if unknown:
        print(f"unknown group {unknown[0]!r}; expected {', '.join(groups)}", file=sys.stderr)
        return 2
    from gpumemlab.gpu import runtime

    runtime.work_stream()
    rng = np.random.default_rng(0)
    for name in names:
        groups[name](rng)
    runtime.synchronize()
    if FAILURES:
        print("WRONG RESULTS:", *FAILURES, sep="\n  ")
        return 1
    print(f"sanitize driver: {', '.join(names)}: all results correct")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
