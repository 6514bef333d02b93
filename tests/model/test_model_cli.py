"""`gpumemlab analyze | occupancy | intensity` through gpumemlab.cli.main: output, JSON keys, exit codes."""

from __future__ import annotations

import json

import pytest

GLOBAL_KEYS = {"requests", "sectors", "lines", "sectors_per_request", "efficiency_pct", "verdict", "per_warp"}
SHARED_KEYS = {"wavefronts", "ideal_wavefronts", "conflicts", "ways", "verdict", "per_warp"}
OCCUPANCY_KEYS = {"blocks_per_sm", "active_warps", "max_warps", "occupancy_pct", "limiters", "limits"}


def test_analyze_text(run_cli):
    code, out, err = run_cli("analyze", "a[threadIdx.x*2]", "--decl", "float a[]", "--block", "32")
    assert (code, err) == (0, "")
    assert "sectors               8   (fewest possible 4)" in out
    assert "efficiency            50.0 %" in out
    assert "uncoalesced" in out and "8 bytes apart" in out


def test_analyze_json_global(run_cli):
    code, out, _ = run_cli("analyze", "idata[xid]", "--decl", "float idata[]", "--let",
                           "xid=blockIdx.x*blockDim.x + threadIdx.x + 1", "--json")
    r = json.loads(out)
    assert code == 0 and GLOBAL_KEYS <= set(r)
    assert (r["requests"], r["sectors"], r["efficiency_pct"], r["verdict"]) == (8, 40, 80.0, "uncoalesced")
    assert len(r["per_warp"]) == 8 and r["per_warp"][0]["sectors"] == 5


def test_analyze_json_shared_from_the_declaration(run_cli):
    code, out, _ = run_cli("analyze", "s[threadIdx.x][0]", "--decl", "__shared__ float s[32][32]", "--block", "32",
                           "--json")
    r = json.loads(out)
    assert code == 0 and SHARED_KEYS <= set(r)
    assert (r["space"], r["wavefronts"], r["ideal_wavefronts"], r["conflicts"], r["ways"]) == ("shared", 32, 1, 31, 32)
    assert r["verdict"] == "32-way bank conflict"


def test_analyze_space_flag_and_2d_block(run_cli):
    code, out, _ = run_cli("analyze", "s[threadIdx.y][threadIdx.x]", "--decl", "float s[32][33]", "--space", "shared",
                           "--block", "32,32", "--json")
    r = json.loads(out)
    assert (code, r["space"], r["wavefronts"], len(r["per_warp"])) == (0, "shared", 32, 32)


def test_analyze_historical_transactions(run_cli):
    code, out, _ = run_cli("analyze", "a[threadIdx.x+1]", "--decl", "float a[]", "--block", "32", "--cc", "1.2",
                           "--json")
    assert code == 0 and json.loads(out)["transactions"] == [128, 64, 32]
    code, out, _ = run_cli("analyze", "a[threadIdx.x+1]", "--decl", "float a[]", "--block", "32", "--cc", "1.1")
    assert "32 (32 x 32 B; 1024 bytes)" in out and "k-th word" in out


def test_analyze_per_warp_table_when_warps_differ(run_cli):
    code, out, _ = run_cli("analyze", "sdata[index]", "--decl", "__shared__ float sdata[256]", "--let", "s=1",
                           "--let", "index=2*s*threadIdx.x", "--active", "index < blockDim.x")
    assert code == 0 and "per warp:" in out and "not executed" in out and "2-way bank conflict" in out


def test_occupancy(run_cli):
    code, out, _ = run_cli("occupancy", "--threads", "256", "--regs", "64", "--json")
    r = json.loads(out)
    assert code == 0 and OCCUPANCY_KEYS <= set(r)
    assert (r["blocks_per_sm"], r["active_warps"], r["max_warps"], r["occupancy_pct"], r["limiters"]) == \
        (4, 32, 64, 50.0, ["registers"])
    code, out, _ = run_cli("occupancy", "--threads", "1024", "--regs", "65")
    assert code == 0 and "blocks per SM        0" in out and "cannot launch" in out
    code, out, _ = run_cli("occupancy", "--threads", "128", "--regs", "32", "--smem", "60000", "--cc", "8.0")
    assert code == 0 and "cudaFuncSetAttribute" in out and "blocks per SM        2" in out
    code, out, _ = run_cli("occupancy", "--threads", "128", "--regs", "32", "--smem", "60000", "--cc", "8.0",
                           "--no-opt-in")
    assert code == 0 and "blocks per SM        0" in out and "without the opt-in" in out


def test_intensity_values(run_cli):
    for kernel, want in (("naive", 0.25), ("tiled", 8.0), ("coarsened", 12.8)):
        code, out, _ = run_cli("intensity", kernel, "--json", "--device", "h100")
        assert code == 0 and json.loads(out)["op_per_byte"] == want
    code, out, _ = run_cli("intensity", "tiled", "--tile", "16", "--peak-gflops", "1000", "--bandwidth-gbs", "100",
                           "--json")
    r = json.loads(out)
    assert (r["op_per_byte"], r["ridge_op_per_byte"], r["bound_gflops"], r["bound"]) == (4.0, 10.0, 400.0, "memory")


def test_intensity_without_a_device_answers_the_op_per_byte(run_cli, monkeypatch):
    from gpumemlab.gpu import runtime

    monkeypatch.setattr(runtime, "current_device_name", lambda: None)
    code, out, _ = run_cli("intensity")
    assert code == 0 and "0.25" in out and "12.8" in out and "device unknown" in out
    code, out, _ = run_cli("intensity", "tiled", "--json")
    r = json.loads(out)
    assert (r["op_per_byte"], r["device"]) == (8.0, None) and "device unknown" in r["note"]


def test_intensity_uses_this_gpu_when_it_is_in_the_table(run_cli, monkeypatch):
    from gpumemlab.gpu import runtime

    monkeypatch.setattr(runtime, "current_device_name", lambda: "NVIDIA H100 80GB HBM3")
    code, out, _ = run_cli("intensity", "tiled")
    assert code == 0 and "H100 SXM" in out and "memory-bound" in out and "this GPU" in out
    monkeypatch.setattr(runtime, "current_device_name", lambda: "NVIDIA Mystery")
    code, out, _ = run_cli("intensity", "tiled")
    assert code == 0 and "not in the device table" in out


@pytest.mark.parametrize("argv, message", [
    # unknown type
    (["analyze", "a[threadIdx.x]", "--decl", "flot a[]"], "unknown element type 'flot'"),
    # unparsable expressions
    (["analyze", "a[threadIdx.x", "--decl", "float a[]"], "cannot parse access 'a[threadIdx.x': expected ']'"),
    (["analyze", "a[i]", "--decl", "float a[]", "--let", "i=threadIdx.x +"], "cannot parse --let i"),
    (["analyze", "a[threadIdx.x]", "--decl", "float a[]", "--active", "threadIdx.x <"], "cannot parse --active"),
    (["analyze", "a[i]", "--decl", "float a[]"], "unknown name 'i' (give it with --let i=EXPR)"),
    (["analyze", "b[threadIdx.x]", "--decl", "float a[]"], "reads 'b' but the declaration names 'a'"),
    # out-of-range compute capability
    (["analyze", "a[0]", "--decl", "float a[]", "--cc", "13.5"], "unknown compute capability 13.5"),
    (["analyze", "a[0]", "--decl", "float a[]", "--cc", "nine"], "bad compute capability 'nine'"),
    (["occupancy", "--threads", "128", "--regs", "32", "--cc", "6.1"], "occupancy is not modelled for compute capability 6.1"),
    # negative sizes
    (["occupancy", "--threads", "128", "--regs", "32", "--smem", "-1"], "--smem must be >= 0 bytes"),
    (["occupancy", "--threads", "-128", "--regs", "32"], "threads per block must be a positive integer"),
    (["occupancy", "--threads", "128", "--regs", "-2"], "registers per thread must be 0..255"),
    (["analyze", "s[threadIdx.x]", "--decl", "__shared__ float s[-32]"], "array dimensions must be positive"),
    (["analyze", "a[threadIdx.x]", "--decl", "float a[]", "--block", "-32"], "bad block '-32'"),
    (["analyze", "a[threadIdx.x]", "--decl", "float a[]", "--offset", "-4"], "--offset must be >= 0"),
    # blocks larger than CUDA allows
    (["analyze", "a[threadIdx.x]", "--decl", "float a[]", "--block", "2048"], "CUDA allows at most 1024"),
    (["analyze", "a[threadIdx.x]", "--decl", "float a[]", "--block", "64,32"], "has 2048 threads"),
    (["occupancy", "--threads", "2048", "--regs", "32"], "2048 threads per block: CUDA allows at most 1024"),
    # other mistakes a user can make
    (["analyze", "a[threadIdx.x]", "--decl", "float4 a[]", "--offset", "8"], "misaligned access"),
    (["analyze", "s[threadIdx.x]", "--decl", "__shared__ float s[16]", "--block", "32"], "outside 0..15"),
    (["analyze", "a[threadIdx.x]", "--decl", "float a[]", "--active", "threadIdx.x > 5000"], "selects none"),
    (["analyze", "a[threadIdx.x].x", "--decl", "float a[]"], "float has no member .x"),
    (["analyze", "s[threadIdx.x]", "--decl", "float s[32][32]"], "gives 1 index(es) but s has 2"),
    (["analyze", "a[threadIdx.x]", "--decl", "__shared__ float a[64]", "--space", "global"], "is __shared__"),
    (["occupancy", "--threads", "128"], "give --regs (registers per thread) or --kernel NAME"),
    (["intensity", "gemm"], "unknown kernel 'gemm'"),
    (["intensity", "tiled", "--coarsen", "4"], "tiled has no coarsening"),
    (["intensity", "naive", "--device", "fx5800"], "unknown device 'fx5800'"),
    (["intensity", "naive", "--peak-gflops", "100"], "give both --peak-gflops and --bandwidth-gbs"),
])
def test_bad_input_is_one_line_and_exit_2(run_cli, argv, message):
    code, out, err = run_cli(*argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"gpumemlab {argv[0]}: ")
    assert message in err


@pytest.mark.parametrize("argv, message", [
    (["occupancy", "--threads", "abc", "--regs", "32"], "invalid int value: 'abc'"),
    (["analyze", "a[0]"], "required: --decl"),
    (["analyze", "a[0]", "--decl", "float a[]", "--space", "texture"], "invalid choice: 'texture'"),
])
def test_argparse_errors_exit_2_in_one_line(run_cli, argv, message):
    code, out, err = run_cli(*argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"gpumemlab {argv[0]}: error: ") and message in err


def test_occupancy_from_a_built_in_kernel(run_cli):
    pytest.importorskip("cuda.core")
    from gpumemlab.kernels import all_specs

    specs = all_specs()
    if not specs:
        pytest.skip("no built-in kernels yet")
    try:
        from gpumemlab.gpu.compile import nvrtc_version

        nvrtc_version()
    except Exception as exc:  # no NVRTC on this machine
        pytest.skip(f"NVRTC unavailable: {exc}")
    code, out, err = run_cli("occupancy", "--threads", "256", "--kernel", specs[0].label, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["kernel"]["name"] == specs[0].label and r["regs"] == r["kernel"]["registers"] > 0
    code, _, err = run_cli("occupancy", "--threads", "256", "--kernel", "no_such_kernel_xyz")
    assert code == 2 and "is not a built-in kernel" in err
