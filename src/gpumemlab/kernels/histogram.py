"""Instantiations of histogram.cu: counting integer keys with global atomics vs private shared-memory copies.

Key types are every integer dtype (bool is read as uint8); a uint64 key of 2^63 or more reads as negative, which
bincount refuses anyway (its counts would need 2^66 bytes). ``VEC``: keys per load, 1 or a 16-byte pack.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import KernelSpec

SRC = "histogram.cu"
BLOCK = 256
WARPS = BLOCK // 32
KEY_CTYPES = {"int8": "signed char", "uint8": "unsigned char", "int16": "short", "uint16": "unsigned short",
              "int32": "int", "uint32": "unsigned int", "int64": "long long", "uint64": "unsigned long long"}
ITEMSIZE = {"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8}
COUNTER_BYTES = 4  # a private counter (unsigned); the global copy counts in 64 bits


@dataclass(frozen=True)
class Variant:
    """One way of counting: ``private`` None (global atomics), "block" or "warp" (a private copy per block or per
    warp in shared memory); ``vec``: keys per load (1, or a 16-byte pack when ``vec`` is True)."""

    private: str | None
    vec: bool = False

    def spec(self, dtype: str) -> KernelSpec:
        ctype = KEY_CTYPES[dtype]
        if self.private is None:
            return KernelSpec(SRC, f"hist_global<{ctype}>")
        per_warp = "true" if self.private == "warp" else "false"
        return KernelSpec(SRC, f"hist_private<{ctype}, {per_warp}, {pack(dtype) if self.vec else 1}>")

    def shared_bytes(self, bins: int, block: int = BLOCK) -> int:
        copies = {None: 0, "block": 1, "warp": block // 32}[self.private]
        return copies * bins * COUNTER_BYTES

    @property
    def label(self) -> str:
        name = {None: "global atomics", "block": "private per block", "warp": "private per warp"}[self.private]
        return name + (", 16-byte loads" if self.vec else "")


def pack(dtype: str) -> int:
    """Keys in one 16-byte load."""
    return 16 // ITEMSIZE[dtype]


GLOBAL = Variant(None)
BLOCK_PRIVATE = Variant("block")
WARP_PRIVATE = Variant("warp")
LADDER = (GLOBAL, BLOCK_PRIVATE, WARP_PRIVATE)  # the seed's step: the same scalar loads, privatized or not
LIBRARY = (GLOBAL, BLOCK_PRIVATE, WARP_PRIVATE, Variant("block", True), Variant("warp", True))
# the analyzer's view of the variants' main load (one key per lane, consecutive lanes adjacent)
KEY_ACCESS = "keys[blockIdx.x*blockDim.x + threadIdx.x]"

KERNELS = [v.spec(d) for d in KEY_CTYPES for v in LIBRARY]
