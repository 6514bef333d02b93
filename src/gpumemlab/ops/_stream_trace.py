"""What stream_map shows while it runs: NVTX ranges for a profiler's timeline, and a progress bar.

NVTX (the ``nvtx`` package, the optional extra ``nvtx``): each chunk's H2D, fn and D2H are enqueued inside a range
named ``chunk K h2d|fn|d2h dev D`` in the ``gpumemlab`` domain; nsys projects a range onto the copies and kernels
launched inside it, so the pipeline reads chunk by chunk on the GPU rows. Without the package the ranges cost
nothing (a shared no-op context).

Progress (``progress=True``): a rich bar over the bytes of ``x`` whose chunks have come back, with GB/s and ETA,
on stderr; shared by the pipelines of several devices (rich's Progress is thread-safe).
"""

from __future__ import annotations

import contextlib
import importlib

DOMAIN = "gpumemlab"
_NULL = contextlib.nullcontext()


def _load_nvtx():
    try:
        return importlib.import_module("nvtx")
    except ImportError:
        return None


class Ranges:
    """NVTX push/pop around a block, or nothing when ``nvtx`` is not installed (``module`` for tests)."""

    def __init__(self, device: int | None, module=None):
        self.nvtx = module if module is not None else _load_nvtx()
        self.device = 0 if device is None else device
        self.domain = None if self.nvtx is None else self.nvtx.get_domain(DOMAIN)

    def __call__(self, chunk: int, stage: str):
        if self.nvtx is None:
            return _NULL
        return self._range(f"chunk {chunk} {stage} dev {self.device}")

    @contextlib.contextmanager
    def _range(self, name: str):
        attrs = self.domain.get_event_attributes(message=name)
        self.domain.push_range(attrs)
        try:
            yield
        finally:
            self.domain.pop_range()


def _gbps_column():
    """Bytes per second as GB/s (decimal, as every rate in gpumemlab)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class GBps(ProgressColumn):
        def render(self, task):
            speed = task.finished_speed or task.speed
            return Text("-- GB/s" if speed is None else f"{speed / 1e9:.1f} GB/s", style="progress.data.speed")
    return GBps()


class Bar:
    """``advance(nbytes)`` as chunks complete; a no-op unless ``enabled``; ``console`` for tests."""

    def __init__(self, total_bytes: int, enabled: bool, console=None, label: str = "stream_map"):
        self.progress = self.task = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        console = console if console is not None else Console(stderr=True)
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(binary_units=False),
                                 _gbps_column(), TextColumn("ETA"), TimeRemainingColumn(), console=console,
                                 transient=False, refresh_per_second=4)
        self.task = self.progress.add_task(label, total=total_bytes)

    def __enter__(self) -> "Bar":
        if self.progress is not None:
            self.progress.start()
        return self

    def advance(self, nbytes: int) -> None:
        if self.progress is not None:
            self.progress.advance(self.task, nbytes)

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.refresh()
            self.progress.stop()
