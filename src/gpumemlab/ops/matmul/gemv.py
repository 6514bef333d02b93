"""The memory-bound path of ``gpumemlab.matmul``: N = 1 (``gemv_rows``, a warp per row of A) or M <= 8 rows
(``gemv_cols``, the rows share each read of B), with the k ranges split over the SMs when the outputs are too few
to keep every SM reading; the split launch adds its partials in its last block (gemv.cu)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import UsageError
from ...kernels import KernelSpec
from ...kernels import matmul as K
from .. import _workspace as W


GEMV_MIN_DEPTH = 64     # rows of B per split at least: shorter slices spend more on the epilogue than they save
GEMV_THREADS = 256      # gemv_cols blocks are 32 x 8, gemv_rows 8 warps
# gemv_rows (N = 1) splits K when its 8-row blocks number fewer than this many per SM (1024 x 1 x 8192 has 128 blocks:
# most SMs then hold one block of 8 warps, too few loads in flight), into k ranges of at least GEMV_ROWS_MIN_DEPTH
GEMV_ROWS_SPLIT_BELOW = 2
GEMV_ROWS_MIN_DEPTH = 1024


def gemv_splits(n: int, k: int, vec: int, slots: int) -> tuple[int, int]:
    """(k_chunk, splits) for ``gemv_cols``: as many k ranges as let the ceil(N / (32 vec)) column blocks fill the
    ``slots`` (SMs x resident blocks of the kernel) once; more would start a second, mostly empty wave."""
    col_blocks = math.ceil(n / (32 * vec))
    want = max(1, min(slots // col_blocks, k // GEMV_MIN_DEPTH))
    return K.split_chunk(k, 8, want)


@dataclass(frozen=True)
class GemvLaunch:
    """One launch of the memory-bound path; ``scalars`` follow the ``c, a, b, work, ticket`` pointers. ``splits > 1``:
    the k ranges are added by the last block of each block of outputs from a workspace of :attr:`workspace` partials
    and tickets; ``outputs``: M x N."""

    spec: KernelSpec
    grid: tuple
    block: tuple
    scalars: tuple
    vec: int
    splits: int = 1
    outputs: int = 0

    @property
    def workspace(self) -> tuple[int, int] | None:
        """(partial floats, tickets) of a split launch: each split's partial of each output, one ticket per block of
        outputs (grid x); None for an unsplit one."""
        return (self.splits * self.outputs, self.grid[0]) if self.splits > 1 else None


def gemv_launch(m: int, n: int, k: int, aligned: bool, sms: int, blocks_per_sm: int | None = None) -> GemvLaunch:
    """N = 1 (``gemv_rows``: A times a column vector) or M <= 8 (``gemv_cols``: a few rows of A share each read
    of B). ``aligned``: A, B and C are 16-byte aligned. ``blocks_per_sm``: resident blocks per SM of the split kernel
    (None: the driver's occupancy answer for it; 2 for 8 rows, whose registers allow no more)."""
    if n == 1:
        vec = 4 if k % 4 == 0 and aligned else 1
        row_blocks = math.ceil(m / 8)
        splits, chunk = 1, k
        if row_blocks < GEMV_ROWS_SPLIT_BELOW * sms:  # too few rows to keep every SM reading: split K
            if blocks_per_sm is None:
                from ...gpu import runtime

                blocks_per_sm = runtime.max_active_blocks(K.gemv_rows(vec, True), GEMV_THREADS)
            want = min(sms * max(1, blocks_per_sm) // row_blocks, k // GEMV_ROWS_MIN_DEPTH)
            chunk, splits = K.split_chunk(k, 32 * vec, want)
        return GemvLaunch(K.gemv_rows(vec, splits > 1), (row_blocks, splits), (256, 1), (m, k, chunk), vec, splits, m)
    if m > K.SKINNY_ROWS[-1]:
        raise UsageError(f"matmul: the gemv path needs M <= {K.SKINNY_ROWS[-1]} or N == 1; got M={m}, N={n}")
    vec, rows = (4 if n % 4 == 0 and aligned else 1), K.skinny_rows(m)
    if blocks_per_sm is None:
        from ...gpu import runtime

        blocks_per_sm = runtime.max_active_blocks(K.gemv_cols(vec, True, rows), GEMV_THREADS)
    chunk, splits = gemv_splits(n, k, vec, sms * max(1, blocks_per_sm))
    return GemvLaunch(K.gemv_cols(vec, splits > 1, rows), (math.ceil(n / (32 * vec)), splits), (32, 8),
                      (m, n, k, chunk), vec, splits, m * n)


def gemv_workspace(partials: int, tickets: int):
    """(float32 partials, zeroed uint32 tickets) for a split GEMV on CuPy's current stream and device
    (:func:`._workspace.ticket_workspace`). Size: splits x M x N partials, and the splits never make more blocks than
    the GPU holds at once, so at most SMs x resident blocks x 32 VEC x M floats (about 1 MiB on an H100 for 8 rows)."""
    return W.ticket_workspace(partials, tickets)


class GemvRun:
    """A :class:`GemvLaunch` prepared once (:class:`runtime.Launcher`); ``run(out, a, b)`` on CuPy's current stream
    passes this stream's workspace to a split launch."""

    __slots__ = ("launch", "workspace")

    def __init__(self, g: GemvLaunch):
        from ...gpu import runtime

        self.workspace = g.workspace
        if self.workspace is None:  # work and ticket are never read: null pointers, prepared with the scalars
            self.launch = runtime.Launcher(g.spec, g.grid, g.block, 3, np.uint64(0), np.uint64(0), *g.scalars)
        else:
            self.launch = runtime.Launcher(g.spec, g.grid, g.block, 5, *g.scalars)

    def __call__(self, out, a, b) -> None:
        if self.workspace is None:
            self.launch(out, a, b)
        else:
            self.launch(out, a, b, *gemv_workspace(*self.workspace))
