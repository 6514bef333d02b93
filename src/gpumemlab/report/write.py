"""Writing a run to disk: the output folder checked before anything is measured, and results.json, report.md,
report.html and the plots rendered into it together."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .._progress import StepLine
from ..errors import UsageError
from .html import write_html
from .markdown import render
from .plots import write_plots


def input_file(path) -> Path:
    """``path`` if it names a regular file we may open; else UsageError (one line): missing, a folder, a device,
    a name too long for the file system."""
    path = Path(path)
    try:
        if path.is_file():
            return path
        there = path.exists()
    except (OSError, ValueError) as exc:  # ENAMETOOLONG, EACCES on a parent, a NUL: Path.exists() lets these through
        raise UsageError(f"{_short(path)}: cannot read ({_why(exc)})") from None
    raise UsageError(f"{'not a regular file' if there else 'no such file'}: {_short(path)}")


def _why(exc: Exception) -> str:
    return (exc.strerror or str(exc)) if isinstance(exc, OSError) else "a NUL character in the name"


def _short(path: Path) -> str:
    """A path for a one-line message: a very long one shortened in the middle."""
    text = str(path) if str(path).isprintable() else repr(str(path))
    return text if len(text) <= 120 else f"{text[:60]}...{text[-40:]} ({len(text)} characters)"


def prepare_out(out: Path, option: str = "--out") -> Path:
    """Make ``out`` a folder we can write into, or raise UsageError (one line) - before anything is measured."""
    out = Path(out)
    try:
        if out.exists() and not out.is_dir():
            raise UsageError(f"{option} {_short(out)}: is a file, not a folder")
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".gpumemlab-probe-")  # the only sure test of writability
        os.close(fd)
        os.unlink(probe)
    except UsageError:
        raise
    except (OSError, ValueError) as exc:
        raise UsageError(f"{option} {_short(out)}: cannot write there ({_why(exc)})") from None
    return out


@contextlib.contextmanager
def output_folder(out: Path, option: str = "--out"):
    """The checked output folder (:func:`prepare_out`); if this command created it and it is still empty when the
    command ends (an error, a signal, no GPU), it goes again: a stopped or refused run leaves the state it found."""
    created = not os.path.lexists(out)
    out = prepare_out(out, option)
    try:
        yield out
    finally:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only when empty


def write_report(res, out: Path) -> Path:
    """results.json, report.md and the plots into ``out``: rendered in a temporary folder beside it, then
    moved into place file by file, so a failure while rendering leaves no partial report."""
    out = prepare_out(out)
    line = StepLine(f"rendering the report of {len(res.experiments)} experiments into {_short(out)}",
                    len(res.experiments) + 2, "steps")
    with tempfile.TemporaryDirectory(dir=out, prefix=".gpumemlab-render-") as tmp, line:
        tmp = Path(tmp)
        res.save(tmp / "results.json")
        plots = write_plots(res, tmp, line)
        line.step("report.md")
        (tmp / "report.md").write_text(render(res, plots))
        line.step("report.html")
        write_html(res, tmp, plots)
        for f in sorted(tmp.iterdir()):
            os.replace(f, out / f.name)
    return out
