"""The CPU side of --validate: microkernel cases and source, ncu CSV parsing, reruns, the report.

ncu itself is replaced by a small script (GPUMEMLAB_NCU) that writes what ncu and the child would.
"""

from __future__ import annotations

import json
import re
import stat
import sys
import textwrap

import numpy as np
import pytest

from gpumemlab.ncu import cases as ncu_cases, runner as ncu_runner
from gpumemlab.model import coalescing, resolve

FAKE_NCU = textwrap.dedent('''\
    #!{python}
    """Stands in for ncu + the child: status file, raw-page CSV; FAKE_NCU_MODE picks the behaviour."""
    import json, os, sys
    args = sys.argv[1:]
    log = args[args.index("--log-file") + 1]
    metrics = args[args.index("--metrics") + 1].split(",")
    cases_path, status_path = args[-2], args[-1]
    cases = json.load(open(cases_path))
    mode = os.environ.get("FAKE_NCU_MODE", "ok")
    with open(os.environ["FAKE_NCU_CALLS"], "a") as fh:
        fh.write(json.dumps([c["name"] for c in cases]) + "\\n")
    if mode == "hang":
        import time
        time.sleep(60)
    if mode == "nothing":
        print("==ERROR== ERR_NVGPUCTRPERM - no permission to access GPU performance counters", file=sys.stderr)
        sys.exit(1)
    status = dict(device=dict(name="FakeGPU", cc=[9, 0]), done=[], errors={{}}, fatal=None)
    def value(case, metric):
        forced = json.loads(os.environ.get("FAKE_METRICS", "{{}}")).get(case["name"], {{}})
        if metric in forced:
            return forced[metric]
        offs = [o for o in case["offsets"] if o >= 0]
        if "sectors" in metric:
            return len({{o // 32 for o in offs}})
        return 1 if ("requests" in metric or "wavefronts" in metric) else 0
    head = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
            "Grid Size", "Device", "CC"] + metrics
    rows = [head, [""] * 11 + ["unit"] * len(metrics)]
    code = 0
    for i, case in enumerate(cases):
        if mode == "crash:" + case["name"]:
            status["running"] = status["fatal"] = case["name"]
            status["errors"][case["name"]] = "launch: CUDA_ERROR_ILLEGAL_ADDRESS"
            code = 3
            break
        status["done"].append(case["name"])
        rows.append([str(i), "1", "python", "host", case["name"], "1", "7", "(32, 1, 1)", "(1, 1, 1)", "0", "9.0"]
                    + ["{{:,}}".format(value(case, m)) for m in metrics])
    json.dump(status, open(status_path, "w"))
    with open(log, "w") as fh:
        fh.write("==PROF== Connected to process 1\\n")
        for r in rows:
            fh.write(",".join('"' + c + '"' for c in r) + "\\n")
    sys.exit(code)
''')


@pytest.fixture
def fake_ncu(tmp_path, monkeypatch):
    path = tmp_path / "ncu"
    path.write_text(FAKE_NCU.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    calls = tmp_path / "calls.jsonl"
    calls.write_text("")
    monkeypatch.setenv("GPUMEMLAB_NCU", str(path))
    monkeypatch.setenv("FAKE_NCU_CALLS", str(calls))
    return lambda: [json.loads(line) for line in calls.read_text().splitlines()]


def case(access, decl, name="gml_case", **kw):
    return ncu_cases.case_from_lanes(name, resolve(access, decl, block=kw.pop("block", 32), **kw))


# ---------------------------------------------------------------- cases

def test_case_bakes_every_thread_offset_and_marks_idle_threads():
    c = case("a[threadIdx.x * 2]", "float a[]", active="threadIdx.x < 4")
    assert c["offsets"][:5] == [0, 8, 16, 24, -1] and set(c["offsets"][4:]) == {-1}
    assert (c["space"], c["ctype"], c["block"]) == ("global", "float", [32, 1, 1])


def test_negative_offsets_get_a_256_byte_margin_that_keeps_alignment():
    c = case("a[(int)threadIdx.x - 1]", "float a[]")  # int: thread 0 reads a[-1] (unsigned would wrap)
    assert c["offsets"][0] == 252 and c["offsets"][1] == 256


def test_members_are_loaded_at_the_member_offset():
    c = case("a[threadIdx.x].z", "float4 a[]")
    assert (c["ctype"], c["offsets"][:2]) == ("float", [8, 24])


def test_huge_footprints_are_compacted_without_changing_sectors_or_lines():
    lanes = resolve("a[threadIdx.x * 50000000 + (threadIdx.x % 3)]", "float a[]", block=32)
    c = ncu_cases.case_from_lanes("gml_big", lanes)
    off = np.asarray(c["offsets"])
    assert off.max() < 1 << 20
    assert coalescing.request_stats(off, 4) == coalescing.request_stats(lanes.addresses[0], 4)


def test_a_float3_spanning_two_lines_stays_contiguous_after_compaction():
    lanes = resolve("a[threadIdx.x * 100000000 + 10]", "float3 a[]", block=32)  # 120..131: two lines
    off = np.asarray(ncu_cases.case_from_lanes("gml_f3", lanes)["offsets"])
    for k in range(3):
        assert coalescing.request_stats(off + 4 * k, 4) == coalescing.request_stats(lanes.addresses[k], 4)


def test_shared_cases_beyond_48_kib_are_refused():
    from gpumemlab.errors import UsageError

    with pytest.raises(UsageError, match="needs 63616 bytes of shared memory"):
        case("s[threadIdx.x * 512]", "__shared__ float s[16384]")


# ---------------------------------------------------------------- the microkernels compile to the loads counted

def _ptx(source: str) -> str:
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc")
    try:
        err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"gml.cu", 0, [], [])
        opts = [b"--gpu-architecture=compute_90", b"-std=c++17"]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    except Exception as exc:  # NVRTC library missing
        pytest.skip(f"NVRTC unavailable: {exc}")
    if int(err):
        _, n = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * n
        nvrtc.nvrtcGetProgramLog(prog, log)
        pytest.fail(log.decode())
    _, n = nvrtc.nvrtcGetPTXSize(prog)
    buf = b" " * n
    nvrtc.nvrtcGetPTX(prog, buf)
    return buf.decode()


def _loads_by_kernel(ptx: str) -> dict[str, list[str]]:
    out, cur = {}, None
    for line in ptx.splitlines():
        m = re.match(r"\.visible \.entry (\w+)", line)
        if m:
            cur = out.setdefault(m.group(1), [])
        elif cur is not None and (m := re.search(r"\bld\.(global|shared)(\.\w+)+", line)):
            cur.append(m.group(0))
    return out


@pytest.mark.parametrize("access, decl, loads", [
    ("a[threadIdx.x]", "float3 a[]", ["ld.global.f32"] * 3),
    ("a[threadIdx.x]", "float4 a[]", ["ld.global.v4.f32"]),
    ("a[threadIdx.x].y", "float2 a[]", ["ld.global.f32"]),
    ("a[threadIdx.x]", "double2 a[]", ["ld.global.v2.f64"]),
    ("a[threadIdx.x * 3]", "char a[]", ["ld.global.s8"]),
    ("a[threadIdx.x]", "int a[]", ["ld.global.u32"]),
    ("s[threadIdx.x]", "__shared__ double s[32]", ["ld.shared.f64"]),
    ("s[threadIdx.x][1]", "__shared__ float4 s[32][2]", ["ld.shared.v4.f32"]),
    ("s[threadIdx.x]", "__shared__ float3 s[32]", ["ld.shared.f32"] * 3),
    ("s[threadIdx.x]", "__shared__ unsigned short s[32]", ["ld.shared.u16"]),
])
def test_each_microkernel_keeps_exactly_the_modelled_loads(access, decl, loads):
    c = case(access, decl)
    ptx = _ptx(ncu_cases.microkernel_source([c]))
    assert sorted(_loads_by_kernel(ptx)["gml_case"]) == sorted(loads)


# ---------------------------------------------------------------- ncu output

RAW = '''==PROF== Connected to process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
"","","","","","","","","","","","request","sector"
"0","4242","python","h","gml_a","1","7","(32, 1, 1)","(1, 1, 1)","0","9.0","1","5"
"1","4242","python","h","void gml_b(const char *, float *, float)","1","7","(32, 1, 1)","(1, 1, 1)","0","9.0","3","1,024"
==PROF== Disconnected from process 4242
'''

DETAILS = '''"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1","python","h","gml_s","1","7","(32, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum","","32"
"0","1","python","h","gml_s","1","7","(32, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","","31"
'''


def test_parse_raw_page():
    got = ncu_runner.parse_ncu_csv(RAW)
    assert got["gml_a"] == {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1.0,
                            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 5.0}
    assert got["gml_b"]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 1024.0
    assert set(got) == {"gml_a", "gml_b"}


def test_parse_details_page():
    got = ncu_runner.parse_ncu_csv(DETAILS)
    assert got == {"gml_s": {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 32.0,
                             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 31.0}}


# ---------------------------------------------------------------- measure(): batching and reruns

def test_measure_runs_all_cases_in_one_ncu_call(fake_ncu):
    cases = [case("a[threadIdx.x * 2]", "float a[]", "gml_a"), case("s[0]", "__shared__ float s[32]", "gml_s")]
    res = ncu_runner.measure(cases)
    assert res["device"] == {"name": "FakeGPU", "cc": [9, 0]}
    assert res["measured"] == {"gml_a": {"requests": 1, "sectors": 8}, "gml_s": {"wavefronts": 1, "conflicts": 0}}
    assert res["errors"] == {} and fake_ncu() == [["gml_a", "gml_s"]]


def test_a_case_that_breaks_the_context_is_dropped_and_the_rest_rerun(fake_ncu, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "crash:gml_b")
    cases = [case("a[threadIdx.x]", "float a[]", n) for n in ("gml_a", "gml_b", "gml_c", "gml_d")]
    res = ncu_runner.measure(cases)
    assert sorted(res["measured"]) == ["gml_a", "gml_c", "gml_d"]
    assert res["errors"]["gml_b"].startswith("launch: CUDA_ERROR_ILLEGAL_ADDRESS")
    assert fake_ncu() == [["gml_a", "gml_b", "gml_c", "gml_d"], ["gml_c", "gml_d"]]


def test_when_ncu_measures_nothing_every_case_says_why(fake_ncu, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "nothing")
    res = ncu_runner.measure([case("a[threadIdx.x]", "float a[]", "gml_a")])
    assert res["device"] is None and res["measured"] == {}
    assert "ERR_NVGPUCTRPERM" in res["errors"]["gml_a"]
    assert len(fake_ncu()) == 1  # no pointless reruns


def test_a_hanging_ncu_is_stopped_at_the_timeout(fake_ncu, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "hang")
    res = ncu_runner.measure([case("a[threadIdx.x]", "float a[]", "gml_a")], timeout=1.5)
    assert "timed out after 2 s" in res["errors"]["gml_a"] and res["measured"] == {}


def test_missing_ncu_is_one_clear_error(monkeypatch):
    from gpumemlab.errors import GpumemlabError

    monkeypatch.setenv("GPUMEMLAB_NCU", "/nonexistent/ncu")
    monkeypatch.setattr(ncu_runner.shutil, "which", lambda _: None)
    monkeypatch.setattr(ncu_runner.Path, "exists", lambda self: False)
    with pytest.raises(GpumemlabError, match="Nsight Compute"):
        ncu_runner.find_ncu()


# ---------------------------------------------------------------- gpumemlab analyze --validate

def test_cli_validate_agrees(run_cli, fake_ncu):
    code, out, err = run_cli("analyze", "a[threadIdx.x + 1]", "--decl", "float a[]", "--block", "32", "--validate")
    assert code == 0, err
    assert "validated on FakeGPU (cc 9.0)" in out
    assert re.search(r"sectors\s+5\s+5\s+ok", out)


def test_cli_validate_reports_a_difference(run_cli, fake_ncu, monkeypatch):
    monkeypatch.setenv("FAKE_METRICS", json.dumps({"gml_case_0": {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 6}}))
    code, out, _ = run_cli("analyze", "a[threadIdx.x + 1]", "--decl", "float a[]", "--block", "32", "--validate",
                           "--cc", "8.0")
    assert code == 1
    assert re.search(r"sectors\s+5\s+6\s+DIFFERS", out) and "not the --cc 8.0 given" in out


def test_cli_validate_json_for_shared(run_cli, fake_ncu, monkeypatch):
    monkeypatch.setenv("FAKE_METRICS", json.dumps({"gml_case_0": {
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 32,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 31}}))
    code, out, _ = run_cli("analyze", "s[threadIdx.x][0]", "--decl", "__shared__ float s[32][32]", "--block", "32",
                           "--validate", "--json")
    r = json.loads(out)
    assert code == 0 and r["agree"] is True
    assert r["predicted"] == r["measured"] == {"wavefronts": 32, "conflicts": 31}


def test_cli_validate_without_a_gpu_is_one_line(run_cli, fake_ncu, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "nothing")
    code, out, err = run_cli("analyze", "a[threadIdx.x]", "--decl", "float a[]", "--validate")
    assert code == 2 and out == "" and err.count("\n") == 1 and "ERR_NVGPUCTRPERM" in err


# ---------------------------------------------------------------- gpumemlab.ncu.recorded end to end (fake ncu)

def test_validate_analyzer_tool_writes_the_recorded_expectations(fake_ncu, tmp_path, capsys):
    from gpumemlab.ncu import recorded as tool

    assert len(tool.CASES) >= 40 and len({c["name"] for c in tool.CASES}) == len(tool.CASES)
    code = tool.main([str(tmp_path), "--skip-occupancy", "--only", "g_float_offset1", "s_float_broadcast"])
    out = capsys.readouterr().out
    assert code == 0 and "2 of 2 agree" in out
    doc = json.loads((tmp_path / "ncu_cases.json").read_text())
    assert doc["device"] == {"name": "FakeGPU", "cc": [9, 0]} and doc["cc"] == [9, 0]
    got = {c["name"]: c["measured"] for c in doc["cases"]}
    assert got == {"g_float_offset1": {"requests": 1, "sectors": 5}, "s_float_broadcast": {"wavefronts": 1, "conflicts": 0}}
    assert fake_ncu() == [["gml_g_float_offset1", "gml_s_float_broadcast"]]
