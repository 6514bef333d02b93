"""Instantiations of register_pressure.cu: the register-pressure kernel at its natural register count and under
``max_register_count`` (``--maxrregcount``) limits.

``SPILL_DEMO`` lists the limited instantiations: they spill on purpose and carry ``spills_expected`` so
the catalog's no-spill check exempts them (they are in ``KERNELS`` so that ``gpumemlab kernels`` shows
their ptxas report).
"""

from __future__ import annotations

from . import KernelSpec

SRC = "register_pressure.cu"
NACC = 64                        # live accumulators per thread: ~NACC + 10 registers when unconstrained
REG_LIMITS = (64, 48, 32)        # --maxrregcount values of the spill demonstration
FLOPS_PER_ELEMENT = 2 * NACC     # one FMA per accumulator per input element
READS_PER_ELEMENT = 4            # bytes: one float read per element (the outputs are one float per thread)


def accumulators(max_registers: int | None = None) -> KernelSpec:
    if max_registers is None:
        return KernelSpec(SRC, f"accumulators<{NACC}>")
    demo = KernelSpec(SRC, f"accumulators<{NACC}>", spills_expected=True)
    return demo.with_options(max_register_count=int(max_registers))


NATURAL = accumulators()
SPILL_DEMO = [accumulators(r) for r in REG_LIMITS]

# variant name -> instantiation: natural registers first (the naive of the sweep), then each limit
VARIANTS = {"natural registers": NATURAL, **{f"maxrregcount {r}": s for r, s in zip(REG_LIMITS, SPILL_DEMO)}}

KERNELS = [NATURAL] + SPILL_DEMO
