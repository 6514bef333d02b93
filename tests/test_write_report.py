"""Writing a run to disk (report/write.py): the report rendered beside the output folder and moved in whole, the
progress line it shows, and the one-line messages for a file that cannot be read."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from gpumemlab.bench.records import Record, RunResults
from gpumemlab.errors import UsageError
from gpumemlab.report import write


class Line:
    """Stands in for the progress line: what it announces and each step it is told of."""

    made: list = []

    def __init__(self, what: str, total: int, unit: str = ""):
        self.what, self.total, self.unit, self.steps = what, total, unit, []
        Line.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def step(self, label: str) -> None:
        self.steps.append(label)


def test_report_is_rendered_beside_the_folder_then_moved_in_whole(tmp_path, monkeypatch):
    out = tmp_path / "run"
    seen = {}

    def plots(res, tmp, progress):
        progress.step("plot of copy")
        (Path(tmp) / "copy.png").write_bytes(b"png")
        return {"copy": "copy.png"}

    def html(res, tmp, plot_files):
        seen.update(folder=Path(tmp), plots=plot_files, present=sorted(os.listdir(out)))
        (Path(tmp) / "report.html").write_text("<html>")

    Line.made = []
    monkeypatch.setattr(write, "StepLine", Line)
    monkeypatch.setattr(write, "write_plots", plots)
    monkeypatch.setattr(write, "write_html", html)
    rec = Record("copy", "vec4", {"n": 4}, 32, None, {"median": 1e-3}, 0.032, None, None, None, True)
    res = RunResults(meta={}, device={}, ceilings={}, results=[rec], experiments={"copy": {"title": "Copy"}})
    assert write.write_report(res, out) == out
    line, = Line.made
    assert (line.what, line.total, line.unit) == (f"rendering the report of 1 experiments into {out}", 3, "steps")
    assert line.steps == ["plot of copy", "report.md", "report.html"]
    # while rendering, out holds only a hidden work folder; nothing of the report is in place yet
    assert seen["folder"].parent == out and seen["present"] == [seen["folder"].name]
    assert seen["folder"].name.startswith(".gpumemlab-render-") and seen["plots"] == {"copy": "copy.png"}
    assert sorted(os.listdir(out)) == ["copy.png", "report.html", "report.md", "results.json"]
    assert "![copy](copy.png)" in (out / "report.md").read_text()
    assert RunResults.load(out / "results.json").results[0].variant == "vec4"


def test_a_failed_render_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    (tmp_path / "report.md").write_text("the previous report")

    def broken(res, tmp, plot_files):
        raise RuntimeError("no fonts")

    monkeypatch.setattr(write, "write_html", broken)
    res = RunResults(meta={}, device={}, ceilings={}, results=[], experiments={})
    with pytest.raises(RuntimeError, match="no fonts"):
        write.write_report(res, tmp_path)
    assert os.listdir(tmp_path) == ["report.md"] and (tmp_path / "report.md").read_text() == "the previous report"


def test_input_file_says_why_a_path_cannot_be_read(tmp_path):
    (tmp_path / "r.json").write_text("{}")
    assert write.input_file(str(tmp_path / "r.json")) == tmp_path / "r.json"
    with pytest.raises(UsageError) as err:
        write.input_file(tmp_path)
    assert str(err.value) == f"not a regular file: {tmp_path}"
    with pytest.raises(UsageError) as err:
        write.input_file(tmp_path / "missing.json")
    assert str(err.value) == f"no such file: {tmp_path / 'missing.json'}"
    long = tmp_path / ("x" * 300)
    with pytest.raises(UsageError) as err:
        write.input_file(long)
    text = str(long)
    assert str(err.value) == f"{text[:60]}...{text[-40:]} ({len(text)} characters): cannot read (File name too long)"


def test_short_paths_are_whole_up_to_120_characters_and_quoted_when_unprintable():
    assert write._short(Path("a" * 120)) == "a" * 120
    assert write._short(Path("a" * 60 + "b" * 61)) == "a" * 60 + "..." + "b" * 40 + " (121 characters)"
    assert write._short(Path("new\nline.json")) == "'new\\nline.json'"


def test_the_output_folder_is_made_with_its_parents_or_refused_in_one_line(tmp_path):
    out = tmp_path / "a" / "b" / "run"
    assert write.prepare_out(out) == out and out.is_dir() and os.listdir(out) == []  # the probe file is gone
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError) as err:
        write.prepare_out(tmp_path / "file")
    assert str(err.value) == f"--out {tmp_path / 'file'}: is a file, not a folder"
    with pytest.raises(UsageError) as err:
        write.prepare_out(tmp_path / "file" / "run", "--report")
    assert str(err.value) == f"--report {tmp_path / 'file' / 'run'}: cannot write there (Not a directory)"


def test_a_plot_is_saved_as_a_palette_png_at_110_dpi(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from gpumemlab.report.png import save_png

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([0, 1], [0, 1])
    save_png(fig, tmp_path / "p.png")
    plt.close(fig)
    with Image.open(tmp_path / "p.png") as img:
        assert (img.format, img.mode, img.size) == ("PNG", "P", (770, 440))
        unoptimized = io.BytesIO()
        img.save(unoptimized, format="PNG")
    assert (tmp_path / "p.png").stat().st_size < len(unoptimized.getvalue())  # written with the encoder's optimize


def test_a_plot_is_a_png_whatever_the_user_s_matplotlibrc_saves(tmp_path):
    import matplotlib
    import matplotlib.pyplot as plt

    from gpumemlab.report.png import save_png

    fig = plt.figure(figsize=(1, 1))
    with matplotlib.rc_context({"savefig.format": "svg"}):
        save_png(fig, tmp_path / "p.png")
    plt.close(fig)
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_output_folder_is_probed_where_it_is_not_in_the_temporary_folder(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no such folder"))  # a TMPDIR that is gone
    assert write.prepare_out(tmp_path / "run") == tmp_path / "run" and os.listdir(tmp_path) == ["run"]
