"""The child process that ncu profiles: ``python -m gpumemlab.ncu.child run CASES.json STATUS.json``.

It compiles all microkernels of a batch into one module for this GPU and launches each once (one block),
writing its progress to STATUS.json after every step so the parent can rerun the rest after a crash.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from .cases import microkernel_source

def _write_json(path: Path, data) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _load_kernels(runtime, cases: list[dict], status: dict) -> dict:
    names = [c["name"] for c in cases]
    try:
        return runtime.load_text(microkernel_source(cases), names)
    except Exception:  # find which case does not compile, keep the others
        kernels = {}
        for c in cases:
            try:
                kernels.update(runtime.load_text(microkernel_source([c]), [c["name"]]))
            except Exception as exc:
                status["errors"][c["name"]] = f"compile: {_one_line(exc)}"
        return kernels


def begin_status(runtime, spath: Path) -> dict:
    """The progress record a child keeps in STATUS.json, with this GPU's name and cc, written once."""
    info = runtime.device_info()
    status = dict(device=dict(name=info["name"], cc=list(info["cc"])), done=[], errors={}, fatal=None)
    _write_json(spath, status)
    return status


def child_main(cases_path: str, status_path: str) -> int:
    import cupy

    from ..gpu import runtime

    cases = json.loads(Path(cases_path).read_text())
    spath = Path(status_path)
    status = begin_status(runtime, spath)
    kernels = _load_kernels(runtime, cases, status)
    _write_json(spath, status)

    def launch(c):
        g = cupy.zeros(max(int(c["bytes"]), 256), dtype=cupy.uint8)
        out = cupy.zeros(len(c["offsets"]), dtype=cupy.float32)
        runtime.launch(kernels[c["name"]], (1, 1, 1), tuple(c["block"]), g, out, np.float32("nan"))

    return run_batch(runtime, spath, status, [c for c in cases if c["name"] in kernels], launch)


def run_batch(runtime, spath: Path, status: dict, items: list[dict], launch) -> int:
    """Launch each item (``launch(item)``, then synchronize) in order, the status file naming the one running; the
    first failure ends the batch (a broken context stops every later launch) and the parent reruns the rest."""
    for item in items:
        status["running"] = item["name"]
        _write_json(spath, status)
        try:
            launch(item)
            runtime.synchronize()
            status["done"].append(item["name"])
        except Exception as exc:  # noqa: BLE001 - reported as one line by the parent
            status["errors"][item["name"]] = f"launch: {_one_line(exc)}"
            status["fatal"] = item["name"]
            _write_json(spath, status)
            return 3
    status.pop("running", None)
    _write_json(spath, status)
    return 0


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 3 and argv[0] == "run":
        return child_main(argv[1], argv[2])
    print("usage: python -m gpumemlab.ncu.child run CASES.json STATUS.json  (started by ncu)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
