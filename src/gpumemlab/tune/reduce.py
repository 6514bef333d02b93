"""The ``reduce`` family: gpumemlab.sum's reduce7 configurations (unroll, load, block, mapping, waves) on float32
against cupy.sum, L2 flushed per sample. A measurement only: the library keeps :data:`kernels.reduce.LIBRARY`, and
``--install`` is refused (docs/notes/tuning.md)."""

from __future__ import annotations

import re
from functools import cache

import numpy as np

from ..bench.timer import TimerConfig
from ..errors import UsageError
from ..kernels import reduce as KR
from .families import Family, Problem, Runner, run_checked
from .space import Point, Space


def parse_count(text: str) -> str:
    t = str(text).strip()
    m = re.fullmatch(r"2\^(\d+)", t)
    try:
        n = 1 << int(m.group(1)) if m else int(t)
    except ValueError:
        n = 0
    if n < 1:
        raise UsageError(f"reduce size {text!r}: expected a positive element count, e.g. 2^28 or 1000003")
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def _count(shape: str) -> int:
    return 1 << int(shape[2:]) if shape.startswith("2^") else int(shape)


def _vec_config(p: dict) -> KR.VecConfig:
    return KR.VecConfig("reduce7", p["unroll"], p["load"], p["block"], p["mapping"], p.get("waves", 1))


def _reduce_blocks_per_sm(p: dict) -> int:
    from ..gpu import runtime

    cfg = _vec_config(p)
    return max(1, runtime.max_active_blocks(cfg.spec(), cfg.block))


def _reduce_context(shape: str, device: dict) -> dict:
    return dict(n=_count(shape), sm_count=device["sm_count"], vector=4,
                occupancy=device.get("occupancy") or _reduce_blocks_per_sm)


def _reduce_problem(shape: str) -> Problem:
    import cupy

    from ..bench.verify import device_random_nonzero

    # positive values: a skipped tile or element moves the sum by more than rtol (signed ones could cancel)
    x = cupy.abs(device_random_nonzero(_count(shape), np.float32, 7))
    answer = x.sum(dtype=np.float64).reshape(1)
    return Problem(shape, dict(x=x, result=cupy.empty(1, np.float32)), answer, 5e-6)


def _reduce_runner(problem: Problem, point: Point) -> Runner:
    import cupy

    from ..gpu import runtime

    x, result = problem.data["x"], problem.data["result"]
    cfg = _vec_config(point.params)
    kernel = runtime.get_kernel(cfg.spec())
    grid = int(point.derived["grid"])
    partial = cupy.empty(grid, np.float32)
    ticket = cupy.zeros(1, np.uint32)  # the last block's counter; each launch leaves it at 0
    return Runner(lambda: runtime.launch(kernel, grid, cfg.block, result, partial, ticket, x, np.int64(x.size)),
                  lambda: result, lambda: result.fill(np.nan))


def _cupy_sum_runner(problem: Problem) -> Runner:
    import cupy

    x = problem.data["x"]
    box = {}
    return Runner(lambda: box.__setitem__("v", cupy.sum(x)), lambda: box["v"], box.clear)


REDUCE_CHECKS = ("257", "5003", "70001", "300007")


@cache
def _reduce_points(shape: str, sm_count: int) -> dict:
    return {p.name: p for p in REDUCE.space.points(REDUCE.context(shape, dict(sm_count=sm_count)))}


def _reduce_check(name: str, device: dict) -> None:
    for shape in REDUCE_CHECKS:  # sizes that leave partial vectors, tiles and blocks
        point = _reduce_points(shape, device["sm_count"])[name]
        problem = _reduce_problem(shape)
        run_checked(_reduce_runner(problem, point), problem, f"{_vec_config(point.params).label} n={shape}")


TUNED_CONFIGS = frozenset(c.with_waves(w) for c in KR.TUNING for w in KR.TUNING_WAVES)


def _values(attr: str) -> list:
    return sorted({getattr(c, attr) for c in KR.TUNING})


FAMILY = REDUCE = Family(
    name="reduce",
    about="gpumemlab.sum's reduce7 configurations (kernels.reduce.TUNING x TUNING_WAVES) against cupy.sum, "
          "float32, cold L2, per device name. The library reads no table: its configuration is kernels.reduce.LIBRARY, "
          "within the noise of the chosen points (docs/notes/tuning.md).",
    metric="gbps",
    baseline="cupy.sum",
    sources=(KR.SRC,),
    space=Space(
        params=dict(unroll=_values("unroll"), load=_values("load"), block=_values("block"),
                    mapping=_values("mapping"), waves=list(KR.TUNING_WAVES)),
        derive=dict(
            blocks_per_sm=lambda c: c["occupancy"](c),
            tiles="ceil(n / (vector * block * unroll))",
            grid="max(1, min(sm_count * blocks_per_sm * waves, tiles))"),
        restrictions=(lambda c: _vec_config(c) in TUNED_CONFIGS,)),  # the instantiated subset of the product
    shapes=("2^28", "2^26"),
    parse_shape=parse_count,
    work=lambda s: 4.0 * _count(s),
    bytes_needed=lambda s: 4 * _count(s) + (64 << 20),
    context=_reduce_context,
    problem=_reduce_problem,
    runner=_reduce_runner,
    baseline_runner=_cupy_sum_runner,
    label=lambda p: _vec_config(p).label,
    check_key=lambda p: p.name,
    check=_reduce_check,
    recorded=("blocks_per_sm", "grid"),
    reference=dict(unroll=KR.LIBRARY.unroll, load=KR.LIBRARY.load, block=KR.LIBRARY.block,
                   mapping=KR.LIBRARY.mapping, waves=KR.LIBRARY.waves),
    cold_l2=True,
    installs=False,
    top=6,
    screen_timer=TimerConfig(warmup=1, min_samples=10, min_time_s=0.03, max_time_s=0.3),
    final_timer=TimerConfig(warmup=2, min_samples=40, min_time_s=0.5, max_samples=300),
)
