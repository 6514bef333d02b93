"""Writing a run to disk: the output folder checked before anything is measured, and results.json, report.md,
report.html and the plots rendered into it together."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import UsageError
from .html import write_html
from .markdown import render
from .plots import write_plots


def prepare_out(out: Path, option: str = "--out") -> Path:
    """Make ``out`` a folder we can write into, or raise UsageError (one line) - before anything is measured."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{option} {out}: is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".gpumemlab-probe-")  # the only sure test of writability
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"{option} {out}: cannot write there ({exc.strerror or exc})") from None
    return out


def write_report(res, out: Path) -> Path:
    """results.json, report.md and the plots into ``out``: rendered in a temporary folder beside it, then
    moved into place file by file, so a failure while rendering leaves no partial report."""
    out = prepare_out(out)
    with tempfile.TemporaryDirectory(dir=out, prefix=".gpumemlab-render-") as tmp:
        tmp = Path(tmp)
        res.save(tmp / "results.json")
        plots = write_plots(res, tmp)
        (tmp / "report.md").write_text(render(res, plots))
        write_html(res, tmp, plots)
        for f in sorted(tmp.iterdir()):
            os.replace(f, out / f.name)
    return out
