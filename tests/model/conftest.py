"""Helpers for the analyzer tests (CPU only)."""

from __future__ import annotations

import os
import sys

import pytest


@pytest.fixture
def run_cli(capsys):
    """Run ``gpumemlab.cli.main(argv)``; return (exit code, stdout, stderr). argparse exits count too."""
    from gpumemlab.cli import main

    def run(*argv: str):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run


# mutmut wraps every function in a trampoline (3 frames per call), so the parser's nesting limit,
# sized for Python's default stack, needs a deeper one under tools/mutation/run.sh only.
if os.environ.get("GPUMEMLAB_MUTATION"):
    sys.setrecursionlimit(20000)
