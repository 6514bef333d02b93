"""Progress of a slow step (compiling kernels, rendering a report, a dry run) on stderr, without rich.

On a terminal one line is rewritten in place, every second while an item runs: what is being done, which item
and how far along (``matmul.cu (9/19 sources, 31 s)``). Elsewhere (logs, pipes, tests) nothing, unless
``logs=True`` (steps that can be silent for a minute, like a cold compile): then, once the step has run
``SILENT_S``, a line at most every ``EVERY_S`` seconds says the same.
"""

from __future__ import annotations

import sys
import threading
import time

SILENT_S = 2.0
EVERY_S = 10.0
TICK_S = 1.0


class StepLine:
    """``with StepLine("compiling for sm_90", total=19, unit="sources") as line: ... line.step("matmul.cu")``."""

    def __init__(self, what: str, total: int, unit: str = "", stream=None, min_total: int = 2, logs: bool = False,
                 tick: float | None = TICK_S):
        self.what, self.total, self.unit = what, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.done, self.label, self.started, self.last = 0, None, time.monotonic(), None
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.quiet = total < min_total or not (self.tty or logs)
        self.tick, self._stop, self._lock = tick, threading.Event(), threading.Lock()
        self._thread = None

    def __enter__(self) -> "StepLine":
        if not self.quiet and self.tick:  # one item can take a minute (matmul.cu): keep the clock moving meanwhile
            self._thread = threading.Thread(target=self._ticker, name="gpumemlab-progress", daemon=True)
            self._thread.start()
        return self

    def step(self, label: str) -> None:
        """Item ``label`` starts (the previous one is done)."""
        with self._lock:
            self.done += 1
            self.label = label
        self._show()

    def __exit__(self, *exc) -> bool:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if not self.quiet and self.tty and self.done:
            self._print("\r\033[K")  # the line goes; what follows says the result
        return False

    def _ticker(self) -> None:
        while not self._stop.wait(self.tick):
            self._show()

    def _show(self) -> None:
        if self.quiet:
            return
        with self._lock:
            if self.label is None:
                return
            now = time.monotonic()
            where = f"{self.label} ({self.done}/{self.total}{' ' + self.unit if self.unit else ''}, " \
                    f"{now - self.started:.0f} s)"
            if self.tty:
                self._print(f"\r\033[K{self.what}: {where}")
            elif now - self.started >= SILENT_S and (self.last is None or now - self.last >= EVERY_S):
                self.last = now
                self._print(f"{self.what}: {where}...\n")

    def _print(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must not fail the work it reports on
            pass
