"""One way to write a plot: an 8-bit palette PNG, about a third of matplotlib's RGBA file, so that a re-measured
run stays under the repository's size budget (docs/developing.md, "Large files")."""

from __future__ import annotations

import io
from pathlib import Path

DPI = 110


def save_png(fig, path: Path) -> None:
    """Render ``fig`` and write it to ``path`` with at most 256 colours (plots use a few dozen)."""
    from PIL import Image  # matplotlib's own dependency

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    buf.seek(0)
    Image.open(buf).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(Path(path), optimize=True)
