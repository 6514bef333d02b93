"""The suite: runs experiment declarations on one session (ceilings first), collects the records and
writes results.json, report.md and plots. The CLI and the tools call these functions."""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from pathlib import Path

from ..errors import GpumemlabError


def command_line(argv: list[str]) -> str:
    """The command as recorded in results.json: absolute paths shown relative to the working directory,
    or by their last component when outside it, so a record names no machine's directories."""
    def show(arg: str) -> str:
        if not os.path.isabs(arg):
            return arg
        rel = os.path.relpath(arg)
        return rel if not rel.startswith("..") else os.path.basename(arg.rstrip("/")) or arg
    return " ".join(["gpumemlab"] + [show(a) for a in argv])


def run_suite(selected: list, params_for, quick: bool, command: str, progress_console=None):
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from .ceilings import measure_ceilings
    from ..bench.records import RunResults
    from ..bench.session import Session
    from ..gpu import runtime

    runtime.ensure_device()
    started = time.time()
    session = Session(quick=quick)
    errors, describe = [], {}
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=progress_console, transient=False) as progress:
        task = progress.add_task("ceilings", total=len(selected) + 1)
        session.progress = lambda text: progress.update(task, description=text[:90])
        measure_ceilings(session, quick=quick)
        progress.advance(task)
        for exp in selected:
            try:
                describe[exp.name] = exp.describe(run_one(session, exp, params_for(exp)))
            except GpumemlabError as exc:
                describe[exp.name] = exp.describe()
                errors.append(dict(experiment=exp.name, error=f"{type(exc).__name__}: {exc}"))
            finally:
                _free_pools()
            progress.advance(task)
    session.close()
    meta = dict(command=command, date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                version=_version(), wall_s=time.time() - started, quick=quick, versions=_versions(),
                timer=session.timer.__dict__)
    return RunResults(meta=meta, device=session.device, ceilings=session.ceilings, results=session.records,
                      experiments=describe, errors=errors)


def run_one(session, exp, params: dict) -> list:
    """The records of one experiment declaration, measured by the runner."""
    from .runner import run_experiment

    return run_experiment(session, exp, params)


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


def write_report(res, out: Path) -> Path:
    from ..report.markdown import render
    from ..report.plots import write_plots

    out.mkdir(parents=True, exist_ok=True)
    res.save(out / "results.json")
    plots = write_plots(res, out)
    (out / "report.md").write_text(render(res, plots))
    return out


