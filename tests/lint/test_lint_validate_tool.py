"""tools/lint_validate_all.py's choices that need no GPU: which launch a 2-D tile kernel's job gets."""

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "lint_validate_all.py"
_spec = importlib.util.spec_from_file_location("lint_validate_all", TOOL)
tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tool)


def test_a_tile_kernel_gets_tile_by_block_rows():
    text = "__global__ void t(float *o) { o[threadIdx.y * TILE + threadIdx.x] = 0; }"
    assert tool.tile_block(text, {"TILE": "32", "BLOCK_ROWS": "8"}) == [32, 8]
    assert tool.tile_block(text, {"TILE": "16"}) == [16, 16]


def test_no_tile_job_past_1024_threads_the_launch_bounds_or_for_a_1d_kernel():
    text = "__global__ void t(float *o) { o[threadIdx.y * TILE + threadIdx.x] = 0; }"
    assert tool.tile_block(text, {"TILE": "64"}) is None  # 64 x 64 = 4096 threads
    bounded = "__global__ void __launch_bounds__(256, MINB) t(float *o) { o[threadIdx.y] = 0; }"
    assert tool.tile_block(bounded, {"TILE": "32"}) is None
    assert tool.tile_block(bounded, {"TILE": "32", "BLOCK_ROWS": "8"}) == [32, 8]
    one_d = "__global__ void __launch_bounds__(256) v(float *o) { o[threadIdx.x] = 0; }"
    assert tool.tile_block(one_d, {"TILE": "64"}) is None
