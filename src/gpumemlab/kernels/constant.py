"""Instantiations of constant.cu (1-D convolution with taps in constant, global or read-only memory)."""

from . import KernelSpec

SRC = "constant.cu"
SPACES = {"constant": 0, "global": 1, "ldg": 2}
INDEXES = {"uniform": 0, "per_lane": 1}
TAPS = (64,)
MAX_TAPS = 256  # c_taps[MAX_TAPS] in constant.cu
SYMBOL = "c_taps"
BLOCK = 256


def conv1d(space: str, index: str, taps: int = 64) -> KernelSpec:
    if space not in SPACES or index not in INDEXES or taps not in TAPS:
        raise ValueError(f"conv1d<{space}, {index}, {taps}> is not instantiated")
    return KernelSpec(SRC, f"conv1d<{SPACES[space]}, {INDEXES[index]}, {taps}>")


KERNELS = [conv1d(s, i, t) for s in SPACES for i in INDEXES for t in TAPS]
