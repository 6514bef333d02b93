"""kernels.source_text: a family's source as NVRTC gets it, common.cuh spelled out in place, line numbers kept."""

import re

from gpumemlab.kernels import KERNEL_DIR, source_text


def test_common_header_is_spelled_out_with_each_file_s_line_numbers():
    raw = (KERNEL_DIR / "reduce.cu").read_text().splitlines()
    text = source_text("reduce.cu")
    lines = text.splitlines()
    assert '#include "common.cuh"' not in lines and "T warp_sum(T v)" in text
    marks = [(i, m) for i, line in enumerate(lines) if (m := re.fullmatch(r'#line (\d+) "([a-z_]+\.cuh?)"', line))]
    assert [m.group(2) for _, m in marks] == ["common.cuh", "reduce.cu"]
    header = (KERNEL_DIR / "common.cuh").read_text().rstrip().splitlines()
    (h, _), (r, back) = marks
    assert lines[h + 1:r] == header  # the header from its line 1
    n = int(back.group(1))
    assert lines[r + 1:] == raw[n - 1:]  # then the family from the line after its include
    assert raw[n - 2] == '#include "common.cuh"'


def test_families_that_share_the_helpers_include_them_and_define_none_of_their_own():
    for family in ("sgemm.cu", "gemv.cu", "reduce.cu"):
        raw = (KERNEL_DIR / family).read_text()
        assert raw.count('#include "common.cuh"') == 1
        assert not re.search(r"\b(warp_sum|last_split)\s*\([^;]*\)\s*\{", raw.replace("common.cuh", ""))
        assert "struct Vec16" not in raw
    assert source_text("transpose.cu") == (KERNEL_DIR / "transpose.cu").read_text()  # no include: unchanged
