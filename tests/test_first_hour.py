"""A new user's first hour, without a GPU: every bad input ends in one line (exit 2, or 1 for a run that failed),
never a traceback; impossible numbers in results files and flags are refused naming the field; legal but
suspicious analyzer input is answered with a one-line warning. CLI cases run in-process."""

from __future__ import annotations

import errno
import json
import warnings
from pathlib import Path

import pytest

import gpumemlab.model as M
from gpumemlab.errors import AnalyzerWarning, UsageError

A = ("a[threadIdx.x]", "--decl", "float a[]")
LONG = "x" * 300  # longer than any file name the file system takes (ENAMETOOLONG)


# ---------------------------------------------------------------- a small valid results.json, then one thing wrong

def record(experiment="copy", variant="v1", median=1e-3, **extra) -> dict:
    time_s = dict(median=median, min=median * 0.9, max=median * 1.2, p10=median * 0.95, p90=median * 1.1,
                  mean=median, stdev=1e-5, rel_spread=0.01, samples=[median * 0.95, median, median * 1.1])
    rec = dict(experiment=experiment, variant=variant, params=dict(n=1024), bytes=8192, flops=None, time_s=time_s,
               gbps=8192 / median / 1e9, gflops=None, pct_of_ceiling=50.0, ceiling="copy_gbps", verified=True,
               kind="kernel", baselines={}, speedup_vs_naive=None)
    rec.update(extra)
    return rec


def document(*recs) -> dict:
    return dict(schema=2, meta=dict(date="2026-01-01", command="gpumemlab bench"), device=dict(name="FakeGPU"),
                ceilings=dict(copy_gbps=dict(value=1000.0, unit="GB/s", how="fake")), experiments={}, errors=[],
                results=list(recs) or [record(), record(variant="v2", median=2e-3)])


def edited(fn) -> dict:
    d = document()
    fn(d)
    return d


def _times(**kw):
    return lambda d: d["results"][0]["time_s"].update(kw)


def _field(**kw):
    return lambda d: d["results"][0].update(kw)


NAN, INF = float("nan"), float("inf")
WHERE = "record 0 (copy / v1)"
BAD_NUMBERS = [  # (edit, words of the one line)
    (_times(median=NAN), f"{WHERE} time_s: field 'median' is nan: expected a finite number"),
    (_times(median=INF), f"{WHERE} time_s: field 'median' is inf: expected a finite number"),
    (_times(median=-INF), "field 'median' is -inf: expected a finite number"),
    (_times(median=0.0), f"{WHERE} time_s: field 'median' is 0.0: expected a number > 0"),
    (_times(median=0), "field 'median' is 0: expected a number > 0"),
    (_times(median=-1e-3), "field 'median' is -0.001: expected a number > 0"),
    (_times(min=NAN), "field 'min' is nan"),
    (_times(min=-1e-9), "field 'min' is -1e-09: expected a number >= 0"),
    (_times(max=INF), "field 'max' is inf"),
    (_times(p10=-1.0), "field 'p10' is -1.0"),
    (_times(p90=NAN), "field 'p90' is nan"),
    (_times(mean=0.0), "field 'mean' is 0.0"),
    (_times(stdev=-1e-6), "field 'stdev' is -1e-06: expected a number >= 0"),
    (_times(stdev=NAN), "field 'stdev' is nan"),
    (_times(rel_spread=INF), "field 'rel_spread' is inf"),
    (_times(samples=[1e-3, NAN]), f"{WHERE} time_s: samples[1] is nan: expected a finite number"),
    (_times(samples=[INF]), "samples[0] is inf: expected a finite number"),
    (_times(samples=[-1e-3, 1e-3]), "samples[0] is -0.001: expected a number >= 0"),
    (_times(samples=["fast"]), "samples[0] is string, expected number"),
    (_times(samples=[None]), "samples[0] is null, expected number"),
    (_times(min=2e-3), f"{WHERE} time_s: min 0.002 is above p10"),
    (_times(max=5e-4), "is above max 0.0005"),
    (_times(p10=1.05e-3), "p10 0.00105 is above median 0.001"),
    (_times(median="1ms"), "field 'median' is string '1ms', expected number"),
    (_times(median=True), "field 'median' is boolean True, expected number"),
    (_field(gbps=NAN), f"{WHERE}: field 'gbps' is nan"),
    (_field(gbps=0.0), f"{WHERE}: field 'gbps' is 0.0: expected a number > 0"),
    (_field(gbps=-5.0), "field 'gbps' is -5.0"),
    (_field(gflops=INF), "field 'gflops' is inf"),
    (_field(pct_of_ceiling=-1.0), "field 'pct_of_ceiling' is -1.0: expected a number >= 0"),
    (_field(pct_of_ceiling=NAN), "field 'pct_of_ceiling' is nan"),
    (_field(bytes=-8), "field 'bytes' is -8: expected a number >= 0"),
    (_field(flops=NAN), "field 'flops' is nan"),
    (_field(speedup_vs_naive=0.0), "field 'speedup_vs_naive' is 0.0"),
    (_field(baselines=dict(cupy=dict(median_s=0.0))), f"{WHERE} baseline 'cupy': field 'median_s' is 0.0"),
    (_field(baselines=dict(cupy=dict(median_s=1e-3, ratio=NAN))), "baseline 'cupy': field 'ratio' is nan"),
    (_field(baselines=dict(cupy=5)), "baseline 'cupy': expected an object, got integer"),
    (lambda d: d["ceilings"]["copy_gbps"].update(value=0.0), "ceiling 'copy_gbps': field 'value' is 0.0: expected a "
                                                               "number > 0"),
    (lambda d: d["ceilings"]["copy_gbps"].update(value=NAN), "ceiling 'copy_gbps': field 'value' is nan"),
    (lambda d: d["ceilings"]["copy_gbps"].update(value=-1000.0), "field 'value' is -1000.0"),
    (lambda d: d["ceilings"]["copy_gbps"].update(value=INF), "field 'value' is inf"),
    (lambda d: d["ceilings"]["copy_gbps"].update(measured_as=NAN), "ceiling 'copy_gbps': field 'measured_as' is nan"),
    (lambda d: d["meta"].update(deep=json.loads("[" * 70 + "]" * 70)), "lists and objects nested more than 64 deep"),
]


@pytest.mark.parametrize("edit, words", BAD_NUMBERS)
@pytest.mark.parametrize("command", ["report", "compare"])
def test_an_impossible_number_in_a_results_file_is_one_line_naming_the_field(run_cli, tmp_path, command, edit, words):
    bad = tmp_path / "bad" / "results.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(edited(edit)))
    good = tmp_path / "good" / "results.json"
    good.parent.mkdir()
    good.write_text(json.dumps(document()))
    argv = ["report", str(bad)] if command == "report" else ["compare", str(good), str(bad), "--fail-below", "0.5"]
    code, out, err = run_cli(*argv)
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"gpumemlab {command}: {bad}: ") and words in err
    assert sorted(p.name for p in bad.parent.iterdir()) == ["results.json"]  # nothing rendered


def test_deeply_nested_json_is_one_line_not_a_recursion_error(run_cli, tmp_path):
    deep = tmp_path / "results.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for argv in (["report", str(deep)], ["compare", str(deep), str(deep)]):
        code, _, err = run_cli(*argv)
        assert code == 2 and err == (f"gpumemlab {argv[0]}: {deep}: not a gpumemlab results.json (nested too deeply "
                                     "to be one)\n")
    code, _, err = run_cli("tune", "reduce", "--table", str(deep))
    assert code == 2 and err == f"gpumemlab tune: {deep} is not a tuned table (nested too deeply to be one)\n"


# ---------------------------------------------------------------- compare: NaN is never a tie

def test_compare_in_python_refuses_nan_zero_and_negative_medians():
    from gpumemlab.bench.records import Record
    from gpumemlab.report.compare import compare_records

    good = Record.from_dict(record())
    for median, words in ((NAN, "'median' is nan: expected a finite number"), (0.0, "'median' is 0.0: expected a "
                          "number > 0"), (-1e-3, "'median' is -0.001: expected a number > 0")):
        bad = Record.from_dict(record(median=1e-3))
        bad.time_s["median"] = median
        for a, b in ((good, bad), (bad, good)):
            with pytest.raises(UsageError) as info:
                compare_records(a, b)
            assert str(info.value) == f"copy/v1 time_s: {words}"
    no_spread = Record.from_dict(record())
    del no_spread.time_s["p10"]
    with pytest.raises(UsageError, match=r"copy/v1 time_s: no 'p10' for the p10-p90 spread \(try --spread min-max\)"):
        compare_records(good, no_spread)
    assert compare_records(good, no_spread, spread="min-max").verdict == "tie"
    at_resolution = Record.from_dict(record())
    at_resolution.time_s.update(min=0.0, p10=0.0)  # legal in a file (a sample at the timer's resolution)
    for a, b in ((good, at_resolution), (at_resolution, good)):  # but no ratio range can be drawn from it
        with pytest.raises(UsageError, match=r"^copy/v1 time_s: 'p10' is 0.0: expected a number > 0$"):
            compare_records(a, b)


def test_a_real_regression_still_fails_below_and_a_tie_does_not(run_cli, tmp_path):
    paths = []
    for name, median in (("a", 1e-3), ("b", 2e-3)):  # B twice as slow, spreads far apart
        path = tmp_path / name / "results.json"
        path.parent.mkdir()
        path.write_text(json.dumps(document(record(median=median))))
        paths.append(str(path))
    code, _, err = run_cli("compare", *paths, "--fail-below", "0.9")
    assert code == 1 and err == "gpumemlab compare: 1 records below 0.9: copy/v1 (0.500)\n"
    code, _, err = run_cli("compare", paths[0], paths[0], "--fail-below", "0.9")
    assert (code, err) == (0, "")


# ---------------------------------------------------------------- the CLI: one line, exit 2

def _results(tmp: Path) -> str:
    path = tmp / "ok" / "results.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(document()))
    return str(path)


def _a_file(tmp: Path) -> str:
    path = tmp / "a-file"
    path.write_text("x")
    return str(path)


R = "{results}"  # replaced by a valid results.json
F = "{file}"  # replaced by a plain file
CLI_CASES = [  # (argv, code, words of the one stderr line)
    # numbers in flags
    (["intensity", "--peak-gflops", "nan", "--bandwidth-gbs", "100"], 2, "--peak-gflops: must be positive and finite, got 'nan'"),
    (["intensity", "--peak-gflops", "inf", "--bandwidth-gbs", "100"], 2, "--peak-gflops: must be positive and finite, got 'inf'"),
    (["intensity", "--peak-gflops=-inf", "--bandwidth-gbs", "100"], 2, "must be positive and finite, got '-inf'"),
    (["intensity", "--peak-gflops", "0", "--bandwidth-gbs", "100"], 2, "--peak-gflops: must be positive and finite, got '0'"),
    (["intensity", "--peak-gflops", "-1", "--bandwidth-gbs", "100"], 2, "got '-1'"),
    (["intensity", "--peak-gflops", "1e999", "--bandwidth-gbs", "100"], 2, "got '1e999'"),
    (["intensity", "--peak-gflops", "NaN", "--bandwidth-gbs", "100"], 2, "got 'NaN'"),
    (["intensity", "--peak-gflops", "100", "--bandwidth-gbs", "nan"], 2, "--bandwidth-gbs: must be positive and finite, got 'nan'"),
    (["intensity", "--peak-gflops", "100", "--bandwidth-gbs", "inf"], 2, "--bandwidth-gbs: must be positive and finite"),
    (["intensity", "--peak-gflops", "100", "--bandwidth-gbs", "0"], 2, "--bandwidth-gbs: must be positive and finite, got '0'"),
    (["intensity", "--peak-gflops", "100", "--bandwidth-gbs", "-3.5"], 2, "got '-3.5'"),
    (["intensity", "--peak-gflops", "100", "--bandwidth-gbs", ""], 2, "--bandwidth-gbs: not a number: ''"),
    (["intensity", "--peak-gflops", "1,000", "--bandwidth-gbs", "100"], 2, "--peak-gflops: not a number: '1,000'"),
    (["intensity", "--tile", "1.5"], 2, "--tile: invalid int value: '1.5'"),
    (["intensity", "--coarsen", "-2"], 2, "coarsen=-2"),
    (["intensity", "naive", "--coarsen", "2"], 2, "naive has no coarsening"),
    (["intensity", ""], 2, "unknown kernel '' for intensity"),
    (["intensity", " "], 2, "unknown kernel ' ' for intensity"),
    (["intensity", "--device", ""], 2, "unknown device ''"),
    (["compare", R, R, "--fail-below", "nan"], 2, "--fail-below: must be positive and finite, got 'nan'"),
    (["compare", R, R, "--fail-below", "inf"], 2, "--fail-below: must be positive and finite, got 'inf'"),
    (["compare", R, R, "--fail-below", "0"], 2, "--fail-below: must be positive and finite, got '0'"),
    (["compare", R, R, "--fail-below", "-1"], 2, "got '-1'"),
    (["compare", R, R, "--fail-below", "x"], 2, "--fail-below: not a number: 'x'"),
    (["compare", R, R, "--outlier-rel", "nan"], 2, "--outlier-rel: must be positive and finite"),
    (["compare", R, R, "--outlier-rel", "0.1"], 2, "--outlier-rel applies to three or more runs"),
    (["compare", R, R, R, "--spread", "min-max"], 2, "--spread applies to two runs"),
    (["compare", R], 2, "needs at least two results.json files"),
    (["compare", R, R, "--spread", "p5-p95"], 2, "invalid choice: 'p5-p95'"),
    (["occupancy", "--threads", "nan", "--regs", "32"], 2, "--threads: invalid int value: 'nan'"),
    (["occupancy", "--threads", "256", "--regs", "inf"], 2, "--regs: invalid int value: 'inf'"),
    (["occupancy", "--threads", "256", "--regs", "32", "--smem", "1e3"], 2, "--smem: invalid int value: '1e3'"),
    (["occupancy", "--threads", "256", "--regs", "32", "--barriers", "17"], 2, "named barriers per block must be 0..16, got 17"),
    (["occupancy", "--threads", "256", "--regs", "32", "--carveout", "999999999"], 2, "carve-out 999999999 bytes exceeds"),
    (["occupancy", "--threads", "256", "--regs", "256"], 2, "registers per thread must be 0..255, got 256"),
    (["occupancy", "--threads", "1025", "--regs", "32"], 2, "1025 threads per block: CUDA allows at most 1024"),
    (["analyze", *A, "--offset", "-4"], 2, "--offset must be >= 0 bytes"),
    (["analyze", *A, "--offset", "2000000000000"], 2, "--offset must be at most"),
    (["analyze", *A, "--offset", "nan"], 2, "--offset: invalid int value: 'nan'"),
    (["analyze", *A, "--cc", "nan"], 2, "bad compute capability 'nan'"),
    (["analyze", *A, "--cc", "inf"], 2, "bad compute capability 'inf'"),
    (["analyze", *A, "--cc", "-9.0"], 2, "bad compute capability '-9.0'"),
    # empty and odd launch dimensions: an error (C has no empty dimension)
    (["analyze", *A, "--block", "32,,1"], 2, "bad block '32,,1': dimension 2 is empty; expected X[,Y[,Z]]"),
    (["analyze", *A, "--block", "32,"], 2, "bad block '32,': dimension 2 is empty"),
    (["analyze", *A, "--block", ",32"], 2, "bad block ',32': dimension 1 is empty"),
    (["analyze", *A, "--block", ""], 2, "bad block '': dimension 1 is empty"),
    (["analyze", *A, "--block", "32x"], 2, "bad block '32x': dimension 2 is empty"),
    (["analyze", *A, "--block", "32,8,,"], 2, "dimension 3 is empty"),
    (["analyze", *A, "--grid", "4,,2"], 2, "bad grid '4,,2': dimension 2 is empty"),
    (["analyze", *A, "--block-idx", "0,,0"], 2, "bad block index '0,,0': dimension 2 is empty"),
    (["analyze", *A, "--block", "32.0"], 2, "bad block '32.0': expected X[,Y[,Z]] integers"),
    (["analyze", *A, "--block", "1e2"], 2, "bad block '1e2': expected X[,Y[,Z]] integers"),
    (["analyze", *A, "--block", "0x20"], 2, "bad block '0x20'"),
    (["analyze", *A, "--grid", "-1"], 2, "bad grid '-1'"),
    (["analyze", *A, "--grid", "1,70000"], 2, "grid 1x70000x1: CUDA allows at most"),
    (["analyze", *A, "--block", "1024,2"], 2, "block 1024x2x1 has 2048 threads"),
    (["analyze", *A, "--block", "1,1,65"], 2, "block 1x1x65"),
    # lets with a type
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "float i=1"], 2, "bad --let 'float i=1': 'float' is not a C integer type"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "unsigned signed i=1"], 2, "'unsigned signed' is not a C integer type"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "int =1"], 2, "bad --let name 'int': expected a C identifier"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "unsigned=1"], 2, "bad --let name 'unsigned'"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "int 2i=1"], 2, "bad --let name '2i'"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "int threadIdx=1"], 2, "threadIdx is a CUDA built-in"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "int i="], 2, "empty --let i"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "int i=1.5"], 2, "floating-point literal '1.5'"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "=1"], 2, "bad --let name ''"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "i=j", "--let", "j=1"], 2, "unknown name 'j'"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "int i=2147483647 + (int)threadIdx.x"], 2, "signed overflow"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "long i=1 << 40"], 2, "shift count 40 out of range 0..31"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "i=threadIdx.x % 0"], 2, "division by zero"),
    (["analyze", "a[threadIdx.x]", "--decl", "float a[]", "--active", "threadIdx.x > 5000"], 2, "selects none of the block's 256"),
    (["analyze", "a[threadIdx.x]", "--decl", "float a[", ], 2, "cannot parse declaration 'float a['"),
    (["analyze", "a[threadIdx.x]", "--decl", "float a[0]"], 2, "array dimensions must be positive, got 0"),
    (["analyze", "a[threadIdx.x]", "--decl", "float a[][]"], 2, "only the first dimension may be left empty"),
    (["analyze", "a[threadIdx.x]", "--decl", "float *a[4]"], 2, "arrays of pointers are not supported"),
    (["analyze", "a[threadIdx.x].q", "--decl", "float4 a[]"], 2, "float4 has no member .q"),
    (["analyze", "a[threadIdx.x].x", "--decl", "float a[]"], 2, "float has no member .x"),
    (["analyze", "s[threadIdx.x + 32]", "--decl", "__shared__ float s[32]"], 2, "index 1 of s is 32 for thread 0, outside 0..31"),
    (["analyze", "s[-1]", "--decl", "__shared__ float s[32]"], 2, "index 1 of s is -1 for thread 0, outside 0..31"),
    (["analyze", "a[threadIdx.x]", "--decl", "float4 a[]", "--offset", "4"], 2, "misaligned access"),
    (["analyze", "a[" + "(" * 40 + "1" + ")" * 40 + "]", "--decl", "float a[]"], 2, "nested more than 32 levels deep"),
    (["analyze", "a[" + "1+" * 5000 + "1]", "--decl", "float a[]"], 2, "characters long: at most 4096"),
    # paths: too long, not files, not folders
    (["report", LONG], 2, "cannot read (File name too long)"),
    (["report", R, "--out", LONG], 2, "(300 characters): cannot write there (File name too long)"),
    (["report", R, "--format", "csv", "--out", LONG], 2, "cannot write there (File name too long)"),
    (["report", R, "--format", "html", "--out", LONG], 2, "cannot write there (File name too long)"),
    (["report", R, "--out", "/dev/null"], 2, "--out /dev/null: is a file, not a folder"),
    (["report", R, "--out", "/proc/no/such"], 2, "--out /proc/no/such: cannot write there"),
    (["report", R, "--out", F], 2, "is a file, not a folder"),
    (["report", "/dev/null"], 2, "not a regular file: /dev/null"),
    (["report", "/"], 2, "not a regular file: /"),
    (["compare", LONG, R], 2, "cannot read (File name too long)"),
    (["report", "a\x00b"], 2, "no such file: 'a\\x00b'"),
    (["report", R, "--out", "a\x00b"], 2, "--out 'a\\x00b': cannot write there (a NUL character in the name)"),
    (["bench", "--out", "a\x00b"], 2, "cannot write there (a NUL character in the name)"),
    (["compare", R, "a\x00b"], 2, "no such file: 'a\\x00b'"),
    (["compare", R, "/dev/null"], 2, "not a regular file: /dev/null"),
    (["compare", R, "missing.json"], 2, "no such file: missing.json"),
    (["bench", "--out", LONG], 2, "cannot write there (File name too long)"),
    (["bench", "--out", "/dev/null"], 2, "--out /dev/null: is a file, not a folder"),
    (["bench", "--out", "/proc/no/such"], 2, "cannot write there"),
    (["bench", "--resume", "--out", LONG], 2, "cannot write there (File name too long)"),
    (["run", "vector_copy", "--out", LONG], 2, "cannot write there (File name too long)"),
    (["run", "vector_copy", "--out", "/dev/null"], 2, "is a file, not a folder"),
    (["device", "--p2p", LONG], 2, "cannot read (File name too long)"),
    (["device", "--p2p", "/dev/null"], 2, "not a regular file: /dev/null"),
    (["device", "--p2p", "missing.json"], 2, "no such file: missing.json"),
    (["device", "--p2p", F], 2, "not valid JSON"),
    # experiments and parameters
    (["run", "reduce", "-p", "log2_n=nan"], 2, "bad value 'nan' for log2_n: expected int"),
    (["run", "stride_copy", "-p", "l2_factor=nan"], 2, "bad value 'nan' for l2_factor: expected a finite float"),
    (["run", "stride_copy", "-p", "l2_factor=inf"], 2, "bad value 'inf' for l2_factor: expected a finite float"),
    (["run", "stride_copy", "-p", "l2_factor=-inf"], 2, "bad value '-inf' for l2_factor: expected a finite float"),
    (["run", "offset_copy", "-p", "offsets=1e3"], 2, "bad value '1e3' for offsets: expected int"),
    (["run", ""], 2, "which experiment?"),
    (["bench", "--only", "vector_copy", "--skip", "nope"], 2, "unknown experiment 'nope'"),
    (["bench", "--device", "x"], 2, "--device: invalid int value: 'x'"),
    (["kernels", "--arch", "sm_90x"], 2, "bad arch 'sm_90x'"),
    (["kernels", "--arch", "nan"], 2, "bad arch 'nan'"),
    (["kernels", "--arch", "-90"], 2, "bad arch '-90'"),
    (["tune", "reduce", "--table", "/dev/null"], 2, "/dev/null is not JSON"),
    (["tune", "reduce", "--table", F], 2, "is not JSON"),
    (["tune", "reduce", "--table", LONG], 2, "cannot read"),
    (["tune", "reduce", "--top", "-1"], 2, "--top -1: expected 0 or more"),
    (["tune", "reduce", "--shapes", "nan"], 2, "reduce size 'nan': expected a positive element count"),
    (["tune", "reduce", "--shapes", "-5"], 2, "reduce size '-5'"),
    (["tune", "matmul", "--shapes", "4x4x0"], 2, "matmul shape '4x4x0': expected MxNxK with positive integers"),
    (["tune", "matmul", "--shapes", "4x4"], 2, "matmul shape '4x4'"),
    (["tune", "conv"], 2, "invalid choice: 'conv'"),
    (["tune", "reduce", "--out", LONG], 2, "(300 characters): cannot write there (File name too long)"),
    (["tune", "reduce", "--out", "/dev/null"], 2, "--out /dev/null: is a file, not a folder"),
]


def _argv(argv: list[str], tmp: Path) -> list[str]:
    return [_results(tmp) if a == R else _a_file(tmp) if a == F else a for a in argv]


@pytest.mark.parametrize("argv, code, words", CLI_CASES, ids=[" ".join(c[0])[:60] for c in CLI_CASES])
def test_cli_bad_input_is_one_line(run_cli, tmp_path, monkeypatch, argv, code, words):
    import gpumemlab.gpu.runtime as runtime

    monkeypatch.setattr(runtime, "ensure_device", lambda: pytest.fail("the GPU was touched before the input was checked"))
    monkeypatch.chdir(tmp_path)
    got, out, err = run_cli(*_argv(argv, tmp_path))
    assert err.count("\n") == 1 and err.startswith(f"gpumemlab {argv[0]}"), err
    assert (got, out) == (code, "") and words in err, err
    assert len(err) < 600  # one readable line, a long path shortened


# ---------------------------------------------------------------- warnings: answered, exit 0, one line each

WARNING_CASES = [  # (argv, words of each warning line, in order)
    (["analyze", "a[-1]", "--decl", "float a[]"], ["index 1 of a is -1 for thread 0: it reads before the address a "
                                                   "points at"]),
    (["analyze", "a[(int)threadIdx.x - 4]", "--decl", "float a[]", "--block", "32"], ["index 1 of a is -4 for thread 0"]),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "int i=threadIdx.x - 16", "--block", "32"],
     ["index 1 of a is -16 for thread 0"]),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "i=threadIdx.x - 1", "--block", "32"],
     ["thread 1 reads 16 GiB away from thread 0 of the same warp (more than 16 MiB): an index that wrapped"]),
    (["analyze", "a[threadIdx.x * 4194304]", "--decl", "float a[]", "--block", "32"],
     ["thread 31 reads 496 MiB away from thread 0"]),
    (["analyze", "a[threadIdx.x * 131072]", "--decl", "double a[]", "--block", "64"],
     ["thread 31 reads 31 MiB away from thread 0"]),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "i=1", "--let", "i=threadIdx.x"],
     ["--let i is defined twice (i=1, then i=threadIdx.x): the second one is used from here on"]),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "i=1", "--let", "int i=threadIdx.x", "--let", "i=i"],
     ["--let i is defined twice (i=1, then i=threadIdx.x)", "--let i is defined twice (i=threadIdx.x, then i=i)"]),
    (["intensity", "tiled", "--device", "h100", "--peak-gflops", "100", "--bandwidth-gbs", "10"],
     ["--peak-gflops and --bandwidth-gbs replace the device table's values for h100"]),
]


@pytest.mark.parametrize("argv, words", WARNING_CASES, ids=[" ".join(c[0])[:60] for c in WARNING_CASES])
def test_suspicious_input_is_answered_with_a_warning_line(run_cli, argv, words):
    code, out, err = run_cli(*argv)
    lines = err.splitlines()
    assert code == 0 and out.strip() and len(lines) == len(words), err
    for line, w in zip(lines, words):
        assert line.startswith(f"gpumemlab {argv[0]}: warning: ") and w in line


@pytest.mark.parametrize("argv", [
    ["analyze", "a[threadIdx.x * 1024]", "--decl", "float a[]"],  # 124 KiB between lanes: a column walk, no warning
    ["analyze", "a[blockIdx.x * 1000000 + threadIdx.x]", "--decl", "float a[]", "--grid", "8", "--block-idx", "7"],
    ["analyze", "a[i]", "--decl", "float a[]", "--let", "int i=threadIdx.x"],
    ["analyze", "s[threadIdx.x]", "--decl", "__shared__ float s[256]"],
    ["intensity", "tiled", "--device", "h100"],
])
def test_ordinary_input_gives_no_warning(run_cli, argv):
    code, out, err = run_cli(*argv)
    assert (code, err) == (0, "") and out


def test_kernel_overriding_regs_warns(run_cli, monkeypatch):
    import gpumemlab.gpu.compile as compile_

    monkeypatch.setattr(compile_, "kernel_resources", lambda name, cc: dict(name=name, registers=40, shared_bytes=0))
    code, out, err = run_cli("occupancy", "--threads", "256", "--regs", "32", "--kernel", "tiled_matmul", "--json")
    assert code == 0 and json.loads(out)["regs"] == 32
    assert err == "gpumemlab occupancy: warning: --regs 32 replaces the register count of --kernel tiled_matmul's " \
                  "ptxas report\n"


def test_warnings_are_python_warnings_for_the_library():
    with pytest.warns(AnalyzerWarning, match=r"index 1 of a is -1 for thread 0"):
        M.analyze("a[-1]", "float a[]", block=32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M.analyze("a[threadIdx.x]", "float a[]")  # none for ordinary input


# ---------------------------------------------------------------- C's conversions in typed lets

@pytest.mark.parametrize("let, want_thread0, want_thread31", [
    ("i=threadIdx.x - 16", 4294967280, 15),             # auto: unsigned int wraps
    ("int i=threadIdx.x - 16", -16, 15),                # converted as C converts the initializer
    ("const int i = threadIdx.x - 16", -16, 15),
    ("long i=threadIdx.x - 1", 4294967295, 30),         # unsigned int -> long keeps the value
    ("long i=(int)threadIdx.x - 1", -1, 30),
    ("unsigned i=(int)threadIdx.x - 1", 4294967295, 30),
    ("size_t i=threadIdx.x", 0, 31),
    ("short i=threadIdx.x * 4096", 0, -4096),           # 126976 wraps in 16 bits, then promotes to int
    ("unsigned char i=threadIdx.x * 16", 0, 240),
    ("int64_t i=threadIdx.x * 3000000000L", 0, 93000000000),
    ("auto i=(int)threadIdx.x - 1", -1, 30),
])
@pytest.mark.filterwarnings("ignore::gpumemlab.errors.AnalyzerWarning")  # negative and far indexes, on purpose
def test_a_typed_let_converts_as_c_does(let, want_thread0, want_thread31):
    lanes = M.resolve("a[i]", "char a[]", block=32, lets=[let])
    assert int(lanes.addresses[0][0]) == want_thread0 and int(lanes.addresses[0][31]) == want_thread31


def test_a_typed_let_changes_the_answer():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AnalyzerWarning)
        wrapped = M.analyze("a[i]", "float a[]", block=32, lets=["i=threadIdx.x - 1"])
        signed = M.analyze("a[i]", "float a[]", block=32, lets=["int i=threadIdx.x - 1"])
    assert (wrapped["sectors"], signed["sectors"]) == (5, 5)  # thread 0 alone, 16 GiB away / 4 bytes before
    assert M.resolve("a[i]", "float a[]", block=32, lets=[("int i", "threadIdx.x - 1")]).addresses[0][0] == -4


# ---------------------------------------------------------------- the model's public functions

BAD_TYPES = [None, 1.5, True, b"bytes", [1], object()]
TEXT_ARGS = [  # (call with the bad value v, words)
    (lambda v: M.analyze(v, "float a[]"), "access must be a string"),
    (lambda v: M.analyze("a[threadIdx.x]", v), "decl must be a string"),
    (lambda v: M.analyze_shared(v, "__shared__ float s[32]"), "access must be a string"),
    (lambda v: M.resolve(v, "float a[]"), "access must be a string"),
    (lambda v: M.parse_decl(v), "decl must be a string"),
    (lambda v: M.element_type(v), "element type must be a string"),
    (lambda v: M.matmul_intensity(v), "kernel must be a string"),
    (lambda v: M.intensity(v), "kernel must be a string"),
    (lambda v: M.find_device(v), "device name must be a string"),
    (lambda v: M.predict(v), "lanes must be a LaneAccesses (from resolve())"),
    (lambda v: M.tiled_matmul_phase(v), "layout must be a DramLayout"),
]
NUMBER_ARGS = [
    (lambda v: M.matmul_intensity("tiled", v), "tile must be an integer"),
    (lambda v: M.matmul_intensity("coarsened", 32, v), "coarsen must be an integer"),
    (lambda v: M.roofline(v, 100, 100), "op_per_byte must be a number"),
    (lambda v: M.roofline(1, v, 100), "peak_gflops must be a number"),
    (lambda v: M.roofline(1, 100, v), "bandwidth_gbs must be a number"),
    (lambda v: M.DramLayout(v), "channels must be an integer"),
    (lambda v: M.tiled_matmul_phase(M.DramLayout(), v), "width must be an integer"),
    (lambda v: M.occupancy(v, 32), "threads must be an integer"),
    (lambda v: M.occupancy(256, v), "registers must be an integer"),
]


def _api_cases():
    for call, words in TEXT_ARGS:
        yield from ((call, v, words) for v in BAD_TYPES + [3])
    for call, words in NUMBER_ARGS:
        for v in BAD_TYPES + ["3"]:
            legal = (v is None and "coarsen" in words) or (isinstance(v, float) and "a number" in words)
            if not legal:  # None is coarsen's default; a float is a number
                yield call, v, words


API_CASES = list(_api_cases())


@pytest.mark.parametrize("call, value, words", API_CASES)
def test_public_model_functions_name_the_argument(call, value, words):
    with pytest.raises(UsageError) as info:
        call(value)
    assert words in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("call, words", [
    (lambda: M.roofline(1, NAN, 100), "peak_gflops must be a finite number, positive, got nan"),
    (lambda: M.roofline(1, 100, INF), "bandwidth_gbs must be a finite number, positive, got inf"),
    (lambda: M.roofline(NAN, 100, 100), "op_per_byte must be a finite number, positive, got nan"),
    (lambda: M.roofline(0, 100, 100), "op_per_byte must be positive, got 0"),
    (lambda: M.intensity("tiled", peak_gflops=NAN, bandwidth_gbs=100), "peak_gflops must be a finite number"),
    (lambda: M.intensity("tiled", peak_gflops=100, bandwidth_gbs=-1), "bandwidth_gbs must be positive, got -1"),
    (lambda: M.intensity("tiled", device_name=5), "device_name must be a string or None, got int 5"),
    (lambda: M.matmul_intensity("tiled", NAN), "tile must be an integer, got float nan"),
    (lambda: M.matmul_intensity("tiled", 0), "tile and coarsening factor must be >= 1, got tile=0"),
    (lambda: M.DramLayout(channels=NAN), "channels must be an integer, got float nan"),
    (lambda: M.DramLayout(burst_bytes=0), "channels, banks per channel and burst bytes must be positive"),
    (lambda: M.tiled_matmul_phase(M.DramLayout(), 4, 0), "tile must be >= 1, got 0"),
    (lambda: M.tiled_matmul_phase(M.DramLayout(), 4, 2, 5), "phase 5 is outside 0..1 for width 4, tile 2"),
    (lambda: M.tiled_matmul_phase(M.DramLayout(), 10**6, 1), "width 1000000 is too large"),
    (lambda: M.tiled_matmul_phase(M.DramLayout(), 0), "width must be >= 1, got 0"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", block=32.0), "block must be an integer, got float 32.0"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", block=(32, 1.5)), "each dimension must be an integer"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", grid=None), "grid must be an integer, got NoneType"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", block_idx=NAN), "block index must be an integer"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", lets=5), "lets must be a list of 'NAME=EXPR' strings"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", lets="i=1"), "lets must be a list"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", lets=[5]), "bad let 5: expected 'NAME=EXPR' or a (name, expr) pair"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", lets=[("i", "1", "x")]), "bad let ('i', '1', 'x')"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", active=5), "active must be a string or None, got int 5"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", space=5), "space must be a string or None"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", offset=1.5), "--offset must be an integer number of bytes"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", cc=NAN), "bad compute capability nan"),
    (lambda: M.analyze("a[threadIdx.x]", "float a[]", cc=(9, None)), "bad compute capability (9, None)"),
    (lambda: M.occupancy(256, 32, smem=NAN), "shared memory must be an integer, got nan"),
    (lambda: M.occupancy(256, 32, carveout=1.5), "carve-out must be an integer, got 1.5"),
    (lambda: M.occupancy(256, 32, cc=(1, 0)), "occupancy is not modelled for compute capability 1.0"),
])
def test_impossible_values_in_the_model_api(call, words):
    with pytest.raises(UsageError) as info:
        call()
    assert words in str(info.value) and "\n" not in str(info.value)


# ---------------------------------------------------------------- a disk that fills up mid-write

def test_a_full_disk_while_writing_the_report_is_one_line_and_leaves_the_old_results(run_cli, tmp_path, monkeypatch):
    import gpumemlab.report.write as write

    results = Path(_results(tmp_path))
    before = results.read_text()

    def full(res, plots):
        raise OSError(errno.ENOSPC, "No space left on device", str(results.parent / "report.md"))
    monkeypatch.setattr(write, "render", full)
    code, out, err = run_cli("report", str(results))
    assert (code, out) == (1, "") and err == f"gpumemlab report: {results.parent / 'report.md'}: No space left on device\n"
    assert results.read_text() == before
    assert sorted(p.name for p in results.parent.iterdir()) == ["results.json"]  # the render folder is gone


def test_a_run_without_a_gpu_leaves_no_folder(run_cli, tmp_path, monkeypatch):
    from gpumemlab.errors import NoDeviceError
    from gpumemlab.gpu import runtime

    def no_gpu():
        raise NoDeviceError("no CUDA device: no NVIDIA driver")
    monkeypatch.setattr(runtime, "ensure_device", no_gpu)
    monkeypatch.setattr(runtime, "device_info", no_gpu)
    for argv in (["bench"], ["run", "vector_copy"], ["tune", "reduce"]):
        out = tmp_path / argv[0]
        code, _, err = run_cli(*argv, "--out", str(out))
        assert (code, err) == (2, f"gpumemlab {argv[0]}: no CUDA device: no NVIDIA driver\n") and not out.exists()


def test_results_json_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    import os

    from gpumemlab.bench.records import RunResults

    path = tmp_path / "results.json"
    first = RunResults.load(Path(_results(tmp_path)))
    first.save(path)
    before = path.read_text()
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    real_replace = os.replace

    def crash(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "replace", crash)
    first.meta["date"] = "later"
    with pytest.raises(OSError):
        first.save(path)
    assert path.read_text() == before and [p.name for p in tmp_path.iterdir() if p.name != "ok"] == ["results.json"]
    monkeypatch.setattr(os, "replace", real_replace)
    first.save(path)
    assert json.loads(path.read_text())["meta"]["date"] == "later" and len(synced) >= 2  # the file and its folder


# ---------------------------------------------------------------- tools the README names

def test_ncu_recorded_without_a_gpu_is_one_line(tmp_path, capsys, monkeypatch):
    from gpumemlab.errors import NoDeviceError
    from gpumemlab.gpu import runtime
    from gpumemlab.ncu import recorded

    def no_gpu():
        raise NoDeviceError("no CUDA device: no NVIDIA driver")
    monkeypatch.setattr(runtime, "ensure_device", no_gpu)
    monkeypatch.setenv("GPUMEMLAB_NCU", str(tmp_path / "no-ncu"))
    monkeypatch.setattr("shutil.which", lambda _: None)
    assert recorded.main([str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == ("python -m gpumemlab.ncu.recorded: no CUDA device: no NVIDIA driver (--dry-run "
                                 "compiles and predicts without one)\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, words", [
    (["--dry-run", "--only", "nope"], "unknown case(s) nope for --only"),
    (["--dry-run", "--arch", "sm_x"], "bad arch 'sm_x'"),
    (["--dry-run", "--arch", "sm_999"], "cannot compile for sm_999"),
])
def test_ncu_recorded_bad_input_is_one_line(tmp_path, capsys, argv, words):
    from gpumemlab.ncu import recorded

    assert recorded.main([str(tmp_path / "out"), *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and words in err


def test_ncu_recorded_dry_run_predicts_and_says_nothing_was_measured(tmp_path, capsys, monkeypatch):
    pytest.importorskip("cuda.core")
    import gpumemlab.gpu.compile as compile_
    from gpumemlab.ncu import recorded

    groups = []
    real = compile_.compile_group
    monkeypatch.setattr(compile_, "compile_group", lambda source, names, *a, **k: groups.append(source) or
                        real(source, names, *a, **k))
    code = recorded.main([str(tmp_path), "--dry-run", "--only", "g_float_unit", "s_float_stride2", "--skip-occupancy"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "access cases (dry run, nothing measured): 2 of 2 predicted and compiled for sm_90" in out
    assert "agree" not in out and groups == ["<generated>"]
    doc = json.loads((tmp_path / "ncu_cases_dry_run.json").read_text())
    assert [(c["name"], c["predicted"], c["measured"]) for c in doc["cases"]] == [
        ("g_float_unit", {"requests": 1, "sectors": 4}, None),
        ("s_float_stride2", {"wavefronts": 2, "conflicts": 1}, None)]


def test_sass_help_is_whole_and_bad_names_are_one_line(capsys):
    """`gpumemlab sass`: the help says what it reports; a bad source, arch or regex is one line and exit 2."""
    from gpumemlab.cli import main

    with pytest.raises(SystemExit):
        main(["sass", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "global loads a thread has in flight when it first waits on one (memory-level parallelism)." in help_text
    assert "ORDER/PIN parameters were found (docs/notes/matmul.md)." in help_text
    for argv, words in ((["k", "--source", "nope.cu"], "gpumemlab sass: unknown kernel source 'nope.cu' (the package "
                                                       "has "),
                        (["k", "--arch", "sm_1"], "gpumemlab sass: bad arch 'sm_1'"),
                        (["k", "--loop", "("], "gpumemlab sass: bad --loop regex '(': ")):
        assert main(["sass", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(words), err
        assert "nope" not in argv or " sgemm.cu, " in err  # the sources it has are named


# ---------------------------------------------------------------- progress

class _Stream:
    def __init__(self, tty: bool):
        self.tty, self.text = tty, ""

    def isatty(self):
        return self.tty

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_progress_rewrites_one_line_on_a_terminal_and_stays_quiet_in_logs(monkeypatch):
    import gpumemlab._progress as progress

    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    tty, log = _Stream(True), _Stream(False)
    with progress.StepLine("compiling for sm_90", 3, "sources", stream=tty, tick=None) as line:
        line.step("copy.cu")
        now[0] = 1.0
        line.step("matmul.cu")
    assert tty.text == ("\r\033[Kcompiling for sm_90: copy.cu (1/3 sources, 0 s)"
                        "\r\033[Kcompiling for sm_90: matmul.cu (2/3 sources, 1 s)\r\033[K")
    now[0] = 0.0
    with progress.StepLine("compiling for sm_90", 3, "sources", stream=log, logs=True, tick=None) as line:
        for t, name in ((3.0, "a.cu"), (4.0, "b.cu"), (20.0, "c.cu")):  # past SILENT_S: said; within EVERY_S: not
            now[0] = t
            line.step(name)
    assert log.text == ("compiling for sm_90: a.cu (1/3 sources, 3 s)...\n"
                        "compiling for sm_90: c.cu (3/3 sources, 20 s)...\n")
    quiet = _Stream(False)
    with progress.StepLine("rendering", 5, stream=quiet) as line:
        line.step("x")
    assert quiet.text == ""


def test_progress_keeps_its_clock_moving_while_one_item_runs(monkeypatch):
    import threading

    import gpumemlab._progress as progress

    now, tty, ticks = [0.0], _Stream(True), threading.Semaphore(0)
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    real_show = progress.StepLine._show

    def show(self):
        real_show(self)
        ticks.release()
    monkeypatch.setattr(progress.StepLine, "_show", show)
    with progress.StepLine("compiling", 2, "sources", stream=tty, tick=0.001) as line:
        line.step("matmul.cu")
        ticks.acquire()  # the step's own drawing
        now[0] = 42.0
        # the ticker redraws with the new time while the item still runs (draws that read the old time may be queued)
        for _ in range(10_000):
            if tty.text.endswith("42 s)"):
                break
            assert ticks.acquire(timeout=10)
    assert "\r\033[Kcompiling: matmul.cu (1/2 sources, 0 s)" in tty.text
    assert tty.text.endswith("\r\033[Kcompiling: matmul.cu (1/2 sources, 42 s)\r\033[K")


def test_kernels_compile_tells_which_source_on_a_terminal(monkeypatch):
    import sys

    pytest.importorskip("cuda.core")
    import gpumemlab.gpu.compile as compile_
    from gpumemlab.cli import main
    from gpumemlab.kernels import all_specs

    specs = [s for s in all_specs() if s.source == "copy.cu"][:2] + [s for s in all_specs() if s.source == "transpose.cu"][:2]
    assert len({s.source for s in specs}) == 2
    monkeypatch.setattr("gpumemlab.kernels.all_specs", lambda: specs)
    usage = compile_.ResourceUsage(kernel="k", registers=8, shared_bytes=0, spill_store_bytes=0, spill_load_bytes=0,
                                   local_bytes=0)
    fake = type("Mod", (), {"usage": {s.name: usage for s in specs}})()
    monkeypatch.setattr(compile_, "compile_group", lambda *a, **k: fake)
    tty = _Stream(True)
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(["kernels", "--arch", "sm_90", "--json"]) == 0
    shown = list(dict.fromkeys(part.rsplit(" (", 2)[0] for part in tty.text.split("\r\033[K") if part))
    assert shown == [f"compiling {len(specs)} kernels for sm_90 with NVRTC (cached after the first time): {src}"
                     for src in dict.fromkeys(s.source for s in specs)]
