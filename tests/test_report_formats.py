"""`gpumemlab report --format md|csv|html` on a run cut from the committed H200 run (read, never written)."""

from __future__ import annotations

import base64
import contextlib
import html
import csv
import io
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests/data/runs/nvidia-h200/results.json"  # cut from a real run by tests/data/make_runs.py
# line plots, bar plots, a timeline, a skipped experiment: each kind of section without drawing thirty plots
KEPT = ("vector_copy", "offset_copy", "reduce", "matmul", "stream_overlap", "p2p")


@pytest.fixture(scope="module")
def h200_doc() -> dict:
    doc = json.loads(FIXTURE.read_text())
    doc["results"] = [r for r in doc["results"] if r["experiment"] in KEPT]
    doc["experiments"] = {n: e for n, e in doc["experiments"].items() if n in KEPT}
    assert sorted(doc["experiments"]) == sorted(KEPT) and doc["experiments"]["p2p"].get("skipped")
    return doc


@pytest.fixture(scope="module")
def h200(tmp_path_factory, h200_doc) -> Path:
    path = tmp_path_factory.mktemp("run") / "results.json"
    path.write_text(json.dumps(h200_doc))
    return path


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, h200) -> tuple[Path, int, str]:
    """The default format (md): report.md, report.html and plots in one folder (plots take seconds)."""
    from gpumemlab.cli import main

    out = tmp_path_factory.mktemp("report")
    with contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(["report", str(h200), "--out", str(out)])
    return out, code, err.getvalue()


@pytest.fixture(scope="module")
def html_report(rendered) -> Path:
    return rendered[0] / "report.html"


def test_csv_has_one_row_per_record_with_the_json_values(tmp_path, run_cli, h200, h200_doc):
    code, _, err = run_cli("report", str(h200), "--out", str(tmp_path), "--format", "csv")
    assert code == 0 and err.strip() == f"wrote {tmp_path / 'report.csv'}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.csv"]
    with open(tmp_path / "report.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    recs = h200_doc["results"]
    assert len(rows) == len(recs)
    for row, rec in zip(rows, recs):
        t = rec["time_s"]
        assert row["experiment"] == rec["experiment"] and row["variant"] == rec["variant"]
        assert row["params"] == ";".join(f"{k}={v}" for k, v in rec["params"].items())
        assert int(row["samples"]) == len(t["samples"])
        for col, key in (("median_s", "median"), ("min_s", "min"), ("max_s", "max"), ("p10_s", "p10"), ("p90_s", "p90")):
            assert float(row[col]) == t[key]  # full precision: repr round-trips
        for col in ("gbps", "gflops"):
            assert row[col] == ("" if rec[col] is None else repr(rec[col]))
        ratio = rec["pct_of_ceiling"]
        assert row["ratio_to_ceiling"] == ("" if ratio is None else repr(ratio / 100))
        assert row["ceiling"] == (rec["ceiling"] or "") and row["kind"] == rec["kind"]
        assert row["verified"] == str(rec["verified"])


def test_md_default_writes_report_md_and_html_next_to_it(rendered):
    out, code, err = rendered
    assert code == 0 and err.strip() == f"wrote {out / 'report.md'}"
    assert (out / "report.md").read_text().startswith("# gpumemlab report")
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_html_format_writes_only_the_page_and_its_plots(tmp_path, run_cli, monkeypatch, h200):
    import gpumemlab.report.plots as plots

    monkeypatch.setattr(plots, "write_plots", lambda res, out: {})  # the page without drawing: fast
    code, _, err = run_cli("report", str(h200), "--out", str(tmp_path), "--format", "html")
    assert code == 0 and err.strip() == f"wrote {tmp_path / 'report.html'}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_bad_format_is_one_line(run_cli, h200):
    code, _, err = run_cli("report", str(h200), "--format", "pdf")
    assert code == 2 and "argument --format: invalid choice: 'pdf'" in err and len(err.strip().splitlines()) == 1


class _Page(HTMLParser):
    """Ids, links, image sources, external references and per-table row counts of a page."""

    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.imgs, self.external, self.rows = set(), [], [], [], {}
        self._table = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a":
            self.hrefs.append(a["href"])
        if tag == "img":
            self.imgs.append(a["src"])
        if tag in ("link", "iframe") or (tag == "script" and "src" in a):
            self.external.append((tag, a))
        if tag == "table":
            self._table = a.get("id")
            self.rows[self._table] = 0
        if tag == "tr" and self._table is not None:
            self.rows[self._table] += 1


def test_html_is_self_contained_and_every_finding_links_to_records(html_report, h200_doc):
    text = html_report.read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    assert page.external == [] and not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    skipped = {n: e["skipped"] for n, e in h200_doc["experiments"].items() if e.get("skipped")}
    for name, why in skipped.items():  # a section that says why, no records
        assert f"exp-{name}" in page.ids and f"Not run on this GPU: {html.escape(why)}" in text
    names = [n for n in h200_doc["experiments"] if n not in skipped]
    for name in names:
        n = sum(r["experiment"] == name for r in h200_doc["results"])
        assert f"exp-{name}" in page.ids
        assert page.rows[f"records-{name}"] == n + 1  # + the header row
        assert {f"rec-{name}-{i}" for i in range(n)} <= page.ids
    assert page.rows["summary-table"] == len(h200_doc["results"]) + 1
    assert len(page.imgs) == len(names)
    for src in page.imgs:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    for href in page.hrefs:  # every anchor resolves
        assert href.startswith("#") and href[1:] in page.ids, href
    findings = sum(len(info.get("findings") or []) for info in h200_doc["experiments"].values())
    assert text.count('<li class="finding">') == findings
    # a finding names "float x1": it links to that variant's first vector_copy record
    first = next(i for i, r in enumerate(r for r in h200_doc["results"] if r["experiment"] == "vector_copy")
                 if r["variant"] == "float x1")
    assert f'<a href="#rec-vector_copy-{first}">float x1</a>' in text


# ----------------------------------------------------------------------------- a real browser

def _chromium() -> str | None:
    for name in (os.environ.get("GPUMEMLAB_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def browser_page():
    """A Playwright page on Debian's Chromium; skipped when either is missing (failed if
    GPUMEMLAB_REQUIRE_BROWSER=1, as CI sets)."""
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "Playwright is not installed (pip install playwright)"
    exe = _chromium()
    if missing is None and exe is None:
        missing = "no Chromium executable (apt-get install chromium, or set GPUMEMLAB_CHROMIUM)"
    if missing:
        if os.environ.get("GPUMEMLAB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"GPUMEMLAB_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(missing)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])  # root in CI containers
        yield browser.new_page()
        browser.close()


@pytest.mark.browser
def test_report_html_renders_in_chromium_without_console_errors(browser_page, html_report, h200_doc):
    page = browser_page
    messages = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    page.goto(html_report.as_uri())
    assert page.evaluate("Array.from(document.querySelectorAll('section.experiment')).map(s => s.id)") == \
        [f"exp-{n}" for n in h200_doc["experiments"]]  # the run's order, skipped experiments (a note) included
    names = [n for n, e in h200_doc["experiments"].items() if not e.get("skipped")]
    for name in names:
        n = sum(r["experiment"] == name for r in h200_doc["results"])
        assert page.locator(f"#records-{name} tbody tr").count() == n
        assert page.locator(f"#exp-{name} img").evaluate("img => img.complete && img.naturalWidth") > 0
    # sort offset_copy's records by median (click), then reversed (click again)
    medians = sorted(r["time_s"]["median"] for r in h200_doc["results"] if r["experiment"] == "offset_copy")
    header = page.locator("#records-offset_copy th", has_text="median")
    read = "t => Array.from(t.tBodies[0].rows).map(r => parseFloat(r.cells[%d].dataset.v))"
    col = page.locator("#records-offset_copy th").all_inner_texts().index("median")
    header.click()
    assert page.locator("#records-offset_copy").evaluate(read % col) == medians
    header.click()
    assert page.locator("#records-offset_copy").evaluate(read % col) == medians[::-1]
    # a finding's link lands on its record
    page.locator("#exp-vector_copy .finding a", has_text="float x1").first.click()
    assert page.evaluate("document.querySelector(':target').cells[0].textContent") == "float x1"
    assert [m for m in messages if m.startswith(("error", "pageerror", "warning"))] == []


@pytest.mark.gpu
def test_a_run_on_the_gpu_writes_report_html_and_compares_with_itself(tmp_path, run_cli):
    """`gpumemlab run --out` renders report.md and report.html together; the run against itself is all ties."""
    code, _, err = run_cli("run", "offset_copy", "--quick", "-p", "offsets=0,1,8", "--out", str(tmp_path))
    assert code == 0, err
    doc = json.loads((tmp_path / "results.json").read_text())
    page = _Page()
    page.feed((tmp_path / "report.html").read_text(encoding="utf-8"))
    n = len(doc["results"])  # each of the 3 offsets with every variant of the kernel
    assert sorted({r["params"]["offset"] for r in doc["results"]}) == [0, 1, 8] and n % 3 == 0
    assert "exp-offset_copy" in page.ids and page.rows["records-offset_copy"] == n + 1
    results = str(tmp_path / "results.json")
    code, out, _ = run_cli("compare", results, results, "--json", "--fail-below", "0.99")
    assert code == 0
    assert [m["verdict"] for m in json.loads(out)["matches"]] == ["tie"] * n
