"""The vocabulary of experiment declarations: what an experiment measures, as data.

An experiment module defines ``EXPERIMENT = Experiment(...)``. Its ``cases(session, params)`` yields one
:class:`Case` per measured variant and point; the runner (``gpumemlab.suite.runner``) verifies each case
(:class:`Check`), times it, writes a record, attaches the group's baselines, computes speedups over ``naive``,
runs the interleaved head-to-heads each case asks for (``versus``) and finally calls ``derive``. Nothing here
touches CUDA: declarations are importable (``gpumemlab list``) on any machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterable

SEEDS = ("000", "001", "002", "003", "004")


@dataclass(frozen=True)
class Source:
    """Where a claim comes from: a seed file and its section, or an outside work (author, title)."""

    cite: str
    seed: str | None = None  # "000".."004" when the claim is in that seed file; None for an outside work

    def __post_init__(self):
        if self.seed is not None and self.seed not in SEEDS:
            raise ValueError(f"unknown seed {self.seed!r}; seeds are {', '.join(SEEDS)}")
        if not self.cite.strip():
            raise ValueError("a source needs a citation")


def seed(number: str, where: str) -> Source:
    """A claim stated in seed file ``number`` ("000".."004"), at ``where`` (section, slide, figure)."""
    return Source(f"seed {number}, {where}", number)


def outside(work: str) -> Source:
    """A claim from outside the seeds: ``work`` names the author and title."""
    return Source(work)


@dataclass(frozen=True)
class Claim:
    """What a source reported; the report prints it next to what this run measured."""

    text: str
    source: Source

    @property
    def from_seed(self) -> bool:
        return self.source.seed is not None


@dataclass(frozen=True)
class Plot:
    """How the report draws an experiment: ``y`` against parameter ``x``, one line per ``series``."""

    x: str
    y: str = "gbps"            # a Record field: gbps, gflops, pct_of_ceiling, ...
    series: str = "variant"    # a Record field or a params key
    logx: bool = False
    title: str = ""
    kind: str = "xy"           # "xy", or "timeline": start/end of each op per stream (report/timeline.py)


@dataclass
class Check:
    """Correctness before timing: poison ``out``, run the case once, compare with ``expected``.

    ``out``: the device array the case writes (poisoned first: NaN for floats, a sentinel for ints), or a
    zero-argument callable returning the case's result (not poisoned: pair it with ``reset`` that drops the
    previous result). ``view(out)``: the part to compare (a slice, a transposed view). ``expected``: an array
    or a zero-argument callable evaluated after the run. ``rtol = atol = 0`` compares exactly on the GPU,
    otherwise on the host within the tolerance (``atol`` may be an array: one tolerance per element).
    ``reset()``: restores inputs the case updates in place. ``all_finite``: every element of ``out`` must be
    finite, also those outside ``view`` (a view that compares a sample still catches unwritten outputs).
    """

    out: Any
    expected: Any
    rtol: float = 0.0
    atol: Any = 0.0
    view: Callable | None = None
    reset: Callable | None = None
    all_finite: bool = False


@dataclass
class Case:
    """One measured point: a variant at some parameters.

    ``run()`` enqueues one execution on CuPy's current stream (the runner makes it the session's work stream).
    ``check`` is a :class:`Check` or a callable that poisons, runs and raises VerificationError itself.
    ``reads``/``writes``: bytes the algorithm must move (each input read once, each output written once).
    ``kind``: "kernel" (ours: kernels and library calls) or "baseline" (a library measured in the same run).
    ``versus``: baseline variants of the same group to time against, interleaved (A B, B A, ...).
    ``clock``: "events" (CUDA events on the work stream) or "host" (wall clock around run + synchronize, for
    host-side work such as pageable copies or allocation).
    ``after(record)``: fills record fields the case measured itself (e.g. a per-stream timeline).
    ``naive``: this case is its group's reference for ``speedup_vs_naive`` (where the naive variant's name
    differs from group to group; otherwise the experiment's ``naive`` names it).
    """

    variant: str
    run: Callable[[], None]
    check: Check | Callable[[], None] | None
    params: dict = field(default_factory=dict)
    reads: float = 0
    writes: float = 0
    flops: float | None = None
    kind: str = "kernel"
    ceiling: str | None = "copy_gbps"
    cold_l2: bool = True
    model: dict | None = None
    extra: dict = field(default_factory=dict)
    notes: str | None = None
    timer: Any = None          # a bench.timer.TimerConfig for this case only
    versus: tuple[str, ...] = ()
    clock: str = "events"
    after: Callable | None = None
    naive: bool = False

    def __post_init__(self):
        if self.kind not in ("kernel", "baseline"):
            raise ValueError(f"case {self.variant!r}: kind must be 'kernel' or 'baseline', not {self.kind!r}")
        if self.clock not in ("events", "host"):
            raise ValueError(f"case {self.variant!r}: clock must be 'events' or 'host', not {self.clock!r}")

    @property
    def bytes(self) -> float | None:
        total = (self.reads or 0) + (self.writes or 0)
        return total or None


@dataclass(frozen=True)
class Experiment:
    """One seed figure or table, reproduced.

    ``claims``: what the sources reported (seed text and outside references kept apart by ``Source.seed``).
    ``cases(session, params) -> Iterable[Case]``: every point to measure; ``params`` are the defaults declared
    here merged with the user's ``--param k=v``. ``group_by``: the params that define comparable groups
    (baselines, speedups and head-to-heads stay inside a group). ``derive(records, session)``: fields computed
    from several records after all cases ran. ``requires(device_info) -> str | None``: why this GPU cannot run
    the experiment (it is then recorded as skipped), or None.
    """

    name: str
    title: str
    claims: tuple[Claim, ...]
    cases: Callable[[Any, dict], Iterable[Case]]
    params: dict = field(default_factory=dict)
    naive: str | None = None
    group_by: tuple[str, ...] = ()
    modern_note: str = ""
    plot: Plot | None = None
    order: int = 100
    findings: Callable | None = None  # records -> sentences comparing this run with the claims
    derive: Callable | None = None
    requires: Callable | None = None

    def __post_init__(self):
        if not self.claims:
            raise ValueError(f"experiment {self.name!r} declares no claim")

    @property
    def seed(self) -> str:
        """The seed sections this experiment reproduces (outside works excluded)."""
        return "; ".join(dict.fromkeys(c.source.cite for c in self.claims if c.from_seed)) or "-"

    @property
    def seed_claim(self) -> str:
        """What the seeds reported; outside references are in :attr:`claims` with their own source."""
        return " ".join(c.text for c in self.claims if c.from_seed) or "-"

    def describe(self, records: list | None = None) -> dict:
        found = []
        if self.findings and records:
            try:
                found = list(self.findings(records))
            except (KeyError, ValueError, ZeroDivisionError, StopIteration) as exc:
                found = [f"(no finding: {type(exc).__name__} {exc})"]
        claims = [dict(text=c.text, source=c.source.cite, seed=c.source.seed) for c in self.claims]
        return dict(title=self.title, seed=self.seed, seed_claim=self.seed_claim, claims=claims,
                    modern_note=self.modern_note, naive=self.naive, findings=found,
                    plot=None if self.plot is None else self.plot.__dict__)
