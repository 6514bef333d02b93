"""Instantiations of latency.cu: a dependent-load chain through L1 (``.ca``) or around it (``.cg``)."""

from . import KernelSpec

SRC = "latency.cu"
CHASE = {"ld.global.ca": KernelSpec(SRC, "chase_l1"), "ld.global.cg": KernelSpec(SRC, "chase_l2")}
LINE_BYTES = 128  # one link per cache line: every load of the chain touches a new line
KERNELS = list(CHASE.values())
