"""report.html as a reader gets it, from the hand-built run of tests/test_markdown_report.py: the header, sortable
tables whose cells sort by their exact values (data-v), a section per experiment with its findings linked to the
records they name, the plot embedded, a skipped experiment and the errors."""

from __future__ import annotations

from gpumemlab.bench.records import RunResults
from gpumemlab.report import html
from gpumemlab.report.format import seed_hardware_line
from test_markdown_report import a_run, rec

BODY = """\
<h1>gpumemlab report</h1>
<ul><li>Device: H100 (compute capability 9.0, 132 SMs, 50 MiB L2, 80 GiB)</li>
<li>Command: <code>gpumemlab run --only copy</code></li>
<li>Date: 2026-01-01; gpumemlab 1.0; wall time 12 s</li>
<li>Merged from another run of this GPU model: scan: from <code>gpumemlab run --only scan</code> \
(2026-01-02)</li>
</ul>
<nav><p><a href="#exp-offset_copy">offset_copy</a> | <a href="#exp-scan">scan</a> | <a \
href="#exp-p2p">p2p</a></p></nav>
<h2 id="ceilings">Ceilings</h2>
<table \
class="sortable"><thead><tr><th>ceiling</th><th>value</th><th>how</th></tr></thead><tbody><tr><td>copy_gbps</td\
><td data-v="5000.0">5,000.0 GB/s</td><td>copy kernel</td></tr><tr><td>read_gbps</td><td \
data-v="6000.0">6,000.0 GB/s</td><td>raised by scan / warp, run gpumemlab run --only scan (2026-01-02); the \
ceiling&#x27;s own measurement, read_sum, gave 5,500.0 GB/s</td></tr></tbody></table>
<h2 id="summary">Summary</h2>
<p>Median time (± half the p10-p90 spread), effective bandwidth (bytes each algorithm must move, read + write), \
percentage of the named ceiling, speedup over the experiment's naive variant and the analyzer's prediction. \
Click a header to sort. Flags: &#x27;median far from min&#x27; - the median stayed more than 5% above the \
fastest sample after one re-measure; &#x27;noisy&#x27; - the timer hit its time or sample limit before the \
p10-p90 spread fell to 1% of the median; &#x27;throttled&#x27; - NVML saw the clocks held down (power or \
thermal) while it was timed.</p>
<table class="sortable" \
id="summary-table"><thead><tr><th>experiment</th><th>variant</th><th>params</th><th>median</th><th>GB/s</th><th\
>GFLOP/s</th><th>% \
ceiling</th><th>speedup</th><th>model</th><th>ok</th><th>flags</th></tr></thead><tbody><tr><td>offset_copy</td>\
<td>naive</td><td>stride=2</td><td data-v="0.002">2.000 ms ±2%</td><td>4,194.3</td><td>-</td><td>84% \
copy</td><td>-</td><td>-</td><td>yes</td><td>-</td></tr><tr><td>offset_copy</td><td>vec4</td><td>stride=2</td><\
td data-v="0.001">1.000 ms ±2%</td><td>4,194.3</td><td>-</td><td>84% \
copy</td><td>2.00x</td><td>-</td><td>yes</td><td>noisy</td></tr><tr><td>scan</td><td>warp</td><td>-</td><td \
data-v="5e-06">5.0 us ±2%</td><td>-</td><td>12</td><td>-</td><td>-</td><td>2 wavefronts, \
2-way</td><td>no</td><td>-</td></tr></tbody></table>
<section class="experiment" id="exp-offset_copy">
<h2>offset_copy: Device copy</h2>
{items}
<img alt="offset_copy plot" src="data:image/png;base64,UE5H">
<table class="sortable" \
id="records-offset_copy"><thead><tr><th>variant</th><th>params</th><th>median</th><th>GB/s</th><th>GFLOP/s</th>\
<th>% \
ceiling</th><th>speedup</th><th>model</th><th>ok</th><th>flags</th><th>min</th><th>max</th><th>samples</th></tr\
></thead><tbody><tr id="rec-offset_copy-0"><td>naive</td><td>stride=2</td><td data-v="0.002">2.000 ms \
±2%</td><td>4,194.3</td><td>-</td><td>84% copy</td><td>-</td><td>-</td><td>yes</td><td>-</td><td \
data-v="0.00175">1.750 ms</td><td data-v="0.0025">2.500 ms</td><td>50</td></tr><tr \
id="rec-offset_copy-1"><td>vec4</td><td>stride=2</td><td data-v="0.001">1.000 ms \
±2%</td><td>4,194.3</td><td>-</td><td>84% copy</td><td>2.00x</td><td>-</td><td>yes</td><td>noisy</td><td \
data-v="0.000875">875.0 us</td><td data-v="0.00125">1.250 ms</td><td>50</td></tr></tbody></table>
</section>
<section class="experiment" id="exp-scan">
<h2>scan: Warp scan</h2>
<ul><li>Seed: 004</li><li>The seed reported: fast</li></ul>
<table class="sortable" \
id="records-scan"><thead><tr><th>variant</th><th>params</th><th>median</th><th>GB/s</th><th>GFLOP/s</th><th>% \
ceiling</th><th>speedup</th><th>model</th><th>ok</th><th>flags</th><th>min</th><th>max</th><th>samples</th></tr\
></thead><tbody><tr id="rec-scan-0"><td>warp</td><td>-</td><td data-v="5e-06">5.0 us \
±2%</td><td>-</td><td>12</td><td>-</td><td>-</td><td>2 wavefronts, 2-way</td><td>no</td><td>-</td><td \
data-v="4.5e-06">4.5 us</td><td data-v="6e-06">6.0 us</td><td>3</td></tr></tbody></table>
</section>
<section class="experiment" id="exp-p2p">
<h2>p2p: Peer copy</h2>
<ul><li>Not run on this GPU: needs two GPUs</li></ul></section>
<h2 id="errors">Errors</h2><ul>
<li>hist: VerificationError: wrong bins</li>
</ul>
"""


def test_report_html_of_a_run_with_every_kind_of_section(tmp_path):
    res = a_run()
    for r, (lo, hi) in zip(res.results, [(1.75e-3, 2.5e-3), (0.875e-3, 1.25e-3), (4.5e-6, 6e-6)]):
        r.time_s.update(min=lo, max=hi, samples=[lo, r.time_s["median"], hi])
    del res.results[2].time_s["n"]  # samples counts n (the runs keep a subset of the samples), else the kept list
    (tmp_path / "copy.png").write_bytes(b"PNG")  # embedded as base64: UE5H
    page = html.render(res, tmp_path, {"offset_copy": "copy.png"})
    assert page.startswith('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
                           "<title>gpumemlab report: H100</title>\n<style>")
    assert page.endswith("</script>\n</body></html>")
    body = page[page.index("<h1>"):page.index("<script>")]
    items = body.split("\n")[14]
    assert body == BODY.replace("{items}", items)
    hardware = seed_hardware_line("offset_copy", res.device, res.ceilings, res.results[:2])
    assert items.endswith(
        f"<li>{html._text(hardware)}</li><li class=\"finding\">Measured here: vec4 is 2x naive (<a "
        f"href=\"#records-offset_copy\">records</a>, <a href=\"#rec-offset_copy-0\">naive</a>, <a "
        f"href=\"#rec-offset_copy-1\">vec4</a>)</li><li>Why it differs on modern GPUs: caches differ</li></ul>")


def test_report_html_of_a_run_that_recorded_nothing_names_what_it_lacks():
    page = html.render(RunResults(meta={}, device={}, ceilings={}, results=[]))
    assert "<title>gpumemlab report: ?</title>" in page
    assert ("<li>Command: <code>?</code></li>\n<li>Date: ?; gpumemlab ?; wall time - s</li>\n</ul>\n"
            "<nav><p></p></nav>\n<h2 id=\"summary\">Summary</h2>") in page
    assert 'id="ceilings"' not in page and 'id="errors"' not in page


def test_untitled_sections_code_spans_and_escaped_merged_runs():
    recs = [rec("coalescing_patterns", "coalesced", 1e-3, params=dict(n=1 << 20))]
    res = RunResults(meta=dict(merged_runs=[dict(experiments=["a<b"], command="run & co", date="d")]),
                     device=dict(name="H100"), ceilings={}, results=recs,
                     experiments={"hist": dict(title="failed before a record"), "p2p": dict(skipped="needs two GPUs"),
                                  "coalescing_patterns": dict(findings=["`coalesced` beats <naive>"])})
    page = html.render(res)
    assert "<li>Merged from another run of this GPU model: a&lt;b: from <code>run &amp; co</code> (d)</li>" in page
    hardware = seed_hardware_line("coalescing_patterns", res.device, {}, recs)
    assert hardware != seed_hardware_line("coalescing_patterns", res.device, {}, [])  # the records' sizes count
    assert ('<section class="experiment" id="exp-coalescing_patterns">\n<h2>coalescing_patterns: </h2>\n'
            f"<ul><li>Seed: </li><li>The seed reported: </li><li>{html._text(hardware)}</li>"
            '<li class="finding">Measured here: <code>coalesced</code> beats &lt;naive&gt; (<a '
            'href="#records-coalescing_patterns">records</a>, <a href="#rec-coalescing_patterns-0">coalesced</a>)'
            "</li></ul>") in page
    assert 'id="exp-hist"' not in page
    assert '<section class="experiment" id="exp-p2p">\n<h2>p2p: </h2>\n<ul><li>Not run on this GPU: needs two ' \
           "GPUs</li></ul></section>" in page


def test_write_html_makes_the_folder_and_draws_the_plots_it_embeds(tmp_path):
    res = a_run()
    res.experiments["offset_copy"]["plot"] = dict(x="n", y="gbps", series="variant", logx=False, title="copy")
    out = tmp_path / "new" / "report"
    path = html.write_html(res, out)
    assert path == out / "report.html" and (out / "offset_copy.png").is_file()
    page = path.read_text(encoding="utf-8")
    assert f'<img alt="offset_copy plot" src="{html._data_uri(out / "offset_copy.png")}">' in page
    assert "2.000 ms ±2%" in page  # written as UTF-8


def test_report_html_names_each_claim_with_its_source_as_report_md_does():
    res = a_run()
    res.experiments["offset_copy"]["claims"] = [
        dict(text="offset 1 halves bandwidth", source="seed 003, Best Practices 9.2.1.3", seed="003"),
        dict(text="L2 absorbs it", source="Jia et al., Dissecting Volta")]
    page = html.render(res, None, {})
    assert ("<li>The seed reported (seed 003, Best Practices 9.2.1.3): offset 1 halves bandwidth</li>"
            "<li>Outside reference (Jia et al., Dissecting Volta): L2 absorbs it</li>") in page
    assert "<li>Seed: " not in page.split('id="exp-offset_copy"')[1].split("</section>")[0]


def test_report_html_is_utf_8_under_a_c_locale(tmp_path):
    import locale

    res = a_run()
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # a locale whose default encoding is ASCII
    try:
        path = html.write_html(res, tmp_path, plots={})
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert "2.000 ms \u00b12%".encode() in path.read_bytes()  # not the locale's encoding
