"""Instantiations of peer.cu: the SM side of the p2p experiment (copies that pull or push the peer's memory through
UVA, and the dependent-read chain that times a small peer read)."""

from . import KernelSpec

SRC = "peer.cu"
BLOCK = 256                  # threads per block of every peer_copy launch
UNROLLS = (1, 4, 8)          # 16-byte loads in flight per thread
PEER_CHASE = KernelSpec(SRC, "peer_chase")


def peer_copy(unroll: int) -> KernelSpec:
    if unroll not in UNROLLS:
        raise ValueError(f"peer_copy<{unroll}> is not instantiated")
    return KernelSpec(SRC, f"peer_copy<{unroll}>")


KERNELS = [peer_copy(u) for u in UNROLLS] + [PEER_CHASE]
