"""Instantiations of banks.cu: one bank_stride<STRIDE> per conflict degree (1 = conflict-free ... 32-way)."""

from . import KernelSpec

SRC = "banks.cu"
BLOCK = 256          # BANK_WARPS * 32 in banks.cu
SHARED_WORDS = 1024  # BANK_WORDS: words of each warp's row
STRIDES = (1, 2, 4, 8, 16, 32)
SLOT_ACCESS = "ws[(threadIdx.x % 32) * STRIDE]"  # as the analyzer reads it, STRIDE given as a let


def bank_stride(stride: int) -> KernelSpec:
    if stride not in STRIDES:
        raise ValueError(f"bank_stride<{stride}> is not instantiated (strides: {STRIDES})")
    return KernelSpec(SRC, f"bank_stride<{stride}>")


KERNELS = [bank_stride(s) for s in STRIDES]
