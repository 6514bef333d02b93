"""The ``l2_persist`` tuned family: which L2 setting persist_l2 takes for a table re-read beside data read once.

Shape "TABLE:STREAM" in MiB (the re-read table, the data streamed once). Points are persist_l2's three settings,
each timed against the device as found (no window, the set-aside limit the context starts with):

- "no window": nothing set (the baseline's setting, so that the table can choose it);
- "set-aside sized": the set-aside raised to the table's bytes (capped at the device's largest), a window over the
  table at hitRatio min(1, set-aside / table) - persist_l2's setting when it persists;
- "set-aside as found": no limit change, the window at hitRatio min(1, limit as found / table).

Every run, the baseline's included, sets the limit, the stream's window and resets persisting lines before its
launch, so the host calls cost all of them alike. ``persist_l2(hit_ratio=None)`` reads the chosen point of the
nearest measured table size (:func:`gpumemlab.ops.l2.measured_policy`). Registered in :mod:`.registry`.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import UsageError
from ..gpu.l2 import AS_FOUND, NONE, SIZED, setting
from ..kernels import l2 as K
from .families import Family, Problem, Runner, run_checked
from .space import Space

MIB = 2**20
POLICIES = [NONE, SIZED, AS_FOUND]


def parse_shape(text: str) -> str:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*", str(text))
    if not m or float(m.group(1)) <= 0 or float(m.group(2)) <= 0:
        raise UsageError(f"l2_persist shape {text!r}: expected TABLE:STREAM in MiB, e.g. 30:400")
    return f"{float(m.group(1)):g}:{float(m.group(2)):g}"


def sizes(shape: str) -> tuple[int, int]:
    """(table elements, streamed elements) of a shape (float32; the stream a multiple of the block)."""
    table, stream = (float(x) for x in shape.split(":"))
    n = int(stream * MIB) // 4
    return max(1, int(table * MIB) // 4), max(K.BLOCK, n - n % K.BLOCK)


def _context(shape: str, device: dict) -> dict:
    from ..gpu import l2

    return dict(found=l2.persisting_limit(), max_set_aside=int(device["persisting_l2_max_bytes"]))


def _problem(shape: str) -> Problem:
    import cupy

    from ..bench.verify import device_random_nonzero

    table_n, n = sizes(shape)
    table = device_random_nonzero(table_n, np.float32, 3)
    streaming = device_random_nonzero(n, np.float32, 5)
    idx = cupy.arange(n, dtype=cupy.int64) % table_n
    answer = streaming.astype(cupy.float64) + table[idx].astype(cupy.float64)
    del idx
    return Problem(shape, dict(table=table, streaming=streaming, out=cupy.empty(n, np.float32)), answer, 1e-6)


def _run(problem: Problem, policy: str) -> Runner:
    from ..gpu import l2, runtime

    table, streaming, out = (problem.data[k] for k in ("table", "streaming", "out"))
    lim = l2.limits()
    found = l2.persisting_limit()
    limit, ratio = setting(policy, table.nbytes, found, lim["max_set_aside"])
    window = (l2.persisting_window(table.data.ptr, min(table.nbytes, lim["max_window"]), ratio) if ratio
              else l2.NO_WINDOW)
    kernel = runtime.get_kernel(K.TABLE_STREAM)
    grid = -(-streaming.size // K.BLOCK)

    def run():
        l2.set_persisting_limit(limit)
        l2.set_window(window)
        l2.reset_persisting_lines()
        runtime.launch(kernel, grid, K.BLOCK, out, streaming, table, np.uint32(streaming.size), np.uint32(table.size))

    return Runner(run, lambda: out, lambda: out.fill(np.nan))


def _check(policy: str, device: dict) -> None:
    from ..gpu import l2

    found = l2.persisting_limit()
    try:
        for shape in ("0.01:0.3", "1:5", "3:2"):  # a table smaller, larger than the stream; ragged sizes
            problem = _problem(shape)
            run_checked(_run(problem, policy), problem, f"{policy} at {shape}")
    finally:
        l2.set_window(l2.NO_WINDOW)
        l2.set_persisting_limit(found)
        l2.reset_persisting_lines()


def _bytes(shape: str) -> int:
    table_n, n = sizes(shape)
    return 4 * table_n + 4 * 2 * n + 8 * n + 8 * n  # table, stream, out, the float64 answer and index


L2_PERSIST = Family(
    name="l2_persist",
    about="persist_l2's setting per table size beside a stream (TABLE:STREAM MiB), against the device as found; "
          "written by `gpumemlab tune l2_persist --install` (measured: never edit by hand). persist_l2 takes a "
          "window only where the chosen point beat no window beyond the final round's p10-p90 spread.",
    metric="gbps",
    baseline="no window (as found)",
    sources=(K.SRC,),
    space=Space(params=dict(policy=POLICIES),
                restrictions=(lambda c: c["policy"] != AS_FOUND or c["found"] > 0,)),
    shapes=("10:400", "20:400", "30:400", "40:400", "60:400", "20:100", "30:100"),
    parse_shape=parse_shape,
    work=lambda s: (lambda t, n: 4.0 * (t + 2 * n))(*sizes(s)),
    bytes_needed=_bytes,
    context=_context,
    problem=_problem,
    runner=lambda problem, point: _run(problem, point.params["policy"]),
    baseline_runner=lambda problem: _run(problem, NONE),
    label=lambda p: p["policy"],
    check_key=lambda p: p.params["policy"],
    check=_check,
    top=3,
)

FAMILY = L2_PERSIST
