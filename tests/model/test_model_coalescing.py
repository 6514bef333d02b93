"""Global memory: the seed 000 exercise, the Best Practices offset/stride cases, the slides' rules."""

from __future__ import annotations

import numpy as np
import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model import analyze_global, coalescing

I = "i=blockIdx.x*blockDim.x + threadIdx.x"  # noqa: E741 - the seed's name


def warp0(result: dict) -> dict:
    return result["per_warp"][0]


# ---------------------------------------------------------------- seed 000, foo_kernel (block 256)

@pytest.mark.parametrize("access, decl, lets, verdict, per_request", [
    ("a[i]", "float a[]", [I], "coalesced", 4),                                    # exercise a
    ("d[i + 8]", "float d[]", [I], "coalesced", 4),                                # exercise g
    ("c[i*4 + j]", "float c[]", [I, "j=0"], "uncoalesced", 16),                    # exercise d
    ("c[i*4 + j]", "float c[]", [I, "j=3"], "uncoalesced", 16),
    ("e[i*8]", "float e[]", [I], "uncoalesced", 32),                               # exercise i
])
def test_seed000_foo_kernel(access, decl, lets, verdict, per_request):
    r = analyze_global(access, decl, block=256, lets=lets)
    assert r["verdict"] == verdict
    assert r["requests"] == 8  # one load per warp, 8 warps
    assert r["sectors_per_request"] == per_request
    assert all(w["verdict"] == verdict for w in r["per_warp"])


@pytest.mark.parametrize("j", [0, 1, 2, 3])
@pytest.mark.parametrize("block_idx", [0, 2])
def test_seed000_array_b_is_coalesced_for_every_j_and_block(j, block_idx):  # exercise c
    r = analyze_global("b[j*blockDim.x*gridDim.x + i]", "float b[]", block=256, grid=4, block_idx=block_idx,
                       lets=[I, f"j={j}"])
    assert (r["verdict"], r["sectors"], r["efficiency_pct"]) == ("coalesced", 32, 100.0)


@pytest.mark.parametrize("access, decl", [("a_s[threadIdx.x]", "__shared__ float a_s[256]"),
                                          ("bc_s[threadIdx.x*4]", "__shared__ float bc_s[4*256]")])
def test_seed000_shared_arrays_are_not_a_coalescing_question(access, decl):  # exercises b, e, f, h
    with pytest.raises(UsageError, match="is __shared__ but the space given is global"):
        analyze_global(access, decl)


# ---------------------------------------------------------------- Best Practices Guide 9.2.1

@pytest.mark.parametrize("offset", range(33))
def test_offset_copy(offset):
    r = analyze_global("idata[blockIdx.x*blockDim.x + threadIdx.x + offset]", "float idata[]", block=32,
                       lets=[("offset", offset)])
    aligned = offset % 8 == 0
    assert r["sectors"] == (4 if aligned else 5)
    assert r["efficiency_pct"] == (100.0 if aligned else 80.0)
    assert r["verdict"] == ("coalesced" if aligned else "uncoalesced")


@pytest.mark.parametrize("stride, sectors, efficiency", [(1, 4, 100.0), (2, 8, 50.0), (4, 16, 25.0),
                                                         (8, 32, 12.5), (32, 32, 12.5), (1000, 32, 12.5)])
def test_stride_copy(stride, sectors, efficiency):
    r = analyze_global("idata[(blockIdx.x*blockDim.x + threadIdx.x)*stride]", "float idata[]", block=32,
                       lets={"stride": stride})
    assert (r["sectors"], r["efficiency_pct"]) == (sectors, efficiency)


def test_misaligned_by_the_offset_argument_too():
    r = analyze_global("a[threadIdx.x]", "float a[]", block=32, offset=4)
    assert (r["sectors"], r["lines"], r["efficiency_pct"]) == (5, 2, 80.0)


def test_some_threads_not_participating_still_fill_four_sectors():
    r = analyze_global("a[threadIdx.x]", "float a[]", block=32,
                       active="threadIdx.x % 16 != 3 && threadIdx.x % 16 != 13")
    assert (r["sectors"], r["verdict"], warp0(r)["active_lanes"]) == (4, "coalesced", 28)


@pytest.mark.parametrize("access", ["a[threadIdx.x ^ 1]", "a[31 - threadIdx.x]", "a[(threadIdx.x * 7) % 32]"])
def test_permuted_lanes_need_the_same_four_sectors(access):
    r = analyze_global(access, "float a[]", block=32)
    assert (r["sectors"], r["verdict"]) == (4, "coalesced")


def test_simple_multiply_a_is_one_sector_per_request_with_one_word_used():
    r = analyze_global("a[row*TILE_DIM + i]", "float a[]", block=(32, 32),
                       lets=["row=blockIdx.y*blockDim.y + threadIdx.y", "TILE_DIM=32", "i=5"])
    assert (r["requests"], r["sectors_per_request"], r["efficiency_pct"]) == (32, 1.0, 12.5)


def test_a_times_a_transposed_reads_with_stride_tile_dim():
    r = analyze_global("a[col*TILE_DIM + i]", "float a[]", block=(32, 32),
                       lets=["col=blockIdx.x*blockDim.x + threadIdx.x", "TILE_DIM=32", "i=0"])
    assert r["sectors_per_request"] == 32.0 and r["verdict"] == "uncoalesced"


# ---------------------------------------------------------------- element types

def test_float3_is_three_requests_of_four_bytes():
    r = analyze_global("a[threadIdx.x]", "float3 a[]", block=32)
    assert (r["requests"], r["sectors"], r["sectors_per_request"], r["efficiency_pct"]) == (3, 36, 12.0, 33.33)
    assert "splits it into 3 loads" in r["explanation"]


def test_one_member_of_an_aos_is_one_strided_request():
    r = analyze_global("a[threadIdx.x].x", "float3 a[]", block=32)
    assert (r["requests"], r["sectors"]) == (1, 12)
    assert "SoA" in r["explanation"]


@pytest.mark.parametrize("decl, sectors", [("float2 a[]", 8), ("float4 a[]", 16), ("double a[]", 8),
                                           ("double2 a[]", 16), ("char a[]", 1), ("short a[]", 2),
                                           ("int4 a[]", 16)])
def test_vector_types_are_one_request(decl, sectors):
    r = analyze_global("a[threadIdx.x]", decl, block=32)
    assert (r["requests"], r["sectors"], r["verdict"]) == (1, sectors, "coalesced")


def test_misaligned_vector_load_is_refused():
    with pytest.raises(UsageError, match="float4 loads of 16 bytes need 16-byte alignment"):
        analyze_global("a[threadIdx.x]", "float4 a[]", block=32, offset=4)


def test_2d_block_rows_of_a_tile():
    r = analyze_global("a[threadIdx.y][threadIdx.x]", "float a[64][64]", block=(8, 4))
    assert (r["sectors"], r["verdict"]) == (4, "coalesced")
    r = analyze_global("a[threadIdx.x][threadIdx.y]", "float a[64][64]", block=(8, 4))
    assert (r["sectors"], r["verdict"]) == (8, "uncoalesced")  # 8 rows, 16 bytes of each
    assert "let threadIdx.x index the last" in r["explanation"]


def test_per_warp_and_partial_last_warp():
    r = analyze_global("a[threadIdx.x]", "float a[]", block=48)
    assert [w["active_lanes"] for w in r["per_warp"]] == [32, 16]
    assert [w["sectors"] for w in r["per_warp"]] == [4, 2]
    assert r["sectors"] == 6


def test_warps_without_active_lanes_issue_nothing():
    r = analyze_global("a[threadIdx.x]", "float a[]", block=128, active="threadIdx.x < 32")
    assert [w["requests"] for w in r["per_warp"]] == [1, 0, 0, 0]
    assert r["per_warp"][1]["verdict"] == "not executed"


def test_negative_index_of_a_pointer_is_allowed_but_not_past_a_sized_array():
    r = analyze_global("a[threadIdx.x - 1]", "float a[]", block=32)
    assert r["sectors"] == 5
    with pytest.raises(UsageError, match=r"index 1 of a is 32 for thread 32, outside 0\.\.31"):
        analyze_global("a[threadIdx.x]", "float a[32]", block=64)


# ---------------------------------------------------------------- historical rules (slides)

@pytest.mark.parametrize("cc, access, decl, transactions, verdict", [
    # CC 1.0/1.1: the k-th thread reads the k-th word of an aligned segment, else one transaction per thread
    ("1.1", "a[threadIdx.x]", "float a[]", [64, 64], "coalesced"),
    ("1.0", "a[threadIdx.x ^ 1]", "float a[]", [32] * 32, "uncoalesced"),
    ("1.1", "a[threadIdx.x + 1]", "float a[]", [32] * 32, "uncoalesced"),
    ("1.1", "a[threadIdx.x]", "double a[]", [128, 128], "coalesced"),
    ("1.1", "a[threadIdx.x]", "float4 a[]", [128] * 4, "coalesced"),
    ("1.1", "a[threadIdx.x]", "float3 a[]", [32] * 96, "uncoalesced"),
    # CC 1.2/1.3: segments reduced while only one half is used
    ("1.2", "a[threadIdx.x ^ 1]", "float a[]", [64, 64], "coalesced"),
    ("1.3", "a[threadIdx.x + 1]", "float a[]", [128, 64, 32], "uncoalesced"),
    ("1.2", "a[threadIdx.x * 2]", "float a[]", [128, 128], "coalesced"),
    ("1.2", "a[threadIdx.x]", "char a[]", [32, 32], "coalesced"),
    ("1.2", "a[threadIdx.x * 32]", "float a[]", [32] * 32, "uncoalesced"),
    # CC 2.x/3.x: 128-byte L1 lines, 8-byte accesses per half-warp, 16-byte per quarter-warp
    ("2.0", "a[threadIdx.x]", "float a[]", [128], "coalesced"),
    ("2.0", "a[threadIdx.x + 1]", "float a[]", [128, 128], "uncoalesced"),
    ("3.5", "a[threadIdx.x]", "double a[]", [128, 128], "coalesced"),
    ("2.1", "a[threadIdx.x]", "float4 a[]", [128] * 4, "coalesced"),
])
def test_historical_transactions(cc, access, decl, transactions, verdict):
    r = analyze_global(access, decl, block=32, cc=cc)
    assert sorted(r["transactions"], reverse=True) == sorted(transactions, reverse=True)
    assert r["verdict"] == verdict


def test_cc12_half_warp_straddling_128_bytes_uses_a_32_and_a_64_byte_segment():
    r = analyze_global("a[threadIdx.x + 29]", "float a[]", block=16, cc="1.2")
    assert r["transactions"] == [32, 64]


def test_cc11_inactive_threads_do_not_break_coalescing():
    r = analyze_global("a[threadIdx.x]", "float a[]", block=32, cc="1.1", active="threadIdx.x % 4 != 1")
    assert (r["transactions"], r["verdict"]) == ([64, 64], "coalesced")


def test_modern_cc_has_no_transactions_key():
    assert "transactions" not in analyze_global("a[threadIdx.x]", "float a[]", cc="8.0")


# ---------------------------------------------------------------- the explanation names the cause

@pytest.mark.parametrize("access, kw, fragments", [
    ("a[threadIdx.x]", {}, ["lanes 0-7 share each 32-byte sector", "fewest sectors (4)"]),
    ("a[threadIdx.x + 1]", {}, ["4 bytes past a 32-byte boundary", "5 sectors instead of 4", "cudaMallocPitch"]),
    ("a[threadIdx.x * 4]", {}, ["16 bytes apart", "serves only 2 lanes", "25.0%"]),
    ("a[threadIdx.x]", dict(active="threadIdx.x % 2 == 0"), ["idle lanes leave holes", "4 sectors where 2"]),
    ("a[7]", {}, ["same 4-byte float", "broadcast"]),
    ("a[31 - threadIdx.x]", {}, ["order of the lanes does not matter"]),
    ("a[(threadIdx.x * 13) % 64]", {}, ["scattered", "8 sectors where 4"]),
])
def test_explanations(access, kw, fragments):
    text = analyze_global(access, "float a[]", block=32, **kw)["explanation"]
    for f in fragments:
        assert f in text


# ---------------------------------------------------------------- C semantics of the index

def test_unsigned_wrap_sends_thread_0_far_away():
    # (0u - 1) / 2 = 2147483647 -> byte 8589934588, its own sector and line; threads 1..31 read a[0..15]:
    # bytes 0..63, 2 sectors of one 128-byte line
    r = analyze_global("a[(threadIdx.x - 1)/2]", "float a[]", block=32)
    assert (r["sectors"], r["lines"], r["requests"]) == (3, 2, 1)
    # as int, thread 0 computes -1 / 2 = 0 (truncation toward zero): a[0..15] only
    assert analyze_global("a[((int)threadIdx.x - 1)/2]", "float a[]", block=32)["sectors"] == 2


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(offset=99999999999999999999), "--offset must be at most 1099511627776 bytes"),
    (dict(offset=-1), "--offset must be >= 0 bytes"),
    (dict(offset=4.0), "--offset must be an integer number of bytes, got 4.0"),
    (dict(offset=True), "--offset must be an integer"),
    (dict(grid=(2**31, 1, 1)), "CUDA allows at most 2147483647 x 65535 x 65535 blocks"),
    (dict(grid=(1, 65536, 1)), "CUDA allows at most"),
])
def test_launch_and_offset_limits(kwargs, fragment):
    with pytest.raises(UsageError, match=fragment.replace(".", r"\.")):
        analyze_global("a[threadIdx.x]", "float a[]", **kwargs)


def test_the_largest_offset_and_grid_are_accepted():
    assert analyze_global("a[threadIdx.x]", "float a[]", block=32, offset=2**40)["sectors"] == 4
    assert analyze_global("a[blockIdx.x]", "float a[]", block=32, grid=(2**31 - 1, 65535, 65535),
                          block_idx=(2**31 - 2, 0, 0))["sectors"] == 1


@pytest.mark.parametrize("access, fragment", [
    # (size_t)0 - 1 = 2^64 - 1 elements: 2^66 - 4 bytes, not wrapped back to a[-1]
    ("a[(size_t)threadIdx.x - 1]", "thread 0 reads a[18446744073709551615], 73786976294838206460 bytes"),
    ("a[(long long)threadIdx.x << 61]", "thread 1 reads a[2305843009213693952]"),
    ("a[-((long long)threadIdx.x << 60)]", "thread 1 reads a[-1152921504606846976], -4611686018427387904 bytes"),
])
def test_byte_offsets_beyond_2_to_62_are_refused(access, fragment):
    with pytest.raises(UsageError, match=r"beyond the 4611686018427387904-byte address range") as info:
        analyze_global(access, "float a[]", block=2)
    assert fragment in str(info.value)


def test_largest_accepted_byte_offset():
    # (2^62 - 4) / 4 is the last float inside the range
    r = analyze_global("a[threadIdx.x * 1152921504606846975ll]", "float a[]", block=2)
    assert r["sectors"] == 2


# ---------------------------------------------------------------- historical rules, derived by hand
# Seed 001 (CUDA Performance Optimization slides) states the rules: CC 1.0/1.1, per half-warp, the
# k-th thread must read the k-th word of an aligned 16-word segment (64 B for 4-byte words, 128 B
# for 8-byte, two 128 B for 16-byte) or else each thread costs its own 32 B transaction; CC 1.2/1.3,
# per half-warp, one transaction per segment (32 B for 1-byte words, 64 B for 2-byte, 128 B for
# 4+), halved while only one half is used. 2.x: 128-byte L1 lines, 8-byte loads per half-warp and
# 16-byte loads per quarter-warp (CUDA C Programming Guide 3.x-5.x, "Compute Capability 2.x").

@pytest.mark.parametrize("access, decl, block, active, cc, transactions, verdict", [
    # one active thread reading word 0: the k-th thread reads the k-th word -> one 64 B transaction
    ("a[threadIdx.x]", "float a[]", 16, "threadIdx.x == 0", "1.1", [64], "coalesced"),
    ("a[threadIdx.x]", "double a[]", 16, None, "1.0", [128], "coalesced"),
    ("a[threadIdx.x]", "float4 a[]", 16, None, "1.1", [128, 128], "coalesced"),
    # shifted by one word: each of the 16 threads gets its own 32 B transaction
    ("a[threadIdx.x + 1]", "float a[]", 16, None, "1.1", [32] * 16, "uncoalesced"),
    # 1.2: bytes 0..60 in 1-byte words: two 32 B segments
    ("a[threadIdx.x * 4]", "char a[]", 16, None, "1.2", [32, 32], "uncoalesced"),
    # 1.2: 2-byte words at 0..60: one 64 B segment (both 32 B halves used)
    ("a[threadIdx.x * 2]", "short a[]", 16, None, "1.2", [64], "coalesced"),
    # 1.2: 4-byte words at bytes 0 and 100: one 128 B segment, both halves used, not halved (one is fewest)
    ("a[threadIdx.x * 25]", "float a[]", 16, "threadIdx.x < 2", "1.2", [128], "coalesced"),
    # 1.2: only bytes 64..127 used -> the upper half, then its upper 32 B -> 32 B
    ("a[24 + threadIdx.x]", "float a[]", 16, "threadIdx.x < 8", "1.3", [32], "coalesced"),
    # 1.2: two segments 128 B apart
    ("a[threadIdx.x * 32]", "float a[]", 16, "threadIdx.x < 2", "1.2", [32, 32], "uncoalesced"),
    # 2.0: each half-warp of doubles reads bytes 0..127: one line per half-warp, two in all
    ("a[threadIdx.x % 16]", "double a[]", 32, None, "2.0", [128, 128], "coalesced"),
    # 2.0: each quarter-warp of float4 reads bytes 0..127: four lines
    ("a[threadIdx.x % 8]", "float4 a[]", 32, None, "2.0", [128] * 4, "coalesced"),
    # 2.0: floats 0..31 shifted by one: bytes 4..131 cross a line -> 2 lines where 1 would do
    ("a[threadIdx.x + 1]", "float a[]", 32, None, "2.1", [128, 128], "uncoalesced"),
])
def test_historical_transactions_by_hand(access, decl, block, active, cc, transactions, verdict):
    r = analyze_global(access, decl, block=block, active=active, cc=cc)
    assert (r["transactions"], r["verdict"]) == (transactions, verdict)


def test_a_warp_without_active_lanes_is_not_executed():
    r = analyze_global("a[threadIdx.x]", "float a[]", block=64, active="threadIdx.x < 32", cc="2.0")
    idle = r["per_warp"][1]
    assert (idle["requests"], idle["sectors"], idle["sectors_per_request"], idle["efficiency_pct"], idle["verdict"],
            idle["transactions"]) == (0, 0, None, None, "not executed", [])
    assert (r["requests"], r["sectors"], r["transactions"]) == (1, 4, [128])


def test_sectors_per_request_keeps_three_decimals():
    # warp 0 reads a[1..32] (bytes 4..131: 5 sectors), warps 1 and 2 read a[0] (1 sector each): 7 / 3
    r = analyze_global("a[threadIdx.x < 32 ? threadIdx.x + 1 : 0]", "float a[]", block=96)
    assert (r["sectors"], r["requests"], r["sectors_per_request"]) == (7, 3, 2.333)


def test_units_and_bytes_of_unaligned_ranges():
    # [30, 34) touches sectors 0 and 1, [94, 98) sectors 2 and 3; the union is 8 bytes
    starts = np.asarray([30, 94], dtype=np.int64)
    assert coalescing.units_touched(starts, 4, 32) == 4
    assert coalescing.units_touched(starts, 4, 128) == 1
    assert coalescing.union_bytes(starts, 4) == 8
    assert coalescing.union_bytes(np.asarray([0, 2], dtype=np.int64), 4) == 6  # overlapping ranges
    assert coalescing.union_bytes(np.asarray([], dtype=np.int64), 4) == 0


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(block=(1025, 1, 1)), "block 1025x1x1 has 1025 threads"),
    (dict(block=(1, 1, 65)), "block 1x1x65 has 65 threads: CUDA allows at most 1024 per block (x, y <= 1024, z <= 64)"),
    (dict(block=(64, 32, 1)), "block 64x32x1 has 2048 threads"),
    (dict(grid=(3, 65536, 1)), "grid 3x65536x1: CUDA allows at most 2147483647 x 65535 x 65535 blocks"),
    (dict(grid=(2, 2, 2), block_idx=(1, 2, 0)), "block index (1, 2, 0) is outside the grid (2, 2, 2)"),
    (dict(grid="2", block_idx="x"), "bad block index 'x'"),
    (dict(grid="0"), "bad grid '0': each must be >= 1"),
])
def test_launch_shape_errors(kwargs, fragment):
    with pytest.raises(UsageError) as info:
        analyze_global("a[threadIdx.x]", "float a[]", **kwargs)
    assert fragment in str(info.value)


def test_launch_shape_edges():
    assert analyze_global("a[threadIdx.x]", "float a[]", block=(1024, 1, 1))["requests"] == 32
    assert analyze_global("a[threadIdx.z]", "float a[]", block=(1, 1, 64))["requests"] == 2
    r = analyze_global("a[blockIdx.y * 32 + threadIdx.x]", "float a[]", block=32, grid=(2, 3, 1), block_idx=(1, 2, 0))
    assert r["sectors"] == 4 and r["requests"] == 1
