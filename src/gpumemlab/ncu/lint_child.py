"""The child process ncu profiles for ``gpumemlab lint --validate``: ``python -m gpumemlab.ncu.lint_child PLAN STATUS``.

It compiles the user's file with line information (NVRTC, this GPU's arch), then launches each kernel of the plan
once with synthesized arguments: zero-filled buffers sized from lint's own addresses, integers from ``--let`` (or
the values lint assumed), floats 1.0. Progress goes to STATUS after every step so the parent can tell which kernel
broke the context.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from .child import _one_line, _write_json, begin_status, run_batch

SCALARS = {"int": np.int32, "unsigned int": np.uint32, "long": np.int64, "unsigned long": np.uint64,
           "short": np.int32, "unsigned short": np.uint32, "char": np.int32, "signed char": np.int32,
           "unsigned char": np.uint32, "bool": np.int32, "float": np.float32, "double": np.float64}


def arguments(cupy, spec: list[dict], keep: list):
    """Kernel arguments for ``spec`` (see ncu.source.plan); buffers are kept alive in ``keep``."""
    out = []
    for a in spec:
        if a["kind"] == "pointer":
            buf = cupy.zeros(int(a["bytes"]), dtype=cupy.uint8)
            keep.append(buf)
            out.append(np.uint64(int(buf.data.ptr) + int(a["front"])))
        else:
            out.append(SCALARS.get(a["type"], np.int32)(a["value"]))
    return out


def _options(plan: dict) -> tuple:
    """NVRTC options of the plan: the include folders (the file's own, the CUDA toolkit's) where it has any."""
    return (("include_path", plan["include_path"]),) if plan.get("include_path") else ()


def _save_module(plan: dict, names: list[str], arch: str) -> None:
    """The cubin just loaded (the compile cache returns it again) and its names, for the parent's line map."""
    from ..gpu.compile import compile_text

    mod = compile_text(plan["text"], names, arch, _options(plan))
    out = Path(plan["module_dir"])
    (out / "module.cubin").write_bytes(mod.cubin)
    (out / "module.json").write_text(json.dumps(mod.symbol_mapping))


def child_main(plan_path: str, status_path: str) -> int:
    import cupy

    from ..gpu import runtime

    plan = json.loads(Path(plan_path).read_text())
    spath = Path(status_path)
    status = begin_status(runtime, spath)
    names = [k["name"] for k in plan["kernels"]]
    try:
        kernels = runtime.load_text(plan["text"], names, _options(plan))
        _save_module(plan, names, runtime.device_info()["arch"])
    except Exception as exc:  # noqa: BLE001 - NVRTC's log, reported as one line by the parent
        status["fatal"] = f"compile: {_one_line(exc)}"
        _write_json(spath, status)
        return 3
    def launch(k):
        keep: list = []  # the argument buffers live until the launch has finished
        if k["shmem"] > runtime.DEFAULT_DYNAMIC_SMEM:
            runtime.set_max_dynamic_shared(kernels[k["name"]], k["shmem"])
        runtime.launch(kernels[k["name"]], tuple(k["grid"]), tuple(k["block"]), *arguments(cupy, k["args"], keep),
                       shmem=k["shmem"])
        runtime.synchronize()

    return run_batch(runtime, spath, status, plan["kernels"], launch)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2:
        return child_main(argv[0], argv[1])
    print("usage: python -m gpumemlab.ncu.lint_child PLAN.json STATUS.json  (started by ncu)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
