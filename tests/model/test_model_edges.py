"""Edges of the analyzer that the other tests leave open: the inputs resolve accepts, per-warp and
per-half-warp verdicts of the historical rules, C casts and shifts at their limits, helper functions
on hand-made input, DRAM interleaving defaults and the occupancy and roofline messages.

Every expected value is derived by hand in the comment next to it.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model import analyze, matmul_intensity, occupancy, parse_decl, resolve, roofline
from gpumemlab.model import expr
from gpumemlab.model.coalescing import units_touched
from gpumemlab.model.dram import DramLayout, tiled_matmul_phase, tiled_matmul_phase_elements
from gpumemlab.model.intensity import Device, kernel_name


def message(fn, *args, **kw) -> str:
    with pytest.raises(UsageError) as info:
        fn(*args, **kw)
    return str(info.value)


def typed(text: str) -> tuple[list[int], str]:
    from gpumemlab.model.access import make_launch

    launch = make_launch(block=2)
    v = expr.Evaluator(launch.env(), 2, "expression", text).typed(expr.parse(text))
    return v.v.tolist(), v.type.name


# ---------------------------------------------------------------- resolve

def test_resolve_takes_a_parsed_declaration_and_keeps_the_access_text():
    d = parse_decl("float a[8][4]")
    lanes = resolve("a[threadIdx.x][1]", d, block=4)
    # row t of 4 floats, column 1: (4t + 1) * 4 bytes
    assert lanes.addresses[0].tolist() == [4, 20, 36, 52]
    assert (lanes.access, lanes.decl is d, lanes.space, lanes.offset) == ("a[threadIdx.x][1]", True, "global", 0)


def test_inactive_threads_do_not_evaluate_the_index():
    # thread 0 is inactive; evaluating 12 / threadIdx.x there would divide by zero
    lanes = resolve("a[12 / (int)threadIdx.x]", "float a[16]", block=4, active="threadIdx.x > 0")
    assert lanes.addresses[0][1:].tolist() == [48, 24, 16]  # elements 12, 6, 4
    assert lanes.active.tolist() == [False, True, True, True]


def test_a_sized_first_dimension_is_not_a_pointer():
    # only an unsized global first dimension may be negative: s[-1] of float s[32] is out of bounds
    assert message(resolve, "s[(int)threadIdx.x - 1]", "__shared__ float s[32]", block=2) == (
        "access 's[(int)threadIdx.x - 1]': index 1 of s is -1 for thread 0, outside 0..31")
    assert message(resolve, "a[(int)threadIdx.x - 1]", "float a[32]", block=2) == (
        "access 'a[(int)threadIdx.x - 1]': index 1 of a is -1 for thread 0, outside 0..31")


def test_the_address_range_message_names_every_index():
    # a[2**58][4] of float a[][64]: (2**58 * 64 + 4) * 4 bytes = 2**66 + 16, beyond 2**62
    text = "a[288230376151711744L * (long)threadIdx.x][4]"
    assert message(resolve, text, "float a[][64]", block=2) == (
        f"access '{text}': thread 1 reads a[288230376151711744][4], 73786976294838206480 bytes from the base: "
        "beyond the 4611686018427387904-byte address range the model accepts")


def test_the_space_defaults_from_the_declaration():
    assert analyze("a[threadIdx.x]", "float a[]", block=32)["space"] == "global"
    assert analyze("s[threadIdx.x]", "__shared__ float s[32]", block=32)["space"] == "shared"
    # the default CC of predict is 9.0
    assert analyze("a[threadIdx.x]", "float a[]", block=32)["cc"] == "9.0"


# ---------------------------------------------------------------- historical verdicts

def test_cc12_each_load_of_a_float3_counts():
    # lanes 0, 1 read float3 elements 10, 11 (bytes 120..143). Load .x: bytes 120 and 132 lie in the
    # 128-byte segments 0 and 1 (2 transactions where 8 bytes fit in 1); load .z: 128 and 140 share
    # segment 1. Each lone 4-byte word halves down to 32 B: 5 x 32 B, and the warp is uncoalesced.
    r = analyze("a[10 + threadIdx.x]", "float3 a[]", block=32, active="threadIdx.x < 2", cc="1.2")
    assert (r["transactions"], r["per_warp"][0]["verdict"], r["verdict"]) == ([32] * 5, "uncoalesced", "uncoalesced")


def test_cc11_one_bad_warp_makes_the_block_uncoalesced():
    # warp 0 reads a[2t] (not the k-th word: 32 x 32 B), warp 1 a[t] (2 x 64 B, coalesced)
    r = analyze("a[threadIdx.x < 32 ? 2*threadIdx.x : threadIdx.x]", "float a[]", block=64, cc="1.1")
    assert [w["verdict"] for w in r["per_warp"]] == ["uncoalesced", "coalesced"]
    assert (r["verdict"], r["transactions"]) == ("uncoalesced", [32] * 32 + [64] * 2)


def test_cc11_one_bad_half_warp_makes_the_warp_uncoalesced():
    # half-warp 0 reads a[t + 1] (misaligned: 16 x 32 B), half-warp 1 reads a[t] = bytes 64..127 (1 x 64 B)
    r = analyze("a[threadIdx.x < 16 ? threadIdx.x + 1 : threadIdx.x]", "float a[]", block=32, cc="1.1")
    assert (r["transactions"], r["verdict"]) == ([32] * 16 + [64], "uncoalesced")


def test_cc11_an_idle_half_warp_is_skipped():
    # only half-warp 1 executes: lanes 16..31 read bytes 64..127, one aligned 64-byte segment
    r = analyze("a[threadIdx.x]", "float a[]", block=32, active="threadIdx.x >= 16", cc="1.1")
    assert (r["transactions"], r["verdict"]) == ([64], "coalesced")


def test_cc12_two_byte_words_use_64_byte_segments():
    # shorts 8 bytes apart: bytes 0..121 span the 64-byte segments [0, 64) and [64, 128), each with lanes in
    # both halves -> 2 x 64 B, where the 32 bytes read fit in one segment: uncoalesced
    r = analyze("a[threadIdx.x*4]", "short a[]", block=16, cc="1.2")
    assert (r["transactions"], r["verdict"]) == ([64, 64], "uncoalesced")


def test_cc12_float4_fills_two_full_segments():
    # 16 lanes x 16 bytes = 256 bytes per half-warp: two whole 128-byte segments, the fewest that hold them
    r = analyze("a[threadIdx.x]", "float4 a[]", block=32, cc="1.2")
    assert (r["transactions"], r["verdict"]) == ([128] * 4, "coalesced")


def test_cc20_half_a_line_is_coalesced():
    # 16 floats = 64 bytes in one 128-byte line: one line is the fewest
    r = analyze("a[threadIdx.x]", "float a[]", block=16, cc="2.0")
    assert (r["transactions"], r["verdict"]) == ([128], "coalesced")


@pytest.mark.parametrize("starts, width, unit, want", [
    ([62], 4, 32, 2),          # bytes 62..65: sectors 1 and 2
    ([30, 62], 4, 32, 3),      # bytes 30..33 and 62..65: sectors 0, 1, 2
    ([0, 8], 4, 32, 1),        # both in sector 0
    ([100, 300], 8, 128, 2),   # lines 0 and 2
])
def test_units_touched(starts, width, unit, want):
    assert units_touched(np.array(starts), width, unit) == want


# ---------------------------------------------------------------- C casts, shifts, min/max

@pytest.mark.parametrize("words, name", [
    (["char"], "char"), (["signed", "char"], "signed char"), (["unsigned", "char"], "unsigned char"),
    (["short"], "short"), (["signed", "short"], "short"), (["short", "int"], "short"),
    (["unsigned", "short", "int"], "unsigned short"), (["int"], "int"), (["signed"], "int"),
    (["unsigned"], "unsigned int"), (["long"], "long"), (["long", "int"], "long"), (["long", "long"], "long"),
    (["long", "long", "int"], "long"), (["unsigned", "long", "long"], "unsigned long"),
    (["signed", "long", "int"], "long"), (["size_t"], "unsigned long"), (["int32_t"], "int"),
    (["unsigned", "signed", "int"], None), (["int", "int"], None), (["short", "long"], None),
    (["size_t", "int"], None), (["float"], None),
])
def test_cast_type_names(words, name):
    ty = expr.cast_type(words)
    assert (ty.name if ty else None) == name


@pytest.mark.parametrize("text, want", [
    ("(short int)70000", ([4464] * 2, "int")),          # 70000 - 65536, promoted to int
    ("(long int)-1 * 4294967296", ([-4294967296] * 2, "long")),
    ("(signed char)200", ([-56] * 2, "int")),            # 200 - 256
    ("min(-1L, 0u)", ([-1] * 2, "long")),                # long holds every unsigned int: -1 stays -1
    ("min(-1, 0u)", ([0] * 2, "unsigned int")),          # int -> unsigned: 4294967295 > 0
    ("max(-1L, 0u)", ([0] * 2, "long")),
    ("2147483647 << 1", ([-2] * 2, "int")),              # 2**32 - 2 fits unsigned int: defined, wraps to -2
    # thread 0 takes the 0 arm; its shift count -1 (never evaluated in C) must not break the other arm
    ("threadIdx.x == 0 ? 0 : 1 << ((int)threadIdx.x - 1)", ([0, 1], "int")),
    ("threadIdx.x == 0 ? 0 : 64 >> ((int)threadIdx.x - 1)", ([0, 64], "int")),
])
def test_c_edge_values(text, want):
    assert typed(text) == want


def test_an_evaluator_call_honours_the_live_threads():
    ev = expr.Evaluator({"n": [0, 2]}, 2)
    assert ev(expr.parse("8 / n"), np.array([False, True])).tolist()[1] == 4


def test_constant_refusal_names_its_purpose():
    assert message(expr.constant, "1 +") == ("cannot parse constant expression '1 +': expected a number, a name or "
                                             "'(', found the end at column 4")


# ---------------------------------------------------------------- built at import: construct one again

def test_a_device_normalizes_its_cc():
    assert Device("X", 1.0, 1.0, "sm_90").cc == "9.0"
    assert message(Device, "X", 1.0, 1.0, "4.0").startswith("unknown compute capability 4.0 (known: 1.0, 1.1")


# ---------------------------------------------------------------- DRAM interleaving (seed's 4 channels x 2 banks)

def test_dram_layout_refusals_and_the_smallest_layout():
    want = "channels, banks per channel and burst bytes must be positive"
    assert [message(DramLayout, *a) for a in ((0, 2, 8), (4, 0, 8), (4, 2, 0), (-1, 2, 8))] == [want] * 4
    one = DramLayout(1, 1, 1)  # every byte its own burst, one channel, one bank
    assert one.touched([0, 5]) == dict(channels=[0], banks=[[0, 0]], channel_utilization_pct=100.0)


def test_dram_utilization_keeps_two_decimals():
    # 1 of 3 channels: 33.333... -> 33.33
    assert DramLayout(3, 1, 4).touched([0])["channel_utilization_pct"] == 33.33


def test_tiled_matmul_phase_defaults_touch_channels_0_and_2():
    # W=4, T=2, phase 0: block row 0 loads M rows 0,1 cols 0,1 = elements 0,1,4,5; block row 1: 8,9,12,13.
    # Bytes 0,4,16,20,32,36,48,52 -> 8-byte bursts 0,0,2,2,4,4,6,6 -> channel burst % 4 = 0 or 2,
    # bank (burst // 4) % 2 = 0 for bursts 0, 2 and 1 for bursts 4, 6
    r = tiled_matmul_phase(DramLayout())
    assert r == dict(elements={"0,0": [0, 1, 4, 5], "0,1": [0, 1, 4, 5], "1,0": [8, 9, 12, 13],
                               "1,1": [8, 9, 12, 13]},
                     channels=[0, 2], banks=[[0, 0], [0, 1], [2, 0], [2, 1]], channel_utilization_pct=50.0)


def test_tiled_matmul_phase_elements_later_phase_and_refusal():
    # phase 1 of W=4, T=2, block row 0: rows 0, 1, columns 2, 3 -> 2, 3, 6, 7
    assert tiled_matmul_phase_elements(4, 2, 1, (0, 0)) == [2, 3, 6, 7]
    assert message(tiled_matmul_phase_elements, 4, 2, 2, (0, 0)) == "phase 2 is outside 0..1 for width 4, tile 2"


# ---------------------------------------------------------------- occupancy, roofline, kernels

def test_shared_memory_beyond_48_kib_without_the_opt_in():
    # 60000 bytes > the 49152-byte (48 KiB) default limit per block
    r = occupancy(128, 32, 60000, (8, 0), opt_in=False)
    assert (r["blocks_per_sm"], r["reason"]) == (0, "60000 bytes of shared memory per block exceed the 49152-byte "
                                                    "limit without the opt-in (cudaFuncSetAttribute) of cc 8.0")


def test_carveout_beyond_the_sm():
    # cc 8.0: 164 KiB = 167936 bytes per SM; configurations from the CUDA Programming Guide
    assert message(occupancy, 128, 32, 0, (8, 0), carveout=167937) == (
        "carve-out 167937 bytes exceeds the 167936 bytes of shared memory per SM of cc 8.0 (configurations: "
        "0, 8, 16, 32, 64, 100, 132, 164 KiB)")


@pytest.mark.parametrize("opb, peak, bw, want", [
    # ridge 0.5 / 1 = 0.5 OP/B; 2 OP/B is beyond it: compute-bound at the 0.5 GFLOP/s peak
    (2.0, 0.5, 1.0, dict(ridge_op_per_byte=0.5, bound_gflops=0.5, bound="compute", pct_of_peak=100.0)),
    # ridge 1000 / 3 = 333.333; 1 OP/B x 3 GB/s = 3 GFLOP/s, 0.3% of the peak
    (1.0, 1000.0, 3.0, dict(ridge_op_per_byte=333.333, bound_gflops=3.0, bound="memory", pct_of_peak=0.3)),
    # exactly at the ridge (10 / 10 = 1): the bound is the peak, and "compute"
    (1.0, 10.0, 10.0, dict(ridge_op_per_byte=1.0, bound_gflops=10.0, bound="compute", pct_of_peak=100.0)),
    # 0.0123 x 7 = 0.0861 GFLOP/s -> 0.1 (one decimal); 0.0861 / 7 = 1.23% of the peak
    (0.0123, 7.0, 7.0, dict(ridge_op_per_byte=1.0, bound_gflops=0.1, bound="memory", pct_of_peak=1.23)),
])
def test_roofline_by_hand(opb, peak, bw, want):
    assert roofline(opb, peak, bw) == dict(peak_gflops=peak, bandwidth_gbs=bw, **want)


@pytest.mark.parametrize("peak, bw, want", [(0, 1, "peak_gflops must be positive, got 0"),
                                            (1, 0, "bandwidth_gbs must be positive, got 0"),
                                            (-1, 5, "peak_gflops must be positive, got -1"),
                                            (5, -0.5, "bandwidth_gbs must be positive, got -0.5")])
def test_roofline_refusal(peak, bw, want):
    assert message(roofline, 1.0, peak, bw) == want


def test_matmul_defaults_and_kernel_names():
    assert matmul_intensity("tiled") == 8.0      # tile 32: 2 / (4 * 2/32)
    assert matmul_intensity("coarsened") == 12.8  # tile 32, coarsening 4: 2 / (4 * (1/128 + 1/32))
    assert kernel_name(" Matmul-Tiled ") == "tiled"
    assert message(kernel_name, "fft") == ("unknown kernel 'fft' for intensity (known: naive, tiled, corner_turning, "
                                           "coarsened)")
