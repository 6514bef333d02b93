#!/usr/bin/env python3
"""Where a small split column sum's time goes (sum_cols_narrow with its ticket epilogue, axis 0 of (rows, 3)), against
one split and torch.sum: host us per call of each piece alone (the stream's workspace lookup, the output allocation,
the prepared run, gpumemlab.sum as users call it) and the GPU's own time per call, measured with the host out of the
way: a spin kernel holds the stream while 200 calls queue behind it, then events around those 200. Everything runs on
torch's current stream (CuPy made to follow it), so torch.sum is timed the same way. Writes $OUT/narrow_gap.json.

    PYTHONPATH=src python3 tools/narrow_gap_probe.py
"""
import json
import os
import sys

sys.path.insert(0, "tools")

SPIN = r'''extern "C" __global__ void spin(long long cycles) {
    long long t = clock64();
    while (clock64() - t < cycles) {}
}'''


def torch_stream(cupy, torch):
    """torch's current stream as a CuPy stream (CuPy 14: Stream.from_external; before: ExternalStream)."""
    current = torch.cuda.current_stream()
    try:
        return cupy.cuda.Stream.from_external(current)
    except (AttributeError, TypeError, ValueError):
        return cupy.cuda.ExternalStream(current.cuda_stream)


def gpu_us(cupy, spin, fn, calls: int = 200, repeats: int = 5) -> list:
    """GPU us per call: ``calls`` calls queued behind a spin kernel (about 20 ms), events around them."""
    s, e, out = cupy.cuda.Event(), cupy.cuda.Event(), []
    for _ in range(repeats):
        spin((1,), (1,), (cupy.int64(40_000_000),))
        s.record()
        for _ in range(calls):
            fn()
        e.record(); e.synchronize()
        out.append(cupy.cuda.get_elapsed_time(s, e) / calls * 1e3)
    return out


def main() -> None:
    import cupy
    import numpy as np
    import torch

    import gpumemlab
    from gpumemlab.ops import _workspace as W
    from gpumemlab.ops import reduce_axis as RA
    from sample2d_probe import burst_us

    stream = torch_stream(cupy, torch)
    stream.use()
    spin = cupy.RawKernel(SPIN, "spin")
    res = []
    for shape in [(16384, 3), (65536, 3), (262144, 3), (1048576, 3)]:
        x = cupy.random.default_rng(4).random(shape, dtype=np.float32) + np.float32(0.5)
        xt = torch.as_tensor(x, device="cuda")
        want = x.astype(np.float64).sum(axis=0)
        fns, plans = {}, {}
        for nw in (RA.NARROW_WAVES, 0):
            kept = RA.NARROW_WAVES
            RA.NARROW_WAVES = nw; RA._call_plan.cache_clear(); RA._prepared.cache_clear()
            prep = RA._prepared(x.shape, 0, x.dtype, None, False, False, True)
            RA.NARROW_WAVES = kept
            splits = prep.passes[0].splits
            plans[f"splits {splits}"] = [(p.kind, p.splits) for p in prep.passes]
            out = cupy.full(prep.shape, np.nan, np.float32)
            prep.run(x, out)
            assert bool((cupy.abs(out - want) <= 1e-5 * want).all()), (shape, nw)
            fns[f"run, splits {splits}"] = lambda prep=prep, out=out: prep.run(x, out)
            if nw:
                p = prep.passes[0]
                fns["workspace lookup"] = lambda p=p: W.ticket_workspace(p.splits * 3, p.outer, "float32")
        RA._call_plan.cache_clear(); RA._prepared.cache_clear()
        got = gpumemlab.sum(x, axis=0)
        assert bool((cupy.abs(got - want) <= 1e-5 * want).all())
        fns["cupy.empty(3)"] = lambda: cupy.empty(3, np.float32)
        fns["gpumemlab.sum"] = lambda: gpumemlab.sum(x, axis=0)
        fns["torch.sum"] = lambda: xt.sum(dim=0)
        host, med = burst_us(cupy, fns, 200, repeats=5)
        gpu = {k: gpu_us(cupy, spin, f) for k, f in fns.items() if k not in ("workspace lookup", "cupy.empty(3)")}
        print(shape, plans, "host", {k: round(v, 2) for k, v in med.items()},
              "gpu", {k: round(sorted(v)[2], 2) for k, v in gpu.items()}, flush=True)
        res.append(dict(shape=shape, plans=plans, host_us=host, gpu_us=gpu))
    json.dump(dict(device=cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), cases=res),
              open(os.path.join(os.environ.get("OUT", "."), "narrow_gap.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
