"""The suite: one runner for every experiment declaration, the ceilings, and results.json written after every experiment."""

from .run import command_line, run_suite

__all__ = ["command_line", "run_suite"]
