"""Instantiations of l2.cu (the persisting-L2 sliding-window benchmark)."""

from . import KernelSpec

SRC = "l2.cu"
SLIDING_WINDOW = KernelSpec(SRC, "sliding_window")
BLOCK = 256

KERNELS = [SLIDING_WINDOW]
