"""The text report/format.py puts in every report: times, numbers, parameters, the analyzer's prediction, the claims
and the seed's hardware, merged runs, how a ceiling was measured, and a record's summary row."""

from __future__ import annotations

import pytest

from gpumemlab.bench.records import Record
from gpumemlab.report import format as fmt


@pytest.mark.parametrize("seconds, text", [
    (None, "-"), (2.5e-7, "0.2 us"), (999e-6, "999.0 us"), (1e-3, "1.000 ms"), (0.5, "500.000 ms"),
    (0.9999, "999.900 ms"), (1.0, "1.000 s"), (12.3456, "12.346 s"),
])
def test_times_switch_unit_at_a_millisecond_and_a_second(seconds, text):
    assert fmt.fmt_time(seconds) == text


def test_numbers_params_and_flags():
    assert (fmt.fmt_num(None), fmt.fmt_num(1234.56), fmt.fmt_num(1234.56, 0)) == ("-", "1,234.6", "1,235")
    assert fmt.fmt_params(dict(n=1 << 20, mib=4, stride=2, dtype="float32")) == "stride=2, dtype=float32"
    assert fmt.fmt_params(dict(n=4)) == "-" and fmt.fmt_params({}) == "-"
    assert fmt.flag_text(Record("e", "v", {}, None, None, {"median": 1.0}, None, None, None, None, True,
                                flags=["noisy", "throttled"])) == "noisy, throttled"


@pytest.mark.parametrize("model, text", [
    (None, "-"), ({}, "-"), (dict(error="no model"), "n/a"), (dict(ways=1), "-"),
    (dict(sectors_per_request=4.0, efficiency_pct=100.0), "4 sect/req, 100% eff"),
    (dict(sectors_per_request=4.5, efficiency_pct=88.9), "4.5 sect/req, 89% eff"),
    (dict(wavefronts=2, ways=2), "2 wavefronts, 2-way"),
    (dict(wavefronts=1, ways=1), "1 wavefronts"),
    (dict(op_per_byte=0.25, occupancy_pct=62.5), "0.25 OP/B, 62% occ"),
    (dict(sectors_per_request=4, efficiency_pct=50.0, wavefronts=3, ways=3, op_per_byte=8, occupancy_pct=100.0),
     "4 sect/req, 50% eff, 3 wavefronts, 3-way, 8 OP/B, 100% occ"),
])
def test_the_analyzer_s_prediction_in_a_few_characters(model, text):
    assert fmt.fmt_model(model) == text


def test_claims_with_their_sources_and_the_legacy_seed_lines():
    info = dict(claims=[dict(seed=True, source="seed 003", text="4 of 5 sectors"),
                        dict(seed=None, source="Volkov 2010", text="ILP hides latency")])
    assert fmt.claim_lines(info) == ["The seed reported (seed 003): 4 of 5 sectors",
                                     "Outside reference (Volkov 2010): ILP hides latency"]
    assert fmt.claim_lines(dict(seed="003 offsetCopy", seed_claim="80%")) == ["Seed: 003 offsetCopy",
                                                                             "The seed reported: 80%"]
    assert fmt.claim_lines({}) == ["Seed: ", "The seed reported: "]


def test_seed_hardware_sits_next_to_this_run_s_own_values():
    dev = dict(name="H100", l2_bytes=50 * 2**20, sm_count=132)
    line = fmt.seed_hardware_line("offset_copy", dev, {"copy_gbps": dict(value=3000.0, unit="GB/s")}, [])
    assert line == ("Seed hardware: NVIDIA Tesla V100 (DRAM peak 898 GB/s: seed 003, Best Practices 9.1; device copy "
                    "~790 GB/s: seed 003, Best Practices 9.2.1.3, offsetCopy; SMs 80, L2 6 MB: outside, NVIDIA, "
                    "'NVIDIA Tesla V100 GPU Architecture' whitepaper (2017)) - this run: H100 (device copy 3,000 GB/s, "
                    "SMs 132, L2 50 MiB)")
    assert fmt.seed_hardware_line("offset_copy", {}, {}, []).endswith(" - this run: ?")
    assert fmt.seed_hardware_line("offset_copy", dict(name="H200"), {}, []).endswith(" - this run: H200")
    assert fmt.seed_hardware_line("offset_copy", dict(sm_count=132), {}, []).endswith(" - this run: ? (SMs 132)")
    assert fmt.seed_hardware_line("no_such_experiment", dev, {}, []) is None
    assert ("(page-locked host-device copy 3.2 GB/s on Gen1, 5.2 GB/s on Gen2: seed 001, slide"  # two figures, one label
            in fmt.seed_hardware_line("transfer_bandwidth", {}, {}, []))


def test_merged_runs_each_in_one_sentence():
    meta = dict(merged_runs=[dict(experiments=["copy", "scan"], command="gpumemlab run --only copy", date="d1"),
                             dict()])
    assert fmt.merged_lines(meta) == ["copy, scan: from `gpumemlab run --only copy` (d1)",
                                      ": from `?` (date not recorded)"]
    assert fmt.merged_lines(meta, code=str.upper, escape=lambda t: t.replace(" ", "_")) == [
        "copy,_scan:_from_GPUMEMLAB RUN --ONLY COPY_(d1)", ":_from_?_(date_not_recorded)"]
    assert fmt.merged_lines({}) == []


def test_how_a_ceiling_was_measured_or_which_record_raised_it():
    meta = dict(command="gpumemlab run", date="d0", merged_runs=[dict(experiments=["reduce"], command="gpumemlab run "
                                                                      "--only reduce", date="d1")])
    assert fmt.ceiling_how(dict(value=1.0, how="read_sum kernel"), meta) == "read_sum kernel"
    assert fmt.ceiling_how(dict(value=1.0), meta) == ""
    raised = dict(value=1060.0, unit="GB/s", how="read_sum kernel", measured_as=1000.0,
                  set_by=dict(experiment="reduce", variant="gpumemlab.sum", params=dict(n=8, dtype="float32")))
    assert fmt.ceiling_how(raised, meta) == (
        "raised by reduce / gpumemlab.sum (dtype=float32), run gpumemlab run --only reduce (d1); the ceiling's own "
        "measurement, read_sum kernel, gave 1,000.0 GB/s")
    bare = dict(value=5.0, set_by=dict(experiment="copy", variant="vec4", params=dict(n=8)))
    assert fmt.ceiling_how(bare, meta) == ("raised by copy / vec4, run gpumemlab run (d0); the ceiling's own "
                                           "measurement, ?, gave - ")


def test_a_summary_row_states_each_column():
    rec = Record("copy", "cudaMemcpy", dict(n=1 << 20, stride=2), 8 << 20, None,
                 dict(median=2e-3, rel_spread=0.1), 4194.3, None, 83.6, "copy_gbps", False, kind="baseline",
                 model=dict(sectors_per_request=4.0), speedup_vs_naive=1.5, flags=["noisy"])
    assert fmt.summary_row(rec) == ("copy", "cudaMemcpy (baseline)", "stride=2", "2.000 ms ±5%", "4,194.3", "-",
                                    "84% copy", "1.50x", "4 sect/req", "no", "noisy")
    mm = Record("matmul", "tiled", {}, None, 2e9, dict(median=1e-3), None, 2000.4, 40.0, "sgemm_gflops", True)
    assert fmt.summary_row(mm) == ("matmul", "tiled", "-", "1.000 ms", "-", "2,000", "40% sgemm", "-", "-", "yes", "-")
    # a p10-p90 spread of 5% is +-2.5%, printed to the even whole percent; no ceiling: no percentage
    host = Record("pack", "pinned", {}, None, None, dict(median=1e-3, rel_spread=0.05), None, None, None, None, True)
    assert fmt.summary_row(host)[3:7] == ("1.000 ms ±2%", "-", "-", "-")
