"""Claims and sources that more than one experiment cites, stated once."""

from __future__ import annotations

from ._declare import Claim, seed

COALESCED_WORDS = Claim("A half-warp's coalesced access covers 64, 128 or 256 bytes when each thread reads a 4-, 8- or "
                        "16-byte word (float, float2, float4).",
                        seed("001", "slide 'Coalescing global memory accesses'"))
SHARED_MEMORY_TRANSPOSE = Claim("Shared memory can be used to avoid non-coalesced access (see the 'Matrix Transpose' "
                                "SDK example); threads of a half-warp that access the same bank conflict.",
                                seed("001", "slide 'Shared Memory'"))
