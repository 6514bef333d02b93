"""The ``matmul`` family: the register-blocked SGEMM's candidates x split-K factors on the matmul shape zoo, against
cuBLAS (TF32 off). ``gpumemlab tune matmul --install`` writes ``kernels/tuned/matmul.json``, the one table
``gpumemlab.matmul`` chooses its tiles from (ops/matmul/choice.py: the chosen point of the nearest tuned shape).

The zoo: (group, M, N, K) triples that users meet, square to degenerate. The ``matmul_shapes`` experiment times the
library call on all of them; the family tunes :data:`SHAPES`, the ones the tiles serve, except the held-out group
on which the experiment judges the nearest-shape rule.
"""

from __future__ import annotations

import math

import numpy as np

from ..bench.timer import TimerConfig
from ..errors import UsageError
from ..kernels import matmul as KM
from .families import Family, Problem, Runner, run_checked
from .space import Point, Space
from .table import device_entry, mnk_name, parse_mnk, read_devices

SQUARE = [(s, s, s) for s in (128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 16384)]
ODD = [(1000, 1000, 1000), (1023, 1025, 1027), (777, 1001, 513), (2047, 2047, 2047), (3001, 2999, 3000),
       (4097, 4095, 4093)]
# N or K not a multiple of 4: the scalar-load kernels, whose best tiles differ from the float4 ones; swept and
# installed (so they take their own winners), while ODD stays held out to judge the nearest-shape rule
UNALIGNED = [(601, 803, 1201), (999, 1001, 1003), (1537, 1531, 1533), (2501, 2503, 2499), (3501, 3499, 3497)]
TALL_SKINNY = [(8192, 64, 4096), (16384, 128, 1024), (65536, 32, 512), (32768, 256, 256)]
SHORT_WIDE = [(64, 4096, 4096), (128, 8192, 1024), (32, 16384, 2048), (256, 32768, 256), (16, 4096, 4096),
              (8, 8192, 8192)]
SMALL_K = [(4096, 4096, 16), (4096, 4096, 64), (8192, 8192, 32), (2048, 2048, 128)]
LARGE_K = [(256, 256, 8192), (128, 128, 32768), (64, 64, 65536), (512, 512, 16384), (256, 512, 65536)]
ROW = [(1, 4096, 4096), (1, 16384, 16384), (1, 1000, 3000), (1, 8192, 1024)]       # M = 1: row vector x B
COLUMN = [(4096, 1, 4096), (16384, 1, 16384), (3000, 1, 1000), (1024, 1, 8192)]   # N = 1: A x column vector

GROUPS = dict(square=SQUARE, odd=ODD, unaligned=UNALIGNED, tall_skinny=TALL_SKINNY, short_wide=SHORT_WIDE, small_k=SMALL_K,
              large_k=LARGE_K, m1=ROW, n1=COLUMN)
ZOO = [(group, m, n, k) for group, shapes in GROUPS.items() for m, n, k in shapes]

HELD_OUT = ("odd",)     # never tuned: the nearest-shape rule is judged on them
MAX_TUNED_FLOPS = 2e11  # larger shapes run long enough that the large tiles' rate is already settled
SHAPES = tuple(mnk_name(m, n, k) for group, m, n, k in ZOO
               if group not in HELD_OUT and m > 1 and n > 1 and 2.0 * m * n * k <= MAX_TUNED_FLOPS)


def _shape(text: str) -> str:
    return mnk_name(*parse_mnk(text))


def _blocks_per_sm(name: str) -> int:
    from ..gpu import runtime

    cfg = KM.RBConfig.from_name(name)
    kernel = runtime.get_kernel(cfg.spec(4))
    if cfg.smem_bytes > 48 * 1024:
        runtime.set_max_dynamic_shared(kernel, cfg.smem_bytes)
    return runtime.max_active_blocks(kernel, cfg.threads, cfg.smem_bytes)


def _context(shape: str, device: dict) -> dict:
    m, n, k = parse_mnk(shape)
    return dict(m=m, n=n, k=k, sm_count=device["sm_count"], min_split_depth=KM.MIN_SPLIT_DEPTH,
                split_waves=KM.SPLIT_WAVES, occupancy=device.get("occupancy") or _blocks_per_sm)


def _problem(shape: str) -> Problem:
    import cupy

    from ..bench.verify import device_random_nonzero

    m, n, k = parse_mnk(shape)
    a = device_random_nonzero((m, k), np.float32, m + k)
    b = device_random_nonzero((k, n), np.float32, n + 1)
    answer = a.astype(cupy.float64) @ b.astype(cupy.float64)
    # 1e-4 of ||C||: FP32 sums land far below it, TF32 inputs (10-bit mantissa) near 3e-4
    return Problem(shape, dict(a=a, b=b, out=cupy.empty((m, n), cupy.float32)), answer, 1e-4)


def _runner(problem: Problem, point: Point) -> Runner:
    from ..gpu import runtime

    a, b, out = problem.data["a"], problem.data["b"], problem.data["out"]
    m, k = a.shape
    n = b.shape[1]
    cfg = KM.RBConfig.from_name(point.params["config"])
    vec = 4 if n % 4 == 0 and k % 4 == 0 and all(x.data.ptr % 16 == 0 for x in (a, b, out)) else 1
    g = KM.rb_launch(cfg, m, n, k, vec, point.params["splits"])
    kernel = runtime.get_kernel(g.spec)
    if g.smem > 48 * 1024:
        runtime.set_max_dynamic_shared(kernel, g.smem)

    def launch():
        runtime.launch(kernel, g.grid, g.threads, out, a, b, *g.scalars, shmem=g.smem)

    def zero_then_launch():  # split-K adds partial tiles into C
        runtime.zero(out)
        launch()

    return Runner(zero_then_launch if g.splits > 1 else launch, lambda: out, lambda: out.fill(np.nan))


def _cublas_runner(problem: Problem) -> Runner:
    import cupy

    from ..gpu.fp32 import tf32_env_problem

    problem_env = tf32_env_problem()
    if problem_env:
        raise UsageError(problem_env)
    a, b, out = problem.data["a"], problem.data["b"], problem.data["out"]
    return Runner(lambda: cupy.matmul(a, b, out=out), lambda: out, lambda: out.fill(np.nan))


# odd shapes for the child's check: aligned (the 16-byte path) and ragged (any N, K), plain and split-K 3
CHECKS = [("256x256x256", 1), ("260x132x36", 1), ("300x1000x516", 1), ("4x4x4", 1), ("256x256x256", 3),
          ("1000x777x1023", 1), ("7x13x5", 1), ("129x67x9", 1), ("1x1x1", 1), ("1000x777x1023", 3)]


def _check(config: str, device: dict) -> None:
    for shape, splits in CHECKS:
        problem = _problem(shape)
        r = _runner(problem, Point(dict(config=config, splits=splits), {}, config))
        run_checked(r, problem, f"{config} {shape} splits {splits}")


def _installed(shape: str, device: dict) -> dict | None:
    """The params the installed table chose at ``shape`` for this device (or its chip), or None."""
    from ..kernels import KERNEL_DIR

    entry = device_entry(read_devices(KERNEL_DIR / "tuned" / "matmul.json", "matmul"), device)
    chosen = (entry or {}).get("chosen", {}).get(shape)
    return dict(chosen["params"]) if chosen else None


def _effective_splits(c: dict) -> int:
    return KM.split_chunk(c["k"], KM.RBConfig.from_name(c["config"]).bk, c["splits"])[1]


FAMILY = MATMUL = Family(
    name="matmul",
    about="register_blocked SGEMM (config x split-K) per device name and shape, against cuBLAS SGEMM (TF32 off), "
          "written by `gpumemlab tune matmul --install` (measured: never edit by hand; rerun the command on the "
          "device instead)",
    metric="gflops",
    baseline="cuBLAS SGEMM (TF32 off)",
    sources=(KM.SGEMM_SRC,),
    space=Space(
        params=dict(config=[c.name for c in KM.CANDIDATES], splits=list(KM.SPLIT_FACTORS)),
        derive=dict(
            bm=lambda c: KM.RBConfig.from_name(c["config"]).bm,
            bn=lambda c: KM.RBConfig.from_name(c["config"]).bn,
            blocks_per_sm=lambda c: c["occupancy"](c["config"]),
            tiles="ceil(m / bm) * ceil(n / bn)",
            slots="max(1, blocks_per_sm) * sm_count",
            effective=_effective_splits),
        # split-K while the blocks fill at most split_waves waves, with slices at least min_split_depth deep and
        # none left empty (a factor that leaves one empty runs as a smaller one)
        restrictions=("splits == 1 or (k // splits >= min_split_depth and tiles * splits <= split_waves * slots "
                      "and effective == splits)",),
        namer=lambda p: f"config={p['config']},splits={p['splits']}"),
    shapes=SHAPES,
    parse_shape=_shape,
    work=lambda s: 2.0 * math.prod(parse_mnk(s)),
    bytes_needed=lambda s: (lambda m, n, k: 12 * (m * k + k * n + m * n))(*parse_mnk(s)),
    context=_context,
    problem=_problem,
    runner=_runner,
    baseline_runner=_cublas_runner,
    label=lambda p: p["config"],
    check_key=lambda p: p.params["config"],
    check=_check,
    recorded=("blocks_per_sm",),
    reference=_installed,
    # compute-bound tiles on warm operands, as the matmul_shapes experiment times the GEMMs; many short points
    cold_l2=False,
    screen_timer=TimerConfig(warmup=1, min_samples=5, min_time_s=0.01, max_time_s=0.1),
    final_timer=TimerConfig(warmup=1, min_samples=10, min_time_s=0.1, max_time_s=0.5, max_samples=100),
)
