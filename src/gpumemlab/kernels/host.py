"""Instantiations of host.cu: the kernels of the transfer experiments (zero copy, overlap, pitched rows)."""

from . import KernelSpec

SRC = "host.cu"
SCALE_VEC4 = KernelSpec(SRC, "scale_vec4")   # read-once, coalesced (zero copy's good case)
REREAD_SUM = KernelSpec(SRC, "reread_sum")   # every element read `passes` times (zero copy's bad case)
BUSY_MAP = KernelSpec(SRC, "busy_map")       # tunable arithmetic per element (copy/compute overlap)
ROW_SCALE = KernelSpec(SRC, "row_scale")     # one block per row of a pitched or packed 2-D array

KERNELS = [SCALE_VEC4, REREAD_SUM, BUSY_MAP, ROW_SCALE]
