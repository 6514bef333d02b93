"""Instantiations of coalescing.cu: the slides' increment patterns and the float3 AoS/SoA layouts, one row each."""

from __future__ import annotations

from dataclasses import dataclass

from . import KernelSpec

SRC = "coalescing.cu"
BLOCK = 256
AOS_BLOCK = 256


@dataclass(frozen=True)
class Pattern:
    """increment<ID>: read a float, add 1, write it back; ``access`` as the analyzer reads it (None: a hash over
    the whole array, each lane in its own sector), ``active``: the lanes that execute it."""

    name: str
    id: int
    access: str | None
    active: str | None = None

    @property
    def spec(self) -> KernelSpec:
        return KernelSpec(SRC, f"increment<{self.id}>")


# in the slides' order; "random" is a bijection over the whole array
PATTERN_TABLE = [
    Pattern("coalesced", 0, "a[blockIdx.x*blockDim.x + threadIdx.x]"),
    Pattern("partial", 1, "a[blockIdx.x*blockDim.x + threadIdx.x]", "threadIdx.x % 16 != 3 && threadIdx.x % 16 != 13"),
    Pattern("permuted", 2, "a[blockIdx.x*blockDim.x + (threadIdx.x / 32) * 32 + 31 - threadIdx.x % 32]"),
    Pattern("misaligned", 3, "a[blockIdx.x*blockDim.x + threadIdx.x + 1]"),
    Pattern("random", 4, None),
]
PATTERNS = {p.name: p for p in PATTERN_TABLE}
BYTES_PER_TOUCH = 8  # each touched float is read once and written once


def increment(pattern: str) -> KernelSpec:
    return PATTERNS[pattern].spec


AOS_DIRECT = KernelSpec(SRC, "aos_direct")
AOS_SHARED = KernelSpec(SRC, f"aos_shared<{AOS_BLOCK}>")
AOS_ALIGN16 = KernelSpec(SRC, "aos_align16")
SOA = KernelSpec(SRC, "soa")


@dataclass(frozen=True)
class Layout:
    """One way to store n float3 points: the kernel, bytes it moves per point (read = write), its main access."""

    name: str
    spec: KernelSpec
    bytes_per_point: int   # read, and again written
    access: str
    decl: str


LAYOUT_TABLE = [
    Layout("aos_direct", AOS_DIRECT, 12, "a[blockIdx.x*blockDim.x + threadIdx.x].x", "float3 a[]"),
    Layout("aos_shared", AOS_SHARED, 12, "a[blockIdx.x*blockDim.x*3 + threadIdx.x]", "float a[]"),
    Layout("aos_align16", AOS_ALIGN16, 16, "a[blockIdx.x*blockDim.x + threadIdx.x]", "float4 a[]"),  # 4 B padding
    Layout("soa", SOA, 12, "x[blockIdx.x*blockDim.x + threadIdx.x]", "float x[]"),
    Layout("soa_padded", SOA, 12, "x[blockIdx.x*blockDim.x + threadIdx.x]", "float x[]"),  # rows staggered
]
LAYOUTS = {v.name: v for v in LAYOUT_TABLE}

KERNELS = [p.spec for p in PATTERN_TABLE] + [AOS_DIRECT, AOS_SHARED, AOS_ALIGN16, SOA]
