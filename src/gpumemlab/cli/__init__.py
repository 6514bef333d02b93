"""Command-line front end: `gpumemlab bench|run|list|device|kernels|report|merge|analyze|occupancy|intensity|lint|sass`.

Each command module exposes ``add_commands(subparsers)``; a command sets ``func(args) -> int``.
Every :class:`~gpumemlab.errors.GpumemlabError` ends in one line, ``gpumemlab COMMAND: message``, and
its ``exit_code`` (2: the user can fix it, 1: a run failed; see :mod:`gpumemlab.errors`).
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import warnings

from .. import __version__
from ..errors import AnalyzerWarning, GpumemlabError

# Modules that contribute sub-commands, imported lazily so that `--help` and the analyzer never
# import the GPU stack.
COMMAND_MODULES = ("gpumemlab.cli.suite", "gpumemlab.cli.analyzer", "gpumemlab.cli.compare", "gpumemlab.cli.tune",
                   "gpumemlab.cli.lint", "gpumemlab.cli.sass")


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad values in one line with exit code 2 (its default code)."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")  # prog: "gpumemlab" or "gpumemlab bench"


def positive_number(text: str) -> float:
    """argparse type of a flag that is a quantity: a finite number > 0 (NaN, inf, 0 and negatives refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and value > 0):  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be positive and finite, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = _Parser(
        prog="gpumemlab",
        description="Measure and explain CUDA memory-optimization techniques on your GPU.",
    )
    parser.add_argument("--version", action="version", version=f"gpumemlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # NVRTC reads this once per process: with its compute cache on, ptxas prints no -v report for
    # code it has seen (we keep our own cubin cache), so turn it off before anything compiles.
    os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", AnalyzerWarning)
            warnings.showwarning = _show_warning(args.command, warnings.showwarning)
            return int(args.func(args) or 0)
    except GpumemlabError as exc:
        print(f"gpumemlab {args.command}: {one_line(exc)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:  # SIGINT; SIGTERM too while a run holds it (suite.run.Stopped)
        signum = getattr(exc, "signum", 2)
        print(f"gpumemlab {args.command}: stopped by {signal.Signals(signum).name}",
              file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:  # `gpumemlab ... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # the file system refused (disk full, permissions) where no check could foresee it
        print(f"gpumemlab {args.command}: {_os_error(exc)}", file=sys.stderr)
        return 1


def _show_warning(command: str, default):
    """Our warnings as one line each, ``gpumemlab COMMAND: warning: ...``; others as Python shows them."""
    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, AnalyzerWarning):
            print(f"gpumemlab {command}: warning: {one_line(message)}", file=sys.stderr)
        else:
            default(message, category, filename, lineno, file, line)
    return show


def _os_error(exc: OSError) -> str:
    name = str(exc.filename) if exc.filename is not None else ""
    name = name if len(name) <= 120 else f"{name[:60]}...{name[-40:]}"
    return f"{name + ': ' if name else ''}{exc.strerror or exc}"


def one_line(exc: BaseException) -> str:
    """The message on one line: a multi-line message keeps its first line and says how many follow."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()] or [type(exc).__name__]
    return lines[0] + (f" (+{len(lines) - 1} more lines)" if len(lines) > 1 else "")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
