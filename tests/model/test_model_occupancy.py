"""Occupancy, computed by hand with the CUDA occupancy calculator's rules (cuda_occupancy.h)."""

from __future__ import annotations

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model import occupancy
from gpumemlab.model.occupancy import SM_TABLE


def test_tables_cover_the_issue_list():
    assert set(SM_TABLE) == {(7, 0), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (12, 0)}


@pytest.mark.parametrize("threads, regs, smem, cc, blocks, warps, pct, limiters", [
    # 32 regs x 32 lanes = 1024 registers per warp; 16384 per sub-partition -> 16 warps each, 64 per SM
    (256, 32, 0, (9, 0), 8, 64, 100.0, ["warps", "registers"]),
    # 64 regs -> 2048 per warp -> 8 per sub-partition -> 32 warps -> 4 blocks of 8 warps
    (256, 64, 0, (9, 0), 4, 32, 50.0, ["registers"]),
    # 40 regs -> 1280 per warp -> 12 per sub-partition (16384 / 1280 = 12.8) -> 48 warps -> 16 blocks of 3
    (96, 40, 0, (9, 0), 16, 48, 75.0, ["registers"]),
    # 33 regs -> 1056 rounded up to 1280: the same as 40
    (96, 33, 0, (9, 0), 16, 48, 75.0, ["registers"]),
    # one warp per block: the 32-blocks-per-SM limit
    (32, 16, 0, (9, 0), 32, 32, 50.0, ["blocks"]),
    # 48 KiB + 1 KiB reserved = 50176 bytes per block; 164 KiB per SM -> 3 blocks
    (128, 32, 48 * 1024, (8, 0), 3, 12, 18.75, ["shared_memory"]),
    # cc 8.6: 48 warps per SM, a 32-warp block fits once
    (1024, 32, 0, (8, 6), 1, 32, 66.67, ["warps"]),
    # cc 7.5: 32 warps and 16 blocks per SM
    (64, 32, 0, (7, 5), 16, 32, 100.0, ["warps", "blocks"]),
    # cc 8.9: 48 warps, 24 blocks; 128 threads = 4 warps -> 12 blocks
    (128, 16, 0, (8, 9), 12, 48, 100.0, ["warps"]),
    # cc 12.0: 24 blocks per SM
    (32, 16, 0, (12, 0), 24, 24, 50.0, ["blocks"]),
    # shared allocation unit 128 B on 9.0: 7200 + 1024 -> 8320 -> 28 blocks (a 256 B unit would give 27)
    (32, 0, 7200, (9, 0), 28, 28, 43.75, ["shared_memory"]),
    # shared allocation unit 256 B on 7.0, no reservation: 3073 -> 3328 -> 29 blocks (128 B would give 30)
    (32, 0, 3073, (7, 0), 29, 29, 45.31, ["shared_memory"]),
    # the largest opt-in block on 9.0: 232448 + 1024 = 233472 = all of the SM
    (128, 32, 232448, (9, 0), 1, 4, 6.25, ["shared_memory"]),
    # 10.0 like 9.0
    (256, 32, 0, (10, 0), 8, 64, 100.0, ["warps", "registers"]),
])
def test_hand_computed_cases(threads, regs, smem, cc, blocks, warps, pct, limiters):
    r = occupancy(threads, regs, smem, cc)
    assert (r["blocks_per_sm"], r["active_warps"], r["occupancy_pct"], r["limiters"]) == (blocks, warps, pct,
                                                                                         limiters)
    assert r["reason"] is None


def test_limits_lists_what_each_resource_allows():
    r = occupancy(256, 32, 0, (9, 0))
    assert r["limits"] == {"warps": 8, "registers": 8, "shared_memory": 228, "blocks": 32, "barriers": None}
    assert occupancy(64, 0, 0, (7, 0))["limits"]["shared_memory"] is None  # no reservation before 8.0


def test_too_many_registers_for_one_block_cannot_launch():
    r = occupancy(1024, 65, 0, (9, 0))
    assert r["blocks_per_sm"] == 0 and r["limiters"] == ["registers"]
    assert "2304 per warp" in r["reason"] and "73728 registers" in r["reason"] and "65536" in r["reason"]
    assert occupancy(1024, 64, 0, (9, 0))["blocks_per_sm"] == 1  # exactly 65536


def test_warps_of_a_block_are_rounded_to_four_for_the_register_check():
    # 25 warps x 2560 registers = 64000 would fit in 65536, but the hardware check counts 28 warps: 71680
    r = occupancy(800, 80, 0, (9, 0))
    assert r["blocks_per_sm"] == 0 and "28 warps" in r["reason"]
    # 24 warps: 24 x 2560 = 61440 fits; 16384 // 2560 = 6 warps per sub-partition -> 24 per SM -> 1 block
    assert occupancy(768, 80, 0, (9, 0))["blocks_per_sm"] == 1


def test_shared_memory_beyond_the_opt_in_maximum_cannot_launch():
    r = occupancy(128, 32, 232449, (9, 0))
    assert r["blocks_per_sm"] == 0 and "opt-in maximum" in r["reason"]


def test_without_the_opt_in_48_kib_is_the_limit():
    assert occupancy(128, 32, 48 * 1024, (9, 0), opt_in=False)["blocks_per_sm"] == 4
    r = occupancy(128, 32, 48 * 1024 + 1, (9, 0), opt_in=False)
    assert r["blocks_per_sm"] == 0 and "without the opt-in" in r["reason"]
    assert occupancy(128, 32, 48 * 1024 + 1, (9, 0))["opt_in"] is True


def test_carveout():
    # 16 KiB + 1 KiB per block; a 64 KiB carve-out holds 3 (the largest, 228 KiB, 13, then warps limit to 8)
    assert occupancy(256, 32, 16384, (9, 0), carveout=64 * 1024)["blocks_per_sm"] == 3
    assert occupancy(256, 32, 16384, (9, 0))["blocks_per_sm"] == 8
    # a carve-out too small for one block is raised to the next configuration that fits (32 KiB)
    r = occupancy(256, 32, 16384, (9, 0), carveout=8 * 1024)
    assert (r["blocks_per_sm"], r["shared_per_sm"]) == (1, 32 * 1024)
    # Turing has only 32 and 64 KiB configurations
    assert occupancy(64, 0, 20000, (7, 5), carveout=0)["shared_per_sm"] == 32 * 1024


def test_named_barriers_limit_blocks_from_hopper_on():
    assert occupancy(32, 16, 0, (12, 0), barriers=2)["blocks_per_sm"] == 12
    assert occupancy(32, 16, 0, (9, 0), barriers=4)["blocks_per_sm"] == 16
    assert occupancy(32, 16, 0, (8, 0), barriers=4)["blocks_per_sm"] == 32  # not a limit before 9.0


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(threads=0, regs=32), "positive integer"),
    (dict(threads=1025, regs=32), "at most 1024"),
    (dict(threads=128, regs=256), "registers per thread must be 0..255"),
    (dict(threads=128, regs=-1), "registers per thread must be 0..255"),
    (dict(threads=128, regs=32, smem=-1), "must be >= 0 bytes"),
    (dict(threads=128, regs=32, cc=(6, 1)), r"occupancy is not modelled for compute capability 6.1 \(it is for 7.0, 7.5"),
    (dict(threads=128, regs=32, cc=(6, 4)), "unknown compute capability 6.4"),
    (dict(threads=128, regs=32, barriers=17), "named barriers per block must be 0..16, got 17"),
    (dict(threads=128, regs=32, barriers=-1), "named barriers per block must be 0..16, got -1"),
    (dict(threads=128.0, regs=32), "threads must be an integer, got 128.0"),
    (dict(threads=128, regs=True), "registers must be an integer"),
    (dict(threads=128, regs=32, smem="1"), "shared memory must be an integer"),
    (dict(threads=128, regs=32, carveout=1.5), "carve-out must be an integer"),
    (dict(threads=128, regs=32, carveout=-1), "carve-out must be >= 0 bytes"),
    (dict(threads=128, regs=32, carveout=300_000), "exceeds the 233472 bytes"),
])
def test_bad_input(kwargs, fragment):
    with pytest.raises(UsageError, match=fragment):
        occupancy(**kwargs)


# One row per compute capability, from the CUDA C++ Programming Guide, "Compute Capabilities",
# table "Technical Specifications per Compute Capability" (max resident warps and blocks per SM,
# shared memory per SM and the per-block opt-in maximum), plus cuda_occupancy.h for the 1 KiB
# per-block reservation (cc >= 8.0) and the allocation unit (256 B before 8.0, 128 B after).
#   cc     warps blocks  shared/SM  opt-in/block  reserved unit
ROWS = {
    (7, 0): (64, 32, 96 * 1024, 96 * 1024, 0, 256),
    (7, 5): (32, 16, 64 * 1024, 64 * 1024, 0, 256),
    (8, 0): (64, 32, 164 * 1024, 163 * 1024, 1024, 128),
    (8, 6): (48, 16, 100 * 1024, 99 * 1024, 1024, 128),
    (8, 7): (48, 16, 164 * 1024, 163 * 1024, 1024, 128),
    (8, 9): (48, 24, 100 * 1024, 99 * 1024, 1024, 128),
    (9, 0): (64, 32, 228 * 1024, 227 * 1024, 1024, 128),
    (10, 0): (64, 32, 228 * 1024, 227 * 1024, 1024, 128),
    (12, 0): (48, 24, 100 * 1024, 99 * 1024, 1024, 128),
}


def test_every_row_is_pinned():
    assert set(ROWS) == set(SM_TABLE)


# Blocks per SM worked out by hand from ROWS, for three kernels without registers:
#   one warp per block:        min(warps, blocks)                 -> the block limit or the warp limit
#   three warps per block:     min(warps // 3, blocks)
#   10000 B shared per block:  shared/SM // round_up(10000 + reserved, unit)
#     7.x: 10240 B -> 98304 // 10240 = 9 (7.0), 65536 // 10240 = 6 (7.5)
#     8.0+: 11024 -> 11136 B -> 167936 // 11136 = 15, 102400 // 11136 = 9, 233472 // 11136 = 20
@pytest.mark.parametrize("cc, one_warp, three_warps, shared_10000", [
    ((7, 0), 32, 21, 9), ((7, 5), 16, 10, 6), ((8, 0), 32, 21, 15), ((8, 6), 16, 16, 9), ((8, 7), 16, 16, 15),
    ((8, 9), 24, 16, 9), ((9, 0), 32, 21, 20), ((10, 0), 32, 21, 20), ((12, 0), 24, 16, 9),
])
def test_each_cc_row_by_hand(cc, one_warp, three_warps, shared_10000):
    warps, blocks, shared_sm, optin, reserved, unit = ROWS[cc]
    r = occupancy(32, 0, 0, cc)
    assert (r["blocks_per_sm"], r["max_warps"]) == (one_warp, warps)
    assert r["limits"]["blocks"] == blocks and r["limits"]["warps"] == warps
    assert occupancy(96, 0, 0, cc)["blocks_per_sm"] == three_warps
    r = occupancy(32, 0, 10000, cc)
    assert (r["blocks_per_sm"], r["limiters"], r["shared_per_sm"]) == (shared_10000, ["shared_memory"], shared_sm)
    assert r["smem_per_block"] == -(-(10000 + reserved) // unit) * unit
    # the largest opt-in block fills the SM exactly (opt-in + reservation = shared/SM); one byte more cannot launch
    assert occupancy(32, 0, optin, cc)["blocks_per_sm"] == 1
    r = occupancy(32, 0, optin + 1, cc)
    assert r["blocks_per_sm"] == 0 and f"exceed the {optin}-byte opt-in maximum of cc {cc[0]}.{cc[1]}" in r["reason"]


@pytest.mark.parametrize("cc", sorted(SM_TABLE))
def test_hardware_limits_shared_by_every_row(cc):
    # 1024 threads per block, 255 registers per thread, 16 named barriers per block, 64 Ki registers
    with pytest.raises(UsageError, match="1025 threads per block: CUDA allows at most 1024"):
        occupancy(1025, 0, 0, cc)
    with pytest.raises(UsageError, match="registers per thread must be 0..255, got 256"):
        occupancy(32, 256, 0, cc)
    with pytest.raises(UsageError, match="named barriers per block must be 0..16, got 17"):
        occupancy(32, 0, 0, cc, barriers=17)
    assert occupancy(32, 0, 0, cc, barriers=16)["blocks_per_sm"] >= 1
    # 1024 threads x 64 registers = 65536: exactly one block's worth; 65 does not fit
    assert occupancy(1024, 64, 0, cc)["limits"]["registers"] == 1
    assert occupancy(1024, 65, 0, cc)["blocks_per_sm"] == 0


def test_one_warp_register_allocation():
    # registers are allocated per warp, 32 lanes x regs rounded up to 256:
    # 255 -> 8160 -> 8192 per warp; 16384 per sub-partition holds 2 warps -> 8 one-warp blocks on 9.0
    r = occupancy(32, 255, 0, (9, 0))
    assert (r["registers_per_warp"], r["blocks_per_sm"], r["limiters"]) == (8192, 8, ["registers"])
    # 1 register -> 32 -> 256 per warp: 64 warps per sub-partition, never the limit
    r = occupancy(32, 1, 0, (9, 0))
    assert (r["registers_per_warp"], r["limits"]["registers"]) == (256, 256)
    # 9 registers -> 288 -> 512: 32 per sub-partition -> 128 warps of one warp each
    assert occupancy(32, 9, 0, (9, 0))["limits"]["registers"] == 128
    # a 3-warp block with 255 registers: 2 warps per sub-partition -> 8 warps -> 2 blocks (8 // 3)
    assert occupancy(96, 255, 0, (9, 0))["limits"]["registers"] == 2


@pytest.mark.parametrize("cc, barriers, blocks", [
    # cc >= 9.0: 2 named-barrier slots per block slot (32 x 2 = 64) shared by the blocks; 12.0: 1 per slot (24)
    ((9, 0), 16, 4), ((9, 0), 3, 21), ((9, 0), 1, 32), ((12, 0), 16, 1), ((12, 0), 5, 4), ((10, 0), 2, 32),
    ((8, 9), 16, 24),  # not a limit before 9.0
])
def test_barrier_limit(cc, barriers, blocks):
    r = occupancy(32, 0, 0, cc, barriers=barriers)
    assert r["blocks_per_sm"] == blocks


def test_echoed_inputs_and_integer_counts():
    r = occupancy(200, 40, 1000, (8, 6))
    # 200 threads -> 7 warps; 40 x 32 = 1280 per warp; 1000 + 1024 -> 2048 B per block
    assert (r["threads"], r["warps_per_block"], r["regs"], r["smem"], r["registers_per_warp"], r["smem_per_block"],
            r["cc"]) == (200, 7, 40, 1000, 1280, 2048, "8.6")
    # 16384 // 1280 = 12 warps per sub-partition -> 48 // 7 = 6 blocks; 48 // 7 = 6 by warps too
    assert r["limits"] == {"warps": 6, "registers": 6, "shared_memory": 50, "blocks": 16, "barriers": None}
    assert all(type(v) is int for v in r["limits"].values() if v is not None)
    assert type(r["blocks_per_sm"]) is int and r["opt_in"] is False


def test_the_opt_in_flag_is_set_above_48_kib_only():
    assert occupancy(128, 32, 48 * 1024, (9, 0))["opt_in"] is False
    assert occupancy(128, 32, 48 * 1024 + 1, (9, 0))["opt_in"] is True
    assert occupancy(128, 32, 48 * 1024 + 1, (9, 0), opt_in=False)["opt_in"] is False


def test_edges_of_the_inputs():
    assert occupancy(1, 0, 0, (9, 0))["blocks_per_sm"] == 32  # one thread is one warp
    assert occupancy(32, 0, 0, (9, 0), carveout=228 * 1024)["shared_per_sm"] == 228 * 1024  # the largest is fine
    with pytest.raises(UsageError, match="barriers must be an integer, got 1.0"):
        occupancy(32, 0, 0, (9, 0), barriers=1.0)


def test_sm_limits_by_cc():
    from gpumemlab.model.occupancy import sm_limits
    assert (sm_limits("8.6").max_warps, sm_limits((7, 5)).max_blocks) == (48, 16)
    with pytest.raises(UsageError, match="occupancy is not modelled for compute capability 3.5"):
        sm_limits("3.5")
