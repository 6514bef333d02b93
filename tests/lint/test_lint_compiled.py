"""As written and as compiled: lint's accesses against the SASS memory instructions NVRTC made of them."""

from pathlib import Path

import pytest

from gpumemlab.gpu.sass import find_nvdisasm
from gpumemlab.lint import lint_file
from gpumemlab.lint.analysis import Options
from gpumemlab.lint.compiled import memory_instructions

IDIOMS = Path(__file__).parent / "idioms"

NVDISASM_G = """\
\t.section\t.text._Z1kPf,"ax",@progbits
\t//## File "gpumemlab", line 4
        /*0090*/                   LDG.E R9, desc[UR6][R2.64+0x4] ;
\t//## File "gpumemlab", line 5
        /*00e0*/                   STS.64 [R0], R8 ;
        /*00f0*/              @!P0 LDG.E.128.CONSTANT R4, desc[UR6][R2.64] ;
        /*0100*/                   LDS.U8 R10, [R0] ;
        /*0110*/                   ST.E.64 desc[UR6][R4.64], R10 ;
        /*0120*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
"""


def test_memory_instructions_read_line_space_kind_and_width():
    assert memory_instructions(NVDISASM_G) == {"_Z1kPf": [
        (4, "global", "load", 4, "LDG.E", False), (5, "shared", "store", 8, "STS.64", False),
        (5, "global", "load", 16, "LDG.E.128.CONSTANT", True), (5, "shared", "load", 1, "LDS.U8", False),
        (5, "global", "store", 8, "ST.E.64", False)]}


@pytest.fixture(scope="module")
def prescan():
    pytest.importorskip("cuda.core", reason="NVRTC (the cuda extra) compiles the kernel")
    if find_nvdisasm() is None:
        pytest.skip("needs nvdisasm (the test extra)")
    (r,) = lint_file(str(IDIOMS / "samples_histogram_scan.cu"),
                     Options(kernel="prescan", block=(128,), lets={"n": 256}))
    return {(f.line, f.text, f.access): f for f in r.findings}


def test_two_shared_stores_compiled_as_one_sts64(prescan):
    # temp[2t] and temp[2t + 1] (lines 93, 94): as written 2 requests, words 2t -> 2-way, 2 wavefronts each;
    # ptxas knows the shared array is 8-byte aligned and stores both with one STS.64: 32 lanes x 8 bytes in two
    # half-warp phases of 128 contiguous bytes -> 2 wavefronts in all, no conflict.
    for line, text in ((93, "temp[2 * thid]"), (94, "temp[2 * thid + 1]")):
        f = prescan[(line, text, "store")]
        assert (f.wavefronts_per_request, f.conflict_ways) == (2.0, 2)
        assert f.compiled == dict(instruction="STS.64", line=94, how="merged", element_bytes=8, accesses_lines=[93, 94],
                                  requests=1, wavefronts_per_request=2.0, ideal_wavefronts_per_request=2.0,
                                  conflict_ways=1, total=2.0, total_as_written=4.0, requests_per_execution=1.0)


def test_global_loads_of_a_4_byte_aligned_pointer_stay_as_written(prescan):
    assert prescan[(93, "g_idata[2 * thid]", "load")].compiled is None
    assert prescan[(94, "g_idata[2 * thid + 1]", "load")].compiled is None


def test_a_load_narrowed_to_the_byte_it_uses_is_not_called_a_split():
    pytest.importorskip("cuda.core", reason="NVRTC (the cuda extra) compiles the kernel")
    if find_nvdisasm() is None:
        pytest.skip("needs nvdisasm (the test extra)")
    (r,) = lint_file(str(IDIOMS / "samples_histogram_scan.cu"),
                     Options(kernel="histogram256Kernel", block=(192,), lets={"dataCount": 1 << 20}))
    (f,) = [f for f in r.findings if f.text == "d_Data[pos]"]
    assert f.compiled is None and f.sectors_per_request == 4.0


def test_a_merge_takes_its_partner_at_the_instruction_not_a_loop_touching_the_same_words(prescan):
    # lines 117/118 read temp[2t], temp[2t + 1] (one LDS.64 at line 117); the up-sweep's temp[ai], temp[bi] (line 100)
    # read the same words at its first iteration but stay 4-byte loads: its later iterations are not adjacent
    for line, text in ((117, "temp[2 * thid]"), (118, "temp[2 * thid + 1]")):
        c = prescan[(line, text, "load")].compiled
        assert (c["instruction"], c["line"], c["accesses_lines"]) == ("LDS.64", 117, [117, 118])
    assert prescan[(100, "temp[ai]", "load")].compiled is None and prescan[(100, "temp[bi]", "load")].compiled is None



def test_an_unrolled_loops_iterations_compiled_as_one_lds128():
    pytest.importorskip("cuda.core", reason="NVRTC (the cuda extra) compiles the kernel")
    if find_nvdisasm() is None:
        pytest.skip("needs nvdisasm (the test extra)")
    from gpumemlab.ncu import source

    (r,) = lint_file(str(IDIOMS / "samples_matmul.cu"),
                     Options(block=(32, 32), templates={"BLOCK_SIZE": "32"}, lets={"wA": 1024, "wB": 1024}))
    (f,) = [f for f in r.findings if f.compiled]
    # #pragma unroll: AS(ty, k) .. AS(ty, k + 3), one row's consecutive words, the same for the whole warp, in one
    # LDS.128: a broadcast served in 2 half-warp phases -> 2 wavefronts for 4 iterations (as written 4 x 1)
    assert (f.text, f.compiled["instruction"], f.compiled["how"]) == ("AS(ty, k)", "LDS.128", "merged iterations")
    assert (f.compiled["wavefronts_per_request"], f.compiled["requests_per_execution"], f.compiled["total_as_written"]) \
        == (2.0, 0.25, 4.0)
    # the line as ncu counts it: one LDS.128 (2 wavefronts) and four LDS of BS(k, tx) (1 each) per 4 iterations
    p = source.predicted_lines(r)[(26, "shared", "load")]
    assert round(p["sum"]["wavefronts_per_request"] / p["weight"], 3) == 1.2


ROW_TIMES_COLUMN = """
#define TILE 32
template <int W> __global__ void row_times_column(float *c, const float *b, int n, int m) {
    __shared__ float row[32][TILE];
    row[threadIdx.y][threadIdx.x] = b[threadIdx.y * TILE + threadIdx.x];
    __syncwarp();
    float sum = 0.0f;
    for (int i = 0; i < TILE; i++) sum += row[threadIdx.y][i] * b[i * n + threadIdx.x];
    for (int i = 0; i < W; i += 2) sum += row[threadIdx.y][i];
    for (int i = 0; i < m; i++) sum += row[threadIdx.y][i];
    c[threadIdx.y * n + threadIdx.x] = sum;
}
"""


def test_a_loop_of_constant_trip_count_is_unrolled_without_a_pragma(tmp_path):
    from gpumemlab.lint.interp import PEEK_ITERATIONS

    src = tmp_path / "k.cu"
    src.write_text(ROW_TIMES_COLUMN)
    (r,) = lint_file(str(src), Options(block=(32, 8), templates={"W": "64"}, lets={"n": 1024, "m": 64}),
                     resources=False)
    loads = {f.line: f for f in r.findings if f.space == "shared" and f.access == "load"}
    # a macro's and a template parameter's bound: the first iterations are kept (what a vectorized unroll spans)
    assert [loads[k].loops[0]["iterations_evaluated"] for k in (8, 9, 10)] == [PEEK_ITERATIONS, PEEK_ITERATIONS, 1]
    assert loads[8].loops[0]["stopped"] == "about 32 iterations, more than 17"  # a run-time bound (line 10): 1


def test_ptxas_vectorizes_a_constant_trip_loop_without_a_pragma(tmp_path):
    pytest.importorskip("cuda.core", reason="NVRTC (the cuda extra) compiles the kernel")
    if find_nvdisasm() is None:
        pytest.skip("needs nvdisasm (the test extra)")
    src = tmp_path / "k.cu"
    src.write_text(ROW_TIMES_COLUMN.replace("template <int W> ", "").replace(
        "    for (int i = 0; i < W; i += 2) sum += row[threadIdx.y][i];\n", ""))
    (r,) = lint_file(str(src), Options(block=(32, 8), lets={"n": 1024, "m": 64}))
    (f,) = [f for f in r.findings if f.compiled]
    # row[ty][i] .. row[ty][i + 3]: one LDS.128 broadcast, 2 wavefronts for 4 iterations
    assert (f.line, f.compiled["instruction"], f.compiled["how"], f.compiled["wavefronts_per_request"]) == \
        (8, "LDS.128", "merged iterations", 2.0)
