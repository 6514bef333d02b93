"""Instantiations of copy.cu (offset/stride copies, vector copies, read-only sum) and their geometry.

Every copy moves 4 bytes read + 4 bytes written per float; ``*_ACCESS`` are the main loads as the
analyzer (``gpumemlab.model``) reads them.
"""

from . import KernelSpec

SRC = "copy.cu"
BLOCK = 256                      # threads per block of every copy launch
OFFSET_COPY = KernelSpec(SRC, "offset_copy")
STRIDE_COPY = KernelSpec(SRC, "stride_copy")
OFFSET_ACCESS = "idata[blockIdx.x*blockDim.x + threadIdx.x + offset]"
STRIDE_ACCESS = "idata[(blockIdx.x*blockDim.x + threadIdx.x)*stride]"
ILP_UNROLLS = (4, 8)


def indexed_copy_ilp(unroll: int) -> KernelSpec:
    """offset/stride copy with ``unroll`` independent 4-byte loads in flight per thread (element i*stride+offset)."""
    if unroll not in ILP_UNROLLS:
        raise ValueError(f"indexed_copy_ilp<{unroll}> is not instantiated")
    return KernelSpec(SRC, f"indexed_copy_ilp<{unroll}>")


VECTOR_ACCESS = "src[blockIdx.x*blockDim.x + threadIdx.x]"
VECTOR_TYPES = {"float": 4, "float2": 8, "float4": 16}
UNROLLS = (1, 2, 4)


def copy_vec(vtype: str, unroll: int) -> KernelSpec:
    if vtype not in VECTOR_TYPES or unroll not in UNROLLS:
        raise ValueError(f"copy_vec<{vtype}, {unroll}> is not instantiated")
    return KernelSpec(SRC, f"copy_vec<{vtype}, {unroll}>")


READ_UNROLLS = (2, 4, 8)


def read_sum(unroll: int) -> KernelSpec:
    if unroll not in READ_UNROLLS:
        raise ValueError(f"read_sum<{unroll}> is not instantiated")
    return KernelSpec(SRC, f"read_sum<{unroll}>")


KERNELS = [OFFSET_COPY, STRIDE_COPY] + [indexed_copy_ilp(u) for u in ILP_UNROLLS] + [copy_vec(t, u) for t in VECTOR_TYPES for u in UNROLLS] + [
    read_sum(u) for u in READ_UNROLLS]
