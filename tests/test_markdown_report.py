"""report.md as a reader gets it: a hand-built run of every kind of section (merged runs, a raised ceiling, the
summary with its flags and model column, claims old and new, the seed's hardware, findings, a plot, a skipped
experiment, errors) rendered whole; and the report of a run that recorded nothing."""

from __future__ import annotations

from gpumemlab.bench.records import Record, RunResults
from gpumemlab.report import markdown
from gpumemlab.report.format import seed_hardware_line


def rec(experiment: str, variant: str, median: float, **fields) -> Record:
    """A record of 8 MiB moved at 4,194.3 GB/s, 84% of the copy ceiling, its min 10% below and max 20% above the
    median, a p10-p90 spread of 4% (+-2%); ``fields`` replace any of these."""
    base = dict(params=dict(n=1 << 20, stride=2), bytes=8 << 20, flops=None, gbps=4194.3, gflops=None,
                time_s=dict(median=median, min=median * 0.9, max=median * 1.2, n=50, rel_spread=0.04),
                pct_of_ceiling=83.9, ceiling="copy_gbps", verified=True)
    return Record(experiment, variant, **{**base, **fields})


def a_run() -> RunResults:
    return RunResults(
        meta=dict(command="gpumemlab run --only copy", date="2026-01-01", version="1.0", wall_s=12.4,
                  merged_runs=[dict(experiments=["scan"], command="gpumemlab run --only scan", date="2026-01-02")]),
        device=dict(name="H100", cc=[9, 0], sm_count=132, l2_bytes=50 * 2**20, total_memory_bytes=80 * 2**30),
        ceilings={"copy_gbps": dict(value=5000.0, unit="GB/s", how="copy kernel"),
                  "read_gbps": dict(value=6000.0, unit="GB/s", how="read_sum", measured_as=5500.0,
                                    set_by=dict(experiment="scan", variant="warp", params=dict(n=4)))},
        results=[rec("offset_copy", "naive", 2e-3),
                 rec("offset_copy", "vec4", 1e-3, speedup_vs_naive=2.0, flags=["noisy"],
                     baselines={"cudaMemcpy": dict(median_s=0.9e-3, ratio=0.9),
                                "cupy": dict(median_s=1e-3, ratio=1.1)}),
                 rec("scan", "warp", 5e-6, params={}, gbps=None, gflops=12.5, pct_of_ceiling=None, ceiling=None,
                     verified=False, model=dict(wavefronts=2, ways=2))],
        experiments={"offset_copy": dict(title="Device copy", findings=["vec4 is 2x naive"], wall_s=3.2,
                                         claims=[dict(seed=True, source="seed 003", text="80% of peak")],
                                         modern_note="caches differ"),
                     # written before claims had sources: seed and seed_claim
                     "scan": dict(title="Warp scan", seed="004", seed_claim="fast"),
                     "p2p": dict(title="Peer copy", skipped="needs two GPUs")},
        errors=[dict(experiment="hist", error="VerificationError: wrong bins")])


REPORT = """\
# gpumemlab report

- Device: H100 (compute capability 9.0, 132 SMs, 50 MiB L2, 80 GiB)
- Command: `gpumemlab run --only copy`
- Date: 2026-01-01; gpumemlab 1.0; wall time 12 s
- Merged from another run of this GPU model: scan: from `gpumemlab run --only scan` (2026-01-02)

## Ceilings

| ceiling | value | how |
|---|---|---|
| copy_gbps | 5,000.0 GB/s | copy kernel |
| read_gbps | 6,000.0 GB/s | raised by scan / warp, run gpumemlab run --only scan (2026-01-02); the ceiling's \
own measurement, read_sum, gave 5,500.0 GB/s |

## Summary

Median time (± half the p10-p90 spread), effective bandwidth (bytes each algorithm must move, read + write), \
percentage of the named ceiling, speedup over the experiment's naive variant, and the analyzer's prediction \
for the main access. Flags: 'median far from min' - the median stayed more than 5% above the fastest sample \
after one re-measure; 'noisy' - the timer hit its time or sample limit before the p10-p90 spread fell to 1% \
of the median; 'throttled' - NVML saw the clocks held down (power or thermal) while it was timed.

| experiment | variant | params | median | GB/s | GFLOP/s | % ceiling | speedup | model | ok | flags |
|---|---|---|---|---|---|---|---|---|---|---|
| offset_copy | naive | stride=2 | 2.000 ms ±2% | 4,194.3 | - | 84% copy | - | - | yes | - |
| offset_copy | vec4 | stride=2 | 1.000 ms ±2% | 4,194.3 | - | 84% copy | 2.00x | - | yes | noisy |
| scan | warp | - | 5.0 us ±2% | - | 12 | - | - | 2 wavefronts, 2-way | no | - |

## offset_copy: Device copy

- The seed reported (seed 003): 80% of peak
{hardware}
- Measured here: vec4 is 2x naive
- Why it differs on modern GPUs: caches differ
- Run time of the experiment: 3 s (checks, warm-up and timing)

| variant | params | median | min | max | samples | GB/s | GFLOP/s | speedup | vs baseline |
|---|---|---|---|---|---|---|---|---|---|
| naive | n=1048576, stride=2 | 2.000 ms | 1.800 ms | 2.400 ms | 50 | 4,194.3 | - | - | - |
| vec4 | n=1048576, stride=2 | 1.000 ms | 900.0 us | 1.200 ms | 50 | 4,194.3 | - | 2.00x | cudaMemcpy: 0.90x; \
cupy: 1.10x |

![offset_copy](copy.png)

## scan: Warp scan

- Seed: 004
- The seed reported: fast

| variant | params | median | min | max | samples | GB/s | GFLOP/s | speedup | vs baseline |
|---|---|---|---|---|---|---|---|---|---|
| warp |  | 5.0 us | 4.5 us | 6.0 us | 50 | - | 12 | - | - |

## p2p: Peer copy

- Not run on this GPU: needs two GPUs

## Errors

- hist: VerificationError: wrong bins
"""


def test_report_md_of_a_run_with_every_kind_of_section():
    res = a_run()
    hardware = "- " + seed_hardware_line("offset_copy", res.device, res.ceilings,
                                         [r for r in res.results if r.experiment == "offset_copy"])
    assert markdown.render(res, {"offset_copy": "copy.png"}) == REPORT.replace("{hardware}", hardware)


def test_report_md_of_a_run_that_recorded_nothing():
    text = markdown.render(RunResults(meta={}, device={}, ceilings={}, results=[]))
    assert text.startswith("# gpumemlab report\n\n- Device: ? (compute capability , ? SMs, 0 MiB L2, 0 GiB)\n"
                           "- Command: `?`\n- Date: ?; gpumemlab ?; wall time - s\n\n## Summary\n\n")
    assert text.endswith("| experiment | variant | params | median | GB/s | GFLOP/s | % ceiling | speedup | model | ok "
                         "| flags |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    assert "## Ceilings" not in text and "## Errors" not in text


def test_sections_without_a_title_after_an_experiment_that_recorded_nothing():
    # a baseline entry without a ratio (attach_baseline leaves it out when our time is 0) still renders
    recs = [rec("coalescing_patterns", "coalesced", 1e-3, params=dict(n=1 << 20), baselines={"cuBLAS": {}})]
    res = RunResults(meta={}, device=dict(name="H100"), ceilings={}, results=recs,
                     experiments={"hist": dict(title="failed before a record"), "coalescing_patterns": {},
                                  "p2p": dict(skipped="needs two GPUs")})
    text = markdown.render(res)
    hardware = seed_hardware_line("coalescing_patterns", res.device, {}, recs)
    assert hardware != seed_hardware_line("coalescing_patterns", res.device, {}, [])  # the records' sizes count
    assert "## hist" not in text and "| cuBLAS: - |" in text
    assert f"## coalescing_patterns: \n\n- Seed: \n- The seed reported: \n- {hardware}\n\n| variant |" in text
    assert text.endswith("## p2p: \n\n- Not run on this GPU: needs two GPUs\n")


def test_a_cell_s_bar_is_escaped_so_the_row_keeps_its_columns():
    assert markdown._table(("a", "b"), [("x|y", 2)]) == "| a | b |\n|---|---|\n| x\\|y | 2 |"
