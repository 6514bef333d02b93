"""The suite: one runner for every experiment declaration, the ceilings, and results writing."""

from .run import command_line, run_suite, write_report

__all__ = ["command_line", "run_suite", "write_report"]
