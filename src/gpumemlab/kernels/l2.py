"""Instantiations of l2.cu (the persisting-L2 sliding-window benchmark, and the table beside a stream that
`gpumemlab tune l2_persist` measures for persist_l2)."""

from . import KernelSpec

SRC = "l2.cu"
SLIDING_WINDOW = KernelSpec(SRC, "sliding_window")
TABLE_STREAM = KernelSpec(SRC, "table_stream")
BLOCK = 256

KERNELS = [SLIDING_WINDOW, TABLE_STREAM]
