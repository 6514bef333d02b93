#!/usr/bin/env python3
"""Same-run timing of the library's layouts against CuPy, PyTorch and a device memcpy of the same bytes: transpose
over dtypes, odd 2-D shapes and N-D permutations; sum along axes of strided views; and the host time per call of
tiny transpose / copy / sum in a loop. Library calls timed as users call them (CUDA events around the Python call,
L2 flushed before each sample), candidates interleaved in a rotating order, median of SAMPLES.

    python3 tools/layout_bench.py [--samples N] [--json PATH] [--profile]

Prints markdown tables (docs/notes/library-layouts.md holds a run's).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time

import numpy as np

FLUSH_BYTES = 256 << 20


def _torch():
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 - PyTorch is optional
        return None


def timed(cands: dict, samples: int) -> dict:
    """name -> median seconds of ``fn()`` between CUDA events on the current stream, L2 flushed before each."""
    import cupy

    flush = cupy.empty(FLUSH_BYTES, cupy.uint8)
    for fn in cands.values():  # warm-up: compile, plan, allocate
        fn()
    names = list(cands)
    times = {n: [] for n in names}
    for i in range(samples):
        order = names[i % len(names):] + names[:i % len(names)]
        for n in order:
            flush.fill(i & 0xFF)
            a, b = cupy.cuda.Event(), cupy.cuda.Event()
            a.record()
            cands[n]()
            b.record()
            b.synchronize()
            times[n].append(cupy.cuda.get_elapsed_time(a, b) / 1e3)
    return {n: statistics.median(t) for n, t in times.items()}


def random_array(shape, dtype, seed=0):
    import cupy

    rng = cupy.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    raw = rng.integers(0, 256, size=math.prod(shape) * dtype.itemsize, dtype=cupy.uint8)
    return raw.view(dtype).reshape(shape)


TRANSPOSE_2D = [(16384, 16384), (8192, 8192), (4096, 4096), (4097, 3001), (3001, 4097), (16380, 16388),
                (12345, 6789), (1537, 2049), (2047, 1025), (1000, 1001), (1024, 1000), (3, 70_000), (70_000, 3),
                (31, 1 << 20), (257, 129), (100, 100), (8, 8)]
TRANSPOSE_ND = [((64, 128, 256), (0, 2, 1)), ((64, 128, 256), (2, 0, 1)), ((64, 128, 256), (1, 0, 2)),
                ((64, 128, 256), (2, 1, 0)), ((32, 64, 56, 56), (0, 2, 3, 1)), ((32, 56, 56, 64), (0, 3, 1, 2)),
                ((8, 512, 16, 64), (0, 2, 1, 3)), ((33, 65, 17, 9), (3, 1, 0, 2)), ((4, 4, 4), (1, 2, 0))]
DTYPE_SHAPES = [((4097, 3001), None), ((2048, 2048), None), ((32, 64, 56, 56), (0, 2, 3, 1)), ((8, 8), None)]
DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "float16", "int32", "uint32", "float32", "int64", "uint64",
          "float64", "complex64", "complex128"]
# (shape, view as numpy-style indexing applied to cupy and torch, axis); torch has no negative steps: "flip"
SUM_VIEWS = [((16384, 4096), "T", 0), ((16384, 4096), "T", 1), ((4096, 16384), ":,::2", 0), ((4096, 16384), ":,::2", 1),
             ((8192, 8192), "::-1", 0), ((8192, 8192), ":,100:8000", 1), ((256, 512, 512), "p201", (0, 2)),
             ((256, 512, 512), "p201", 1), ((512, 512, 256), "p120", (1, 2)), ((3, 1 << 22), "T", 0),
             ((1 << 22, 3), "T", 1), ((1000, 1001), "T", 0), ((64, 64), "T", 1), ((8, 8), ":,::2", 0)]


def view(a, how: str, is_torch: bool):
    if how == "T":
        return a.T
    if how == ":,::2":
        return a[:, ::2]
    if how == "::-1":
        return a.flip(0) if is_torch else a[::-1]
    if how == ":,100:8000":
        return a[:, 100:8000]
    if how.startswith("p"):
        axes = tuple(int(c) for c in how[1:])
        return a.permute(*axes) if is_torch else a.transpose(axes)
    raise ValueError(how)


def tile32(x, axes):
    """The library's tiled transpose of ``x`` with 32 x 8 tiles (the 64 x 64 default's comparison), where the library
    takes transpose_strided for this layout; else None."""
    import cupy

    from gpumemlab.kernels import transpose as K
    from gpumemlab.ops import _layout
    from gpumemlab.ops import transpose as T

    move = _layout.layout(x.shape, x.strides, x.itemsize, axes, x.data.ptr & 15)
    _, run = T.prepared(x.shape, x.strides, x.dtype, axes, x.data.ptr & 15)
    if move.kind not in ("tile", "matrix") or K.STRIDED_TILE[move.size] == K.STRIDED_TILE_32:
        return None
    if getattr(run, "_kernel", None) != K.strided_spec(move.size):
        return None
    launch = T._tile_launch(move, K.STRIDED_TILE_32)
    shape = tuple(x.shape[a] for a in axes)

    def call():
        out = cupy.empty(shape, x.dtype)
        launch(out, x)
        return out
    return call


def transpose_rows(samples: int, torch) -> list[dict]:
    import cupy

    import gpumemlab

    rows = []
    cases = ([(s, None, "float32") for s in TRANSPOSE_2D] + [(s, a, "float32") for s, a in TRANSPOSE_ND]
             + [(s, a, d) for s, a in DTYPE_SHAPES for d in DTYPES if d != "float32"])
    for shape, axes, dtype in cases:
        x = random_array(shape, dtype)
        axes_t = axes or tuple(range(len(shape) - 1, -1, -1))
        dst = cupy.empty(x.size, x.dtype)
        src = x.reshape(-1)
        cands = {"gpumemlab": lambda: gpumemlab.transpose(x, axes),
                 "cupy": lambda: cupy.ascontiguousarray(x.transpose(axes_t)),
                 "memcpy": lambda: dst.data.copy_from_device_async(src.data, x.nbytes)}
        if torch is not None:
            try:  # PyTorch lacks some unsigned dtypes' kernels
                t = torch.as_tensor(x, device="cuda")
                t.permute(*axes_t).contiguous()
                cands["torch"] = lambda: t.permute(*axes_t).contiguous()
            except (RuntimeError, TypeError):
                pass
        alt = tile32(x, axes_t)
        if alt is not None:
            cands["tile32"] = alt
        got = gpumemlab.transpose(x, axes)
        assert bool((got.view(cupy.uint8) == cupy.ascontiguousarray(x.transpose(axes_t)).view(cupy.uint8)).all())
        med = timed(cands, samples)
        rows.append(dict(op="transpose", shape=list(shape), axes=list(axes_t), dtype=dtype, **med))
    return rows


def sum_rows(samples: int, torch) -> list[dict]:
    import cupy

    import gpumemlab

    rows = []
    for shape, how, axis in SUM_VIEWS:
        base = cupy.random.default_rng(1).random(shape, dtype=cupy.float32)
        x = view(base, how, False)
        cands = {"gpumemlab": lambda: gpumemlab.sum(x, axis=axis), "cupy": lambda: cupy.sum(x, axis=axis)}
        if torch is not None:
            t = view(torch.as_tensor(base, device="cuda"), how, True)
            cands["torch"] = lambda: t.sum(dim=axis)
        want = x.astype(cupy.float64).sum(axis=axis)
        err = float(abs(gpumemlab.sum(x, axis=axis) - want).max() / max(1.0, float(abs(want).max())))
        assert err < 1e-4, (shape, how, axis, err)
        med = timed(cands, samples)
        rows.append(dict(op="sum", shape=list(shape), view=how, axis=axis, bytes=x.nbytes, **med))
    return rows


def host_rows(torch, calls: int = 2000, rounds: int = 7) -> list[dict]:
    """Per-call wall time of a loop of ``calls`` tiny calls (8x8 float32), rounds interleaved, median."""
    import cupy

    import gpumemlab

    x = cupy.random.default_rng(2).random((8, 8), dtype=cupy.float32)
    pairs = {"transpose": {"gpumemlab": lambda: gpumemlab.transpose(x), "cupy": lambda: cupy.ascontiguousarray(x.T)},
             "copy": {"gpumemlab": lambda: gpumemlab.copy(x), "cupy": lambda: x.copy()},
             "sum": {"gpumemlab": lambda: gpumemlab.sum(x), "cupy": lambda: cupy.sum(x)},
             "sum axis 0": {"gpumemlab": lambda: gpumemlab.sum(x, axis=0), "cupy": lambda: cupy.sum(x, axis=0)},
             "transpose 3-D": {"gpumemlab": lambda: gpumemlab.transpose(x.reshape(2, 4, 8), (1, 0, 2)),
                               "cupy": lambda: cupy.ascontiguousarray(x.reshape(2, 4, 8).transpose(1, 0, 2))}}
    if torch is not None:
        t = torch.as_tensor(x, device="cuda")
        pairs["transpose"]["torch"] = lambda: t.t().contiguous()
        pairs["copy"]["torch"] = lambda: t.clone()
        pairs["sum"]["torch"] = lambda: t.sum()
        pairs["sum axis 0"]["torch"] = lambda: t.sum(dim=0)
        pairs["transpose 3-D"]["torch"] = lambda: t.reshape(2, 4, 8).permute(1, 0, 2).contiguous()
    rows = []
    for op, cands in pairs.items():
        per = {n: [] for n in cands}
        for fn in cands.values():
            for _ in range(50):
                fn()
        cupy.cuda.Device().synchronize()
        for r in range(rounds):
            for n in list(cands)[r % len(cands):] + list(cands)[:r % len(cands)]:
                fn = cands[n]
                t0 = time.perf_counter()
                for _ in range(calls):
                    fn()
                cupy.cuda.Device().synchronize()
                per[n].append((time.perf_counter() - t0) / calls)
        rows.append(dict(op=op, **{n: statistics.median(v) for n, v in per.items()}))
    return rows


def profile(calls: int = 2000) -> str:
    import cProfile
    import io
    import pstats

    import cupy

    import gpumemlab

    x = cupy.random.default_rng(2).random((8, 8), dtype=cupy.float32)
    out = io.StringIO()
    for name, fn in (("transpose", lambda: gpumemlab.transpose(x)), ("copy", lambda: gpumemlab.copy(x)),
                     ("sum", lambda: gpumemlab.sum(x)), ("sum axis 0", lambda: gpumemlab.sum(x, axis=0))):
        fn()
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(calls):
            fn()
        pr.disable()
        out.write(f"\n### {name}\n")
        pstats.Stats(pr, stream=out).sort_stats("tottime").print_stats(12)
    return out.getvalue()


def _us(s):
    return "n/a" if s is None else f"{s * 1e6:.1f}"


def _ratio(a, b):
    return "n/a" if a is None or b is None else f"{b / a:.2f}"


def tables(trans, sums, host) -> str:
    lines = ["| shape | axes | dtype | gpumemlab us | memcpy us | vs memcpy | vs CuPy | vs PyTorch | 32x8 tiles us |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in trans:
        lines.append(f"| {'x'.join(map(str, r['shape']))} | {tuple(r['axes'])} | {r['dtype']} | {_us(r['gpumemlab'])} | "
                     f"{_us(r['memcpy'])} | {_ratio(r['gpumemlab'], r['memcpy'])} | {_ratio(r['gpumemlab'], r['cupy'])} | "
                     f"{_ratio(r['gpumemlab'], r.get('torch'))} | {_us(r.get('tile32'))} |")
    lines += ["", "| base shape | view | axis | gpumemlab us | CuPy us | PyTorch us | vs CuPy | vs PyTorch |",
              "|---|---|---|---|---|---|---|---|"]
    for r in sums:
        lines.append(f"| {'x'.join(map(str, r['shape']))} | `{r['view']}` | {r['axis']} | {_us(r['gpumemlab'])} | "
                     f"{_us(r['cupy'])} | {_us(r.get('torch'))} | {_ratio(r['gpumemlab'], r['cupy'])} | "
                     f"{_ratio(r['gpumemlab'], r.get('torch'))} |")
    lines += ["", "| call (8x8 float32) | gpumemlab us/call | CuPy us/call | PyTorch us/call |", "|---|---|---|---|"]
    for r in host:
        lines.append(f"| {r['op']} | {_us(r['gpumemlab'])} | {_us(r['cupy'])} | {_us(r.get('torch'))} |")
    return "\n".join(lines)


def main(argv) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=15)
    p.add_argument("--json")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--only", choices=("transpose", "sum", "host"), action="append")
    args = p.parse_args(argv)
    import cupy

    torch = _torch()
    only = set(args.only or ("transpose", "sum", "host"))
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}; torch "
          f"{torch.__version__ if torch else 'absent'}; cupy {cupy.__version__}")
    trans = transpose_rows(args.samples, torch) if "transpose" in only else []
    sums = sum_rows(args.samples, torch) if "sum" in only else []
    host = host_rows(torch) if "host" in only else []
    print(tables(trans, sums, host))
    if args.profile:
        print(profile())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(transpose=trans, sum=sums, host=host), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
