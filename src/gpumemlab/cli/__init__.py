"""Command-line front end: `gpumemlab bench|run|list|device|kernels|report|analyze|occupancy|intensity|lint`.

Each command module exposes ``add_commands(subparsers)``; a command sets ``func(args) -> int``.
Every :class:`~gpumemlab.errors.GpumemlabError` ends in one line, ``gpumemlab COMMAND: message``, and
its ``exit_code`` (2: the user can fix it, 1: a run failed; see :mod:`gpumemlab.errors`).
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import __version__
from ..errors import GpumemlabError

# Modules that contribute sub-commands, imported lazily so that `--help` and the analyzer never
# import the GPU stack.
COMMAND_MODULES = ("gpumemlab.cli.suite", "gpumemlab.cli.analyzer", "gpumemlab.cli.compare", "gpumemlab.cli.tune",
                   "gpumemlab.cli.lint")


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad values in one line with exit code 2 (its default code)."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")  # prog: "gpumemlab" or "gpumemlab bench"


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
        return int(args.func(args) or 0)
    except GpumemlabError as exc:
        print(f"gpumemlab {args.command}: {one_line(exc)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("gpumemlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `gpumemlab ... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def one_line(exc: BaseException) -> str:
    """The message on one line: a multi-line message keeps its first line and says how many follow."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()] or [type(exc).__name__]
    return lines[0] + (f" (+{len(lines) - 1} more lines)" if len(lines) > 1 else "")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
