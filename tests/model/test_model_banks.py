"""Shared memory: wavefronts and bank conflicts (slides, Best Practices, reduce1, tiles)."""

from __future__ import annotations

import pytest

from gpumemlab.model import analyze_shared


def counts(r: dict) -> tuple:
    return r["wavefronts"], r["ideal_wavefronts"], r["conflicts"], r["ways"]


def test_32x32_float_tile_column_read_is_a_32_way_conflict():
    r = analyze_shared("s[threadIdx.x][0]", "__shared__ float s[32][32]", block=32)
    assert counts(r) == (32, 1, 31, 32)
    assert r["verdict"] == "32-way bank conflict"
    assert "float s[32][33]" in r["explanation"]


def test_padding_the_tile_to_32x33_removes_the_conflict():
    r = analyze_shared("s[threadIdx.x][0]", "__shared__ float s[32][33]", block=32)
    assert counts(r) == (1, 1, 0, 1)
    assert r["verdict"] == "conflict-free"


@pytest.mark.parametrize("s, ways, warps", [(1, 2, 4), (2, 4, 2), (4, 8, 1)])
def test_reduce1_strided_index(s, ways, warps):
    r = analyze_shared("sdata[index]", "__shared__ float sdata[256]", block=256,
                       lets=[f"s={s}", "index=2*s*threadIdx.x"], active="index < blockDim.x")
    assert r["ways"] == ways and r["verdict"] == f"{ways}-way bank conflict"
    assert r["requests"] == warps
    assert r["per_warp"][0]["wavefronts"] == ways and r["per_warp"][0]["conflicts"] == ways - 1
    if s == 1:  # the seed: thread 0 and thread 16 read addresses 0 and 32, both in bank 0
        assert "Lanes 0, 16 of warp 0 read 2 different words of bank 0 (words 0, 32)" in r["explanation"]


def test_reduce2_sequential_addressing_is_conflict_free():
    r = analyze_shared("sdata[threadIdx.x + s]", "__shared__ float sdata[256]", block=256, lets=["s=128"],
                       active="threadIdx.x < s")
    assert counts(r) == (4, 4, 0, 1)


@pytest.mark.parametrize("cc, lanes", [("1.3", 16), ("9.0", 32)])
@pytest.mark.parametrize("access, ways", [
    ("s[threadIdx.x]", 1),                      # linear addressing, stride 1
    ("s[(threadIdx.x * 7) % 16]", 1),           # a random 1:1 permutation (within 16 words)
    ("s[threadIdx.x * 2]", 2),                  # stride 2: 2-way
    ("s[threadIdx.x * 8]", 8),                  # stride 8: 8-way
])
def test_slides_bank_addressing_examples(cc, lanes, access, ways):
    r = analyze_shared(access, "__shared__ float s[512]", block=lanes, cc=cc)
    assert r["ways"] == ways
    assert r["conflicts"] == ways - 1


def test_cc1x_serves_half_warps_with_16_banks():
    # 32 lanes, stride 16 words: on 1.x each half-warp is 16-way; on 9.0 the warp is 16-way too
    r1 = analyze_shared("s[threadIdx.x * 16]", "__shared__ float s[512]", block=32, cc="1.1")
    assert (r1["wavefronts"], r1["ideal_wavefronts"], r1["ways"]) == (32, 2, 16)
    r9 = analyze_shared("s[threadIdx.x * 16]", "__shared__ float s[512]", block=32, cc="9.0")
    assert (r9["wavefronts"], r9["ideal_wavefronts"], r9["ways"]) == (16, 1, 16)


def test_broadcast_is_conflict_free():
    assert counts(analyze_shared("s[5]", "__shared__ float s[32]", block=32)) == (1, 1, 0, 1)
    assert counts(analyze_shared("s[5]", "__shared__ float s[32]", block=32, cc="1.3")) == (2, 2, 0, 1)
    r = analyze_shared("s[threadIdx.x / 8]", "__shared__ float s[32]", block=32)
    assert counts(r) == (1, 1, 0, 1) and "broadcast" in r["explanation"]


def test_two_words_of_one_bank_conflict_even_with_broadcast():
    r = analyze_shared("s[(threadIdx.x / 16) * 32]", "__shared__ float s[64]", block=32)
    assert counts(r) == (2, 1, 1, 2)


def test_bytes_of_one_word_share_it_since_cc20_but_conflict_on_cc1x():
    assert analyze_shared("s[threadIdx.x]", "__shared__ char s[32]", block=32)["ways"] == 1
    assert analyze_shared("s[threadIdx.x]", "__shared__ char s[32]", block=32, cc="1.2")["ways"] == 4
    assert analyze_shared("s[4 * threadIdx.x]", "__shared__ char s[128]", block=32, cc="1.2")["ways"] == 1


@pytest.mark.parametrize("access, decl, want", [
    ("s[threadIdx.x]", "double s[32]", (2, 2, 0, 1)),            # half-warps of 16 x 8 bytes
    ("s[threadIdx.x]", "float2 s[32]", (2, 2, 0, 1)),
    ("s[threadIdx.x * 2]", "double s[64]", (4, 2, 2, 2)),        # lanes t and t+8 of a half-warp share banks
    ("s[threadIdx.x][0]", "double s[32][32]", (32, 2, 30, 16)),
    ("s[threadIdx.x][0]", "double s[32][33]", (2, 2, 0, 1)),
    ("s[threadIdx.x]", "float4 s[32]", (4, 4, 0, 1)),            # quarter-warps of 8 x 16 bytes
    ("s[threadIdx.x * 2]", "float4 s[64]", (8, 4, 4, 2)),
    ("s[threadIdx.x].x", "float4 s[32]", (4, 1, 3, 4)),          # one 4-byte member, 16 bytes apart
    ("s[threadIdx.x]", "float3 s[32]", (3, 3, 0, 1)),            # three 4-byte loads, word stride 3
])
def test_wide_accesses_are_served_in_phases(access, decl, want):
    assert counts(analyze_shared(access, decl, block=32)) == want


def test_cc1x_splits_a_double_into_two_32_bit_requests_with_a_2_way_conflict():
    r = analyze_shared("s[threadIdx.x]", "double s[32]", block=16, cc="1.3")
    assert (r["wavefronts"], r["ideal_wavefronts"], r["ways"]) == (4, 2, 2)


def test_2d_block_reading_columns_of_a_row_major_tile():
    r = analyze_shared("s[threadIdx.y][threadIdx.x * 4]", "__shared__ float s[4][32]", block=(8, 4))
    assert counts(r) == (4, 1, 3, 4)


def test_masked_lanes_do_not_count():
    r = analyze_shared("s[threadIdx.x * 32]", "__shared__ float s[1024]", block=32, active="threadIdx.x < 4")
    assert counts(r) == (4, 1, 3, 4)


def test_per_warp_totals_add_up():
    r = analyze_shared("s[threadIdx.x * 2]", "__shared__ float s[512]", block=256)
    assert r["wavefronts"] == sum(w["wavefronts"] for w in r["per_warp"]) == 16
    assert r["conflicts"] == 8


@pytest.mark.parametrize("access, decl, cc, want", [
    # lanes n and n^1 (or n^2) reading one address share the returned data: half the phases
    ("s[1]", "float4 s[32]", "9.0", (2, 2, 0, 1)),
    ("s[3]", "double s[32]", "9.0", (1, 1, 0, 1)),
    ("s[threadIdx.x / 2]", "float4 s[16]", "9.0", (2, 2, 0, 1)),
    ("s[(threadIdx.x / 4) * 2 + threadIdx.x % 2]", "double s[16]", "9.0", (1, 1, 0, 1)),
    # the forum's case: tid % 4 pairs no neighbours, so LDS.128 still takes 4 wavefronts
    ("s[threadIdx.x % 4]", "float4 s[4]", "9.0", (4, 4, 0, 1)),
    ("s[threadIdx.x % 16]", "double s[16]", "9.0", (2, 2, 0, 1)),
    # not modelled before Volta: the plain phases
    ("s[1]", "float4 s[32]", "6.1", (4, 4, 0, 1)),
])
def test_uniform_lane_pairs_pack_wide_loads(access, decl, cc, want):
    assert counts(analyze_shared(access, decl, block=32, cc=cc)) == want


def test_a_partner_lane_that_is_idle_breaks_the_pairing():
    r = analyze_shared("s[1]", "float4 s[32]", block=32, active="threadIdx.x != 5")
    assert counts(r) == (4, 4, 0, 1)


# ---------------------------------------------------------------- wide loads: how lanes form phases
# 8-byte loads are served per half-warp, 16-byte per quarter-warp (128 bytes per wavefront); from CC 7.0
# a phase holds twice the lanes when every lane n reads the same address as lane n^1 (or n^2)
# (the rule in banks.lanes_per_phase, from NVIDIA's developer-forum answer for CC 7.x).

@pytest.mark.parametrize("access, decl, block, cc, want", [
    # float4 broadcast in pairs: 16 lanes per phase, 8 distinct float4 = 32 words, 1 wavefront each -> 2
    ("s[threadIdx.x / 2]", "__shared__ float4 s[16]", 32, "7.0", (2, 2, 0, 1)),
    # before 7.0 no pairing: 4 quarter-warps, 4 distinct float4 = 16 words each -> 4
    ("s[threadIdx.x / 2]", "__shared__ float4 s[16]", 32, "6.1", (4, 4, 0, 1)),
    # lane 30 has no lane 31 in a 31-thread block: no pairing, 4 quarter-warp phases
    ("s[threadIdx.x / 2]", "__shared__ float4 s[16]", 31, "9.0", (4, 4, 0, 1)),
    # double, consecutive: 2 half-warps, 16 lanes x 2 words = 32 banks -> 1 wavefront each
    ("s[threadIdx.x]", "__shared__ double s[32]", 32, "9.0", (2, 2, 0, 1)),
    # double, n^2 pairs read the same: 32 lanes per phase, 16 doubles = 32 words -> 1
    ("s[(threadIdx.x & ~2u) / 2 + (threadIdx.x & 1)]", "__shared__ double s[32]", 32, "8.0", (1, 1, 0, 1)),
    # double with a 64-word stride: each half-warp puts its 16 doubles in banks 0 and 1 -> 16 each
    ("s[threadIdx.x * 32]", "__shared__ double s[1024]", 32, "9.0", (32, 2, 30, 16)),
    # ways is the worst phase: half-warp 0 conflict-free, half-warp 1 4-way
    ("s[threadIdx.x < 16 ? threadIdx.x : (threadIdx.x % 4) * 16]", "__shared__ double s[64]", 32, "9.0",
     (5, 2, 3, 4)),
    # 1.x splits a double into two 4-byte requests, each per half-warp with 16 banks: 2-way in each
    ("s[threadIdx.x]", "__shared__ double s[16]", 16, "1.3", (4, 2, 2, 2)),
])
def test_wide_loads_and_worst_phase(access, decl, block, cc, want):
    assert counts(analyze_shared(access, decl, block=block, cc=cc)) == want


def test_a_warp_without_active_lanes_is_not_executed():
    r = analyze_shared("s[threadIdx.x]", "__shared__ float s[64]", block=64, active="threadIdx.x < 32")
    idle = r["per_warp"][1]
    assert (idle["requests"], idle["wavefronts"], idle["ways"], idle["verdict"]) == (0, 0, 0, "not executed")
    assert (r["requests"], r["ways"], r["verdict"]) == (1, 1, "conflict-free")
