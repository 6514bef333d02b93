#!/usr/bin/env python3
"""Host us per piece of gpumemlab.sum(x, axis=0) on a small (rows, 3) float32 input (sum_cols_narrow with its splits
and ticket epilogue): the input check, the prepared-call lookup, the result allocation, the stream's workspace
lookup, the launch (Launcher with arrays, with raw addresses), the pass, Prepared.run, the call's layers (reduce_axis.reduce,
ops.reduce.sum, gpumemlab.sum), and torch.sum.
Each sample is the host time of 500 calls queued behind a spin kernel (about 20 ms), so the GPU never holds the host
back; 9 samples, median and min. Writes $OUT/narrow_host.json.

    PYTHONPATH=src python3 tools/narrow_host_breakdown.py
"""
import json
import os
import sys
import time

sys.path.insert(0, "tools")
from narrow_gap_probe import SPIN, torch_stream  # noqa: E402


def main() -> None:
    import cupy
    import numpy as np
    import torch

    import gpumemlab
    from gpumemlab.ops import _workspace as W
    from gpumemlab.ops import reduce_axis as RA
    from gpumemlab.ops._checks import as_device_array
    from gpumemlab.ops import reduce as R

    stream = torch_stream(cupy, torch)
    stream.use()
    spin = cupy.RawKernel(SPIN, "spin")
    res = {}
    for shape in [(16384, 3), (262144, 3)]:
        x = cupy.random.default_rng(4).random(shape, dtype=np.float32) + np.float32(0.5)
        xt = torch.as_tensor(x, device="cuda")
        prep = RA._prepared(x.shape, 0, x.dtype, None, False, False, True)
        p, step = prep.passes[0], prep.steps[0]
        cells = dict(zip(step.__code__.co_freevars, [c.cell_contents for c in step.__closure__]))
        narrow = cells["narrow"]
        out = cupy.empty(prep.shape, np.float32)
        part, tick = W.ticket_workspace(p.splits * 3, p.outer, "float32")
        ints = (out.data.ptr, part.data.ptr, tick.data.ptr, x.data.ptr)
        fns = {
            "as_device_array": lambda: as_device_array(x, "x", R.DTYPES, contiguous=True),
            "_prepared lookup": lambda: RA._prepared(x.shape, 0, x.dtype, None, False, False, x.data.ptr % 16 == 0),
            "cupy.empty(3)": lambda: cupy.empty(prep.shape, prep.acc),
            "workspace lookup": lambda: W.ticket_workspace(p.splits * 3, p.outer, "float32"),
            "Launcher(arrays)": lambda: narrow(out, part, tick, x),
            "Launcher(ints)": lambda: narrow(*ints),
            "pass (workspace + launch)": lambda: step(x, out),
            "Prepared.run": lambda: prep.run(x, out),
            "check + lookup + empty": lambda: (as_device_array(x, "x", R.DTYPES, contiguous=True),
                                               RA._prepared(x.shape, 0, x.dtype, None, False, False,
                                                            x.data.ptr % 16 == 0), cupy.empty(prep.shape, prep.acc)),
            "reduce_axis.reduce": lambda: RA.reduce(x, 0, None, None, False, False),
            "ops.reduce.sum": lambda: R.sum(x, axis=0),
            "gpumemlab.sum": lambda: gpumemlab.sum(x, axis=0),
            "torch.sum": lambda: xt.sum(dim=0),
        }
        us = {k: [] for k in fns}
        for _ in range(9):
            for k, f in fns.items():
                for _ in range(20): f()
                spin((1,), (1,), (cupy.int64(40_000_000),))
                t = time.perf_counter()
                for _ in range(500): f()
                us[k].append((time.perf_counter() - t) / 500 * 1e6)
                stream.synchronize()
        print(shape, "splits", p.splits, {k: (round(sorted(v)[4], 2), round(min(v), 2)) for k, v in us.items()}, flush=True)
        res[f"{shape[0]}x{shape[1]}"] = dict(splits=p.splits, us=us)
    json.dump(dict(device=cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), cases=res),
              open(os.path.join(os.environ.get("OUT", "."), "narrow_host.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
