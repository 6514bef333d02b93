"""Instantiations of reduce.cu: the reduction ladder (float) and the library's typed passes.

A ladder step is data: its kernel, how many input elements one block consumes, and what it shows.
The library runs ``reduce7`` (16-byte vectors, persistent grid, the last block adds the partials) with
the configuration :data:`LIBRARY`, and ``reduce_final`` (one block) alone for small inputs; C types per
NumPy dtype are in :data:`CTYPES`.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import KernelSpec

SRC = "reduce.cu"
BLOCK = 256          # threads per block of every multi-block pass
FINAL_BLOCK = 1024   # threads of the single-block final pass
UNROLLS = (1, 2, 4, 8)
LOADS = {0: "__ldg", 1: "L2::256B"}  # the 16-byte load of the vectorized passes (see load16 in reduce.cu)
# gpumemlab.sum: one launch, 8 loads in flight per thread, plain __ldg. Measured on an H200 (2^28 float32):
# the L2::256B prefetch hint costs ~7% and reduce6's second launch ~0.5% (docs/notes/reduce_transpose.md).
LIBRARY = dict(kernel="reduce7", unroll=8, load=0)
LIBRARY_UNROLL = LIBRARY["unroll"]

# NumPy dtype name -> (element C type, accumulator C type, accumulator NumPy dtype name)
CTYPES = {"float32": ("float", "float", "float32"),
          "float64": ("double", "double", "float64"),
          "int32": ("int", "long long", "int64")}


def ladder_spec(step: int, ctype: str = "float") -> KernelSpec:
    if not 0 <= step <= 5:
        raise ValueError(f"reduce{step} is not a block-per-tile ladder step (0..5)")
    return KernelSpec(SRC, f"reduce{step}<{ctype}, {BLOCK}>")


def vectorized(kernel: str = "reduce6", ctype: str = "float", acc: str | None = None, unroll: int = 4,
               load: int = 0) -> KernelSpec:
    """``reduce6`` (two launches) or ``reduce7`` (one launch) with ``unroll`` 16-byte loads per thread."""
    if kernel not in ("reduce6", "reduce7") or unroll not in UNROLLS or load not in LOADS:
        raise ValueError(f"{kernel}<unroll={unroll}, load={load}> is not instantiated")
    return KernelSpec(SRC, f"{kernel}<{ctype}, {acc or ctype}, {BLOCK}, {unroll}, {load}>")


def reduce6(ctype: str = "float", acc: str | None = None, unroll: int = 4, load: int = 0) -> KernelSpec:
    return vectorized("reduce6", ctype, acc, unroll, load)


def library_spec(ctype: str, acc: str) -> KernelSpec:
    return vectorized(LIBRARY["kernel"], ctype, acc, LIBRARY["unroll"], LIBRARY["load"])


def reduce_final(ctype: str = "float", acc: str | None = None) -> KernelSpec:
    return KernelSpec(SRC, f"reduce_final<{ctype}, {acc or ctype}, {FINAL_BLOCK}>")


@dataclass(frozen=True)
class LadderStep:
    name: str          # variant name in the report
    step: int          # reduceN
    per_block: int     # input elements one block consumes
    technique: str

    @property
    def spec(self) -> KernelSpec:
        return ladder_spec(self.step)


LADDER = [
    LadderStep("reduce0 interleaved (tid % 2s)", 0, BLOCK, "divergent interleaved addressing (seed 004)"),
    LadderStep("reduce1 strided index", 1, BLOCK, "no divergence, shared-memory bank conflicts (seed 004)"),
    LadderStep("reduce2 sequential addressing", 2, BLOCK, "conflict-free sequential addressing (seed 004)"),
    LadderStep("reduce3 first add during load", 3, 2 * BLOCK, "halves the idle threads"),
    LadderStep("reduce4 unrolled last warp", 4, 2 * BLOCK, "no __syncthreads in the last 6 steps"),
    LadderStep("reduce5 warp shuffle", 5, 2 * BLOCK, "__shfl_down_sync, shared memory for warp sums only"),
]


# the vectorized variants the experiment compares: (kernel, unroll, load)
VECTORIZED = ([("reduce6", u, 0) for u in UNROLLS] + [("reduce6", 8, 1)]
              + [("reduce7", u, ld) for u in (4, 8) for ld in LOADS])


def _library_specs() -> list[KernelSpec]:
    specs = []
    for ctype, acc, _ in CTYPES.values():
        specs += [library_spec(ctype, acc), reduce_final(ctype, acc), reduce_final(acc, acc)]
    return specs


KERNELS = ([s.spec for s in LADDER] + [vectorized(k, "float", "float", u, ld) for k, u, ld in VECTORIZED]
           + _library_specs())
