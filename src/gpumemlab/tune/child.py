"""Child process of the tuning engine: check kernels of one family on its small odd cases.

    python -m gpumemlab.tune.child FAMILY KEY...

Prints one JSON line, {key: null if every case was right, else the error}. A fault that breaks the CUDA
context ends the process (non-zero exit); the engine then checks each key in a process of its own.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    from ..gpu import runtime
    from .families import get

    family, keys = get(argv[0]), argv[1:]
    device = runtime.device_info()
    result = {}
    with runtime.work_stream():
        for key in keys:
            try:
                family.check(key, device)
                result[key] = None
            except Exception as exc:  # a wrong kernel is reported and the others go on
                if "CUDA_ERROR" in str(exc) or "illegal" in str(exc).lower():
                    raise  # the context is gone: let the engine isolate each key
                result[key] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
