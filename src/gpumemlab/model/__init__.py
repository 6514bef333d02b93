"""The analyzer: coalescing, bank conflicts, occupancy, arithmetic intensity, DRAM interleaving.

Pure Python + NumPy; nothing here imports the GPU stack, so it runs and is tested anywhere.
The experiments call this API to put the model's prediction next to each measurement::

    analyze_global("idata[xid]", "float idata[]", block=256, lets=["xid=threadIdx.x + 1"])
    analyze_shared("s[threadIdx.x][0]", "float s[32][32]", block=32)
    occupancy(256, 64, smem=0, cc=(9, 0))
    matmul_intensity("tiled", tile=32)  # 8.0

Common keyword arguments of the analyze functions:

- ``block``, ``grid``: an int, an (x, y, z) tuple or "X,Y,Z"; threads form warps of 32 by linear
  thread id (x fastest); only block ``block_idx`` (default 0) is analyzed.
- ``lets``: names for the expression, evaluated in order: "NAME=EXPR" strings, (name, expr) pairs
  or a mapping; expressions use C's integer types and conversions (see :mod:`.expr`: built-ins are
  unsigned int, so ``threadIdx.x - 1`` wraps for thread 0; undefined behaviour is refused). A let
  may declare its type, "int i=threadIdx.x - 1": the value is converted to it as C converts an
  initializer (-1 for thread 0); without one the let has its expression's type (C's ``auto``).
- ``active``: a C condition selecting the threads that execute the access (default all).
- ``offset``: bytes past the 256-byte-aligned allocation base (cudaMalloc's guarantee), 0..2**40.
- ``cc``: compute capability, (9, 0) or "9.0"; one of :data:`.cc.SUPPORTED_CC`.

Byte offsets of an access must stay within +-2**62: an index beyond (e.g. a 64-bit unsigned index
that wrapped below zero) is refused, not folded back into the allocation.

Bad input raises :class:`gpumemlab.errors.UsageError` with one line, naming the argument. Legal but
suspicious input is analyzed and warns (:class:`gpumemlab.errors.AnalyzerWarning`, one line each): a
negative index into a pointer, a lane more than 16 MiB (``access.FAR_BYTES``) from its warp's first
lane, a let defined twice; on the CLI also an option that overrides another (``occupancy --kernel``
with ``--regs``, ``intensity --device`` with ``--peak-gflops``). An empty launch dimension
("32,,1") is an error: C has none, and guessing one would change the answer.
"""

from __future__ import annotations

from . import banks as _banks
from . import args as _args
from . import coalescing as _coalescing
from .access import LaneAccesses, parse_decl, resolve
from .cc import SUPPORTED_CC, cc_str, parse_cc
from .dram import DramLayout, tiled_matmul_phase
from .explain import explain_global, explain_shared
from .intensity import find_device, intensity, matmul_intensity, roofline
from .occupancy import occupancy
from .types import lookup as element_type

__all__ = [
    "analyze", "analyze_global", "analyze_shared", "occupancy", "matmul_intensity", "intensity", "roofline",
    "find_device", "DramLayout", "tiled_matmul_phase", "resolve", "predict", "LaneAccesses", "parse_decl",
    "element_type", "parse_cc", "SUPPORTED_CC",
]


def predict(lanes: LaneAccesses, cc=(9, 0)) -> dict:
    """Counts for already-resolved accesses (see :func:`resolve`), with the explanation."""
    _args.instance(lanes, LaneAccesses, "lanes", " (from resolve())")
    cc = parse_cc(cc)
    if lanes.space == "shared":
        out = _banks.analyze(lanes, cc)
        text = explain_shared(lanes, out, cc)
    else:
        out = _coalescing.analyze(lanes, cc)
        text = explain_global(lanes, out, cc)
    return dict(space=lanes.space, cc=cc_str(cc), **out, explanation=text)


def analyze(access: str, decl: str, *, space: str | None = None, block=(256, 1, 1), grid=(1, 1, 1), lets=(),
            active: str | None = None, offset: int = 0, cc=(9, 0), block_idx=(0, 0, 0)) -> dict:
    """Analyze one access; the space comes from ``space`` or the declaration (``__shared__``).

    Global keys: requests, sectors, lines, sectors_per_request, efficiency_pct, verdict
    ("coalesced"/"uncoalesced"), min_sectors, per_warp, and transactions for cc 1.x-3.x.
    Shared keys: wavefronts, ideal_wavefronts, conflicts (= wavefronts - ideal), ways, verdict
    ("conflict-free"/"N-way bank conflict"), requests, per_warp. Both: space, cc, explanation.
    """
    cc = parse_cc(cc)
    lanes = resolve(access, decl, space=space, block=block, grid=grid, lets=lets, active=active, offset=offset,
                    block_idx=block_idx)
    return predict(lanes, cc)


def analyze_global(access: str, decl: str, **kw) -> dict:
    """:func:`analyze` in global memory: requests, sectors, lines, efficiency_pct, verdict, per_warp."""
    return analyze(access, decl, space="global", **kw)


def analyze_shared(access: str, decl: str, **kw) -> dict:
    """:func:`analyze` in shared memory: wavefronts, ideal_wavefronts, conflicts, ways, verdict, per_warp."""
    return analyze(access, decl, space="shared", **kw)
