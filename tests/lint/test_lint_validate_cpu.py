"""lint --validate without a GPU: the plan, ncu's SASS source page and nvdisasm's line table parsed, the comparison."""

import shutil
from pathlib import Path

import pytest

from gpumemlab.cli import main
from gpumemlab.lint import lint_file
from gpumemlab.lint.analysis import Options
from gpumemlab.ncu import source

CORPUS = Path(__file__).parent / "corpus"
NAIVE = Options(kernel="transposeNaive", block=(32, 8), lets={"width": 1024, "height": 1024})

HEADER = ('"Address","Source","Instructions Executed","Address Space","Access Operation","Access Size",'
          '"L1 Conflicts Shared N-Way","L1 Wavefronts Shared","L1 Wavefronts Shared Ideal",'
          '"L2 Theoretical Sectors Global","L2 Theoretical Sectors Global Ideal"')
# the shape of ncu's --page source --print-source sass --csv output (a kernel may be listed twice: the first counts)
PAGE = "\n".join([
    "==PROF== Connected to process 1",
    '"Kernel Name","transposeNaive(float *, const float *, int, int)",', HEADER,
    '"0x7f0000000000","      LDC R1, c[0x0][0x28]","8","-","-","-","0","0","0","0","0"',
    '"0x7f0000000010","      LDG.E R11, desc[UR4][R2.64]","8","Global","Load","32","0","0","0","32","32"',
    '"0x7f0000000020","      STG.E desc[UR4][R4.64], R11","8","Global","Store","32","0","0","0","256","32"',
    '"Kernel Name","transposeNaive(float *, const float *, int, int)",', HEADER,
    '"0x7f0000000000","      LDC R1, c[0x0][0x28]","99","-","-","-","0","0","0","0","0"',
])
LINES = "\n".join([
    "//--------------------- .text._Z14transposeNaivePfPKfii --------------------------",
    "\t.section\t.text._Z14transposeNaivePfPKfii,\"ax\",@progbits",
    '\t//## File "gpumemlab", line 9', "        /*0000*/                   LDC R1, c[0x0][0x28] ;",
    '\t//## File "gpumemlab", line 12', "        /*0010*/                   LDG.E R11, desc[UR4][R2.64] ;",
    "        /*0020*/                   STG.E desc[UR4][R4.64], R11 ;",
])
SYMBOLS = {"transposeNaive": "_Z14transposeNaivePfPKfii"}


def test_sass_page_rows_of_the_first_listing():
    rows = source.parse_sass_page(PAGE)["transposeNaive"]
    assert [(r["space"], r["operation"], r["executed"], r["sectors"], r["ideal_sectors"]) for r in rows] == [
        ("-", "-", 8, 0, 0), ("Global", "Load", 8, 32, 32), ("Global", "Store", 8, 256, 32)]


def test_template_kernel_names_lose_their_return_type_and_arguments():
    assert source._base_name("offset_copy") == "offset_copy"  # extern "C": ncu prints the bare symbol
    assert source._base_name("void transpose_naive<float, 32, 8>(float *, const float *, int, int)") == \
        "transpose_naive"


def test_line_table_from_nvdisasm():
    assert source.parse_line_info(LINES) == {"_Z14transposeNaivePfPKfii": {0: 9, 16: 12, 32: 12}}


def test_comparison_per_line_and_access():
    reports = lint_file(str(CORPUS / "transpose_samples.cu"), NAIVE, resources=False)
    rows = source.compare(reports, source.parse_sass_page(PAGE), source.parse_line_info(LINES), SYMBOLS)
    assert [(r["line"], r["space"], r["access"], r["lint"], r["ncu"], r["agree"]) for r in rows] == [
        (12, "global", "load", [4.0, 4.0], [4.0, 4.0], True),
        (12, "global", "store", [32.0, 4.0], [32.0, 4.0], True)]


def test_plan_synthesizes_arguments_and_skips_unbound_templates():
    reports = lint_file(str(CORPUS / "transpose_samples.cu"), NAIVE, resources=False)
    p = source.plan("text", reports, NAIVE)
    (k,) = p["kernels"]
    assert (k["name"], k["grid"], k["block"], k["shmem"]) == ("transposeNaive", [4, 4, 1], [32, 8, 1], 0)
    assert [a["kind"] for a in k["args"]] == ["pointer", "pointer", "int", "int"]
    assert [a.get("value") for a in k["args"][2:]] == [1024, 1024]
    spread = lint_file(str(CORPUS / "templates_macros.cu"), Options(kernel="spread", templates={"T": "float"}),
                       resources=False)
    assert source.plan("text", spread, Options())["skipped"] == {"spread": "template parameter(s) SPREAD not given"}


def test_plan_skips_a_kernel_whose_constant_values_lint_was_given(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("__constant__ int c_n;\n__global__ void k(float* out) { out[threadIdx.x * c_n] = 0; }\n")
    opts = Options(block=(32,), lets={"c_n": 2})
    reports = lint_file(str(src), opts, resources=False)
    assert source.plan("text", reports, opts)["skipped"] == {
        "k": "not launched: __constant__ values given with --let (c_n) are not written on the device"}


def test_the_child_compiles_with_the_files_folder_on_the_include_path():
    from gpumemlab.lint.resources import include_dirs
    from gpumemlab.ncu.lint_child import _options

    reports = lint_file(str(CORPUS / "transpose_samples.cu"), NAIVE, resources=False)
    p = source.plan("text", reports, NAIVE, include_dirs(str(CORPUS / "transpose_samples.cu")))
    assert p["include_path"][0] == str(CORPUS)
    assert _options(p) == (("include_path", p["include_path"]),) and _options(source.plan("t", reports, NAIVE)) == ()


def test_the_c_headers_kernels_include_compile_with_nvrtc(tmp_path):
    # NVRTC has no system headers: lint's include path ends with its own math.h, float.h, stdint.h, limits.h
    pytest.importorskip("cuda.core", reason="NVRTC (the cuda extra) compiles the kernel")
    from gpumemlab.lint.resources import NVRTC_INCLUDE, include_dirs

    src = tmp_path / "k.cu"
    src.write_text("#include <math.h>\n#include <float.h>\n#include <stdint.h>\n#include <limits.h>\n"
                   "__global__ void k(float *o, const uint8_t *b, int64_t n) {\n"
                   "    float m = -FLT_MAX + INFINITY * 0.0f + (float)M_PI + (float)INT_MAX + (float)UINT_MAX;\n"
                   "    if (threadIdx.x < n) o[threadIdx.x] = fmaxf(m, sqrtf((float)b[threadIdx.x]));\n}\n")
    assert include_dirs(str(src))[-1] == NVRTC_INCLUDE
    (r,) = lint_file(str(src), Options(block=(32,), lets={"n": 32}))
    assert r.resources is not None and not [n for n in r.notes if "NVRTC" in n]


@pytest.mark.skipif(shutil.which("ncu") is not None, reason="this machine has Nsight Compute")
def test_validate_without_ncu_is_one_line(monkeypatch, capsys):
    monkeypatch.delenv("GPUMEMLAB_NCU", raising=False)
    monkeypatch.setattr(source, "find_nvdisasm", lambda given=None: "/bin/true")
    code = main(["lint", str(CORPUS / "transpose_samples.cu"), "--kernel", "transposeNaive", "--block", "32,8",
                 "--let", "width=1024", "--let", "height=1024", "--no-resources", "--validate"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Nsight Compute (ncu) not found" in err
