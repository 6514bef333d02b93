"""Instantiations of squares_sum.cu: per-thread chunks vs interleaved reads, with the first load of each."""

from . import KernelSpec

SRC = "squares_sum.cu"
BLOCK = 256
LAYOUTS = {"chunked": KernelSpec(SRC, "squares_sum_chunked"),
           "interleaved": KernelSpec(SRC, "squares_sum_interleaved")}
# the first load of thread `tid` (i = 0), as the analyzer reads it
ACCESS = {"chunked": "data[tid*chunk + i]", "interleaved": "data[tid + i*threads]"}
KERNELS = list(LAYOUTS.values())
