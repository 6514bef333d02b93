"""Instantiations of squares_sum.cu."""

from . import KernelSpec

SRC = "squares_sum.cu"
LAYOUTS = {"chunked": KernelSpec(SRC, "squares_sum_chunked"),
           "interleaved": KernelSpec(SRC, "squares_sum_interleaved")}
KERNELS = list(LAYOUTS.values())
