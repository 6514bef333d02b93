"""The launch average (Finding.launch): every warp of every block, as Nsight Compute's Source Counters count."""

import json
from pathlib import Path

import pytest

from gpumemlab.cli import main
from gpumemlab.gpu.sass import find_nvdisasm
from gpumemlab.lint import launch, lint_file
from gpumemlab.lint.analysis import Options

IDIOMS = Path(__file__).parent / "idioms"

TAIL = """
__global__ void copy(float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = b[i];
}
__global__ void upper(float *out) {
    __shared__ float s[256];
    if (threadIdx.x < 64) s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
__global__ void scan(float *a, const float *b) {
    for (int k = 0; k < 40; ++k) a[threadIdx.x] += b[threadIdx.x + k];
}
__global__ void pick(float *out, const float *in, int n) {
    __shared__ float s[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    if (threadIdx.x < 8) s[threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.x < 32) v = threadIdx.x < 8 ? s[threadIdx.x] : 0.0f;
    if (i < n && in[i] > 0.0f) out[i] = v;
}
"""


def _lint(tmp_path, kernel, **kw):
    src = tmp_path / "k.cu"
    src.write_text(TAIL)
    (r,) = lint_file(str(src), Options(kernel=kernel, launch_average=True, **kw), resources=False)
    return r, {(f.line, f.access, f.text): f for f in r.findings}


def test_tail_warps_count_in_the_launch_average(tmp_path):
    # n = 1000, 4 blocks of 256: warps 0..30 full (4 sectors each), warp 31 of block 3 has lanes 992..999 (32 bytes
    # from 3968, one sector): (31 * 4 + 1) / 32; the analyzed warp alone says 4
    r, f = _lint(tmp_path, "copy", block=(256,), grid=(4,), lets={"n": 1000})
    load = f[(4, "load", "b[i]")]
    assert load.sectors_per_request == 4.0
    assert load.launch == dict(blocks=4, requests=32, sectors_per_request=3.906, ideal_sectors_per_request=3.906,
                               total=125, predicated=None,
                               issued_by="the warps with an executing lane (no SASS to tell a predicated instruction)")


def test_predicated_instruction_issues_in_every_warp_reaching_the_if(tmp_path):
    r, f = _lint(tmp_path, "upper", block=(256,), grid=(1,))
    store = f[(8, "store", "s[threadIdx.x]")]
    assert store.launch["wavefronts_per_request"] == 1.0 and store.launch["requests"] == 2
    # the same access compiled as @P0 STS: the 8 warps issue it, 2 have lanes: 2 wavefronts / 8 requests
    launch.attach(r, [(8, "shared", "store", 4, "STS", True), (10, "shared", "load", 4, "LDS", False)], (9, 0))
    assert store.launch["requests"] == 8 and store.launch["wavefronts_per_request"] == 0.25
    assert store.launch["predicated"] is True
    assert f[(10, "load", "s[threadIdx.x]")].launch["requests"] == 8


def test_predicated_loads_in_a_conditional_expression_issue_where_the_expression_is_reached(tmp_path):
    # n = 256 over 4 blocks of 256: blocks 1..3 have no lane with i < n, yet `@P LDG` issues in their 8 warps too
    r, f = _lint(tmp_path, "pick", block=(256,), grid=(4,), lets={"n": 256})
    sass = [(18, "global", "load", 4, "LDG", True), (21, "shared", "load", 4, "LDS", True),
            (22, "global", "load", 4, "LDG", True)]
    launch.attach(r, sass, (9, 0))
    load = f[(18, "load", "in[i]")]
    assert (load.launch["requests"], load.launch["total"], load.launch["sectors_per_request"]) == (32, 32, 1.0)
    # `threadIdx.x < 8 ? s[..] : 0` under `if (threadIdx.x < 32)`: only warp 0 reaches the `?:`, 1 wavefront
    sh = f[(21, "load", "s[threadIdx.x]")]
    assert (sh.launch["requests"], sh.launch["total"], sh.launch["wavefronts_per_request"]) == (4, 4, 1.0)
    # the right operand of `&&`: issued in every warp that evaluates `i < n && ...`
    rhs = f[(22, "load", "in[i]")]
    assert (rhs.launch["requests"], rhs.launch["total"]) == (32, 32)


def test_long_loops_run_to_their_end_for_the_launch(tmp_path):
    # 40 iterations (more than the analyzed warp's 17): b[t + k] is 5 sectors unless k % 8 == 0 (4 sectors)
    r, f = _lint(tmp_path, "scan", block=(32,), grid=(1,))
    load = f[(13, "load", "b[threadIdx.x + k]")]
    assert load.loops[0]["stopped"]  # the analyzed warp's numbers are the first iteration's
    assert load.launch["requests"] == 40 and load.launch["sectors_per_request"] == (5 * 4 + 35 * 5) / 40


def test_a_grid_too_large_has_no_launch_average(tmp_path):
    r, f = _lint(tmp_path, "copy", block=(32,), grid=(1000,), lets={"n": 1000})
    assert f[(4, "load", "b[i]")].launch == dict(
        unknown_reason="grid of 1000 blocks: lint runs at most 256 (give a smaller --grid)")


def test_json_has_the_launch_key_only_when_asked(tmp_path, capsys):
    src = tmp_path / "k.cu"
    src.write_text(TAIL)
    base = ["lint", str(src), "--kernel", "copy", "--block", "256", "--grid", "4", "--let", "n=1000",
            "--no-resources", "--json"]
    assert main(base) == 0
    (a, b) = json.loads(capsys.readouterr().out)["kernels"][0]["accesses"]
    assert a["launch"] is None
    assert main(base + ["--launch-average"]) == 0
    (a, b) = json.loads(capsys.readouterr().out)["kernels"][0]["accesses"]
    assert a["launch"]["requests"] == 32 and a["launch"]["total"] == 125


@pytest.fixture(scope="module")
def reduction():
    pytest.importorskip("cuda.core", reason="NVRTC (the cuda extra) compiles the kernel")
    if find_nvdisasm() is None:
        pytest.skip("needs nvdisasm (the test extra)")
    opts = dict(block=(256,), templates={"T": "float", "blockSize": "256", "nIsPow2": "true"}, lets={"n": 1 << 20},
                launch_average=True)
    return {r.name: {(f.line, f.access, f.text): f for f in r.findings}
            for r in lint_file(str(IDIOMS / "samples_reduction.cu"), Options(**opts))}


def test_tree_reductions_as_ncu_averages_them(reduction):
    # reduce0: `if (tid % (2*s) == 0)` predicated, 8 steps x 8 warps issue it; wavefronts: s = 1..16 every warp
    # (5 x 8), s = 32: 4, 64: 2, 128: 1 -> 47 / 64
    f = reduction["reduce0"][(87, "load", "sdata[tid + s]")]
    assert f.wavefronts_per_request == 1.0
    assert (f.launch["requests"], f.launch["total"], f.launch["wavefronts_per_request"]) == (16 * 64, 16 * 47, 0.734)
    # reduce3: `if (tid < s)`, s = 128 .. 1: warps with lanes 4, 2, then 1 for six steps -> 12 / 64
    f = reduction["reduce3"][(30, "store", "sdata[tid]")]
    assert (f.launch["requests"], f.launch["total"], f.launch["wavefronts_per_request"]) == (16 * 64, 16 * 12, 0.188)


ACCUMULATE = """
__global__ void row_sums(float *acc, const float *a, const float *x, int unused) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < 64; j++)
        acc[i] += a[i * 64 + j] * x[j];
}
__global__ void zeroed(float *acc, const float *a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    acc[i] = 0.0f;
    for (int j = 0; j < 64; j++)
        acc[i] += a[j * 1024 + i];
    __syncthreads();
    acc[i] *= 2.0f;
}
__global__ void branches(float *acc, const float *a) {
    if (threadIdx.x < 1) acc[threadIdx.x] = a[threadIdx.x];
    if (threadIdx.x == 0) acc[1] = acc[threadIdx.x];
}
__global__ void mean(float *acc, const float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    acc[i] = 0.0f;
    for (int j = 0; j < n; j++)
        acc[i] += a[j * 1024 + i];
    acc[i] /= n;
}
"""


def _accumulate(tmp_path, kernel):
    src = tmp_path / "acc.cu"
    src.write_text(ACCUMULATE)
    (r,) = lint_file(str(src), Options(kernel=kernel, block=(32,), grid=(1,), launch_average=True), resources=False)
    return r, {(f.line, f.access, f.text): f for f in r.findings}


def test_a_load_of_the_threads_last_store_is_kept_in_a_register(tmp_path):
    from gpumemlab.ncu import source

    # acc[i] += ...: loaded in the first of 64 iterations, then the value of the thread's own store is reused
    r, f = _accumulate(tmp_path, "row_sums")
    acc = f[(5, "load", "acc[i]")]
    assert acc.in_register["issued"] == round(1 / 64, 6) and acc.sectors_per_request == 4.0
    assert acc.launch["requests"] == 1  # one warp, the first iteration only
    # the line as ncu averages it: a[i * 64 + j] 32 sectors and x[j] 1, each 64 times; acc[i] 4 sectors once
    p = source.predicted_lines(r)[(5, "global", "load")]
    assert p["sum"]["sectors_per_request"] == 1 * 4 + 64 * 32 + 64 * 1 and p["weight"] == 1 + 64 + 64


def test_a_barrier_forgets_the_stored_value(tmp_path):
    r, f = _accumulate(tmp_path, "zeroed")
    # after `acc[i] = 0.0f` no execution loads acc[i]: no instruction on the loop's line for it
    assert f[(11, "load", "acc[i]")].in_register["issued"] == 0.0
    assert f[(11, "load", "acc[i]")].launch["requests"] == 0
    assert f[(11, "load", "a[j * 1024 + i]")].in_register is None
    assert f[(13, "load", "acc[i]")].in_register is None  # __syncthreads() in between: loaded again


TICKET = """
__global__ void one_pass(float *out, float *partial, unsigned *ticket) {
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = 1.0f;
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    out[threadIdx.x] = partial[threadIdx.x];
}
"""


def test_the_last_block_ticket_under_its_named_assumption(tmp_path):
    src = tmp_path / "t.cu"
    src.write_text(TICKET)
    (r,) = lint_file(str(src), Options(block=(32,), grid=(4,), launch_average=True), resources=False)
    f = {(x.line, x.access, x.text): x for x in r.findings}
    assert any("a ticket, assumed to start at 0 and be taken in blockIdx order" in n for n in r.notes)
    # block 0 (the analyzed one) draws ticket 0 of 4: not the last; the launch's block 3 runs the tail once
    tail = f[(11, "load", "partial[threadIdx.x]")]
    assert (tail.verdict, tail.unknown_reason) == ("not executed", None)
    assert (tail.launch["blocks"], tail.launch["requests"], tail.launch["sectors_per_request"]) == (1, 1, 4.0)


def test_a_store_in_another_branch_is_not_forwarded(tmp_path):
    # lane 0 stored acc[0] under `tid < 1`, but the compiler sees two branches: the load under `tid == 0` issues
    r, f = _accumulate(tmp_path, "branches")
    assert f[(17, "load", "acc[threadIdx.x]")].in_register is None


def test_the_value_stored_before_and_in_a_loop_reaches_its_exit(tmp_path):
    # acc[i] = 0 before the loop and acc[i] += in its body: after it, either value is in the register (any n)
    r, f = _accumulate(tmp_path, "mean")
    assert f[(23, "load", "acc[i]")].in_register["issued"] == 0.0
    assert f[(24, "load", "acc[i]")].in_register["issued"] == 0.0 and f[(24, "load", "acc[i]")].launch["requests"] == 0
