"""Instantiations of coalescing.cu: increment patterns and AoS/SoA layouts."""

from . import KernelSpec

SRC = "coalescing.cu"
# pattern name -> template argument of increment<PATTERN>, in the slides' order
PATTERNS = {"coalesced": 0, "partial": 1, "permuted": 2, "misaligned": 3, "random": 4}
AOS_BLOCK = 256


def increment(pattern: str) -> KernelSpec:
    return KernelSpec(SRC, f"increment<{PATTERNS[pattern]}>")


AOS_DIRECT = KernelSpec(SRC, "aos_direct")
AOS_SHARED = KernelSpec(SRC, f"aos_shared<{AOS_BLOCK}>")
AOS_ALIGN16 = KernelSpec(SRC, "aos_align16")
SOA = KernelSpec(SRC, "soa")

KERNELS = [increment(p) for p in PATTERNS] + [AOS_DIRECT, AOS_SHARED, AOS_ALIGN16, SOA]
