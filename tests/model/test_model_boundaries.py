"""The analyzer at the boundaries its other tests leave open: the names and numbers in its warnings and errors,
the half-warp a conflict is counted in, which index of a multi-dimensional array moves, and the parser's limits.

Each expected value is derived in the comment next to it (32 banks of 4 bytes, bank = word % 32)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model import analyze, expr, parse_decl, resolve, types
from gpumemlab.model import args
from gpumemlab.model.access import dim3, make_launch
from gpumemlab.model.dram import DramLayout, tiled_matmul_phase


def message(fn, *a, **kw) -> str:
    with pytest.raises(UsageError) as info:
        fn(*a, **kw)
    return str(info.value)


def warned(*a, **kw) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        resolve(*a, **kw)
    return [str(w.message) for w in seen]


FAR = ("access {!r}: thread {} reads 32 MiB away from thread {} of the same warp (more than 16 MiB): an index that "
       "wrapped (unsigned arithmetic)? Give the let its type: --let 'int i=...'")


def test_a_negative_index_into_a_pointer_warns_with_the_index_s_position_and_value():
    assert warned("p[(int)threadIdx.x - 1]", "float *p", block=32) == [
        "access 'p[(int)threadIdx.x - 1]': index 1 of p is -1 for thread 0: it reads before the address p points at "
        "(fine only if p points into the middle of an allocation)"]


def test_far_lanes_warn_per_warp_from_two_active_lanes_strictly_past_16_mib():
    # two active lanes 8388608 floats = 32 MiB apart: a warning; 4194304 floats = exactly 16 MiB: none
    assert warned("a[threadIdx.x * 8388608]", "float a[]", block=32, active="threadIdx.x < 2") == [
        FAR.format("a[threadIdx.x * 8388608]", 1, 0)]
    assert warned("a[threadIdx.x * 4194304]", "float a[]", block=32, active="threadIdx.x < 2") == []
    # warp 2 (threads 64-95), lanes from 65: thread 70 is the far one, 32 MiB from thread 65
    assert warned("a[i]", "float a[]", block=96, active="threadIdx.x >= 65",
                  lets=["int i = threadIdx.x == 70 ? 8388608 : threadIdx.x"]) == [FAR.format("a[i]", 70, 65)]
    # each warp reads one place (warp 1 is 32 MiB from warp 0): lanes of one warp are compared, not of two
    assert warned("a[(threadIdx.x / 32) * 8388608]", "float a[]", block=64) == []


def test_launch_dimensions_as_text_tuples_and_numbers_and_their_errors():
    assert dim3("32x8", "block") == (32, 8, 1)
    assert message(dim3, "32,,1", "block") == "bad block '32,,1': dimension 2 is empty; expected X[,Y[,Z]]"
    assert message(dim3, (32, "a"), "block") == "block (32, 'a'): each dimension must be an integer, got str 'a'"
    assert message(dim3, 2.5, "block") == "block must be an integer, got float 2.5"
    # threads of a 2x2x2 block: x fastest, then y, then z (z = t // (x * y))
    env = make_launch(block=(2, 2, 2)).env()
    assert [env["threadIdx"][k].v.tolist() for k in "xyz"] == [[0, 1] * 4, [0, 0, 1, 1] * 2, [0] * 4 + [1] * 4]


def test_arguments_that_are_not_text_are_named():
    assert message(parse_decl, 5) == "decl must be a string, got int 5"
    assert parse_decl("float*p").dims == (None,)  # no space around the star
    assert message(resolve, 5, "float a[]") == "access must be a string, got int 5"
    assert message(resolve, "a[0]", "float a[]", active=5) == "active must be a string or None, got int 5"
    assert message(resolve, "a[0]", "float a[]", space=5) == "space must be a string or None, got int 5"
    assert message(types.lookup, 5) == "element type must be a string, got int 5"
    assert args.integer(1, "n", least=1) == 1 and message(args.integer, 0, "n", least=1) == "n must be >= 1, got 0"


def test_errors_while_evaluating_the_access_name_it():
    assert message(resolve, "a[threadIdx.x / 0]", "float a[]", block=32) == "division by zero in access 'a[threadIdx.x / 0]'"


def test_the_largest_tiled_matmul_picture_is_drawn():
    assert tiled_matmul_phase(DramLayout(), width=1024, tile=1024)["elements"]["0,0"][:2] == [0, 1]


def test_parser_limits_and_its_expected_token():
    # depth is counted per group: 32 levels after a closed group still parse, 33 do not
    assert expr.parse("(x) + " + "(" * 32 + "x" + ")" * 32, "e") == expr.Binary("+", expr.Name("x"), expr.Name("x"))
    assert message(expr.parse, "(x) + " + "(" * 33 + "x" + ")" * 33, "e") == (
        "e is nested more than 32 levels deep (parentheses, brackets, unary operators, casts, ?:) at column 40")
    assert message(expr.parse, "(a]", "e") == "cannot parse e '(a]': expected ')', found ']' at column 3"
    launch = make_launch(block=2)
    sizeof = expr.parse("sizeof(unsigned int)", "e")
    assert expr.Evaluator(launch.env(), 2, "e", "sizeof(unsigned int)")(sizeof).tolist() == [4, 4]


def explanation(access: str, decl: str, **kw) -> str:
    return analyze(access, decl, block=32, **kw)["explanation"]


def test_sub_word_lanes_of_one_word_are_a_broadcast():
    # chars: lanes 0-3 read bytes of word 0, lanes 4-7 of word 1, ...: 8 words, one per bank
    assert explanation("s[threadIdx.x]", "__shared__ char s[128]") == (
        "Every bank of warp 0 delivers at most one distinct word per warp (lanes reading the same word share it by "
        "broadcast), so the load takes the ideal 1 wavefront.")


def test_8_byte_shared_loads_are_served_per_half_warp_from_cc_2_on():
    # cc 2.0: 16 lanes x 8 bytes fill the 32 banks once: 2 wavefronts for a warp, the ideal
    assert explanation("s[threadIdx.x]", "__shared__ double s[64]", cc=(2, 0)) == (
        "Every bank of warp 0 delivers at most one distinct word per half-warp, so the load takes the ideal 2 "
        "wavefronts. 8-byte accesses are served per half-warp, so the ideal is 2 wavefronts per request.")
    # cc 1.3: 16 banks; lanes 0 and 8 read addresses 0 and 64 of bank 0 in one half-warp (no 8-byte sentence)
    assert explanation("s[threadIdx.x]", "__shared__ double s[64]", cc=(1, 3)) == (
        "Lanes 0, 8 of warp 0 read 2 different addresses of bank 0 (addresses 0, 64) in one half-warp, so they are "
        "served one after another: a 2-way bank conflict, 2 wavefronts where 1 would do. Fix: the lanes are 2 words "
        "apart; use an odd word stride, or sequential addressing where consecutive threads read consecutive words "
        "(reduce2's sdata[tid] += sdata[tid + s]).")


def test_a_conflict_is_counted_within_each_half_warp_not_across_them():
    # lanes 8-23 read double 16 t (word 32 t, bank 0), the others double t (word 2 t): half-warp 0 has lanes 0 and
    # 8-15 in bank 0 (9 words), half-warp 1 lanes 16-23 (8 words); lanes 8-23 together would be 16
    lets = ["int i = (threadIdx.x >= 8 && threadIdx.x < 24) ? threadIdx.x * 16 : threadIdx.x"]
    assert explanation("s[i]", "__shared__ double s[1024]", lets=lets) == (
        "Lanes 0, 8, 9, 10, 11, 12, ... of warp 0 read 9 different words of bank 0 (words 0, 256, 288, 320, ...) in "
        "one half-warp, so they are served one after another: a 9-way bank conflict, 9 wavefronts where 1 would do. "
        "Fix: spread the lanes over different banks (pad, swizzle the index with XOR, or reorder the work). 8-byte "
        "accesses are served per half-warp, so the ideal is 2 wavefronts per request.")


def test_only_the_last_index_moving_is_a_stride_not_a_column():
    # s[0][0][2t]: words 2t, lanes t and t + 16 in bank 2t % 32; the rows (dimension 1) do not move: no padding
    assert explanation("s[0][0][threadIdx.x*2]", "__shared__ float s[2][4][64]").endswith(
        "Fix: the lanes are 2 words apart; use an odd word stride, or sequential addressing where consecutive threads "
        "read consecutive words (reduce2's sdata[tid] += sdata[tid + s]).")


def test_a_column_of_an_array_with_an_unsized_first_dimension_is_corner_turning():
    assert explanation("a[threadIdx.x][0]", "float a[][32]") == (
        "Consecutive lanes of warp 0 are 128 bytes apart, so each 32-byte sector serves only 1 lane and 12.5% of the "
        "moved bytes are used (32 sectors where 4 would do). Fix: let threadIdx.x index the last (contiguous) "
        "dimension, transpose the data, or load the tile coalesced into shared memory and read it from there (corner "
        "turning).")


@pytest.mark.parametrize("access, kw, sentence", [
    # lanes 4-31: consecutive lane numbers; 8 floats to a sector
    ("a[threadIdx.x]", dict(active="threadIdx.x >= 4"),
     "Consecutive lanes of warp 0 (28 of 32 lanes active) read consecutive floats, so lanes 0-7 share each 32-byte "
     "sector and the request needs the fewest sectors (4)."),
    # even lanes read floats 0-15: successive active lanes, not consecutive lane numbers
    ("a[threadIdx.x / 2]", dict(active="threadIdx.x % 2 == 0"),
     "Successive active lanes of warp 0 (16 of 32 lanes active) read consecutive floats, so every 8 active lanes "
     "share a 32-byte sector and the request needs the fewest sectors (2)."),
    # 4 bytes past a sector boundary: 5 sectors for 128 bytes, lanes a float apart (not more)
    ("a[threadIdx.x]", dict(offset=4),
     "Consecutive lanes of warp 0 read consecutive floats, but the first byte is 4 bytes past a 32-byte boundary, so "
     "the warp's bytes straddle 5 sectors instead of 4 (80.0% of the moved bytes used). Fix: align the start "
     "(cudaMalloc gives 256 bytes; keep offsets a multiple of 32 bytes, pad rows with cudaMallocPitch)."),
    # two active lanes 32 bytes apart: a stride from two lanes
    ("a[threadIdx.x * 8]", dict(active="threadIdx.x < 2"),
     "Consecutive lanes of warp 0 (2 of 32 lanes active) are 32 bytes apart, so each 32-byte sector serves only 1 "
     "lane and 12.5% of the moved bytes are used (2 sectors where 1 would do). Fix: make consecutive threads read "
     "consecutive elements, or load a tile coalesced into shared memory and read the strided pattern from there."),
])
def test_global_sentences_for_partly_active_and_misaligned_warps(access, kw, sentence):
    assert explanation(access, "float a[]", **kw) == sentence


def test_historical_rules_name_each_warp_and_its_verdict():
    per_warp = analyze("a[threadIdx.x]", "float a[]", block=64, cc=(3, 5))["per_warp"]
    assert [(w["warp"], w["verdict"], w["transactions"]) for w in per_warp] == [(0, "coalesced", [128]),
                                                                               (1, "coalesced", [128])]


def test_large_integers_in_the_environment_keep_their_values():
    assert expr.value_of([-1, 2**63], 2).v.tolist() == [-1, 2**63]
    assert expr.value_of(np.array([2**62]), 1).v.tolist() == [2**62]


def test_cc_1_1_judges_each_warp_by_its_own_rule_not_by_sectors():
    # neighbours swapped (lane t reads float t ^ 1): the fewest sectors, but 1.0/1.1 need lane k at word k
    warp = analyze("a[threadIdx.x ^ 1]", "float a[]", block=32, cc=(1, 1))["per_warp"][0]
    assert (warp["sectors"], warp["min_sectors"], warp["verdict"]) == (4, 4, "uncoalesced")
    assert warp["transactions"] == [32] * 32  # one 32-byte transaction per lane


def test_reversed_and_misaligned_lanes_are_scattered_not_strided():
    # lane t reads float 31 - t, 4 bytes past a sector: 5 sectors; successive lanes step back one float, no stride
    assert explanation("a[31 - threadIdx.x]", "float a[]", offset=4) == (
        "The lanes of warp 0 read scattered floats: 5 sectors where 4 would hold the data (80.0% of the moved bytes "
        "used). Fix: make consecutive threads read consecutive elements, or load a tile coalesced into shared memory "
        "and read the strided pattern from there.")


def test_a_row_read_that_starts_inside_the_row_moves_only_the_last_index():
    # a[0][2t + 1], t < 32: columns 1..63 of row 0 (not a column of the array): the fix is the stride
    assert explanation("a[0][threadIdx.x * 2 + 1]", "float a[4][64]").endswith(
        "Fix: make consecutive threads read consecutive elements, or load a tile coalesced into shared memory and read "
        "the strided pattern from there.")
