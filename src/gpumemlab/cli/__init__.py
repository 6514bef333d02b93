"""Command-line front end: `gpumemlab bench|run|list|device|kernels|report|analyze|occupancy|intensity`.

Each command module exposes ``add_commands(subparsers)``; a command sets ``func(args) -> int``.
Errors a user can cause (:class:`~gpumemlab.errors.GpumemlabError`) end in one line and exit code 2.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import GpumemlabError

# Modules that contribute sub-commands, imported lazily so that `--help` and the analyzer never
# import the GPU stack.
COMMAND_MODULES = ("gpumemlab.cli.suite", "gpumemlab.cli.analyzer", "gpumemlab.cli.compare", "gpumemlab.cli.tune")


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad values in one line with exit code 2 (its default code)."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"gpumemlab {self.prog.split(' ', 1)[-1]}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = _Parser(
        prog="gpumemlab",
        description="Measure and explain CUDA memory-optimization techniques on your GPU.",
    )
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
        print(f"gpumemlab {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gpumemlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `gpumemlab ... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
