"""Instantiations of divergence.cu: branch granularity after seed 001's control-flow slide, one row per variant."""

from __future__ import annotations

from dataclasses import dataclass

from . import KernelSpec

SRC = "divergence.cu"
BLOCK = 256
FLOPS_PER_ITER = 3  # FMA (2) + MUL (1) on path A; MUL (1) + FMA (2) on path B


@dataclass(frozen=True)
class Branch:
    name: str
    granularity: int     # threads per run of equal branch outcome
    alternate: bool      # True: outcome flips every `granularity` threads
    divergent: bool      # does any warp take both paths?

    @property
    def spec(self) -> KernelSpec:
        return KernelSpec(SRC, f"branch_granularity<{self.granularity}, {'true' if self.alternate else 'false'}>")

    @property
    def divergent_warps(self) -> int:
        """Warps of a block whose lanes take both paths (the model's serialized warps)."""
        import numpy as np

        return sum(1 for w in range(BLOCK // 32) if len(set(self.takes_a(np.arange(32 * w, 32 * w + 32)).tolist())) > 1)

    def takes_a(self, tid):
        """Host mirror of the kernel's condition (NumPy array of thread indices -> bool array)."""
        group = tid // self.granularity
        return (group & 1) != 0 if self.alternate else group > 2


SLIDE = [Branch("if (threadIdx.x > 2)", 1, False, True),
         Branch("if (threadIdx.x / WARP_SIZE > 2)", 32, False, False)]
SWEEP = [Branch(f"alternate every {g} threads", g, True, g < 32) for g in (1, 2, 4, 8, 16, 32, 64)]
VARIANTS = SLIDE + SWEEP

KERNELS = [v.spec for v in VARIANTS]
