"""Helpers for the analyzer tests (CPU only): ``run_cli`` lives in the top-level conftest."""

from __future__ import annotations

import os
import sys

# mutmut wraps every function in a trampoline (3 frames per call), so the parser's nesting limit,
# sized for Python's default stack, needs a deeper one under tools/mutation/run.sh only.
if os.environ.get("GPUMEMLAB_MUTATION"):
    sys.setrecursionlimit(20000)
