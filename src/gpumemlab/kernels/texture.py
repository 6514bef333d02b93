"""Instantiations of texture.cu (texture sampling and its software reference)."""

from . import KernelSpec

SRC = "texture.cu"
ADDRESS_MODES = {"clamp": 0, "wrap": 1, "mirror": 2, "border": 3}
SAMPLE_TEX = KernelSpec(SRC, "sample_tex")
BLOCK = 256


def sample_soft(address: str, linear: bool, ldg: bool = False) -> KernelSpec:
    if address not in ADDRESS_MODES:
        raise ValueError(f"sample_soft: no address mode {address!r}")
    return KernelSpec(SRC, f"sample_soft<{ADDRESS_MODES[address]}, {int(bool(linear))}, {int(bool(ldg))}>")


KERNELS = [SAMPLE_TEX] + [sample_soft(a, lin) for a in ADDRESS_MODES for lin in (False, True)] + [
    sample_soft("clamp", lin, True) for lin in (False, True)]
