"""The CUDA occupancy calculation (what cudaOccupancyMaxActiveBlocksPerMultiprocessor answers).

Rules of NVIDIA's occupancy calculator (cuda_occupancy.h): registers are allocated per warp in
units of 256 from each of the SM's 4 sub-partitions; a block's warps are rounded up to a
multiple of 4 for the per-block register check; shared memory per block is rounded up to the
allocation unit after adding the driver's per-block reservation (1 KiB on CC >= 8.0); the SM's
shared memory is the largest carve-out unless one is asked for (and a carve-out too small for
one block is raised to the smallest configuration that fits). Shared memory above 48 KiB per
block needs an opt-in (cudaFuncSetAttribute MaxDynamicSharedMemorySize): assumed unless
``opt_in=False``, which models a kernel launched without it (what the driver answers by default).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from .cc import cc_str, parse_cc, require

KIB = 1024
WARP = 32
DEFAULT_SHARED_PER_BLOCK = 48 * KIB  # without the opt-in


@dataclass(frozen=True)
class SMLimits:
    """Per-SM resources of one compute capability (CUDA Programming Guide, cuda_occupancy.h)."""

    max_threads: int
    max_blocks: int
    shared_per_sm: int  # largest carve-out, bytes
    shared_per_block_optin: int
    carveouts_kib: tuple[int, ...]  # shared-memory configurations per SM
    reserved_per_block: int = 1 * KIB
    shared_unit: int = 128
    registers: int = 64 * KIB  # per SM, and per block
    register_unit: int = 256  # registers, allocated per warp
    max_regs_per_thread: int = 255
    sub_partitions: int = 4  # the warp allocation granularity of the register check
    max_threads_per_block: int = 1024
    barriers_per_block_slot: int = 2  # named barriers available per block slot (Hopper+ check)
    max_barriers_per_block: int = 16  # bar.sync ids 0..15

    @property
    def max_warps(self) -> int:
        return self.max_threads // WARP


_AMPERE_LARGE = (0, 8, 16, 32, 64, 100, 132, 164)
_AMPERE_SMALL = (0, 8, 16, 32, 64, 100)
_HOPPER = _AMPERE_LARGE + (196, 228)

SM_TABLE: dict[tuple[int, int], SMLimits] = {
    (7, 0): SMLimits(2048, 32, 96 * KIB, 96 * KIB, (0, 8, 16, 32, 64, 96), reserved_per_block=0, shared_unit=256),
    (7, 5): SMLimits(1024, 16, 64 * KIB, 64 * KIB, (32, 64), reserved_per_block=0, shared_unit=256),
    (8, 0): SMLimits(2048, 32, 164 * KIB, 163 * KIB, _AMPERE_LARGE),
    (8, 6): SMLimits(1536, 16, 100 * KIB, 99 * KIB, _AMPERE_SMALL),
    (8, 7): SMLimits(1536, 16, 164 * KIB, 163 * KIB, _AMPERE_LARGE),
    (8, 9): SMLimits(1536, 24, 100 * KIB, 99 * KIB, _AMPERE_SMALL),
    (9, 0): SMLimits(2048, 32, 228 * KIB, 227 * KIB, _HOPPER),
    (10, 0): SMLimits(2048, 32, 228 * KIB, 227 * KIB, _HOPPER),
    (12, 0): SMLimits(1536, 24, 100 * KIB, 99 * KIB, _AMPERE_SMALL, barriers_per_block_slot=1),
}

LIMITERS = ("warps", "registers", "shared_memory", "blocks", "barriers")


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def sm_limits(cc) -> SMLimits:
    return SM_TABLE[require(parse_cc(cc), tuple(SM_TABLE), "occupancy")]


def carveout_bytes(sm: SMLimits, requested: int | None, per_block: int) -> int:
    """Shared memory per SM: the configuration the driver picks for a requested carve-out."""
    if requested is None:
        return sm.shared_per_sm
    need = per_block if requested < per_block else requested  # too small for one block: ignored
    for kib in sm.carveouts_kib:
        if need <= kib * KIB:
            return kib * KIB
    return sm.shared_per_sm


def occupancy(threads: int, regs: int, smem: int = 0, cc=(9, 0), carveout: int | None = None,
              barriers: int = 0, opt_in: bool = True) -> dict:
    """Blocks and warps per SM for ``threads`` per block, ``regs`` per thread, ``smem`` bytes per block.

    Returns ``blocks_per_sm``, ``active_warps``, ``max_warps``, ``occupancy_pct``, ``limiters`` (the
    resources that set the answer), ``limits`` (blocks each resource allows; None = no limit),
    ``reason`` (why no block fits, else None) and the derived allocations. ``barriers``: named
    barriers per block (ptxas "used N barriers"; limits blocks on cc >= 9.0 only). ``opt_in``: the
    kernel may use more than 48 KiB of shared memory per block.
    """
    cc = require(parse_cc(cc), tuple(SM_TABLE), "occupancy")
    sm = SM_TABLE[cc]
    _check_inputs(threads, regs, smem, carveout, barriers, sm, cc)
    warps = -(-threads // WARP)
    regs_per_warp = _round_up(regs * WARP, sm.register_unit)
    smem_per_block = _round_up(smem + sm.reserved_per_block, sm.shared_unit)
    per_block_max = sm.shared_per_block_optin if opt_in and smem > DEFAULT_SHARED_PER_BLOCK else DEFAULT_SHARED_PER_BLOCK
    per_block_max = min(per_block_max, sm.shared_per_block_optin)
    shared_sm = carveout_bytes(sm, carveout, smem_per_block)

    limits: dict[str, int | None] = {"warps": sm.max_warps // warps, "blocks": sm.max_blocks}
    reason = None
    if regs_per_warp * _round_up(warps, sm.sub_partitions) > sm.registers:
        limits["registers"] = 0
        need = regs_per_warp * _round_up(warps, sm.sub_partitions)
        reason = (f"{regs} registers x 32 lanes = {regs_per_warp} per warp (in units of {sm.register_unit}) x "
                  f"{_round_up(warps, sm.sub_partitions)} warps (rounded to {sm.sub_partitions}) = {need} registers, "
                  f"more than the {sm.registers} a block may use")
    elif regs_per_warp:
        per_sub = (sm.registers // sm.sub_partitions) // regs_per_warp
        limits["registers"] = per_sub * sm.sub_partitions // warps
    else:
        limits["registers"] = None
    if smem_per_block > per_block_max + sm.reserved_per_block:
        limits["shared_memory"] = 0
        what = "opt-in maximum" if opt_in else "limit without the opt-in (cudaFuncSetAttribute)"
        reason = reason or (f"{smem} bytes of shared memory per block exceed the {per_block_max}-byte {what} "
                            f"of cc {cc_str(cc)}")
    else:
        limits["shared_memory"] = shared_sm // smem_per_block if smem_per_block else None
    limits["barriers"] = (sm.max_blocks * sm.barriers_per_block_slot // barriers
                          if barriers and cc[0] >= 9 else None)

    finite = {k: v for k, v in limits.items() if v is not None}
    blocks = min(finite.values())
    limiters = [k for k in LIMITERS if limits.get(k) == blocks]
    active = blocks * warps
    return dict(
        blocks_per_sm=blocks, active_warps=active, max_warps=sm.max_warps,
        occupancy_pct=round(100.0 * active / sm.max_warps, 2), limiters=limiters,
        limits={k: limits[k] for k in LIMITERS}, reason=reason,
        cc=cc_str(cc), threads=threads, warps_per_block=warps, regs=regs,
        registers_per_warp=regs_per_warp, smem=smem, smem_per_block=smem_per_block,
        shared_per_sm=shared_sm, opt_in=opt_in and smem > DEFAULT_SHARED_PER_BLOCK,
    )


def _check_inputs(threads, regs, smem, carveout, barriers, sm: SMLimits, cc) -> None:
    for name, v in (("threads", threads), ("registers", regs), ("shared memory", smem), ("barriers", barriers),
                    ("carve-out", 0 if carveout is None else carveout)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise UsageError(f"{name} must be an integer, got {v!r}")
    if threads <= 0:
        raise UsageError(f"threads per block must be a positive integer, got {threads}")
    if threads > sm.max_threads_per_block:
        raise UsageError(f"{threads} threads per block: CUDA allows at most {sm.max_threads_per_block}")
    if not 0 <= regs <= sm.max_regs_per_thread:
        raise UsageError(f"registers per thread must be 0..{sm.max_regs_per_thread}, got {regs}")
    if smem < 0:
        raise UsageError(f"shared memory per block must be >= 0 bytes, got {smem}")
    if not 0 <= barriers <= sm.max_barriers_per_block:
        raise UsageError(f"named barriers per block must be 0..{sm.max_barriers_per_block}, got {barriers}")
    if carveout is not None:
        if carveout < 0:
            raise UsageError(f"carve-out must be >= 0 bytes, got {carveout}")
        if carveout > sm.shared_per_sm:
            raise UsageError(f"carve-out {carveout} bytes exceeds the {sm.shared_per_sm} bytes of shared memory "
                             f"per SM of cc {cc_str(cc)} (configurations: "
                             f"{', '.join(str(k) for k in sm.carveouts_kib)} KiB)")
