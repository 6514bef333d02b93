"""A library call of ours and the libraries it is judged against (CuPy, and PyTorch when it imports), as cases:
each call returns a new array, kept for the check; ours is timed head-to-head against each baseline."""

from __future__ import annotations

from collections.abc import Callable

from . import _torch


def returning(make: Callable, variant: str, compute: Callable, **kw):
    """A Case (built by ``make(variant, run, result, reset, **kw)``) for a call that returns its output:
    ``result()`` is the last call's output as a CuPy array, ``reset()`` forgets it (so a stale one never passes)."""
    import cupy

    box = {}

    def run():
        box["out"] = compute()
    return make(variant, run, lambda: cupy.asarray(box["out"]), box.clear, **kw)


def library_vs_baselines(session, x, make: Callable, library: tuple[str, Callable], cupy_op: tuple[str, Callable],
                         torch_op: tuple[str, Callable], versus: tuple[str, ...] = ()) -> list:
    """Cases for ``library = (name, fn(x))``, then ``cupy_op = (name, fn(x))`` and, where PyTorch has CUDA,
    ``torch_op = (name, fn(tensor))`` on a zero-copy tensor of ``x`` run on the session's work stream. The library
    case is timed interleaved against every baseline and the ``versus`` cases of its group."""
    bases = [returning(make, cupy_op[0], lambda: cupy_op[1](x), kind="baseline")]
    if _torch.torch_module() is not None:
        t = _torch.as_tensor(x)
        bases.append(returning(make, torch_op[0], _torch.on_work_stream(session, lambda: torch_op[1](t)),
                               kind="baseline", extra=dict(torch=_torch.version())))
    ours = returning(make, library[0], lambda: library[1](x), versus=tuple(versus) + tuple(b.variant for b in bases))
    return [ours] + bases


def versus_baselines(label, lib, records: dict) -> list:
    """Sentences comparing the library's record with each baseline of its group: the interleaved head-to-head the
    runner stored on it where there is one, else the ratio of separately timed medians (``label``: a str or a
    Finding)."""
    from ._cite import field, q, sentence
    from ._model import head_to_head_findings

    paired = lib.extra.get("head_to_head") or {}
    # a baseline timed interleaved is compared by that ratio alone (below): separate medians would say otherwise
    out = [sentence(label, " = ", q(field(lib, "gbps") / field(r, "gbps"), ".2f"), f"x {name} (",
                    q(field(r, "gbps"), ".0f"), " GB/s, separate medians)")
           for name, r in records.items() if r.kind == "baseline" and "(ceiling)" not in name and name not in paired]
    return out + head_to_head_findings(label, lib)
