"""The hardware behind the seeds' numbers, so the report can print it next to this run's device.

A seed's figure (V100 copies at ~790 GB/s, an A100 with a 30 MB L2 set-aside) says as much about its GPU as about
the technique. :class:`SeedHardware` declares, for each seed that names or implies the GPU it measured on, the
sizes those numbers depend on; :data:`MEASURED_ON` maps an experiment to the hardware its seed claims were measured
on, with the problem size the seed states for it. A figure from the seed carries the seed's exact words
(``quote``; a test finds each in its seed file); a public specification of the named GPU that the seed does not
state is an ``outside`` fact with its source, kept apart as claims keep them (``_declare.seed`` / ``outside``).
Each figure's ``kind`` names a size of :data:`SIZES`, which also reads this run's value from results.json.

Seeds 000, 002 and 004 name no GPU behind their numbers, so no experiment maps to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

from ._declare import Source, outside, seed

MIB, KIB = 2**20, 2**10


@dataclass(frozen=True)
class Size:
    """A kind of hardware or problem size: how the report names it and reads this run's value.

    ``read(device, ceilings, records)``: this run's values from results.json (its ``device`` and ``ceilings``
    dicts, the experiment's records); empty when the run does not have it."""

    label: str
    unit: str
    spec: str  # format() spec of this run's value
    read: Callable[[dict, dict, list], list]


def _ceiling(*keys: str) -> Callable:
    return lambda device, ceilings, records: [ceilings[k]["value"] for k in keys if k in ceilings]


def _device(key: str, scale: int = 1) -> Callable:
    def read(device, ceilings, records):
        if key not in device:
            return []
        return [device[key] if scale == 1 else device[key] / scale]  # counts stay ints (format spec "d")
    return read


def _param(key: str) -> Callable:
    return lambda device, ceilings, records: sorted({r.params[key] for r in records if key in r.params})


SIZES = {
    "dram_peak": Size("DRAM peak", "GB/s", ",.0f", _ceiling("dram_theoretical_gbps")),
    "device_copy": Size("device copy", "GB/s", ",.0f", _ceiling("copy_gbps")),
    "sm_count": Size("SMs", "", "d", _device("sm_count")),
    "l2": Size("L2", "MiB", "g", _device("l2_bytes", MIB)),
    "l2_set_aside": Size("L2 set-aside", "MiB", "g", _device("persisting_l2_max_bytes", MIB)),
    "shared_per_sm": Size("shared memory per SM", "KiB", "g", _device("shared_per_sm_bytes", KIB)),
    "registers_per_sm": Size("registers per SM", "", ",d", _device("registers_per_sm")),
    "link_peak": Size("host link peak", "GB/s", ",.1f", _ceiling("pcie_theoretical_gbps")),
    "page_locked_copy": Size("page-locked host-device copy", "GB/s", ",.1f", _ceiling("h2d_best_gbps", "d2h_best_gbps")),
    "floats": Size("problem", "floats", ",d", _param("n")),
    "float3s": Size("problem", "float3 structures", ",d", _param("n")),
    "persisting_region": Size("persisting region", "MiB", "g", _param("region_mib")),
    "inner_dim": Size("w (A's columns)", "", "d", _param("k")),
}


@dataclass(frozen=True)
class Figure:
    """One size as its source states it: ``text`` ("898 GB/s") of kind ``kind`` (a key of SIZES).

    ``quote``: for a seed figure, the seed's own words it is read from; empty for an outside fact."""

    kind: str
    text: str
    source: Source
    quote: str = ""

    def __post_init__(self):
        if self.kind not in SIZES:
            raise ValueError(f"figure {self.text!r}: unknown kind {self.kind!r}")
        if (self.source.seed is not None) != bool(self.quote):
            raise ValueError(f"figure {self.text!r}: a seed figure needs the seed's words, an outside fact none")


@dataclass(frozen=True)
class SeedHardware:
    """The GPU a seed measured on: ``gpu`` as the report prints it, ``named`` where the seed names (or implies)
    it and ``quote`` the words that do, and the sizes the seed's numbers depend on."""

    gpu: str
    named: Source
    quote: str
    figures: tuple[Figure, ...]


@dataclass(frozen=True)
class MeasuredOn:
    """An experiment's seed hardware plus the problem size the seed states for that measurement."""

    hardware: SeedHardware
    problem: tuple[Figure, ...] = ()

    @property
    def figures(self) -> tuple[Figure, ...]:
        return self.hardware.figures + self.problem


_V100_PAPER = outside("NVIDIA, 'NVIDIA Tesla V100 GPU Architecture' whitepaper (2017)")
_A100_PAPER = outside("NVIDIA, 'NVIDIA A100 Tensor Core GPU Architecture' whitepaper (2020), A100 40GB")
_PCIE_SPEC = outside("PCI-SIG, PCI Express Base Specification 1.0a and 2.0 (2.5 and 5 GT/s per lane, 8b/10b, "
                     "one direction)")
_BP_TRANSFERS = seed("003", "Best Practices 9.1")
_BP_OFFSET = seed("003", "Best Practices 9.2.1.3, offsetCopy")
_BP_WINDOW = seed("003", "Best Practices 9.2.2.2, sliding-window benchmark")
_BP_MATMUL = seed("003", "Best Practices 9.2.3.2")
_SLIDE_TIMING = seed("001", "slide 'Coalescing: Timing Results'")
_SLIDE_REGISTERS = seed("001", "slide 'Occupancy and Register Pressure'")
_SLIDE_PINNED = seed("001", "slide 'Page-Locked System Memory'")

V100 = SeedHardware(
    "NVIDIA Tesla V100", _BP_OFFSET, "以 NVIDIA Tesla V100 为例",
    (Figure("dram_peak", "898 GB/s", _BP_TRANSFERS, "NVIDIA Tesla V100 为 898 GB/s"),
     Figure("device_copy", "~790 GB/s", _BP_OFFSET, "带宽约为 790GB/s"),
     Figure("sm_count", "80", _V100_PAPER),
     Figure("l2", "6 MB", _V100_PAPER)))

A100 = SeedHardware(
    "NVIDIA Tesla A100", _BP_WINDOW, "NVIDIA Tesla A100 GPU 的 L2 缓存总容量是 40 MB",
    (Figure("l2", "40 MB", _BP_WINDOW, "NVIDIA Tesla A100 GPU 的 L2 缓存总容量是 40 MB"),
     Figure("l2_set_aside", "30 MB", _BP_WINDOW, "把 L2 缓存中的 30 MB 预留给持久化访问"),
     Figure("dram_peak", "1,555 GB/s", _A100_PAPER),
     Figure("sm_count", "108", _A100_PAPER)))

# The slides name no GPU for their timings; a permuted access costing 10x (3,494 vs 356 us) follows the half-warp
# rules of compute capability 1.0/1.1, which the slides' "10-series" (1.2+) relaxed.
CC1X = SeedHardware(
    "a pre-10-series GPU of compute capability 1.0/1.1, implied but not named",
    seed("001", "slide 'Coalescing (Compute 1.2+ GPUs)'"),
    "Much improved coalescing capabilities in 10-series architecture",
    (Figure("shared_per_sm", "16 KB", _SLIDE_REGISTERS, "**16KB** per multiprocessor"),
     Figure("registers_per_sm", "8192 or 16384", _SLIDE_REGISTERS, "**8192** or **16384** per multiprocessor")))

PCIE_GEN1_GEN2 = SeedHardware(
    "PCIe x16 Gen1 and Gen2 hosts, GPU not named", _SLIDE_PINNED, "3.2 GB/s on PCI-e x16 Gen1",
    (Figure("page_locked_copy", "3.2 GB/s on Gen1", _SLIDE_PINNED, "3.2 GB/s on PCI-e x16 Gen1"),
     Figure("page_locked_copy", "5.2 GB/s on Gen2", _SLIDE_PINNED, "5.2 GB/s on PCI-e x16 Gen2"),
     Figure("link_peak", "4 GB/s on Gen1, 8 GB/s on Gen2", _PCIE_SPEC)))

HARDWARE = (V100, A100, CC1X, PCIE_GEN1_GEN2)

MEASURED_ON = {
    "offset_copy": MeasuredOn(V100),
    "stride_copy": MeasuredOn(V100),
    "matmul_shared_ab": MeasuredOn(V100, (Figure("inner_dim", "32", _BP_MATMUL, "$w$的值是 32"),)),
    "l2_persist": MeasuredOn(A100, (Figure("persisting_region", "10-60 MB", _BP_WINDOW, "从 10 MB 调整到 60 MB"),)),
    "coalescing_patterns": MeasuredOn(CC1X, (Figure("floats", "3M floats (12MB)", _SLIDE_TIMING,
                                                    "3M floats (12MB)"),)),
    "aos_soa": MeasuredOn(CC1X, (Figure("float3s", "4K blocks x 256 threads reading float3s", _SLIDE_TIMING,
                                        "4K blocks x 256 threads reading float3s"),)),
    "launch_config": MeasuredOn(CC1X),
    "transfer_bandwidth": MeasuredOn(PCIE_GEN1_GEN2),
    "stream_map": MeasuredOn(PCIE_GEN1_GEN2),
}
