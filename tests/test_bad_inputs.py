"""Every bad input gets one clear line: a table of CLI invocations (exit code + words of the one stderr line)
and library calls (exception type + words). CLI cases run in-process; GPU-only library cases are marked gpu."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import gpumemlab
from gpumemlab.errors import GpumemlabError, InputTypeError, NoDeviceError, ResultsError, UsageError
from gpumemlab.gpu.runtime import has_device

EXAMPLE = Path(__file__).resolve().parent / "data" / "runs" / "nvidia-h200" / "results.json"  # cut from a real run
A = ("a[threadIdx.x]", "--decl", "float a[]")  # a valid analyze access

CLI_CASES = [
    # top level and argparse
    (["nosuchcommand"], 2, ["gpumemlab: error:", "invalid choice: 'nosuchcommand'"]),
    ([], 2, ["gpumemlab: error:", "required: COMMAND"]),
    (["--bogus"], 2, ["gpumemlab: error:"]),
    (["list", "--bogus"], 2, ["unrecognized arguments: --bogus"]),
    (["device", "--bogus"], 2, ["unrecognized arguments: --bogus"]),
    (["bench", "--quick", "extra"], 2, ["unrecognized arguments: extra"]),
    (["bench", "--only"], 2, ["gpumemlab bench: error:", "--only: expected at least one argument"]),
    (["run"], 2, ["gpumemlab run: which experiment?"]),
    # experiments and parameters
    (["bench", "--only", "nope"], 2, ["gpumemlab bench: unknown experiment 'nope'; known: vector_copy"]),
    (["bench", "--skip", "nope"], 2, ["unknown experiment 'nope'"]),
    (["bench", "--only", "reduce", "nope"], 2, ["unknown experiment 'nope'"]),
    (["run", "nope"], 2, ["gpumemlab run: unknown experiment 'nope'"]),
    (["run", "offset_copy", "-p", "bogus=1"], 2, ["offset_copy has no parameter 'bogus'; it has: offsets"]),
    (["run", "offset_copy", "-p", "offsets=a"], 2, ["bad value 'a' for offsets: expected int"]),
    (["run", "offset_copy", "-p", "offsets=1,b"], 2, ["bad value 'b' for offsets: expected int"]),
    (["run", "offset_copy", "-p", "novalue"], 2, ["bad --param 'novalue': expected KEY=VALUE"]),
    (["run", "offset_copy", "-p", "=3"], 2, ["offset_copy has no parameter ''"]),
    (["run", "offset_copy", "-p", "offsets=-4"], 2, ["bad value -4 for offsets: must be >= 0"]),
    (["run", "reduce", "-p", "log2_n=0"], 2, ["bad value 0 for log2_n: must be > 0"]),
    (["run", "reduce", "-p", "log2_n=-3"], 2, ["bad value -3 for log2_n: must be > 0"]),
    (["run", "reduce", "-p", "log2_n=1.5"], 2, ["bad value '1.5' for log2_n: expected int"]),
    (["run", "reduce", "-p", "log2_n=,"], 2, ["bad value for log2_n: expected at least one value"]),
    (["run", "reduce", "-p", "unroll=x"], 2, ["bad value 'x' for unroll: expected int"]),
    (["run", "stride_copy", "-p", "strides=0"], 2, ["bad value 0 for strides: must be > 0"]),
    (["run", "stride_copy", "-p", "l2_factor=-1"], 2, ["bad value -1.0 for l2_factor: must be > 0"]),
    (["run", "stride_copy", "-p", "l2_factor=abc"], 2, ["bad value 'abc' for l2_factor: expected float"]),
    (["run", "stride_copy", "-p", "l2_factor=0"], 2, ["bad value 0.0 for l2_factor: must be > 0"]),
    # kernels --arch
    (["kernels", "--arch", "sm_x"], 2, ["gpumemlab kernels: bad arch 'sm_x': expected e.g. sm_90, 9.0 or 90"]),
    (["kernels", "--arch", "compute_"], 2, ["bad arch 'compute_'"]),
    (["kernels", "--arch", ""], 2, ["bad arch ''"]),
    (["kernels", "--arch", "sm_9000"], 2, ["bad arch 'sm_9000'"]),
    (["kernels", "--arch", "ninety"], 2, ["bad arch 'ninety'"]),
    (["kernels", "--arch", "sm_999"], 2, ["cannot compile for sm_999; it knows sm_75", "gpumemlab supports sm_75"]),
    (["kernels", "--arch", "5.0"], 2, ["cannot compile for sm_50"]),
    (["kernels", "--arch", "sm_20"], 2, ["cannot compile for sm_20"]),
    (["kernels", "--arch", "sm_70"], 2, ["cannot compile for sm_70"]),
    # analyze (the analyzer's own semantics are tested in tests/model/)
    (["analyze"], 2, ["gpumemlab analyze: error:", "required"]),
    (["analyze", "a[threadIdx.x]"], 2, ["required: --decl"]),
    (["analyze", "a[threadIdx.x", "--decl", "float a[]"], 2, ["'a[threadIdx.x'"]),
    (["analyze", "a[threadIdx.x]", "--decl", "float a"], 2, ["'float a'"]),
    (["analyze", "a[threadIdx.x]", "--decl", "floaty a[]"], 2, ["'floaty'"]),
    (["analyze", "b[threadIdx.x]", "--decl", "float a[]"], 2, ["'b'"]),
    (["analyze", "a[foo]", "--decl", "float a[]"], 2, ["'foo'"]),
    (["analyze", "a[threadIdx.x / 0]", "--decl", "float a[]"], 2, ["division by zero"]),
    (["analyze", *A, "--block", "0"], 2, ["block"]),
    (["analyze", *A, "--block", "-32"], 2, ["block"]),
    (["analyze", *A, "--block", "2048"], 2, ["1024"]),
    (["analyze", *A, "--block", "1,2,3,4"], 2, ["block"]),
    (["analyze", *A, "--grid", "0"], 2, ["grid"]),
    (["analyze", *A, "--block-idx", "5", "--grid", "2"], 2, ["outside the grid"]),
    (["analyze", *A, "--cc", "x.y"], 2, ["'x.y'"]),
    (["analyze", *A, "--space", "texture"], 2, ["invalid choice: 'texture'"]),
    (["analyze", *A, "--offset", "x"], 2, ["--offset: invalid int value: 'x'"]),
    (["analyze", *A, "--let", "foo"], 2, ["--let 'foo'"]),
    (["analyze", *A, "--active", "threadIdx.x <"], 2, ["--active"]),
    (["analyze", "s[threadIdx.x]", "--decl", "__shared__ float s[32]", "--space", "global"], 2, ["__shared__"]),
    # occupancy
    (["occupancy"], 2, ["required: --threads"]),
    (["occupancy", "--threads", "0", "--regs", "32"], 2, ["got 0"]),
    (["occupancy", "--threads", "-1", "--regs", "32"], 2, ["got -1"]),
    (["occupancy", "--threads", "2048", "--regs", "32"], 2, ["1024"]),
    (["occupancy", "--threads", "x", "--regs", "32"], 2, ["--threads: invalid int value: 'x'"]),
    (["occupancy", "--threads", "256"], 2, ["--regs"]),
    (["occupancy", "--threads", "256", "--regs", "300"], 2, ["got 300"]),
    (["occupancy", "--threads", "256", "--regs", "-5"], 2, ["got -5"]),
    (["occupancy", "--threads", "256", "--regs", "x"], 2, ["--regs: invalid int value: 'x'"]),
    (["occupancy", "--threads", "256", "--regs", "32", "--smem", "-1"], 2, ["--smem must be >= 0 bytes, got -1"]),
    (["occupancy", "--threads", "256", "--regs", "32", "--cc", "1.0"], 2, ["1.0"]),
    (["occupancy", "--threads", "256", "--regs", "32", "--cc", "99.9"], 2, ["99.9"]),
    (["occupancy", "--threads", "256", "--regs", "32", "--cc", "abc"], 2, ["'abc'"]),
    (["occupancy", "--threads", "256", "--regs", "32", "--carveout", "-1"], 2, ["got -1"]),
    (["occupancy", "--threads", "256", "--regs", "32", "--barriers", "-1"], 2, ["got -1"]),
    (["occupancy", "--threads", "256", "--kernel", "nosuchkernel"], 2, ["'nosuchkernel' is not a built-in kernel"]),
    (["occupancy", "--threads", "256", "--kernel", "reduce"], 2, ["'reduce' is ambiguous"]),
    (["occupancy", "--threads", "256", "--kernel", "offset_copy", "--cc", "5.0"], 2, ["5.0"]),
    # intensity
    (["intensity", "nosuch"], 2, ["'nosuch'"]),
    (["intensity", "--device", "nosuch"], 2, ["unknown device 'nosuch'"]),
    (["intensity", "--tile", "0"], 2, ["tile=0"]),
    (["intensity", "--tile", "-4"], 2, ["tile=-4"]),
    (["intensity", "--tile", "x"], 2, ["--tile: invalid int value: 'x'"]),
    (["intensity", "--coarsen", "0"], 2, ["coarsen=0"]),
    (["intensity", "--peak-gflops", "100"], 2, ["give both --peak-gflops and --bandwidth-gbs"]),
    (["intensity", "--bandwidth-gbs", "100"], 2, ["give both --peak-gflops and --bandwidth-gbs"]),
    (["intensity", "--peak-gflops", "-1", "--bandwidth-gbs", "100"], 2, ["must be positive"]),
    (["intensity", "--peak-gflops", "x", "--bandwidth-gbs", "100"], 2, ["--peak-gflops: not a number: 'x'"]),
]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got: {err!r}"
    return lines[0]


@pytest.mark.parametrize("argv, code, words", CLI_CASES, ids=[" ".join(c[0]) or "(none)" for c in CLI_CASES])
def test_cli_bad_input(run_cli, argv, code, words):
    got, out, err = run_cli(*argv)
    line = _one_line(err)
    assert got == code and out == ""
    assert line.startswith("gpumemlab") and "gpumemlab gpumemlab" not in line
    for w in words:
        assert w in line


# ---------------------------------------------------------------- paths: --out, report's results.json

def _file(tmp: Path) -> Path:
    p = tmp / "a-file"
    p.write_text("x")
    return p


OUT_CASES = [  # (command, how to make the bad --out, words)
    (["bench"], lambda t: _file(t), "is a file, not a folder"),
    (["bench"], lambda t: _file(t) / "below", "cannot write there (Not a directory)"),
    (["bench", "--only", "vector_copy"], lambda t: _file(t), "is a file, not a folder"),
    (["bench", "--resume"], lambda t: _file(t), "is a file, not a folder"),
    (["bench", "--resume"], lambda t: t / "empty", "--resume: no results.json in"),
    (["run", "vector_copy"], lambda t: _file(t), "is a file, not a folder"),
    (["run", "vector_copy"], lambda t: _file(t) / "x" / "y", "cannot write there (Not a directory)"),
]


@pytest.mark.parametrize("cmd, make, words", OUT_CASES)
def test_bad_out_is_one_line_before_any_gpu_work(run_cli, monkeypatch, tmp_path, cmd, make, words):
    import gpumemlab.gpu.runtime as runtime

    monkeypatch.setattr(runtime, "ensure_device", lambda: pytest.fail("the GPU was touched before --out was checked"))
    out = make(tmp_path)
    code, _, err = run_cli(*cmd, "--out", str(out))
    assert code == 2 and words in _one_line(err) and _one_line(err).startswith(f"gpumemlab {cmd[0]}: ")


def _example() -> dict:
    return json.loads(EXAMPLE.read_text())


def _edit(fn):
    d = _example()
    fn(d)
    return json.dumps(d)


REPORT_CASES = [  # (file contents, words of the one line)
    ("", "not valid JSON (Expecting value at line 1 column 1)"),
    ("{", "not valid JSON"),
    ('{"results": [1, 2', "not valid JSON"),
    ("[1, 2]", "not a gpumemlab results.json"),
    ('{"x": 1}', "not a gpumemlab results.json"),
    ("null", "not a gpumemlab results.json"),
    (b"\xff\xfe\x00binary", "not a gpumemlab results.json (not text)"),
    (lambda: _edit(lambda d: d.update(schema=99)), "schema version 99, this gpumemlab reads versions 1, 2 (written by a newer"),
    (lambda: _edit(lambda d: d.update(schema=0)), "schema version 0, this gpumemlab reads versions 1, 2"),
    (lambda: _edit(lambda d: d.pop("schema")), "results.json: missing field 'schema'"),
    (lambda: _edit(lambda d: d.update(results={})), "field 'results' is object"),
    (lambda: _edit(lambda d: d.update(meta=[])), "field 'meta' is array"),
    (lambda: _edit(lambda d: d["results"].__setitem__(3, "x")), "record 3: expected an object, got string"),
    (lambda: _edit(lambda d: d["results"][5].update(gbps="fast")),
     "record 5 (offset_copy / 4 loads in flight): field 'gbps' is string 'fast', expected number or null"),
    (lambda: _edit(lambda d: d["results"][0].pop("variant")), "record 0 (vector_copy / ?): missing field 'variant'"),
    (lambda: _edit(lambda d: d["results"][2].update(verified=1)), "field 'verified' is integer 1, expected boolean"),
    (lambda: _edit(lambda d: d["results"][7]["time_s"].pop("median")), "record 7 (stride_copy / 8 loads in flight) time_s: "
                                                                       "missing field 'median'"),
    (lambda: _edit(lambda d: d["results"][1].update(time_s=None)), "field 'time_s' is null, expected object"),
    (lambda: _edit(lambda d: d["results"][1].update(params=[1])), "field 'params' is array"),
    (lambda: _edit(lambda d: d["errors"].append(dict(experiment="x"))), "errors[0]: missing field 'error'"),
    (lambda: _edit(lambda d: d["ceilings"].update(copy_gbps=dict(value="x", unit="GB/s"))),
     "ceiling 'copy_gbps': field 'value' is string"),
]


@pytest.mark.parametrize("content, words", REPORT_CASES)
def test_report_of_a_bad_results_json(run_cli, tmp_path, content, words):
    content = content() if callable(content) else content
    path = tmp_path / "results.json"
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    code, _, err = run_cli("report", str(path))
    line = _one_line(err)
    assert code == 2 and line.startswith(f"gpumemlab report: {path}: ") and words in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # nothing rendered, nothing left


def test_report_refuses_a_directory_and_a_missing_file(run_cli, tmp_path):
    assert run_cli("report", str(tmp_path))[0] == 2
    code, _, err = run_cli("report", str(tmp_path / "none.json"))
    assert code == 2 and _one_line(err) == f"gpumemlab report: no such file: {tmp_path / 'none.json'}"


def test_report_to_a_file_out_is_refused(run_cli, tmp_path):
    shutil.copy(EXAMPLE, tmp_path / "results.json")
    code, _, err = run_cli("report", str(tmp_path / "results.json"), "--out", str(_file(tmp_path)))
    assert code == 2 and "is a file, not a folder" in _one_line(err)


def test_a_failed_render_leaves_no_partial_report(run_cli, tmp_path, monkeypatch):
    import gpumemlab.report.write as write

    doc = _example()  # one experiment: its plot is drawn before the render fails
    doc["results"] = [r for r in doc["results"] if r["experiment"] == "offset_copy"]
    doc["experiments"] = {"offset_copy": doc["experiments"]["offset_copy"]}
    (tmp_path / "results.json").write_text(json.dumps(doc))
    out = tmp_path / "out"

    def broken(res, plots):
        raise RuntimeError("render failed halfway")
    monkeypatch.setattr(write, "render", broken)
    with pytest.raises(RuntimeError, match="halfway"):
        run_cli("report", str(tmp_path / "results.json"), "--out", str(out))
    assert list(out.iterdir()) == []  # plots were drawn into a temporary folder, now gone


def test_valid_example_results_pass_the_schema():
    from gpumemlab.bench.records import RunResults

    res = RunResults.load(EXAMPLE)
    assert len(res.results) == len(_example()["results"]) and res.device["name"] == _example()["device"]["name"]


def test_results_error_is_a_usage_error():
    assert issubclass(ResultsError, UsageError) and ResultsError.exit_code == 2


# ---------------------------------------------------------------- the library

H = np.ones((4, 4), np.float32)  # a host array

API_CASES = [  # (function, args, kwargs, exception, words)
    ("sum", (np.ones(3, np.float32),), {}, InputTypeError, "x: a NumPy (host) array; pass a GPU array"),
    ("sum", ([1.0, 2.0],), {}, InputTypeError, "x: expected a GPU array (CuPy, __cuda_array_interface__ or DLPack), "
                                               "got list"),
    ("sum", (None,), {}, InputTypeError, "got NoneType"),
    ("sum", (3.0,), {}, InputTypeError, "got float"),
    ("sum", ("abc",), {}, InputTypeError, "got str"),
    ("sum", (np.float32(1),), {}, InputTypeError, "got float32"),
    ("matmul", (H, H), {}, InputTypeError, "a: a NumPy (host) array"),
    ("matmul", ([[1.0]], [[1.0]]), {}, InputTypeError, "a: expected a GPU array"),
    ("matmul", (H, H), dict(variant="nope"), UsageError, "matmul: unknown variant 'nope'; expected one of auto"),
    ("matmul", (H, H), dict(variant=3), UsageError, "matmul: unknown variant 3"),
    ("matmul", (None, None), dict(variant=None), UsageError, "matmul: unknown variant None"),
    ("transpose", (H,), {}, InputTypeError, "x: a NumPy (host) array"),
    ("transpose", ([[1, 2]],), {}, InputTypeError, "got list"),
    ("transpose", (object(),), {}, InputTypeError, "got object"),
    ("copy", (np.ones(3),), {}, InputTypeError, "x: a NumPy (host) array"),
    ("copy", (b"bytes",), {}, InputTypeError, "got bytes"),
    ("copy", (range(3),), {}, InputTypeError, "got range"),
]


@pytest.mark.parametrize("fn, args, kwargs, exc, words", API_CASES)
def test_api_bad_input_without_a_gpu(fn, args, kwargs, exc, words):
    with pytest.raises(exc) as info:
        getattr(gpumemlab, fn)(*args, **kwargs)
    assert words in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, GpumemlabError)
    # NumPy's conventions still hold: a wrong kind is a TypeError, a wrong value a ValueError
    assert isinstance(info.value, TypeError if exc is InputTypeError else ValueError)


def test_cupy_that_cannot_load_is_no_device(monkeypatch):
    import builtins

    from gpumemlab.ops import _checks

    real = builtins.__import__

    def no_cupy(name, *a, **k):
        if name == "cupy":
            raise ImportError("libcudart.so.13: cannot open shared object file")
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_cupy)
    with pytest.raises(NoDeviceError, match="no CUDA device: cannot import CuPy .ImportError: libcudart"):
        _checks.as_device_array(object(), "x", None)


@pytest.mark.skipif(has_device(), reason="checks the no-GPU message")
@pytest.mark.parametrize("argv", [["bench", "--only", "vector_copy"], ["run", "offset_copy"], ["device"],
                                  ["analyze", *A, "--validate"]])
def test_no_gpu_is_one_line_naming_the_gpu(run_cli, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUMEMLAB_NCU", str(tmp_path / "no-ncu"))
    monkeypatch.setattr(shutil, "which", lambda _: None)
    code, _, err = run_cli(*argv)
    assert code == 2 and _one_line(err).startswith(f"gpumemlab {argv[0]}: no CUDA device: ")


@pytest.mark.gpu
@pytest.mark.parametrize("case", [
    "sum float16", "sum bool", "sum complex64", "sum out wrong dtype", "sum out wrong shape",
    "sum out host", "matmul float64", "matmul int32", "matmul 1-D", "matmul 3-D", "matmul shape mismatch",
    "matmul 0-D", "matmul out wrong shape", "matmul out wrong dtype", "matmul out overlaps",
    "transpose axes short", "transpose axes repeated", "transpose axis out of range", "transpose axes not ints",
    "copy out wrong shape",
    "copy out wrong dtype", "copy out host",
])
def test_api_bad_input_on_the_gpu(case):
    import cupy

    f32 = lambda *s: cupy.ones(s, cupy.float32)  # noqa: E731
    calls = {
        "sum float16": (lambda: gpumemlab.sum(cupy.ones(8, cupy.float16)), InputTypeError, "dtype float16 not supported"),
        "sum bool": (lambda: gpumemlab.sum(cupy.ones(8, bool)), InputTypeError, "dtype bool not supported"),
        "sum complex64": (lambda: gpumemlab.sum(cupy.ones(8, cupy.complex64)), InputTypeError, "complex64"),
        "sum out wrong dtype": (lambda: gpumemlab.sum(f32(8), out=cupy.zeros((), cupy.float64)), InputTypeError,
                                "out: dtype float64 not supported; expected float32"),
        "sum out wrong shape": (lambda: gpumemlab.sum(f32(8), out=f32(1)), UsageError, "out: expected a 0-D array"),
        "sum out host": (lambda: gpumemlab.sum(f32(8), out=np.zeros((), np.float32)), InputTypeError,
                         "out: a NumPy (host) array"),
        "matmul float64": (lambda: gpumemlab.matmul(cupy.ones((4, 4)), cupy.ones((4, 4))), InputTypeError,
                           "a: dtype float64 not supported; expected float32"),
        "matmul int32": (lambda: gpumemlab.matmul(f32(4, 4), cupy.ones((4, 4), cupy.int32)), InputTypeError,
                         "b: dtype int32"),
        "matmul 1-D": (lambda: gpumemlab.matmul(f32(5), f32(4, 4)), UsageError,
                       "matmul: shapes (5,) and (4, 4) do not align (a.shape[-1] = 5 != b.shape[-2] = 4)"),
        "matmul 3-D": (lambda: gpumemlab.matmul(f32(3, 4, 4), f32(2, 4, 4)), UsageError,
                       "matmul: batch shapes (3,) and (2,) do not broadcast"),
        "matmul shape mismatch": (lambda: gpumemlab.matmul(f32(4, 5), f32(4, 4)), UsageError,
                                  "matmul: shapes (4, 5) and (4, 4) do not align"),
        "matmul 0-D": (lambda: gpumemlab.matmul(f32(), f32(4, 4)), UsageError,
                       "matmul: operands must have at least one dimension"),
        "matmul out wrong shape": (lambda: gpumemlab.matmul(f32(4, 4), f32(4, 4), out=f32(4, 5)), UsageError,
                                   "out: shape (4, 5) != expected (4, 4)"),
        "matmul out wrong dtype": (lambda: gpumemlab.matmul(f32(4, 4), f32(4, 4), out=cupy.ones((4, 4))),
                                   InputTypeError, "out: dtype float64"),
        "matmul out overlaps": (lambda: (lambda a: gpumemlab.matmul(a, f32(4, 4), out=a))(f32(4, 4)), UsageError,
                                "out: overlaps an input"),
        "transpose axes short": (lambda: gpumemlab.transpose(f32(2, 3), (1,)), UsageError,
                                 "axes: (1,) don't match an array of dimension 2"),
        "transpose axes repeated": (lambda: gpumemlab.transpose(f32(2, 3, 4), [2, 2, 0]), UsageError,
                                    "axes: repeated axis in (2, 2, 0)"),
        "transpose axis out of range": (lambda: gpumemlab.transpose(f32(2, 3), (0, -3)), UsageError,
                                        "axes: axis -3 is out of bounds for array of dimension 2"),
        "transpose axes not ints": (lambda: gpumemlab.transpose(f32(2, 3), (0, "1")), InputTypeError,
                                    "axes: expected None or a sequence of ints, got (0, '1')"),
        "copy out wrong shape": (lambda: gpumemlab.copy(f32(8), out=f32(9)), UsageError, "out: shape (9,) != expected (8,)"),
        "copy out wrong dtype": (lambda: gpumemlab.copy(f32(8), out=cupy.ones(8)), InputTypeError, "out: dtype float64"),
        "copy out host": (lambda: gpumemlab.copy(f32(8), out=np.ones(8, np.float32)), InputTypeError,
                          "out: a NumPy (host) array"),
    }
    call, exc, words = calls[case]
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value) and "\n" not in str(info.value)
