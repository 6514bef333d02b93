"""report.html as a reader gets it, from the hand-built run of tests/test_markdown_report.py: the header, sortable
tables whose cells sort by their exact values (data-v), a section per experiment with its findings linked to the
records they name, the plot embedded, a skipped experiment and the errors."""

from __future__ import annotations

from gpumemlab.report import html
from gpumemlab.report.format import seed_hardware_line
from test_markdown_report import a_run

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
data-v="0.00175">1.750 ms</td><td data-v="0.0025">2.500 ms</td><td>3</td></tr><tr \
id="rec-offset_copy-1"><td>vec4</td><td>stride=2</td><td data-v="0.001">1.000 ms \
±2%</td><td>4,194.3</td><td>-</td><td>84% copy</td><td>2.00x</td><td>-</td><td>yes</td><td>noisy</td><td \
data-v="0.000875">875.0 us</td><td data-v="0.00125">1.250 ms</td><td>3</td></tr></tbody></table>
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
