"""The model runs without the GPU stack: importing it (and running the analyzer CLI) loads no CUDA module."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_model_and_its_cli_import_nothing_from_the_gpu_stack():
    code = textwrap.dedent("""
        import sys
        import gpumemlab.model, gpumemlab.cli.analyzer
        from gpumemlab.cli import main
        assert main(["analyze", "a[threadIdx.x]", "--decl", "float a[]", "--json"]) == 0
        assert main(["occupancy", "--threads", "128", "--regs", "32", "--json"]) == 0
        assert main(["intensity", "tiled", "--device", "h100", "--json"]) == 0
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("cuda", "cupy") or m.startswith("gpumemlab.gpu"))
        print("LOADED", bad)
        sys.exit(1 if bad else 0)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
