"""A sample of a kernel family for the CPU suite's compile checks: .ci/run builds every instantiation for every
supported arch (and fails on a spill or stack frame); the suite builds a few of each template for sm_90."""

from __future__ import annotations

from collections import Counter


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
