"""Progress of a slow step (compiling kernels, rendering a report, a dry run) on stderr, without rich.

On a terminal one line is rewritten in place: what is being done and how far along (``3/19``). Elsewhere (logs,
pipes, tests) nothing, unless ``logs=True`` (steps that can be silent for a minute, like a cold compile): then a
step past ``SILENT_S`` says what it does and how far it got, one line at most every ``EVERY_S`` seconds.
"""

from __future__ import annotations

import sys
import time

SILENT_S = 2.0
EVERY_S = 10.0


class StepLine:
    """``with StepLine("compiling for sm_90", total=19, unit="sources") as line: ... line.step("matmul.cu")``."""

    def __init__(self, what: str, total: int, unit: str = "", stream=None, min_total: int = 2, logs: bool = False):
        self.what, self.total, self.unit = what, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.done, self.started, self.last = 0, time.monotonic(), None
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.quiet = total < min_total or not (self.tty or logs)

    def __enter__(self) -> "StepLine":
        return self

    def step(self, label: str) -> None:
        """Item ``label`` starts (the previous one is done)."""
        now = time.monotonic()
        where = f"{label} ({self.done + 1}/{self.total}{' ' + self.unit if self.unit else ''}, " \
                f"{now - self.started:.0f} s)"
        self.done += 1
        if self.quiet:
            return
        if self.tty:
            self._print(f"\r\033[K{self.what}: {where}")
        elif now - self.started >= SILENT_S and (self.last is None or now - self.last >= EVERY_S):
            self.last = now
            self._print(f"{self.what}: {where}...\n")

    def __exit__(self, *exc) -> bool:
        if not self.quiet and self.tty and self.done:
            self._print("\r\033[K")  # the line goes; what follows says the result
        return False

    def _print(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must not fail the work it reports on
            pass
