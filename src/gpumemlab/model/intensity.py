"""Arithmetic intensity (OP/B of global memory) of the matmul kernels, and the roofline.

Per output element a matmul of width W does 2W flops. The naive kernel loads 2W floats; a tiled
kernel (tile T) loads each input tile once per block, W/T floats of M and of N per element; a
coarsened kernel (factor C) also reuses each M tile for C output tiles, so M costs W/(T*C):

    OP/B = 2 / (4 * (1/(T*C) + 1/T))    naive: T=C=1 -> 0.25; tiled T=32 -> 8.0; T=32, C=4 -> 12.8
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from ..errors import UsageError
from . import args
from .cc import cc_str, parse_cc

FLOAT_BYTES = 4

# kernel -> (description, uses tile, uses coarsening)
KERNELS: dict[str, tuple[str, bool, bool]] = {
    "naive": ("matmul, one output per thread, no reuse (seed 000 exercise a)", False, False),
    "tiled": ("matmul with shared-memory tiles TxT (seed 000 exercise b)", True, False),
    "corner_turning": ("tiled matmul that loads a column-major N coalesced (same traffic as tiled)", True, False),
    "coarsened": ("tiled matmul, each block computes C adjacent output tiles (seed 000 exercise c)", True, True),
}
DEFAULT_COARSEN = 4


def kernel_name(name: str) -> str:
    key = args.text(name, "kernel").strip().lower().replace("-", "_")
    key = re.sub(r"^(matmul_)|(_matmul)$", "", key)
    if key not in KERNELS:
        raise UsageError(f"unknown kernel {name!r} for intensity (known: {', '.join(KERNELS)})")
    return key


def matmul_intensity(kernel: str, tile: int = 32, coarsen: int | None = None) -> float:
    """Global-memory OP/B of a built-in matmul kernel (FP32): 0.25, ``tile``/4, or with coarsening."""
    key = kernel_name(kernel)
    _, tiled, coarsened = KERNELS[key]
    _check_tile(tile, coarsen)
    if coarsen not in (None, 1) and not coarsened:
        raise UsageError(f"{key} has no coarsening; use 'coarsened' with --coarsen")
    t = tile if tiled else 1
    c = (coarsen or DEFAULT_COARSEN) if coarsened else 1
    return 2.0 / (FLOAT_BYTES * (1.0 / (t * c) + 1.0 / t))


def _check_tile(tile, coarsen) -> None:
    args.integer(tile, "tile"), args.integer(coarsen, "coarsen", optional=True)
    if tile < 1 or (coarsen is not None and coarsen < 1):
        raise UsageError(f"tile and coarsening factor must be >= 1, got tile={tile}, coarsen={coarsen}")


def reuse_intensity(reuse_m: int, reuse_n: int) -> float:
    """Global-memory OP/B (FP32) of a kernel whose blocks compute ``reuse_m`` x ``reuse_n`` outputs from shared operands.

    Per k step such a block loads reuse_m floats of A and reuse_n of B and does 2 * reuse_m * reuse_n flops:
    OP/B = 2 / (4 * (1/reuse_m + 1/reuse_n)). Naive is 1 x 1 (0.25), tiled T is T x T (T/4), tiled T with
    coarsening C is T x T*C: the formula of :func:`matmul_intensity`, for any block tile (register blocking).
    """
    args.integer(reuse_m, "reuse_m"), args.integer(reuse_n, "reuse_n")
    if reuse_m < 1 or reuse_n < 1:
        raise UsageError(f"reuse factors must be >= 1, got {reuse_m} x {reuse_n}")
    return 2.0 / (FLOAT_BYTES * (1.0 / reuse_m + 1.0 / reuse_n))


@dataclass(frozen=True)
class Device:
    """Datasheet FP32 (non-tensor) peak and DRAM bandwidth, and the compute capability."""

    name: str
    peak_gflops: float
    bandwidth_gbs: float
    cc: str

    def __post_init__(self):
        object.__setattr__(self, "cc", cc_str(parse_cc(self.cc)))  # one of SUPPORTED_CC


# (pattern on the normalized name, device); the first match wins, so specific names come first.
DEVICES: tuple[tuple[str, Device], ...] = (
    (r"h100nvl", Device("H100 NVL", 60_000, 3_900, "9.0")),
    (r"h100.*pcie", Device("H100 PCIe", 51_000, 2_000, "9.0")),
    (r"h100", Device("H100 SXM", 67_000, 3_350, "9.0")),
    (r"h200", Device("H200 SXM", 67_000, 4_800, "9.0")),
    (r"a100.*40", Device("A100 40GB", 19_500, 1_555, "8.0")),
    (r"a100.*pcie", Device("A100 80GB PCIe", 19_500, 1_935, "8.0")),
    (r"a100", Device("A100 SXM 80GB", 19_500, 2_039, "8.0")),
    (r"v100.*pcie", Device("V100 PCIe", 14_000, 900, "7.0")),
    (r"v100", Device("V100 SXM2", 15_700, 900, "7.0")),
    (r"5090", Device("RTX 5090", 104_800, 1_792, "12.0")),
    (r"4090", Device("RTX 4090", 82_600, 1_008, "8.9")),
    (r"3090", Device("RTX 3090", 35_600, 936, "8.6")),
    (r"l40s", Device("L40S", 91_600, 864, "8.9")),
    (r"^a10$", Device("A10", 31_200, 600, "8.6")),
    (r"^l4$", Device("L4", 30_300, 300, "8.9")),
    (r"^t4$", Device("T4", 8_100, 320, "7.5")),
)


def _normalize(name: str) -> str:
    n = name.lower()
    for word in ("nvidia", "tesla", "geforce"):
        n = n.replace(word, "")
    return re.sub(r"[^a-z0-9]", "", n)


def find_device(name: str) -> Device | None:
    """The table entry for a user's or the driver's device name (None if not in the table)."""
    key = _normalize(args.text(name, "device name"))
    for pattern, dev in DEVICES:
        if key and re.search(pattern, key):
            return dev
    return None


def device(name: str) -> Device:
    dev = find_device(name)
    if dev is None:
        known = ", ".join(d.name for _, d in DEVICES)
        raise UsageError(f"unknown device {name!r} (known: {known}); or give --peak-gflops and --bandwidth-gbs")
    return dev


def roofline(op_per_byte: float, peak_gflops: float, bandwidth_gbs: float) -> dict:
    """Ridge point (OP/B where memory and compute take equal time) and the attainable GFLOP/s."""
    args.number(op_per_byte, "op_per_byte")
    args.number(peak_gflops, "peak_gflops")
    args.number(bandwidth_gbs, "bandwidth_gbs")
    ridge = peak_gflops / bandwidth_gbs
    bound = min(peak_gflops, op_per_byte * bandwidth_gbs)
    return dict(peak_gflops=peak_gflops, bandwidth_gbs=bandwidth_gbs, ridge_op_per_byte=round(ridge, 3),
                bound_gflops=round(bound, 1), bound="memory" if op_per_byte < ridge else "compute",
                pct_of_peak=round(100.0 * bound / peak_gflops, 2))


def intensity(kernel: str, tile: int = 32, coarsen: int | None = None, *, device_name: str | None = None,
              peak_gflops: float | None = None, bandwidth_gbs: float | None = None) -> dict:
    """OP/B of ``kernel`` plus, when a device or its ceilings are known, the roofline bound."""
    key = kernel_name(kernel)
    _, tiled, coarsened = KERNELS[key]
    args.text(device_name, "device_name", optional=True)
    opb = matmul_intensity(key, tile, coarsen)
    out = dict(kernel=key, tile=tile if tiled else None,
               coarsen=(coarsen or DEFAULT_COARSEN) if coarsened else None, op_per_byte=round(opb, 4),
               device=None)
    if (peak_gflops is None) != (bandwidth_gbs is None):
        raise UsageError("give both --peak-gflops and --bandwidth-gbs, or --device")
    if peak_gflops is not None:
        out["device"] = dict(name=device_name or "custom", peak_gflops=peak_gflops, bandwidth_gbs=bandwidth_gbs)
    elif device_name is not None:
        out["device"] = asdict(device(device_name))
    if out["device"]:
        out.update(roofline(opb, out["device"]["peak_gflops"], out["device"]["bandwidth_gbs"]))
    return out
