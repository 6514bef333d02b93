"""Helpers for the analyzer tests (CPU only)."""

from __future__ import annotations

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
