#!/usr/bin/env python3
"""One-off: convert src/gpumemlab/kernels/tuned/matmul.json from format 0 (tools/matmul_tune.py) to format 1
(gpumemlab.tune.table) in place, without re-measuring, and check that the matmul chooser picks the same
configuration and split-K factor from both for every tuned shape and for a sweep of untuned ones.

    PYTHONPATH=src python3 tools/migrate_tuned_matmul.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gpumemlab.ops import matmul as ops
from gpumemlab.tune import legacy, table

PROBE = [(m, n, k) for m in (256, 1000, 1024, 4096, 8192) for n in (256, 1000, 4096) for k in (512, 4096, 8192)]


def main() -> int:
    path = Path(ops.TUNED_PATH)
    old = json.loads(path.read_text())
    if old.get("format") == table.FORMAT:
        print(f"{path} is already format {table.FORMAT}")
        return 0
    new = legacy.from_format0(old, source="kernels/tuned/matmul.json as installed by tools/matmul_tune.py")
    assert not table.problems(new), table.problems(new)
    for dev, e in old["devices"].items():
        view = table.matmul_view(new["devices"][dev])
        assert table.rate_shape(e["shapes"]) == e["rate_shape"], dev
        device = dict(e["device"], name=dev)
        for m, n, k in [table.parse_mnk(s) for s in e["shapes"]] + PROBE:
            a, b = ops.choose(m, n, k, device, e), ops.choose(m, n, k, device, view)
            assert a == b, (dev, m, n, k, a, b)
    path.write_text(json.dumps(new, indent=1) + "\n")
    print(f"converted {path}: {', '.join(new['devices'])}; same choices for the tuned shapes and {len(PROBE)} others")
    return 0


if __name__ == "__main__":
    sys.exit(main())
