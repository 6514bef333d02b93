"""results.json -> report.html: one self-contained page (plots as data URIs, inline CSS and JS, nothing
fetched), tables sortable by clicking a header, each finding linked to the records it names."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from ..bench.records import RunResults
from .format import (FLAGS_NOTE, SUMMARY_COLUMNS, ceiling_how, claim_lines, fmt_num, fmt_time, merged_lines,
                     seed_hardware_line, summary_row)
from .markdown import device_line

RECORD_COLUMNS = SUMMARY_COLUMNS[1:] + ("min", "max", "samples")
MEDIAN_COL = SUMMARY_COLUMNS.index("median")

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1400px; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 12px; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #eee; cursor: pointer; user-select: none; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
tr:target { background: #fff3b0; }
img { max-width: 100%; }
code { background: #f4f4f4; padding: 0 2px; }
.finding a { font-size: 12px; }
"""

# Click a header to sort by its column (again to reverse); cells sort by data-v when present, numbers
# (thousands separators ignored) before text.
SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.title = "sort";
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0], col = th.cellIndex;
    var asc = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    function key(row) {
      var cell = row.cells[col], text = cell.dataset.v !== undefined ? cell.dataset.v : cell.textContent;
      var n = parseFloat(text.replace(/,/g, ""));
      return isNaN(n) ? text : n;
    }
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      if (typeof x !== typeof y) return typeof x === "number" ? -1 : 1;
      return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def _text(s) -> str:
    """Escaped text with `code` spans."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(str(s)))


def _table(headers, rows, table_id: str | None = None, row_ids=None, values=None) -> str:
    """A sortable table; values[i][j], when not None, is cell (i, j)'s sort key (data-v)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        rid = f' id="{row_ids[i]}"' if row_ids else ""
        cells = []
        for j, c in enumerate(row):
            v = values[i][j] if values else None
            attr = "" if v is None else f' data-v="{v!r}"'
            cells.append(f"<td{attr}>{_text(c)}</td>")
        body.append(f"<tr{rid}>{''.join(cells)}</tr>")
    tid = f' id="{table_id}"' if table_id else ""
    return f'<table class="sortable"{tid}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _finding(text: str, name: str, first_row: dict[str, int]) -> str:
    """A finding with links to its experiment's table and to the first record of every variant it names."""
    links = [f'<a href="#records-{name}">records</a>']
    for variant, i in first_row.items():
        if re.search(rf"(?<!\w){re.escape(variant)}(?!\w)", text):
            links.append(f'<a href="#rec-{name}-{i}">{html.escape(variant)}</a>')
    return f'<li class="finding">Measured here: {_text(text)} ({", ".join(links)})</li>'


def _data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def render(res: RunResults, plot_dir: Path | None = None, plots: dict[str, str] | None = None) -> str:
    """The page; plots maps experiment -> PNG file name in plot_dir (embedded, not linked)."""
    plots = plots or {}
    meta, dev = res.meta, res.device
    measured = {r.experiment for r in res.results}
    # sections in the run's order; an experiment this GPU could not run (its ``requires``) says why, as report.md
    shown = [n for n, info in res.experiments.items() if n in measured or info.get("skipped")]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>gpumemlab report: {html.escape(str(dev.get('name', '?')))}</title>",
           f"<style>{STYLE}</style></head><body>", "<h1>gpumemlab report</h1>",
           f"<ul><li>Device: {html.escape(device_line(dev))}</li>",
           f"<li>Command: <code>{html.escape(str(meta.get('command', '?')))}</code></li>",
           f"<li>Date: {html.escape(str(meta.get('date', '?')))}; gpumemlab {html.escape(str(meta.get('version', '?')))}; "
           f"wall time {fmt_num(meta.get('wall_s'), 0)} s</li>",
           *(f"<li>Merged from another run of this GPU model: {m}</li>"
             for m in merged_lines(meta, code=lambda c: f"<code>{html.escape(c)}</code>", escape=html.escape)),
           "</ul>",
           "<nav><p>" + " | ".join(f'<a href="#exp-{n}">{n}</a>' for n in shown) + "</p></nav>"]
    if res.ceilings:
        out += ['<h2 id="ceilings">Ceilings</h2>',
                _table(("ceiling", "value", "how"),
                       [(k, f"{fmt_num(v['value'])} {v['unit']}", ceiling_how(v, res.meta))
                        for k, v in res.ceilings.items()],
                       values=[(None, v["value"], None) for v in res.ceilings.values()])]
    out += ['<h2 id="summary">Summary</h2>',
            "<p>Median time (± half the p10-p90 spread), effective bandwidth (bytes each algorithm must move, "
            "read + write), percentage of the named ceiling, speedup over the experiment's naive variant and the "
            "analyzer's prediction. Click a header to sort. " + html.escape(FLAGS_NOTE) + "</p>",
            _table(SUMMARY_COLUMNS, [summary_row(r) for r in res.results], "summary-table",
                   values=[[r.median_s if j == MEDIAN_COL else None for j in range(len(SUMMARY_COLUMNS))]
                           for r in res.results])]
    for name in shown:
        info = res.experiments[name]
        if name not in measured:
            out += [f'<section class="experiment" id="exp-{name}">',
                    f"<h2>{html.escape(name)}: {_text(info.get('title', ''))}</h2>",
                    f"<ul><li>Not run on this GPU: {_text(info['skipped'])}</li></ul></section>"]
            continue
        recs = [r for r in res.results if r.experiment == name]
        first_row: dict[str, int] = {}
        for i, r in enumerate(recs):
            first_row.setdefault(r.variant, i)
        items = [f"<li>{_text(line)}</li>" for line in claim_lines(info)]
        hardware = seed_hardware_line(name, dev, res.ceilings, recs)
        if hardware:
            items.append(f"<li>{_text(hardware)}</li>")
        items += [_finding(f, name, first_row) for f in info.get("findings") or []]
        if info.get("modern_note"):
            items.append(f"<li>Why it differs on modern GPUs: {_text(info['modern_note'])}</li>")
        out += [f'<section class="experiment" id="exp-{name}">',
                f"<h2>{html.escape(name)}: {_text(info.get('title', ''))}</h2>", f"<ul>{''.join(items)}</ul>"]
        if name in plots and plot_dir is not None:
            out.append(f'<img alt="{name} plot" src="{_data_uri(Path(plot_dir) / plots[name])}">')
        rows = [summary_row(r)[1:] + (fmt_time(r.time_s.get("min")), fmt_time(r.time_s.get("max")),
                                      r.time_s.get("n", len(r.time_s.get("samples") or ()))) for r in recs]
        values = [[r.median_s if j == MEDIAN_COL - 1 else None for j in range(len(RECORD_COLUMNS) - 3)]
                  + [r.time_s.get("min"), r.time_s.get("max"), None] for r in recs]
        out += [_table(RECORD_COLUMNS, rows, f"records-{name}", [f"rec-{name}-{i}" for i in range(len(recs))],
                       values), "</section>"]
    if res.errors:
        out += ['<h2 id="errors">Errors</h2><ul>']
        out += [f"<li>{html.escape(e['experiment'])}: {_text(e['error'])}</li>" for e in res.errors] + ["</ul>"]
    out += [f"<script>{SCRIPT}</script>", "</body></html>"]
    return "\n".join(out)


def write_html(res: RunResults, out: Path, plots: dict[str, str] | None = None) -> Path:
    """Write report.html into `out`; plots already written there are embedded, else they are drawn first."""
    out.mkdir(parents=True, exist_ok=True)
    if plots is None:
        from .plots import write_plots

        plots = write_plots(res, out)
    path = out / "report.html"
    path.write_text(render(res, out, plots), encoding="utf-8")
    return path
