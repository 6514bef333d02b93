"""``gpumemlab.stream_map(fn, x)`` with ``x`` a ``dask.array.Array``: each block through stream_map's pipeline.

Each block of ``x`` (split along axis 0 only; other axes are joined into one block first) runs through
:func:`gpumemlab.stream_map` on the worker that holds it - with dask-cuda's ``LocalCUDACluster`` or
``dask cuda worker`` one worker per GPU, so every GPU of every host runs its own pipeline on its own blocks. The
result's dtype and trailing shape come from fn applied to one row of ``x`` (computed on a worker before the
map). An exception in fn is re-raised by ``compute()`` with a note naming the block (index and rows) next to
stream_map's note naming the chunk. Needs the ``dask`` extra (dask, distributed; dask-cuda for GPU workers).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UsageError


def stream_map_dask(pipeline, fn, x, **options):
    """A Dask array: ``pipeline(fn, block, **options)`` per block of ``x`` (lazy; call ``.compute()``);
    ``pipeline`` is :func:`gpumemlab.stream_map` (passed in: it is the caller)."""
    if not callable(fn):
        raise UsageError(f"stream_map: fn must be callable, got {type(fn).__name__}")
    if x.ndim == 0 or x.shape[0] == 0:
        raise UsageError(f"stream_map: x must have at least one row along axis 0 (shape {x.shape})")
    import dask

    rows = x.shape[0]
    # whole rows per block, as 2-D (rows, row elements): the map needs no axis bookkeeping when fn changes the
    # trailing shape; each task views its block in x's row shape again and flattens fn's rows
    flat = x.rechunk(dict.fromkeys(range(1, x.ndim), -1)).reshape(rows, -1)
    starts = np.concatenate([[0], np.cumsum(flat.chunks[0])]).tolist()
    sample = dask.delayed(_Block(pipeline, fn, options, [0, 1], x.shape[1:], flatten=False))(flat[:1]).compute()
    if not isinstance(sample, np.ndarray) or sample.ndim == 0 or sample.shape[0] != 1:
        raise UsageError(f"stream_map: fn must keep the leading dimension (one row gave "
                         f"{getattr(sample, 'shape', type(sample).__name__)})")
    tail = sample.shape[1:]
    y = flat.map_blocks(_Block(pipeline, fn, options, starts, x.shape[1:], flatten=True), dtype=sample.dtype,
                        chunks=(flat.chunks[0], (math.prod(tail),)), meta=np.empty((0, 0), sample.dtype))
    return y.reshape(rows, *tail)


class _Block:
    """The task of one block (a class, not a closure: it pickles to remote workers)."""

    def __init__(self, pipeline, fn, options: dict, starts: list[int], row_shape: tuple, flatten: bool):
        self.pipeline, self.fn, self.options = pipeline, fn, options
        self.starts, self.row_shape, self.flatten = starts, row_shape, flatten

    def __call__(self, block: np.ndarray, block_info=None) -> np.ndarray:
        if block.shape[0] == 0:  # dask's own probes of the function (meta) carry no rows
            return block
        index = (block_info or {}).get(0, {}).get("chunk-location", (0,))
        x = np.ascontiguousarray(block).reshape(block.shape[0], *self.row_shape)
        try:
            y = self.pipeline(self.fn, x, **self.options)
        except BaseException as exc:
            lo = self.starts[index[0]]
            exc.add_note(f"gpumemlab.stream_map (dask): in block {index[0]} (rows {lo}:{lo + block.shape[0]} of x)")
            raise
        return y.reshape(y.shape[0], -1) if self.flatten else y
