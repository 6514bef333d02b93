"""Instantiations of peer.cu: the SM side of the p2p experiment (copies that pull or push the peer's memory through
UVA, and the dependent-read chain that times a small peer read)."""

from . import KernelSpec

SRC = "peer.cu"
BLOCK = 256                  # threads per block of every peer_copy launch
UNROLLS = (1, 4, 8)          # 16-byte loads in flight per thread
PEER_CHASE = KernelSpec(SRC, "peer_chase")
BULK_BLOCK = 32              # one warp per block; its first thread drives the bulk-copy unit
BULK_STAGES, BULK_CHUNK = 4, 8192  # 32 KiB of shared memory per block: 3 chunks of 8 KiB loading while one stores
BULK_GRANULE = 16            # bytes: the bulk unit's size and alignment step
PEER_BULK = KernelSpec(SRC, f"peer_bulk<{BULK_STAGES}, {BULK_CHUNK}>", min_sm=90)


def peer_copy(unroll: int) -> KernelSpec:
    if unroll not in UNROLLS:
        raise ValueError(f"peer_copy<{unroll}> is not instantiated")
    return KernelSpec(SRC, f"peer_copy<{unroll}>")


KERNELS = [peer_copy(u) for u in UNROLLS] + [PEER_CHASE, PEER_BULK]
