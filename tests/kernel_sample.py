"""A sample of a kernel family for the CPU suite's compile checks: .ci/run builds every instantiation for every
supported arch (and fails on a spill or stack frame); the suite builds a few of each template for sm_90."""

from __future__ import annotations

from collections import Counter


def matmul_sample() -> list:
    """Every matmul kernel but the register-blocked ones (most of the catalog's compile time), and those of the
    default and the small-problem config with every vector width and split: one list, so that every test building
    matmul kernels shares the same cached cubins."""
    from gpumemlab.kernels import matmul as K

    blocked = {cfg.spec(vec, split) for cfg in (K.DEFAULT, K.SMALL) for vec in (4, 1) for split in (False, True)}
    return [s for s in K.KERNELS if not s.name.startswith("register_blocked") or s in blocked]


def per_template(specs, n: int = 3) -> list:
    """The first ``n`` instantiations of each kernel template in ``specs`` (in their order)."""
    seen: Counter = Counter()
    out = []
    for s in specs:
        template = s.name.split("<", 1)[0]
        if seen[template] < n:
            seen[template] += 1
            out.append(s)
    return out
