"""Copies of the same bytes that several experiments measure (ceilings, baselines), and the one sweep that
offset_copy and stride_copy both are: a float copy whose index depends on one parameter."""

from __future__ import annotations

import numpy as np

from ..bench.verify import device_random_nonzero
from ..gpu import runtime
from ..kernels import blocks_for
from ..kernels import copy as K
from ._declare import Case, Check
from ._model import predict_global

BLOCK = K.BLOCK


def copy_kernel_runner(session, vtype: str, unroll: int, out, src, waves: int = 0):
    """A callable that copies ``src`` into ``out`` (float32 arrays, size divisible by the vector width)."""
    width = K.VECTOR_TYPES[vtype] // 4
    n_vec = src.size // width
    grid = blocks_for(n_vec, BLOCK * unroll)
    if waves:  # a persistent grid: `waves` blocks per SM
        grid = min(grid, waves * session.sm_count)
    kernel = runtime.get_kernel(K.copy_vec(vtype, unroll))
    return lambda: runtime.launch(kernel, grid, BLOCK, out, src, np.int64(n_vec))


def memcpy_runner(out, src):
    """cudaMemcpyAsync device to device of all of ``src`` (on CuPy's current stream)."""
    nbytes = src.nbytes
    return lambda: out.data.copy_from_device_async(src.data, nbytes)


SEED_KERNEL = "seed kernel"


def ilp_variant(unroll: int) -> str:
    return f"{unroll} loads in flight"


def indexed_copy_cases(session, name: str, spec, param: str, values, access: str, n: int, span: int, window,
                       offset_stride, unrolls=()):
    """One Case per ``value`` of ``param`` and kernel: ``spec(out, src, value, n)`` (the seed's kernel, one load per
    thread) and ``indexed_copy_ilp<u>`` for each ``u`` of ``unrolls`` (the same 4-byte accesses, ``u`` independent
    loads in flight per thread), with ``offset_stride(value)`` giving its (offset, stride). Each copies the ``n``
    floats ``window(value)`` (a slice) of a ``span``-float source; 4 bytes read and 4 written per float."""
    import cupy

    src = device_random_nonzero(span, np.float32, session.seed)
    out = cupy.empty_like(src)
    seed_kernel = runtime.get_kernel(spec)
    seed_grid = blocks_for(n, BLOCK)
    ilp = {u: (runtime.get_kernel(K.indexed_copy_ilp(u)), blocks_for(n, BLOCK * u)) for u in unrolls}
    for value in values:
        part = window(value)
        offset, stride = offset_stride(value)
        runs = {SEED_KERNEL: lambda value=value: runtime.launch(seed_kernel, seed_grid, BLOCK, out, src, value,
                                                                 np.int64(n))}
        for u, (kernel, grid) in ilp.items():
            runs[ilp_variant(u)] = (lambda kernel=kernel, grid=grid, offset=offset, stride=stride:
                                    runtime.launch(kernel, grid, BLOCK, out, src, offset, stride, np.int64(n)))
        for variant, run in runs.items():
            yield Case(variant, run, Check(out, src[part], view=lambda o, part=part: o[part]),
                       params={param: value, "n": n}, reads=4 * n, writes=4 * n,
                       model=predict_global(access, "float idata[]", block=(BLOCK, 1, 1),
                                            lets=((param, str(value)),)))


def variants(records) -> dict:
    """Records grouped by variant, in order of first appearance."""
    out: dict = {}
    for r in records:
        out.setdefault(r.variant, []).append(r)
    return out


def relative_to(param: str, value, key: str):
    """A ``derive``: each record's bandwidth as a percentage of the same variant's record at ``param == value``."""
    def derive(records, session):
        base = {r.variant: r for r in records if r.params[param] == value}
        for r in records:
            if r.variant in base:
                r.extra[key] = 100.0 * base[r.variant].median_s / r.median_s
    return derive
