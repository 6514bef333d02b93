"""Instantiations of reduce.cu: the reduction ladder (float) and the library's typed passes.

A ladder step is data: its kernel, how many input elements one block consumes, and what it shows.
The library runs ``reduce7`` (16-byte vectors, a grid of the resident blocks, the last block adds the
partials) with the configuration :data:`LIBRARY`, and ``reduce_final`` (one block) alone for small inputs; C types per
NumPy dtype are in :data:`CTYPES`.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import CTYPES as C_TYPES
from . import KernelSpec

SRC = "reduce.cu"
BLOCK = 256          # threads per block of the ladder and the default of the vectorized passes
FINAL_BLOCK = 1024   # threads of the single-block final pass
UNROLLS = (1, 2, 4, 8, 16)
BLOCKS = (256, 512)
LOADS = {0: "__ldg", 1: "L2::256B", 2: "no_allocate"}  # the 16-byte load (load16 in reduce.cu)
LOAD_MIN_SM = {1: 80}  # the L2::256B size hint is sm_80+ PTX: older archs skip those variants
MAPPINGS = {0: "even share", 1: "strip-mined"}          # which vectors a block reads (thread_share in reduce.cu)


@dataclass(frozen=True)
class VecConfig:
    """One configuration of the vectorized passes: the kernel's template arguments plus the grid size.

    ``waves``: the grid is ``waves`` x the blocks that fit on the GPU at once (1: a persistent grid; more: the
    hardware hands the later blocks to whichever SM frees a slot first, as CUB's 5x subscription does).
    """

    kernel: str = "reduce7"   # reduce6 (+ reduce_final: two launches) or reduce7 (one launch)
    unroll: int = 8           # 16-byte loads in flight per thread
    load: int = 0             # key of LOADS
    block: int = BLOCK
    mapping: int = 0          # key of MAPPINGS
    waves: int = 1

    def __post_init__(self):
        if (self.kernel not in ("reduce6", "reduce7") or self.unroll not in UNROLLS or self.load not in LOADS
                or self.block not in BLOCKS or self.mapping not in MAPPINGS or self.waves < 1):
            raise ValueError(f"{self} is not instantiated")

    def spec(self, ctype: str = "float", acc: str | None = None) -> KernelSpec:
        return KernelSpec(SRC, f"{self.kernel}<{ctype}, {acc or ctype}, {self.block}, {self.unroll}, {self.load}, "
                               f"{self.mapping}>", min_sm=LOAD_MIN_SM.get(self.load, 0))

    @property
    def label(self) -> str:
        """``reduce7 float4 x8 __ldg``, plus the block size, mapping and waves where not the defaults."""
        extra = ([f"B{self.block}"] if self.block != BLOCK else []) + (["strip-mined"] if self.mapping else []) \
            + ([f"{self.waves} waves"] if self.waves != 1 else [])
        return " ".join([f"{self.kernel} float4 x{self.unroll} {LOADS[self.load]}"] + extra)

    def with_waves(self, waves: int) -> "VecConfig":
        return VecConfig(self.kernel, self.unroll, self.load, self.block, self.mapping, waves)

    def as_dict(self) -> dict:
        return dict(kernel=self.kernel, unroll=self.unroll, load=LOADS[self.load], block=self.block,
                    mapping=MAPPINGS[self.mapping], waves=self.waves)


# gpumemlab.sum: one launch (reduce7), plain __ldg, 8 loads in flight per thread, 512 threads, strip-mined tiles,
# one wave. Chosen from the same-run comparison of all of TUNING x TUNING_WAVES against cupy.sum on an H200
# (docs/notes/reduce_transpose.md, "configuration search"; `gpumemlab tune reduce` re-measures it): the fastest at 2^28 float32 within
# noise of x16 and the most robust at 2^26; no_allocate loads, the L2::256B hint and more waves all lose there.
LIBRARY = VecConfig("reduce7", unroll=8, load=0, block=512, mapping=1, waves=1)

# NumPy dtype name -> (element C type, accumulator C type, accumulator NumPy dtype name); ints sum exactly in 64 bits
ACCUMULATOR = {"float32": "float32", "float64": "float64", "int32": "int64"}
CTYPES = {d: (C_TYPES[d], C_TYPES[acc], acc) for d, acc in ACCUMULATOR.items()}


def ladder_spec(step: int, ctype: str = "float") -> KernelSpec:
    if not 0 <= step <= 5:
        raise ValueError(f"reduce{step} is not a block-per-tile ladder step (0..5)")
    return KernelSpec(SRC, f"reduce{step}<{ctype}, {BLOCK}>")


def vectorized(kernel: str = "reduce6", ctype: str = "float", acc: str | None = None, unroll: int = 4,
               load: int = 0, block: int = BLOCK, mapping: int = 0) -> KernelSpec:
    """``reduce6`` (two launches) or ``reduce7`` (one launch) with ``unroll`` 16-byte loads per thread."""
    return VecConfig(kernel, unroll, load, block, mapping).spec(ctype, acc)


def reduce6(ctype: str = "float", acc: str | None = None, unroll: int = 4, load: int = 0) -> KernelSpec:
    return vectorized("reduce6", ctype, acc, unroll, load)


def library_spec(ctype: str, acc: str) -> KernelSpec:
    return LIBRARY.spec(ctype, acc)


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


# The first tree step's shared-memory read of each ladder kernel (seed 004's bank-conflict analysis), by step
STEP_ACCESS = {
    0: ("s[threadIdx.x + 1]", "threadIdx.x % 2 == 0"),      # reduce0: tid % (2s) == 0, s = 1: divergent
    1: ("s[2 * threadIdx.x + 1]", "2 * threadIdx.x < 256"),  # reduce1: index = 2*s*tid: 2-way conflicts
    2: ("s[threadIdx.x + 128]", "threadIdx.x < 128"),        # reduce2..: sequential addressing
}
STEP_DECL = f"__shared__ float s[{BLOCK}]"
# the vectorized passes' main access: one 16-byte load per lane, consecutive lanes adjacent
VECTOR_ACCESS = ("x[blockIdx.x*blockDim.x + threadIdx.x]", "float4 x[]")
BYTES_PER_ELEMENT = 4  # every variant reads each float once (the partials are < 0.5 % extra)

LADDER = [
    LadderStep("reduce0 interleaved (tid % 2s)", 0, BLOCK, "divergent interleaved addressing (seed 004)"),
    LadderStep("reduce1 strided index", 1, BLOCK, "no divergence, shared-memory bank conflicts (seed 004)"),
    LadderStep("reduce2 sequential addressing", 2, BLOCK, "conflict-free sequential addressing (seed 004)"),
    LadderStep("reduce3 first add during load", 3, 2 * BLOCK, "halves the idle threads"),
    LadderStep("reduce4 unrolled last warp", 4, 2 * BLOCK, "no __syncthreads in the last 6 steps"),
    LadderStep("reduce5 warp shuffle", 5, 2 * BLOCK, "__shfl_down_sync, shared memory for warp sums only"),
]


# the vectorized steps of the ladder the experiment compares
VECTORIZED = ([VecConfig("reduce6", u) for u in (1, 2, 4, 8)] + [VecConfig("reduce6", 8, 1)]
              + [VecConfig("reduce7", u, ld) for u in (4, 8) for ld in (0, 1)])

# the search space for gpumemlab.sum's configuration (float32; waves are a launch-time choice, see TUNING_WAVES):
# loads in flight, load flavour, block size, block-to-data mapping
TUNING = [VecConfig("reduce7", u, ld, b, m) for u in (4, 8, 16) for ld in (0, 2) for b in BLOCKS for m in MAPPINGS]
TUNING_WAVES = (1, 2, 4, 8)


# ---------------------------------------------------------------- reductions along axes (sum_rows / sum_cols)
ROW_BLOCK = 256      # threads of a sum_rows block
THREAD_ROW_VECTORS = 8  # rows up to this many 16-byte vectors (128 bytes) take a thread each
WARP_ROW_MAX = 4096  # longer rows up to this many elements take a warp each, longer ones a block each
COL_ROWS = 8         # RB of sum_cols: warps per block, each taking every 8th row
COL_THREADS = 256    # threads of a sum_cols_thread or sum_cols_narrow block
NARROW = (2, 3, 4, 5, 6, 7, 8)  # the column counts sum_cols_narrow is built for
NARROW_DECLARED = (2, 3, 4)     # ... and those declared (compiled for every arch in CI); the rest compile on use


def rows_spec(ctype: str, acc: str, vec: bool, tpr: int) -> KernelSpec:
    """``tpr``: threads per row, 1, 32 or ROW_BLOCK."""
    return KernelSpec(SRC, f"sum_rows<{ctype}, {acc}, {str(vec).lower()}, {tpr}, {ROW_BLOCK}>")


def cols_spec(ctype: str, acc: str, vec: bool) -> KernelSpec:
    return KernelSpec(SRC, f"sum_cols<{ctype}, {acc}, {str(vec).lower()}, {COL_ROWS}>")


def cols_thread_spec(ctype: str, acc: str, vec: bool) -> KernelSpec:
    return KernelSpec(SRC, f"sum_cols_thread<{ctype}, {acc}, {str(vec).lower()}>")


def narrow_spec(ctype: str, acc: str, vec: bool, inner: int) -> KernelSpec:
    if inner not in NARROW:
        raise ValueError(f"sum_cols_narrow: inner={inner}; built for {NARROW}")
    return KernelSpec(SRC, f"sum_cols_narrow<{ctype}, {acc}, {str(vec).lower()}, {inner}, {COL_THREADS}>")


WIDE_SPLITS = 64  # more splits than this: sum_splits_wide (a block per result) adds them


def splits_spec(acc: str, splits: int = 1) -> KernelSpec:
    """The kernel that adds ``splits`` partials per result: sum_splits, or sum_splits_wide past WIDE_SPLITS."""
    if splits > WIDE_SPLITS:
        return KernelSpec(SRC, f"sum_splits_wide<{acc}, {COL_THREADS}>")
    return KernelSpec(SRC, f"sum_splits<{acc}>")


def _axis_specs(ctype: str, acc: str) -> list[KernelSpec]:
    return ([rows_spec(ctype, acc, v, t) for v in (False, True) for t in (1, 32, ROW_BLOCK)]
            + [cols_spec(ctype, acc, v) for v in (False, True)] + [splits_spec(acc), splits_spec(acc, WIDE_SPLITS + 1)]
            + [cols_thread_spec(ctype, acc, v) for v in (False, True)]
            + [narrow_spec(ctype, acc, v, i) for v in (False, True) for i in NARROW_DECLARED])


# (input dtype, accumulator dtype) pairs built ahead: sum's and mean's defaults (other dtype= pairs compile on use)
AXIS_DEFAULTS = [("float32", "float32"), ("float64", "float64"), ("int32", "int64"), ("int32", "float64")]


def _library_specs() -> list[KernelSpec]:
    specs = []
    for ctype, acc, _ in CTYPES.values():
        specs += [library_spec(ctype, acc), reduce_final(ctype, acc), reduce_final(acc, acc)]
    for d, a in AXIS_DEFAULTS:
        specs += _axis_specs(C_TYPES[d], C_TYPES[a])
    specs += _axis_specs("long long", "long long")  # the later passes of int32 sums over interleaved axes
    return specs


def _unique(specs):
    return list(dict.fromkeys(specs))


KERNELS = _unique([s.spec for s in LADDER] + [c.spec() for c in VECTORIZED + TUNING] + _library_specs())
