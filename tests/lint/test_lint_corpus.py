"""lint on tests/lint/corpus/*.cu against values derived by hand (the arithmetic is in each kernel's comment)."""

from pathlib import Path

import pytest

from gpumemlab.lint import lint_file
from gpumemlab.lint.analysis import Options

CORPUS = Path(__file__).parent / "corpus"


def findings(name, kernel, **opts):
    reports = lint_file(str(CORPUS / name), Options(kernel=kernel, **opts), resources=False)
    assert [r.error for r in reports] == [None]
    return {(f.text, f.access): f for f in reports[0].findings}


def g(f):
    """(sectors/request, ideal, verdict) of a global access."""
    return f.sectors_per_request, f.ideal_sectors_per_request, f.verdict


def s(f):
    """(wavefronts/request, ideal, ways) of a shared access."""
    return f.wavefronts_per_request, f.ideal_wavefronts_per_request, f.conflict_ways


CASES = [
    # file, kernel, options, access text, load/store, expected (global: sectors/req, ideal, verdict)
    ("strided_offset.cu", "stride2", {}, "in[2 * i]", "load", (8, 4, "strided")),
    ("strided_offset.cu", "offset1", {}, "in[i + 1]", "load", (5, 4, "offset")),
    ("strided_offset.cu", "offset1", {}, "out[i]", "store", (4, 4, "coalesced")),
    ("strided_offset.cu", "broadcast", {}, "in[blockIdx.x]", "load", (1, 1, "broadcast")),
    ("strided_offset.cu", "vec4", {}, "reinterpret_cast<const float4*>(in)[i]", "load", (16, 16, "coalesced")),
    ("transpose_samples.cu", "transposeNaive", dict(block=(32, 8), lets={"width": 1024, "height": 1024}),
     "odata[x * width + (y + j)]", "store", (32, 4, "column-major")),
    ("transpose_samples.cu", "transposeNaive", dict(block=(32, 8), lets={"width": 1024, "height": 1024}),
     "idata[(y + j) * width + x]", "load", (4, 4, "coalesced")),
    ("blocks2d.cu", "scale2d", dict(block=(16, 16), lets={"width": 1024, "height": 1024}),
     "a[row * width + col]", "load", (4, 4, "coalesced")),
    ("blocks2d.cu", "scale2d", dict(block=(16, 16), lets={"width": 1001, "height": 1024}),
     "a[row * width + col]", "load", (5, 4, "scattered")),
    ("blocks2d.cu", "matmul_naive", dict(block=(16, 16), lets={"n": 1024}), "A[row * n + k]", "load",
     (2, 1, "scattered")),
    ("blocks2d.cu", "matmul_naive", dict(block=(16, 16), lets={"n": 1024}), "B[k * n + col]", "load",
     (2, 2, "coalesced")),
    ("blocks2d.cu", "jacobi", dict(block=(32, 8), lets={"nx": 1024, "ny": 1024}), "u[j * nx + i - 1]", "load",
     (5, 4, "offset")),
    ("blocks2d.cu", "jacobi", dict(block=(32, 8), lets={"nx": 1024, "ny": 1024}), "u[j * nx + i + 1]", "load",
     (5, 4, "offset")),
    ("blocks2d.cu", "jacobi", dict(block=(32, 8), lets={"nx": 1024, "ny": 1024}), "u[(j - 1) * nx + i]", "load",
     (4, 4, "coalesced")),
    ("blocks2d.cu", "jacobi", dict(block=(32, 8), lets={"nx": 1024, "ny": 1024}), "un[j * nx + i]", "store",
     (4, 4, "coalesced")),
    ("aos_indirect.cu", "aos_member", {}, "p[i].y", "load", (12, 4, "strided")),
    ("aos_indirect.cu", "aos_whole", {}, "p[i]", "load", (12, 4, "strided")),
    ("aos_indirect.cu", "gather", {}, "idx[i]", "load", (4, 4, "coalesced")),
    ("aos_indirect.cu", "histogram", {"lets": {"n": 4096}}, "data[i]", "load", (1, 1, "coalesced")),
    ("loops_guards.cu", "squares_chunk", {}, "data[i]", "load", (32, 4, "column-major")),
    ("loops_guards.cu", "squares_interleaved", {}, "data[i]", "load", (4, 4, "coalesced")),
    ("loops_guards.cu", "wrap_unsigned", {}, "a[threadIdx.x]", "store", (1, 1, "coalesced")),
    ("loops_guards.cu", "wrap_signed", {}, "a[threadIdx.x]", "store", (3, 3, "coalesced")),
    ("loops_guards.cu", "early_return", {"lets": {"n": 4096}}, "a[threadIdx.x]", "store", (4, 4, "coalesced")),
    ("templates_macros.cu", "macro_stride", {}, "in[IDX(i)]", "load", (16, 4, "strided")),
    ("templates_macros.cu", "macro_stride", {"defines": ["STRIDE=1"]}, "in[IDX(i)]", "load", (4, 4, "coalesced")),
    ("templates_macros.cu", "spread", {"templates": {"T": "double", "SPREAD": "3"}}, "in[i * S]", "load",
     (24, 8, "strided")),
    ("templates_macros.cu", "through_helper", {}, "p[j]", "load", (8, 4, "strided")),
]


@pytest.mark.parametrize("name,kernel,opts,text,kind,expected", CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_global_access(name, kernel, opts, text, kind, expected):
    f = findings(name, kernel, **opts)[(text, kind)]
    assert g(f) == expected


SHARED = [
    ("transpose_samples.cu", "transposeCoalesced", "tile[threadIdx.x][threadIdx.y + j]", "load", (32, 1, 32)),
    ("transpose_samples.cu", "transposeCoalesced", "tile[threadIdx.y + j][threadIdx.x]", "store", (1, 1, 1)),
    ("transpose_samples.cu", "transposeNoBankConflicts", "tile[threadIdx.x][threadIdx.y + j]", "load", (1, 1, 1)),
    ("loops_guards.cu", "reduce1", "sdata[index]", "store", (2, 1, 2)),
    ("loops_guards.cu", "reduce1", "sdata[tid]", "store", (1, 1, 1)),
]


@pytest.mark.parametrize("name,kernel,text,kind,expected", SHARED, ids=lambda v: v if isinstance(v, str) else None)
def test_shared_access(name, kernel, text, kind, expected):
    opts = dict(block=(32, 8), lets={"width": 1024, "height": 1024}) if name.startswith("transpose") else {}
    f = findings(name, kernel, **opts)[(text, kind)]
    assert s(f) == expected


def test_padding_fix_predicts_one_wavefront():
    f = findings("transpose_samples.cu", "transposeCoalesced", block=(32, 8),
                 lets={"width": 1024, "height": 1024})[("tile[threadIdx.x][threadIdx.y + j]", "load")]
    assert "tile[32][33]" in f.fix
    assert f.fix_predicted == {"wavefronts_per_request": 1.0, "conflict_ways": 1}


def test_naive_store_fix_is_corner_turning_to_four_sectors():
    f = findings("transpose_samples.cu", "transposeNaive", block=(32, 8),
                 lets={"width": 1024, "height": 1024})[("odata[x * width + (y + j)]", "store")]
    assert f.fix.startswith("corner turning") and "seed 000" in f.fix
    assert f.fix_predicted["sectors_per_request"] == 4


def test_chunk_loop_fix_is_a_grid_stride_loop():
    f = findings("loops_guards.cu", "squares_chunk")[("data[i]", "load")]
    assert f.fix.startswith("grid-stride loop") and f.fix_predicted["sectors_per_request"] == 4
    assert f.loops and f.loops[0]["uniform_step"] is True


def test_aos_member_fix_is_soa():
    f = findings("aos_indirect.cu", "aos_member")[("p[i].y", "load")]
    assert f.fix.startswith("SoA") and f.fix_predicted["sectors_per_request"] == 4


def test_indirect_index_is_unknown_with_its_reason():
    f = findings("aos_indirect.cu", "gather")[("in[idx[i]]", "load")]
    assert f.verdict == "unknown" and "value loaded from memory" in f.unknown_reason


def test_atomic_is_unknown_with_its_reason():
    f = findings("aos_indirect.cu", "histogram", lets={"n": 4096})[("atomicAdd(&hist[data[i]], 1u)", "atomic")]
    assert f.verdict == "unknown" and "atomic" in f.unknown_reason


def test_guard_selecting_no_thread_gives_zero_requests():
    f = findings("loops_guards.cu", "never")[("a[threadIdx.x]", "store")]
    assert (f.requests, f.verdict) == (0, "not executed")


def test_helper_access_reports_the_call_line():
    f = findings("templates_macros.cu", "through_helper")[("p[j]", "load")]
    assert f.line == 29 and f.call_lines == [32]


def test_unbound_parameter_in_the_index_is_named():
    f = findings("transpose_samples.cu", "transposeNaive", block=(32, 8))[("odata[x * width + (y + j)]", "store")]
    assert f.verdict == "unknown" and "parameter width" in f.unknown_reason and "--let width=" in f.unknown_reason


def test_unbound_template_parameter_is_named():
    f = findings("templates_macros.cu", "spread", templates={"T": "float"})[("in[i * S]", "load")]
    assert f.verdict == "unknown" and "SPREAD" in f.unknown_reason


def test_boundary_guards_move_the_analysis_to_an_interior_block():
    f = findings("blocks2d.cu", "jacobi", block=(32, 8), lets={"nx": 1024, "ny": 1024})[("u[j * nx + i - 1]", "load")]
    assert (f.block, f.warp, f.active_lanes) == ([1, 0, 0], 1, 32)
    pinned = findings("blocks2d.cu", "jacobi", block=(32, 8), block_idx=(0, 0, 0),
                      lets={"nx": 1024, "ny": 1024})[("u[j * nx + i - 1]", "load")]
    assert (pinned.block, pinned.active_lanes) == ([0, 0, 0], 31)  # warp 1 of block 0 without lane 0 (i = 0)


def test_launch_in_host_code_gives_block_template_and_arguments():
    reports = lint_file(str(CORPUS / "host_launch.cu"), Options(kernel="scale_tile"), resources=False)
    (r,) = reports
    assert (r.block, r.grid, r.template) == ([16, 16, 1], [63, 63, 1], {"TILE": 16})
    assert "block 16x16x1 from the launch at line 31" in r.notes and "width=1000 from the launch at line 31" in r.notes
    got = {(f.text, f.access): f for f in r.findings}
    assert g(got[("m[row * width + col]", "load")]) == (4, 4, "coalesced")
    assert s(got[("t[threadIdx.x][threadIdx.y]", "load")]) == (2, 1, 2)


def test_launches_that_disagree_leave_the_default_block():
    (r,) = lint_file(str(CORPUS / "host_launch.cu"), Options(kernel="twice"), resources=False)
    assert r.block == [256, 1, 1]
    assert "block 256 threads assumed (give --block; the launches do not give one constant shape)" in r.notes


def test_struct_parameters_and_helpers_returning_structs():
    lets = {"A.stride": 1024, "B.stride": 1024, "C.stride": 1024, "A.width": 1024}
    (r,) = lint_file(str(CORPUS / "struct_params.cu"), Options(block=(16, 16), lets=lets), resources=False)
    loads = [f for f in r.findings if f.text == "A.elements[row * A.stride + col]" and f.access == "load"]
    assert [(f.line, f.call_lines, g(f)) for f in loads] == [(12, [34], (4, 4, "coalesced")),
                                                            (12, [35], (4, 4, "coalesced"))]
    (store,) = [f for f in r.findings if f.access == "store" and f.space == "global"]
    assert (store.line, store.call_lines, g(store)) == (13, [41], (4, 4, "coalesced"))
    del lets["B.stride"]
    (r,) = lint_file(str(CORPUS / "struct_params.cu"), Options(block=(16, 16), lets=lets), resources=False)
    b = [f for f in r.findings if f.call_lines == [35]][0]
    assert b.verdict == "unknown" and "B.stride" in b.unknown_reason


def test_neighbouring_loads_suggest_one_vector_load():
    got = findings("strided_offset.cu", "pair_sum")
    for text in ("in[2 * i]", "in[2 * i + 1]"):
        f = got[(text, "load")]
        assert g(f) == (8, 4, "strided")
        assert f.fix.startswith("load the 2 neighbouring elements in one float2") and "1 request instead of 2" in f.fix
        assert f.fix_predicted == {"sectors_per_request": 8.0, "ideal_sectors_per_request": 8.0}
    lone = findings("strided_offset.cu", "stride2")[("in[2 * i]", "load")]
    assert "float2" not in lone.fix  # no neighbour read: the vector load would move twice the bytes for nothing
