"""What a tuned family declares (as data over the engine): space, shapes, work per call, the problem with its
float64 answer, how one point runs, the baseline, and the small odd cases a child process checks first; and the
lookup of a family by name in the registry (:data:`.registry.MODULES`, one line each).

Everything that touches the GPU is imported inside the functions, so the declarations load without one.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from collections.abc import Callable

from ..bench.timer import TimerConfig
from ..errors import UsageError
from .registry import MODULES
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
    # params the library uses now (a dict), or (shape, device) -> those at a shape or None: always in the final round
    reference: dict | Callable[[str, dict], dict | None] | None = None
    cold_l2: bool = False
    top: int = 3                                 # screened points that go to the final round
    installs: bool = True                        # the library reads kernels/tuned/<name>.json (--install writes it)
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


def run_checked(r: Runner, problem: Problem, what: str) -> float:
    """poison -> run -> compare, fenced by device-wide synchronizations."""
    from ..gpu import runtime

    r.poison()
    runtime.synchronize()
    r.run()
    runtime.synchronize()
    return verify_answer(r.result(), problem, what)


def get(name: str) -> Family:
    """The family called ``name`` (its module imported on first use); UsageError for an unknown name."""
    if name not in MODULES:
        raise UsageError(f"unknown tuning family {name!r}; expected one of {', '.join(MODULES)}")
    return importlib.import_module(MODULES[name]).FAMILY
