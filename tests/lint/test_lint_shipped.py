"""Every kernel the project ships lints without error; lint's numbers equal the suite's model for the same access."""

from pathlib import Path

import pytest

import gpumemlab.kernels as kernels_pkg
from gpumemlab.kernels import banks, coalescing, copy, transpose
from gpumemlab.lint import lint_file
from gpumemlab.lint.analysis import Options
from gpumemlab.model import analyze

KERNELS = Path(kernels_pkg.__file__).parent  # the .cu files of the package under test
N = 1024  # the matrix side / array length given to both lint (--let) and the model (lets)


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.cu")), ids=lambda p: p.name)
def test_every_shipped_kernel_lints_without_error(path):
    reports = lint_file(str(path), Options(), resources=False)
    assert reports
    assert [(r.name, r.error) for r in reports if r.error] == []
    for r in reports:
        for f in r.findings:  # each access either has the model's numbers or says why not
            assert f.unknown_reason or f.verdict != "unknown", (r.name, f.line)


def _finding(path, kernel, text, kind=None, **opts):
    reports = lint_file(str(path), Options(kernel=kernel, **opts), resources=False)
    hits = [f for r in reports for f in r.findings if f.text == text and kind in (None, f.access)]
    assert len(hits) == 1, [(f.line, f.text) for r in reports for f in r.findings]
    return hits[0]


def _tile_opts(pad: int) -> dict:
    return dict(block=(32, 32), lets={"rows": N, "cols": N},
                templates={"T": "float", "TILE": "32", "BLOCK_ROWS": "32", "PAD": str(pad)})


def test_naive_transpose_store_equals_the_model():
    v = transpose.NAIVE
    model = analyze(v.access, v.decl, block=v.model_block, lets={"n": N})
    f = _finding(KERNELS / "transpose.cu", "transpose_naive", "out[(long long)x * rows + y + j]",
                 block=(32, 32), lets={"rows": N, "cols": N},
                 templates={"T": "float", "TILE": "32", "BLOCK_ROWS": "32"})
    assert f.sectors_per_request == model["sectors_per_request"] == 32
    assert f.ideal_sectors_per_request * f.requests == model["min_sectors"]
    assert f.verdict == "column-major"


@pytest.mark.parametrize("variant,pad", [(transpose.COALESCED, 0), (transpose.PADDED, 1)])
def test_tile_column_read_equals_the_model(variant, pad):
    model = analyze(variant.access, variant.decl, space="shared", block=variant.model_block)
    f = _finding(KERNELS / "transpose.cu", "transpose_tiled", "tile[threadIdx.x][threadIdx.y + j]", **_tile_opts(pad))
    assert f.wavefronts_per_request == model["wavefronts"] / model["requests"]
    assert f.conflict_ways == model["ways"]
    assert f.conflict_ways == (32 if pad == 0 else 1)


def test_offset_and_stride_copy_equal_the_model():
    for kernel, access, name, value in (("offset_copy", copy.OFFSET_ACCESS, "offset", 1),
                                        ("stride_copy", copy.STRIDE_ACCESS, "stride", 2)):
        model = analyze(access, "float idata[]", block=256, lets={name: value})
        f = _finding(KERNELS / "copy.cu", kernel, "idata[xid]", lets={name: value, "n": 1 << 20})
        assert f.sectors_per_request * f.requests == model["per_warp"][0]["sectors"]
        assert f.ideal_sectors_per_request * f.requests == model["per_warp"][0]["min_sectors"]


@pytest.mark.parametrize("pattern", [p for p in coalescing.PATTERN_TABLE if p.access], ids=lambda p: p.name)
def test_increment_patterns_equal_the_model(pattern):
    model = analyze(pattern.access, "float a[]", block=256, active=pattern.active)
    f = _finding(KERNELS / "coalescing.cu", "increment", "a[j]", kind="load", lets={"n": 1 << 20, "log2n": 20},
                 templates={"PATTERN": str(pattern.id)})
    w = model["per_warp"][f.warp]
    assert (f.sectors_per_request * f.requests, f.ideal_sectors_per_request * f.requests) == (w["sectors"],
                                                                                              w["min_sectors"])


@pytest.mark.parametrize("stride", banks.STRIDES)
def test_bank_stride_slot_equals_the_model(stride):
    model = analyze(banks.SLOT_ACCESS, f"__shared__ float ws[{banks.SHARED_WORDS}]", block=(banks.BLOCK, 1, 1),
                    lets=[f"STRIDE={stride}"])
    per_request = model["wavefronts"] / model["requests"]
    for kind in ("load", "store"):
        f = _finding(KERNELS / "banks.cu", "bank_stride", "ws[slot]", kind=kind, block=(banks.BLOCK,),
                     templates={"STRIDE": str(stride)}, lets={"n": 1 << 20, "reps": 1})
        assert (f.wavefronts_per_request, f.conflict_ways) == (per_request, model["ways"]) == (stride, stride)


def test_sum_cols_vector_loads_and_ptx_stores_equal_the_model():
    # sum_cols<float, float, true, 8>: __ldg of Load<T, VEC>::type (float4) in template code, and store_results<Acc, W>
    # reaching store16's st.global.v4.f32 (the float overload) because out is 16-byte aligned: one 16-byte access per
    # lane, consecutive lanes adjacent - the reduce family's VECTOR_ACCESS
    from gpumemlab.kernels import reduce

    model = analyze(reduce.VECTOR_ACCESS[0], reduce.VECTOR_ACCESS[1], block=32)
    per_request = model["per_warp"][0]["sectors"] / model["per_warp"][0]["requests"]
    reports = lint_file(str(KERNELS / "reduce.cu"),
                        Options(kernel="sum_cols", block=(32, 8), lets={"n": 1000, "inner": N, "rows_per_split": 1000},
                                templates={"T": "float", "Acc": "float", "VEC": "true", "RB": "8"}), resources=False)
    got = {(f.line, f.text): f for r in reports for f in r.findings}
    vector = [f for (_, text), f in got.items() if text.startswith("__ldg(") or text == "p"]
    assert len(vector) == 6  # the 4 loads of the main loop, the tail loop's load (n = 1000), the PTX store
    assert {(f.element_bytes, f.sectors_per_request, f.verdict) for f in vector} == {(16, per_request, "coalesced")}
    assert per_request == 16
    assert [f.verdict for (_, text), f in got.items() if text == "out[k]"] == ["not executed"]  # the misaligned path
