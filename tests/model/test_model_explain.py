"""The explanation sentences, pinned word for word for one case of each branch of model/explain.py.

Each expected number is derived by hand in the comment above its case (float = 4 bytes, sectors of
32 bytes, 128-byte lines, 32 banks of 4 bytes from CC 2.0, 16 banks per half-warp on CC 1.x).
"""

from __future__ import annotations

import pytest

from gpumemlab.model import analyze

FIX_ALIGN = ("Fix: align the start (cudaMalloc gives 256 bytes; keep offsets a multiple of 32 bytes, pad rows with "
             "cudaMallocPitch).")
FIX_STRIDED = ("Fix: make consecutive threads read consecutive elements, or load a tile coalesced into shared memory "
               "and read the strided pattern from there.")
FIX_CORNER = ("Fix: let threadIdx.x index the last (contiguous) dimension, transpose the data, or load the tile "
              "coalesced into shared memory and read it from there (corner turning).")


def fix_soa(t: str) -> str:
    return (f"Fix: store the fields of {t} as separate arrays (SoA), or copy the structs coalesced through shared "
            f"memory as plain words.")


def fix_word_stride(words: int) -> str:
    return (f"Fix: the lanes are {words} words apart; use an odd word stride, or sequential addressing where "
            f"consecutive threads read consecutive words (reduce2's sdata[tid] += sdata[tid + s]).")


FIX_SPREAD = "Fix: spread the lanes over different banks (pad, swizzle the index with XOR, or reorder the work)."

GLOBAL = [
    # bytes 4..131: 4 past a sector start, sectors 0..4 = 5 where ceil(128/32) = 4; 128 / (5*32) = 80%
    pytest.param("a[blockIdx.x*blockDim.x + threadIdx.x + 1]", "float a[]", dict(block=32),
                 "Consecutive lanes of warp 0 read consecutive floats, but the first byte is 4 bytes past a 32-byte "
                 "boundary, so the warp's bytes straddle 5 sectors instead of 4 (80.0% of the moved bytes used). "
                 + FIX_ALIGN, id="misaligned"),
    # bytes 0..127: 4 sectors, 32/4 = 8 floats per sector
    pytest.param("a[threadIdx.x]", "float a[]", dict(block=32),
                 "Consecutive lanes of warp 0 read consecutive floats, so lanes 0-7 share each 32-byte sector and "
                 "the request needs the fewest sectors (4).", id="consecutive-float"),
    # 32 doubles = 256 bytes = 8 sectors, 32/8 = 4 doubles per sector
    pytest.param("a[threadIdx.x]", "double a[]", dict(block=32),
                 "Consecutive lanes of warp 0 read consecutive doubles, so lanes 0-3 share each 32-byte sector and "
                 "the request needs the fewest sectors (8).", id="consecutive-double"),
    # 32 x 16 bytes = 512 bytes = 16 sectors, 2 float4 per sector: "lanes 0, 1" (a range of 2 is listed)
    pytest.param("a[threadIdx.x]", "float4 a[]", dict(block=32),
                 "Consecutive lanes of warp 0 read consecutive float4s, so lanes 0, 1 share each 32-byte sector and "
                 "the request needs the fewest sectors (16).", id="consecutive-float4"),
    # lanes 0..3 of 32 active, 8 bytes apart: 16 bytes in one sector, the fewest; the step is not 4 bytes
    pytest.param("a[threadIdx.x*2]", "float a[]", dict(block=32, active="threadIdx.x < 4"),
                 "The active lanes of warp 0 (4 of 32 lanes active) read 4 distinct floats packed into the fewest "
                 "sectors (1); on CC >= 2.0 the order of the lanes does not matter.", id="packed-sparse"),
    # reversed order: still 128 bytes in sectors 0..3, steps of -4 bytes
    pytest.param("a[31 - threadIdx.x]", "float a[]", dict(block=32),
                 "The active lanes of warp 0 read 32 distinct floats packed into the fewest sectors (4); on CC >= 2.0 "
                 "the order of the lanes does not matter.", id="permuted"),
    # one lane active: one float, one sector
    pytest.param("a[threadIdx.x]", "float a[]", dict(block=32, active="threadIdx.x == 5"),
                 "All active lanes of warp 0 (1 of 32 lanes active) read the same 4-byte float, so each request "
                 "moves one 32-byte sector (broadcast); that is already minimal.", id="broadcast-one-lane"),
    # every lane reads a[0]
    pytest.param("a[0]", "float a[]", dict(block=32),
                 "All active lanes of warp 0 read the same 4-byte float, so each request moves one 32-byte sector "
                 "(broadcast); that is already minimal.", id="broadcast"),
    # even lanes read floats 0, 2, ..., 30: bytes 0..123 in 4 sectors, 16 x 4 = 64 bytes fit in 2; 64/128 = 50%
    pytest.param("a[threadIdx.x]", "float a[]", dict(block=32, active="threadIdx.x % 2 == 0"),
                 "Only 16 lanes of warp 0 load and the idle lanes leave holes between them: 4 sectors where 2 would "
                 "hold the data (50.0% of the moved bytes used). Fix: let the working threads be consecutive "
                 "(compact the work).", id="holes"),
    # 8 bytes apart: 32/8 = 4 lanes per sector, 8 sectors for 128 bytes of data (4 sectors); 128/256 = 50%
    pytest.param("a[threadIdx.x*2]", "float a[]", dict(block=32),
                 "Consecutive lanes of warp 0 are 8 bytes apart, so each 32-byte sector serves only 4 lanes and "
                 "50.0% of the moved bytes are used (8 sectors where 4 would do). " + FIX_STRIDED, id="stride-2"),
    # 32 bytes apart: one lane per sector, 32 sectors; 128/1024 = 12.5%
    pytest.param("a[threadIdx.x*8]", "float a[]", dict(block=32),
                 "Consecutive lanes of warp 0 are 32 bytes apart, so each 32-byte sector serves only 1 lane and "
                 "12.5% of the moved bytes are used (32 sectors where 4 would do). " + FIX_STRIDED, id="stride-8"),
    # even lanes of 16 active read floats 0, 4, ..., 60: 16 bytes apart, 2 per sector, 8 sectors;
    # 64 bytes fit in 2 sectors; 64/256 = 25%
    pytest.param("a[threadIdx.x*2]", "float a[]", dict(block=32, active="threadIdx.x % 2 == 0"),
                 "Successive active lanes of warp 0 (16 of 32 lanes active) are 16 bytes apart, so each 32-byte sector "
                 "serves only 2 lanes and 25.0% of the moved bytes are used (8 sectors where 2 would do). "
                 + FIX_STRIDED, id="stride-active"),
    # column of a 32x32 float array: rows are 128 bytes apart, 1 lane per sector; the row index varies
    pytest.param("a[threadIdx.x][0]", "float a[32][32]", dict(block=32),
                 "Consecutive lanes of warp 0 are 128 bytes apart, so each 32-byte sector serves only 1 lane and "
                 "12.5% of the moved bytes are used (32 sectors where 4 would do). " + FIX_CORNER, id="column"),
    # warp 0 = two rows of 16 lanes, lanes 8 bytes apart inside a row, rows 256 bytes apart: no constant step;
    # each row of 16 floats spans 128 bytes = 4 sectors, 8 in all, 64 bytes per row fit in 2: 128/256 = 50%;
    # the row index (not the last dimension) varies -> corner turning
    pytest.param("a[threadIdx.y][threadIdx.x*2]", "float a[4][64]", dict(block=(16, 2)),
                 "The lanes of warp 0 read scattered floats: 8 sectors where 4 would hold the data (50.0% of the "
                 "moved bytes used). " + FIX_CORNER, id="scattered-2d"),
    # (37*t) mod 1024 floats: 37*4 = 148 bytes apart until the wrap, each lane its own sector: 32 sectors;
    # 128/1024 = 12.5%; the step changes at the wrap (t = 28), so it is scattered
    pytest.param("a[(threadIdx.x*37)%1024]", "float a[]", dict(block=32),
                 "The lanes of warp 0 read scattered floats: 32 sectors where 4 would hold the data (12.5% of the "
                 "moved bytes used). " + FIX_STRIDED, id="scattered"),
    # .x of float4: 16 bytes apart, 2 per sector, 16 sectors for 128 bytes (4): 25%; a member -> SoA
    pytest.param("a[threadIdx.x].x", "float4 a[]", dict(block=32),
                 "Consecutive lanes of warp 0 are 16 bytes apart, so each 32-byte sector serves only 2 lanes and "
                 "25.0% of the moved bytes are used (16 sectors where 4 would do). " + fix_soa("float4"), id="member"),
    # float3 = 3 loads of 4 bytes, lanes 12 bytes apart: 32//12 = 2 lanes per sector; each load's 32 words
    # span bytes 0..375 (+4k): 12 sectors each, 36 in all, 4 needed each: 12; 3*128 / (36*32) = 33.33%
    pytest.param("a[threadIdx.x]", "float3 a[]", dict(block=32),
                 "Consecutive lanes of warp 0 are 12 bytes apart, so each 32-byte sector serves only 2 lanes and "
                 "33.33% of the moved bytes are used (36 sectors where 12 would do). " + fix_soa("float3")
                 + " float3 is 12 bytes, so the compiler splits it into 3 loads of 4 bytes, each its own request.",
                 id="float3"),
    # warp 0 reads a[t] (coalesced), warp 1 reads a[2t] (8 bytes apart): the warps' verdicts differ
    pytest.param("a[threadIdx.x < 32 ? threadIdx.x : 2*threadIdx.x]", "float a[]", dict(block=64),
                 "Consecutive lanes of warp 0 read consecutive floats, so lanes 0-7 share each 32-byte sector and "
                 "the request needs the fewest sectors (4). Warps differ: 1 of 2 executing warps are coalesced.",
                 id="warps-differ"),
    # warp 1 does not execute: no "Warps differ"
    pytest.param("a[threadIdx.x]", "float a[]", dict(block=64, active="threadIdx.x < 32"),
                 "Consecutive lanes of warp 0 read consecutive floats, so lanes 0-7 share each 32-byte sector and "
                 "the request needs the fewest sectors (4).", id="idle-warp"),
    # CC 1.1: lane k reads word k of the 64-byte-aligned segment 64*h: one 64-byte transaction per half-warp
    pytest.param("a[threadIdx.x]", "float a[]", dict(block=32, cc="1.1"),
                 "On cc 1.1 a half-warp coalesces only when its k-th thread reads the k-th word of an aligned 64-byte "
                 "segment, otherwise every thread is its own 32-byte transaction: warp 0 needs 2 x 64 B (coalesced). "
                 "Consecutive lanes of warp 0 read consecutive floats, so lanes 0-7 share each 32-byte sector and "
                 "the request needs the fewest sectors (4).", id="cc1.1"),
    # CC 1.0 float4: segments of 16*16 = 256 bytes, two 128-byte transactions per half-warp: 4 x 128 B
    pytest.param("a[threadIdx.x]", "float4 a[]", dict(block=32, cc="1.0"),
                 "On cc 1.0 a half-warp coalesces only when its k-th thread reads the k-th word of an aligned "
                 "256-byte segment, otherwise every thread is its own 32-byte transaction: warp 0 needs 4 x 128 B "
                 "(coalesced). Consecutive lanes of warp 0 read consecutive float4s, so lanes 0, 1 share each "
                 "32-byte sector and the request needs the fewest sectors (16).", id="cc1.0-float4"),
    # CC 1.1 shifted by one word: no half-warp qualifies, 32 single 32-byte transactions
    pytest.param("a[threadIdx.x+1]", "float a[]", dict(block=32, cc="1.1"),
                 "On cc 1.1 a half-warp coalesces only when its k-th thread reads the k-th word of an aligned 64-byte "
                 "segment, otherwise every thread is its own 32-byte transaction: warp 0 needs 32 x 32 B "
                 "(uncoalesced). Consecutive lanes of warp 0 read consecutive floats, but the first byte is 4 bytes "
                 "past a 32-byte boundary, so the warp's bytes straddle 5 sectors instead of 4 (80.0% of the moved "
                 "bytes used). " + FIX_ALIGN, id="cc1.1-shifted"),
    # CC 1.2, shifted by one word: half-warp 0 reads bytes 4..67 of segment [0, 128): neither half alone -> 128 B;
    # half-warp 1 reads bytes 68..127 -> upper half [64, 128) = 64 B, plus bytes 128..131 -> 32 B
    pytest.param("a[threadIdx.x+1]", "float a[]", dict(block=32, cc="1.2"),
                 "On cc 1.2 each half-warp is served by aligned 32/64/128-byte segments, each halved while only one "
                 "half is used, whatever the order of the threads: warp 0 needs 1 x 32 B, 1 x 64 B, 1 x 128 B "
                 "(uncoalesced). Consecutive lanes of warp 0 read consecutive floats, but the first byte is 4 bytes "
                 "past a 32-byte boundary, so the warp's bytes straddle 5 sectors instead of 4 (80.0% of the moved "
                 "bytes used). " + FIX_ALIGN, id="cc1.2-shifted"),
    # CC 3.5 float2: 8-byte loads per half-warp, each half-warp's 128 bytes is one line: 2 x 128 B;
    # 256 bytes = 8 sectors, 4 float2 per sector
    pytest.param("a[threadIdx.x]", "float2 a[]", dict(block=32, cc="3.5"),
                 "On cc 3.5 (L1-cached loads) each request moves whole 128-byte lines: warp 0 needs 2 x 128 B "
                 "(coalesced). Consecutive lanes of warp 0 read consecutive float2s, so lanes 0-3 share each 32-byte "
                 "sector and the request needs the fewest sectors (8).", id="cc3.5-float2"),
]


@pytest.mark.parametrize("access, decl, kw, sentence", GLOBAL)
def test_global_explanation(access, decl, kw, sentence):
    assert analyze(access, decl, space="global", **kw)["explanation"] == sentence


SHARED = [
    # word t in bank t: one word per bank
    pytest.param("s[threadIdx.x]", "float s[32]", dict(block=32),
                 "Every bank of warp 0 delivers at most one distinct word per warp, so the load takes the ideal "
                 "1 wavefront.", id="sequential"),
    # lanes 2k, 2k+1 read word k: 16 distinct words, shared by pairs
    pytest.param("s[threadIdx.x/2]", "float s[32]", dict(block=32),
                 "Every bank of warp 0 delivers at most one distinct word per warp (lanes reading the same word share "
                 "it by broadcast), so the load takes the ideal 1 wavefront.", id="pairs-broadcast"),
    # padded rows: word 33t lands in bank (33t) % 32 = t
    pytest.param("s[threadIdx.x][0]", "float s[32][33]", dict(block=32),
                 "Every bank of warp 0 delivers at most one distinct word per warp, so the load takes the ideal "
                 "1 wavefront.", id="padded-column"),
    # word 2t: lanes t and t+16 share bank 2t % 32 -> 2-way; lanes 0 and 16 read words 0 and 32 of bank 0
    pytest.param("s[threadIdx.x*2]", "float s[64]", dict(block=32),
                 "Lanes 0, 16 of warp 0 read 2 different words of bank 0 (words 0, 32) in one warp, so they are "
                 "served one after another: a 2-way bank conflict, 2 wavefronts where 1 would do. "
                 + fix_word_stride(2), id="stride-2"),
    # word 16t: even lanes in bank 0 (words 0, 32, ..., 480), odd in bank 16: 16-way; 6 lanes and 4 words shown
    pytest.param("s[threadIdx.x*16]", "float s[512]", dict(block=32),
                 "Lanes 0, 2, 4, 6, 8, 10, ... of warp 0 read 16 different words of bank 0 (words 0, 32, 64, 96, ...) "
                 "in one warp, so they are served one after another: a 16-way bank conflict, 16 wavefronts where 1 "
                 "would do. " + fix_word_stride(16), id="stride-16"),
    # a column of 32-word rows: word 32t, all in bank 0; the row index varies -> pad the row
    pytest.param("s[threadIdx.x][0]", "float s[32][32]", dict(block=32),
                 "Lanes 0-31 of warp 0 read 32 different words of bank 0 (words 0, 32, 64, 96, ...) in one warp, so "
                 "they are served one after another: a 32-way bank conflict, 32 wavefronts where 1 would do. Fix: "
                 "pad each row by one element, float s[32][33], so a column's words fall into different banks.",
                 id="column"),
    # .x of float4: word 4t, bank 4t % 32: lanes 0, 8, 16, 24 in bank 0 (words 0, 32, 64, 96) -> SoA
    pytest.param("s[threadIdx.x].x", "float4 s[32]", dict(block=32),
                 "Lanes 0, 8, 16, 24 of warp 0 read 4 different words of bank 0 (words 0, 32, 64, 96) in one warp, so "
                 "they are served one after another: a 4-way bank conflict, 4 wavefronts where 1 would do. Fix: store "
                 "the fields of float4 as separate arrays (SoA), so consecutive threads read consecutive words.",
                 id="member"),
    # even lanes read word t/2, odd lanes word 32 + t/2: lanes 0 and 1 in bank 0; no constant stride
    pytest.param("s[(threadIdx.x%2)*32 + threadIdx.x/2]", "float s[64]", dict(block=32),
                 "Lanes 0, 1 of warp 0 read 2 different words of bank 0 (words 0, 32) in one warp, so they are served "
                 "one after another: a 2-way bank conflict, 2 wavefronts where 1 would do. " + FIX_SPREAD,
                 id="interleaved"),
    # float4: per quarter-warp (8 lanes x 16 bytes = 128 bytes = 32 banks): 4 wavefronts, all ideal
    pytest.param("s[threadIdx.x]", "float4 s[32]", dict(block=32),
                 "Every bank of warp 0 delivers at most one distinct word per quarter-warp, so the load takes the "
                 "ideal 4 wavefronts. 16-byte accesses are served per quarter-warp, so the ideal is 4 wavefronts per "
                 "request.", id="float4"),
    # double: per half-warp (16 x 8 bytes = 128 bytes): 2 wavefronts
    pytest.param("s[threadIdx.x]", "double s[32]", dict(block=32),
                 "Every bank of warp 0 delivers at most one distinct word per half-warp, so the load takes the ideal "
                 "2 wavefronts. 8-byte accesses are served per half-warp, so the ideal is 2 wavefronts per request.",
                 id="double"),
    # all lanes read s[0] as float4: partners n^1 read the same address, so 16 lanes per phase: 2 wavefronts
    pytest.param("s[0]", "float4 s[32]", dict(block=32),
                 "Every bank of warp 0 delivers at most one distinct word per half-warp (lanes reading the same word "
                 "share it by broadcast), so the load takes the ideal 2 wavefronts. 16-byte accesses are served per "
                 "half-warp (pairs of lanes read the same address, so two share each slot), so the ideal is 2 "
                 "wavefronts per request.", id="float4-broadcast"),
    # double pairs: lanes 2k, 2k+1 read double k, a phase serves 32 lanes: 1 wavefront
    pytest.param("s[threadIdx.x/2]", "double s[32]", dict(block=32),
                 "Every bank of warp 0 delivers at most one distinct word per warp (lanes reading the same word share "
                 "it by broadcast), so the load takes the ideal 1 wavefront. 8-byte accesses are served per warp "
                 "(pairs of lanes read the same address, so two share each slot), so the ideal is 1 wavefront per "
                 "request.", id="double-pairs"),
    # CC 1.3: 16 banks per half-warp, two half-warps -> 2 wavefronts, no width sentence on 1.x
    pytest.param("s[threadIdx.x]", "float s[32]", dict(block=32, cc="1.3"),
                 "Every bank of warp 0 delivers at most one distinct word per half-warp, so the load takes the ideal "
                 "2 wavefronts.", id="cc1.3"),
    # CC 1.3 chars: bytes 0..3 are 4 distinct addresses of bank 0 -> 4-way (addresses, not words)
    pytest.param("s[threadIdx.x]", "char s[32]", dict(block=32, cc="1.3"),
                 "Lanes 0-3 of warp 0 read 4 different addresses of bank 0 (addresses 0, 1, 2, 3) in one half-warp, so "
                 "they are served one after another: a 4-way bank conflict, 4 wavefronts where 1 would do. "
                 + FIX_SPREAD, id="cc1.3-char"),
    # CC 1.3 stride 2: byte 8t, bank 2t % 16: lanes 0 and 8 (bytes 0, 64) in bank 0 of half-warp 0
    pytest.param("s[threadIdx.x*2]", "float s[64]", dict(block=32, cc="1.3"),
                 "Lanes 0, 8 of warp 0 read 2 different addresses of bank 0 (addresses 0, 64) in one half-warp, so "
                 "they are served one after another: a 2-way bank conflict, 2 wavefronts where 1 would do. "
                 + fix_word_stride(2), id="cc1.3-stride-2"),
    # CC 1.3 column: bytes 128t, 16 lanes of a half-warp all in bank 0
    pytest.param("s[threadIdx.x][0]", "float s[32][32]", dict(block=32, cc="1.3"),
                 "Lanes 0-15 of warp 0 read 16 different addresses of bank 0 (addresses 0, 128, 256, 384, ...) in one "
                 "half-warp, so they are served one after another: a 16-way bank conflict, 16 wavefronts where 1 "
                 "would do. Fix: pad each row by one element, float s[32][33], so a column's words fall into "
                 "different banks.", id="cc1.3-column"),
    # warp 0 conflict-free (word t), warp 1 2-way (word 2t): 1 of 2 warps conflict-free
    pytest.param("s[threadIdx.x < 32 ? threadIdx.x : 2*threadIdx.x]", "float s[256]", dict(block=64),
                 "Every bank of warp 0 delivers at most one distinct word per warp, so the load takes the ideal "
                 "1 wavefront. Warps differ: 1 of 2 executing warps are conflict-free.", id="warps-differ"),
    # warp 0 2-way (word 2t), warp 1 4-way (word 4t): no warp is conflict-free
    pytest.param("s[threadIdx.x < 32 ? 2*threadIdx.x : 4*threadIdx.x]", "float s[256]", dict(block=64),
                 "Lanes 0, 16 of warp 0 read 2 different words of bank 0 (words 0, 32) in one warp, so they are "
                 "served one after another: a 2-way bank conflict, 2 wavefronts where 1 would do. "
                 + fix_word_stride(2) + " Warps differ: 0 of 2 executing warps are fine.", id="warps-all-conflict"),
]


@pytest.mark.parametrize("access, decl, kw, sentence", SHARED)
def test_shared_explanation(access, decl, kw, sentence):
    assert analyze(access, decl, space="shared", **kw)["explanation"] == sentence
