"""The explanation's fix for shared-memory conflicts, chosen by the array's shape and the lanes' stride, and the
lane lists of its sentences: one case per condition of model/explain.py's branches (each number derived in the
comment above its case: 32 banks of 4 bytes, bank = word % 32; cc 1.x: 16 banks, even bytes of a word conflict)."""

from __future__ import annotations

import pytest

from gpumemlab.model import analyze
from gpumemlab.model.explain import _lanes

WORD_STRIDE = ("Fix: the lanes are {} words apart; use an odd word stride, or sequential addressing where consecutive "
               "threads read consecutive words (reduce2's sdata[tid] += sdata[tid + s]).")
SPREAD = "Fix: spread the lanes over different banks (pad, swizzle the index with XOR, or reorder the work)."


def pad(decl: str) -> str:
    return f"Fix: pad each row by one element, {decl}, so a column's words fall into different banks."


def conflict(lanes: str, ways: int, bank: int, units: str, per: str = "warp", kind: str = "words") -> str:
    return (f"{lanes} of warp 0 read {ways} different {kind} of bank {bank} ({kind} {units}) in one {per}, so they "
            f"are served one after another: a {ways}-way bank conflict, {ways} wavefronts where 1 would do. ")


SHARED = [
    # row r of s[4][64] starts at word 64 r; lane t reads word 2t of row 0: lanes t and t + 16 share bank 2t % 32.
    # The lanes move along the last dimension, so the fix is the stride, not padding (64 words a row notwithstanding)
    pytest.param("s[0][threadIdx.x*2]", "float s[4][64]", {},
                 conflict("Lanes 0, 16", 2, 0, "0, 32") + WORD_STRIDE.format(2), id="2-D along the row"),
    # rows of 33 words (padded), every second row: 66 t words, bank 2t % 32; padding cannot help an odd row
    pytest.param("s[threadIdx.x*2][0]", "float s[64][33]", {},
                 conflict("Lanes 0, 16", 2, 0, "0, 1056") + WORD_STRIDE.format(66), id="padded rows, even step"),
    # rows of 34 words: 34 t, bank 2t % 32 (gcd(34, 32) = 2): one more element per row makes it 35 (odd)
    pytest.param("s[threadIdx.x][0]", "float s[32][34]", {},
                 conflict("Lanes 0, 16", 2, 0, "0, 544") + pad("float s[32][35]"), id="rows of 34 words"),
    # s[2][32][64]: lane t reads word 64 t, all in bank 0; the pad goes on the last dimension only
    pytest.param("s[0][threadIdx.x][0]", "float s[2][32][64]", {},
                 conflict("Lanes 0-31", 32, 0, "0, 64, 128, 192, ...") + pad("float s[2][32][65]"), id="3-D column"),
    # cc 1.3, char rows of 3 bytes: lanes 0 and 1 read bytes 0 and 3 of word 0, two addresses of bank 0; the row is
    # less than a word (0 words: no padding advice), the stride 3 bytes not a word multiple
    pytest.param("s[threadIdx.x][0]", "char s[32][3]", dict(cc=(1, 3)),
                 conflict("Lanes 0, 1", 2, 0, "0, 3", per="half-warp", kind="addresses") + SPREAD, id="cc1.3 chars"),
    # lanes 16-31 active (the first half-warp idle), double s[2t]: word 4t, bank 4t % 32 within a half-warp of
    # 8-byte accesses: lanes 16 and 24
    pytest.param("s[threadIdx.x*2]", "double s[128]", dict(active="threadIdx.x >= 16"),
                 conflict("Lanes 16, 24", 2, 0, "64, 96", per="half-warp") + WORD_STRIDE.format(4)
                 + " 8-byte accesses are served per half-warp, so the ideal is 2 wavefronts per request.",
                 id="second half-warp"),
    # lanes t % 3 read words 0, 32, 64 of bank 0: three lanes in a row are "lanes 0-2"
    pytest.param("s[(threadIdx.x % 3) * 32]", "float s[128]", {}, conflict("Lanes 0-2", 3, 0, "0, 32, 64") + SPREAD,
                 id="three lanes"),
    # five words of bank 0: the first four are shown, then "..."
    pytest.param("s[(threadIdx.x % 5) * 32]", "float s[160]", {},
                 conflict("Lanes 0-4", 5, 0, "0, 32, 64, 96, ...") + SPREAD, id="five words"),
]


@pytest.mark.parametrize("access, decl, kw, sentence", SHARED)
def test_shared_fix_follows_the_shape_and_the_stride(access, decl, kw, sentence):
    assert analyze(access, decl, space="shared", block=32, **kw)["explanation"] == sentence


def test_global_stride_along_the_last_dimension_is_not_corner_turning():
    """a[0][2t] of float a[4][64]: lanes 8 bytes apart along the contiguous dimension: 8 sectors where 4 would do."""
    assert analyze("a[0][threadIdx.x*2]", "float a[4][64]", space="global", block=32)["explanation"] == (
        "Consecutive lanes of warp 0 are 8 bytes apart, so each 32-byte sector serves only 4 lanes and 50.0% of the "
        "moved bytes are used (8 sectors where 4 would do). Fix: make consecutive threads read consecutive elements, "
        "or load a tile coalesced into shared memory and read the strided pattern from there.")


@pytest.mark.parametrize("lanes, text", [([0, 1, 2], "lanes 0-2"), ([4, 5, 6], "lanes 4-6"), ([1, 3], "lanes 1, 3"),
                                         ([5], "lanes 5"), ([0, 2, 4, 6, 8, 10], "lanes 0, 2, 4, 6, 8, 10"),
                                         ([0, 2, 4, 6, 8, 10, 12], "lanes 0, 2, 4, 6, 8, 10, ...")])
def test_lane_lists(lanes, text):
    assert _lanes(lanes) == text


CORNER = ("Fix: let threadIdx.x index the last (contiguous) dimension, transpose the data, or load the tile coalesced "
          "into shared memory and read it from there (corner turning).")


@pytest.mark.parametrize("access, decl, offset, apart", [
    # a[1][t][0] of float a[4][32][8]: rows of 8 floats, 32 bytes apart; the middle index moves (offset 64 bytes)
    ("a[1][threadIdx.x][0]", "float a[4][32][8]", 64, 32),
    # a[t][1][2] of float a[32][4][8]: planes of 32 floats, 128 bytes apart; the first index moves (offset 16)
    ("a[threadIdx.x][1][2]", "float a[32][4][8]", 16, 128),
])
def test_a_moving_outer_index_of_a_3d_array_is_corner_turning(access, decl, offset, apart):
    """Every lane in its own sector: 32 sectors where 4 would do, whatever the offset of the array."""
    assert analyze(access, decl, space="global", block=32, offset=offset)["explanation"] == (
        f"Consecutive lanes of warp 0 are {apart} bytes apart, so each 32-byte sector serves only 1 lane and 12.5% of "
        f"the moved bytes are used (32 sectors where 4 would do). " + CORNER)


def test_predict_refuses_what_resolve_did_not_make():
    from gpumemlab.errors import UsageError
    from gpumemlab.model import predict

    with pytest.raises(UsageError, match=r"^lanes must be a LaneAccesses \(from resolve\(\)\), got int 3$"):
        predict(3)
