"""The suite: runs experiment declarations on one session (ceilings first), collects the records and
writes results.json, report.md and plots. The CLI and the tools call these functions.

No run is lost: the output folder is checked before any GPU work, results.json is rewritten atomically
after every experiment, an experiment that raises is recorded as an error while the others still run,
SIGINT/SIGTERM stop the run in order (results.json keeps what finished), and ``resume`` continues a run.
"""

from __future__ import annotations

import os
import signal
import time
import traceback
from contextlib import contextmanager
from datetime import datetime, UTC
from pathlib import Path

from ..errors import GpumemlabError, UsageError


class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM during a run: the current experiment is abandoned, the finished ones are kept."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def command_line(argv: list[str]) -> str:
    """The command as recorded in results.json: absolute paths shown relative to the working directory,
    or by their last component when outside it, so a record names no machine's directories."""
    def show(arg: str) -> str:
        if not os.path.isabs(arg):
            return arg
        rel = os.path.relpath(arg)
        return rel if not rel.startswith("..") else os.path.basename(arg.rstrip("/")) or arg
    return " ".join(["gpumemlab"] + [show(a) for a in argv])


def measure_experiment(exp, session, params: dict) -> list:
    """Measure one experiment declaration with the runner: the suite's one call into an experiment."""
    from .runner import run_experiment

    return run_experiment(session, exp, params)


def finished(res) -> set[str]:
    """Experiments of a (partial) run that completed without error: what ``resume`` skips."""
    failed = {e.get("experiment") for e in res.errors}
    return {name for name in res.experiments if name not in failed}


class StopOnSignals:
    """SIGTERM (and SIGINT) raise :class:`Stopped` in the main thread, so the run ends in order; inside
    :meth:`held` (recording a finished experiment, writing results.json) a signal waits for the block's end,
    so what is on disk is always a whole experiment more or less, never half of one."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.holding, self.pending, self.old = 0, None, {}

    def _handler(self, signum, frame):
        if self.holding:
            self.pending = self.pending or signum
            return
        raise Stopped(signum)

    def __enter__(self):
        try:
            self.old = {s: signal.signal(s, self._handler) for s in self.SIGNALS}
        except ValueError:  # not the main thread: signals stay with whoever owns them
            self.old = {}
        return self

    def __exit__(self, *exc):
        for s, h in self.old.items():
            signal.signal(s, h)
        return False

    @contextmanager
    def held(self, deliver: bool = True):
        """Signals wait until the block ends; then the first one is raised (``deliver``) or dropped."""
        self.holding += 1
        try:
            yield
        finally:
            self.holding -= 1
        pending, self.pending = self.pending, None
        if deliver and pending is not None and not self.holding:
            raise Stopped(pending)


def run_suite(selected: list, params_for, quick: bool, command: str, progress_console=None,
              out: Path | None = None, resume=None, device: int | None = None):
    """Run ``selected`` experiments; return the RunResults.

    ``out``: a folder (already checked by ``report.write.prepare_out``) whose results.json is rewritten after every
    experiment. ``progress_console``: a rich Console for the progress bar, None for none. ``resume``: the RunResults of an earlier run of the same command: its finished experiments are
    kept and skipped. A run stopped by SIGINT/SIGTERM returns with ``meta["interrupted"]`` set to the signal.
    ``device``: the GPU ordinal to run on (UsageError if there is none such); None: CuPy's current device.
    """
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from .ceilings import measure_ceilings
    from ..bench.records import RunResults
    from ..bench.session import Session
    from ..gpu import runtime

    runtime.ensure_device()
    if device is not None:
        runtime.use_device(device)
    started = time.time()
    done = finished(resume) if resume is not None else set()
    todo = [e for e in selected if e.name not in done]
    with StopOnSignals() as signals:
        session = Session(quick=quick)
        try:
            if resume is not None:
                _check_resumable(resume, session.device, quick)
            res = RunResults(meta=dict(command=command, date=_now(), version=_version(), quick=quick, complete=False,
                                       versions=_versions(), timer=session.timer.__dict__,
                                       device={k: session.device.get(k) for k in ("ordinal", "name", "pci_bus_id")}),
                             device=session.device, ceilings=session.ceilings, results=[], experiments={}, errors=[])
            if resume is not None:
                res.meta["resumed"] = resume.meta.get("resumed", []) + [resume.meta.get("date")]
                res.results = [r for r in resume.results if r.experiment in done]
                res.experiments = {n: d for n, d in resume.experiments.items() if n in done}
            try:
                with Progress(TextColumn("{task.description}"), BarColumn(),
                              TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), TextColumn("ETA"),
                              TimeRemainingColumn(), console=progress_console, transient=False,
                              disable=progress_console is None) as progress:
                    task = progress.add_task("ceilings", total=len(todo) + 1)
                    session.progress = lambda text: progress.update(task, description=text[:90])
                    measure_ceilings(session, quick=quick)
                    res.ceilings = session.ceilings  # measure_ceilings gives the session a new dict
                    progress.advance(task)
                    for exp in todo:
                        _run_one(exp, session, params_for(exp), res, signals)
                        with signals.held():
                            _checkpoint(res, out, started)
                        progress.advance(task)
                res.meta["complete"] = True
            except Stopped as stop:
                res.meta["interrupted"] = signal.Signals(stop.signum).name
        finally:
            _close(session)
        with signals.held(deliver=False):  # a second signal while the stopped run saves asks for the same
            _checkpoint(res, out, started)
    return res


def _run_one(exp, session, params: dict, res, signals: StopOnSignals) -> None:
    """Run one experiment into ``res``; any Exception it raises becomes an entry of ``res.errors``. A signal stops
    it while it measures (nothing of it is kept: --resume runs it again), never while its outcome is recorded."""
    first = len(session.records)
    reason = exp.requires(session.device) if exp.requires is not None else None
    if reason:  # this GPU cannot run it: recorded as skipped, not as an error
        with signals.held():
            res.experiments[exp.name] = dict(exp.describe(), skipped=reason)
        return
    started, error = time.perf_counter(), None
    try:
        info = exp.describe(measure_experiment(exp, session, params))
    except Exception as exc:  # noqa: BLE001 - one experiment's failure must not lose the others' results
        info, error = exp.describe(), dict(experiment=exp.name, error=f"{type(exc).__name__}: {exc}")
        if not isinstance(exc, GpumemlabError):  # not raised on purpose: keep where it came from
            error["traceback"] = traceback.format_exc()
    finally:
        _free_pools()
    with signals.held():
        res.experiments[exp.name] = dict(info, wall_s=time.perf_counter() - started)  # to plan runs split by time
        res.errors.extend([error] if error else [])
        res.results.extend(session.records[first:])  # a failed experiment's finished variants are kept too


def _check_resumable(prev, device: dict, quick: bool) -> None:
    if prev.device.get("name") != device.get("name"):
        raise UsageError(f"--resume: the results were measured on {prev.device.get('name')}, this GPU is "
                         f"{device.get('name')}; use another --out")
    if bool(prev.meta.get("quick")) != bool(quick):
        raise UsageError(f"--resume: the results were measured {'with' if prev.meta.get('quick') else 'without'} "
                         f"--quick; pass the same options")


def _checkpoint(res, out: Path | None, started: float) -> None:
    from .ceilings import raise_ceilings

    if raise_ceilings(res.ceilings, res.results):
        _refresh_findings(res)  # sentences that quote a percentage of a ceiling must see the final value
    res.meta["wall_s"] = time.time() - started
    if out is not None:
        res.save(Path(out) / "results.json")  # atomic: an interrupted write leaves the previous file


def _refresh_findings(res) -> None:
    """Findings are a function of the records: recompute them for every experiment that has records."""
    from ..experiments import registry

    reg = registry()
    for name, info in res.experiments.items():
        recs = [r for r in res.results if r.experiment == name]
        if recs and name in reg:
            info["findings"] = reg[name].describe(recs)["findings"]


def _close(session) -> None:
    try:
        session.close()
    except Exception:  # noqa: BLE001 - after a CUDA error the context may be gone; the results matter more
        pass


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _free_pools():
    try:
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
    except Exception:
        pass


def _version() -> str:
    from .. import __version__

    return __version__


def _versions() -> dict:
    import importlib.metadata as md

    out = {}
    for pkg in ("cuda-core", "cuda-bindings", "cupy-cuda13x", "numpy"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = None
    try:
        from ..gpu.compile import nvrtc_version

        out["nvrtc"] = ".".join(map(str, nvrtc_version()))
    except Exception:
        out["nvrtc"] = None
    return out
