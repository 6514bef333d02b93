"""The tuned families, declared as data over the engine: space, shapes, work per call, the problem with its
float64 answer, how one point runs, the baseline, and the small odd cases a child process checks first.

Everything that touches the GPU is imported inside the functions, so the declarations load without one.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from collections.abc import Callable

import numpy as np

from ..bench.timer import TimerConfig
from ..errors import UsageError
from ..kernels import matmul as KM
from ..kernels import reduce as KR
from .space import Point, Space


@dataclass(frozen=True)
class Problem:
    """Inputs at one shape (``data``) and the float64 ``answer`` every run is checked against
    (``||out - answer|| / ||answer|| <= rtol``)."""

    shape: str
    data: dict
    answer: object
    rtol: float


@dataclass(frozen=True)
class Runner:
    """``run()`` enqueues one call; ``result()`` is the device array it wrote; ``poison()`` fills that with NaN."""

    run: Callable[[], None]
    result: Callable[[], object]
    poison: Callable[[], None]


@dataclass(frozen=True)
class Family:
    name: str
    about: str
    metric: str                       # "gflops" (work = flops) or "gbps" (work = bytes moved)
    baseline: str                     # the baseline's name in the table
    sources: tuple                    # kernel sources whose text keys the cache
    space: Space
    shapes: tuple                     # default shapes
    parse_shape: Callable[[str], str]            # canonical text; UsageError on bad text
    work: Callable[[str], float]                 # flops or bytes of one call
    bytes_needed: Callable[[str], int]           # device memory one shape takes (inputs, answer)
    context: Callable[[str, dict], dict]         # values the space's rules see at a shape (GPU)
    problem: Callable[[str], Problem]            # GPU
    runner: Callable[[Problem, Point], Runner]   # GPU
    baseline_runner: Callable[[Problem], Runner]  # GPU
    label: Callable[[dict], str]                 # a point's row in the tables
    check_key: Callable[[Point], str]            # points sharing a key are checked once (on the odd cases)
    check: Callable[[str, dict], None]           # GPU, child process: raise on a wrong result
    recorded: tuple = ()                         # derived values kept in each point's record
    reference: dict | None = None                # params the library uses now: always in the final round
    cold_l2: bool = False
    top: int = 3                                 # screened points that go to the final round
    screen_timer: TimerConfig = TimerConfig(warmup=2, min_samples=10, min_time_s=0.05, max_time_s=0.4)
    final_timer: TimerConfig = TimerConfig(warmup=2, min_samples=20, min_time_s=0.3, max_samples=200)


def verify_answer(got, problem: Problem, what: str) -> float:
    """||got - answer|| / ||answer|| computed on the GPU; VerificationError if not finite or above rtol."""
    import cupy

    from ..errors import VerificationError

    got = got.reshape(problem.answer.shape)
    bad = int(got.size - cupy.count_nonzero(cupy.isfinite(got)))
    if bad:
        raise VerificationError(f"{what}: {bad} of {got.size} outputs are NaN/inf (unwritten or wrong)")
    norm = float(cupy.linalg.norm(problem.answer.ravel()))
    err = float(cupy.linalg.norm((got.astype(cupy.float64) - problem.answer).ravel())) / (norm or 1.0)
    if not err <= problem.rtol:
        raise VerificationError(f"{what}: ||out - answer|| / ||answer|| = {err:.3e} above {problem.rtol:.0e}")
    return err


# ---------------------------------------------------------------- matmul: register_blocked SGEMM

MIN_SPLIT_DEPTH = 256  # as ops.matmul: a split-K slice shorter than this costs more than it saves


def parse_mnk(text: str) -> str:
    m = re.fullmatch(r"\s*(\d+)\s*x\s*(\d+)\s*x\s*(\d+)\s*", str(text).lower())
    if not m or min(int(g) for g in m.groups()) < 1:
        raise UsageError(f"matmul shape {text!r}: expected MxNxK with positive integers, e.g. 4096x4096x4096")
    return "x".join(str(int(g)) for g in m.groups())


def _mnk(shape: str) -> tuple[int, int, int]:
    m, n, k = (int(x) for x in shape.split("x"))
    return m, n, k


def split_chunk(k: int, bk: int, splits: int) -> tuple[int, int]:
    """(K depth per split, a multiple of BK; effective splits), as ops.matmul.split_chunk (tests hold them equal)."""
    splits = max(1, min(int(splits), math.ceil(k / bk)))
    chunk = math.ceil(math.ceil(k / bk) / splits) * bk
    return chunk, math.ceil(k / chunk)


def _rb_blocks_per_sm(name: str) -> int:
    from ..gpu import runtime

    cfg = KM.RBConfig.from_name(name)
    kernel = runtime.get_kernel(cfg.spec(4))
    if cfg.smem_bytes > 48 * 1024:
        runtime.set_max_dynamic_shared(kernel, cfg.smem_bytes)
    return runtime.max_active_blocks(kernel, cfg.threads, cfg.smem_bytes)


def _matmul_context(shape: str, device: dict) -> dict:
    m, n, k = _mnk(shape)
    return dict(m=m, n=n, k=k, sm_count=device["sm_count"], min_split_depth=MIN_SPLIT_DEPTH,
                occupancy=device.get("occupancy") or _rb_blocks_per_sm)


def _matmul_problem(shape: str) -> Problem:
    import cupy

    from ..bench.verify import device_random_nonzero

    m, n, k = _mnk(shape)
    a = device_random_nonzero((m, k), np.float32, m + k)
    b = device_random_nonzero((k, n), np.float32, n + 1)
    answer = a.astype(cupy.float64) @ b.astype(cupy.float64)
    # 1e-4 of ||C||: FP32 sums land far below it, TF32 inputs (10-bit mantissa) near 3e-4
    return Problem(shape, dict(a=a, b=b, out=cupy.empty((m, n), cupy.float32)), answer, 1e-4)


def _matmul_runner(problem: Problem, point: Point) -> Runner:
    import cupy

    from ..gpu import runtime

    a, b, out = problem.data["a"], problem.data["b"], problem.data["out"]
    m, k = a.shape
    n = b.shape[1]
    cfg = KM.RBConfig.from_name(point.params["config"])
    vec = 4 if n % 4 == 0 and k % 4 == 0 and all(x.data.ptr % 16 == 0 for x in (a, b, out)) else 1
    chunk, splits = split_chunk(k, cfg.bk, point.params["splits"])
    kernel = runtime.get_kernel(cfg.spec(vec, split=splits > 1))
    if cfg.smem_bytes > 48 * 1024:
        runtime.set_max_dynamic_shared(kernel, cfg.smem_bytes)
    grid = (math.ceil(m / cfg.bm) * math.ceil(n / cfg.bn), splits)

    def launch():
        runtime.launch(kernel, grid, cfg.threads, out, a, b, m, n, k, chunk, shmem=cfg.smem_bytes)

    def zero_then_launch():  # split-K adds partial tiles into C
        cupy.cuda.runtime.memsetAsync(out.data.ptr, 0, out.nbytes, cupy.cuda.get_current_stream().ptr)
        launch()

    return Runner(zero_then_launch if splits > 1 else launch, lambda: out, lambda: out.fill(np.nan))


def _cublas_runner(problem: Problem) -> Runner:
    import cupy

    from ..gpu.fp32 import tf32_env_problem

    problem_env = tf32_env_problem()
    if problem_env:
        raise UsageError(problem_env)
    a, b, out = problem.data["a"], problem.data["b"], problem.data["out"]
    return Runner(lambda: cupy.matmul(a, b, out=out), lambda: out, lambda: out.fill(np.nan))


# odd shapes for the child's check: aligned (the 16-byte path) and ragged (any N, K), plain and split-K 3
MATMUL_CHECKS = [("256x256x256", 1), ("260x132x36", 1), ("300x1000x516", 1), ("4x4x4", 1), ("256x256x256", 3),
                 ("1000x777x1023", 1), ("7x13x5", 1), ("129x67x9", 1), ("1x1x1", 1), ("1000x777x1023", 3)]


def _matmul_check(config: str, device: dict) -> None:
    for shape, splits in MATMUL_CHECKS:
        problem = _matmul_problem(shape)
        r = _matmul_runner(problem, Point(dict(config=config, splits=splits), {}, config))
        run_checked(r, problem, f"{config} {shape} splits {splits}")


def run_checked(r: Runner, problem: Problem, what: str) -> float:
    """poison -> run -> compare, fenced by device-wide synchronizations."""
    from ..gpu import runtime

    r.poison()
    runtime.synchronize()
    r.run()
    runtime.synchronize()
    return verify_answer(r.result(), problem, what)


MATMUL = Family(
    name="matmul",
    about="register_blocked SGEMM tuning per device name, written by `gpumemlab tune matmul --install` "
          "(measured: never edit by hand; rerun the command on the device instead)",
    metric="gflops",
    baseline="cuBLAS SGEMM (TF32 off)",
    sources=(KM.SRC,),
    space=Space(
        params=dict(config=[c.name for c in KM.CANDIDATES], splits=KM.SPLIT_FACTORS),
        derive=dict(
            bm=lambda c: KM.RBConfig.from_name(c["config"]).bm,
            bn=lambda c: KM.RBConfig.from_name(c["config"]).bn,
            blocks_per_sm=lambda c: c["occupancy"](c["config"]),
            tiles="ceil(m / bm) * ceil(n / bn)",
            slots="max(1, blocks_per_sm) * sm_count"),
        # split-K only while the tiles fill less than one wave, with slices at least min_split_depth deep
        restrictions=("splits == 1 or (tiles * splits <= slots and k // splits >= min_split_depth)",),
        namer=lambda p: f"config={p['config']},splits={p['splits']}"),
    shapes=("1024x1024x1024", "4096x4096x4096", "8192x8192x8192", "4096x1000x8192"),
    parse_shape=parse_mnk,
    work=lambda s: 2.0 * math.prod(_mnk(s)),
    bytes_needed=lambda s: (lambda m, n, k: 12 * (m * k + k * n + m * n))(*_mnk(s)),
    context=_matmul_context,
    problem=_matmul_problem,
    runner=_matmul_runner,
    baseline_runner=_cublas_runner,
    label=lambda p: p["config"],
    check_key=lambda p: p.params["config"],
    check=_matmul_check,
    recorded=("blocks_per_sm",),
)


# ---------------------------------------------------------------- reduce: gpumemlab.sum's reduce7 configuration

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


REDUCE = Family(
    name="reduce",
    about="gpumemlab.sum's reduce7 configurations (kernels.reduce.TUNING x TUNING_WAVES) against cupy.sum, "
          "float32, cold L2, per device name; written by `gpumemlab tune reduce --install` (measured: never edit "
          "by hand). The library's configuration is kernels.reduce.LIBRARY.",
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
    top=6,
    screen_timer=TimerConfig(warmup=1, min_samples=10, min_time_s=0.03, max_time_s=0.3),
    final_timer=TimerConfig(warmup=2, min_samples=40, min_time_s=0.5, max_samples=300),
)

FAMILIES = {f.name: f for f in (MATMUL, REDUCE, __import__("gpumemlab.tune.host_route", fromlist=["family"]).family())}


def get(name: str) -> Family:
    if name not in FAMILIES:
        raise UsageError(f"unknown tuning family {name!r}; expected one of {', '.join(FAMILIES)}")
    return FAMILIES[name]
