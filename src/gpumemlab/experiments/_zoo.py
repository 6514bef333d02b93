"""The matmul shape zoo: (group, M, N, K) triples that users meet, square to degenerate.

Data only (importable without a GPU): the ``matmul_shapes`` experiment times the library call on each, and
``tools/matmul_zoo.py`` sweeps the register-blocked configurations over them for the chooser.
"""

from __future__ import annotations

SQUARE = [(s, s, s) for s in (128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 16384)]
ODD = [(1000, 1000, 1000), (1023, 1025, 1027), (777, 1001, 513), (2047, 2047, 2047), (3001, 2999, 3000),
       (4097, 4095, 4093)]
# N or K not a multiple of 4: the scalar-load kernels, whose best tiles differ from the float4 ones; swept and
# installed (so they take their own winners), while ODD stays held out to judge the nearest-shape rule
UNALIGNED = [(601, 803, 1201), (999, 1001, 1003), (1537, 1531, 1533), (2501, 2503, 2499), (3501, 3499, 3497)]
TALL_SKINNY = [(8192, 64, 4096), (16384, 128, 1024), (65536, 32, 512), (32768, 256, 256)]
SHORT_WIDE = [(64, 4096, 4096), (128, 8192, 1024), (32, 16384, 2048), (256, 32768, 256), (16, 4096, 4096),
              (8, 8192, 8192)]
SMALL_K = [(4096, 4096, 16), (4096, 4096, 64), (8192, 8192, 32), (2048, 2048, 128)]
LARGE_K = [(256, 256, 8192), (128, 128, 32768), (64, 64, 65536), (512, 512, 16384), (256, 512, 65536)]
ROW = [(1, 4096, 4096), (1, 16384, 16384), (1, 1000, 3000), (1, 8192, 1024)]       # M = 1: row vector x B
COLUMN = [(4096, 1, 4096), (16384, 1, 16384), (3000, 1, 1000), (1024, 1, 8192)]   # N = 1: A x column vector

GROUPS = dict(square=SQUARE, odd=ODD, unaligned=UNALIGNED, tall_skinny=TALL_SKINNY, short_wide=SHORT_WIDE, small_k=SMALL_K,
              large_k=LARGE_K, m1=ROW, n1=COLUMN)
ZOO = [(group, m, n, k) for group, shapes in GROUPS.items() for m, n, k in shapes]


def shape_name(m: int, n: int, k: int) -> str:
    return f"{m}x{n}x{k}"
