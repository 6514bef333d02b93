"""Kernel catalog: every kernel instantiation of the package, declared as data.

Each family is one ``<family>.cu`` file plus one ``<family>.py`` module beside it that lists the
instantiations (``KERNELS``) the experiments and the library use. ``gpumemlab kernels`` compiles
all of them, with or without a GPU.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..errors import UsageError

KERNEL_DIR = Path(__file__).resolve().parent

# NumPy dtype name -> the C type the families' templates are instantiated with (the one such table)
CTYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long"}


@dataclass(frozen=True)
class KernelSpec:
    """One kernel instantiation.

    ``source``: file name in this package (``copy.cu``). ``name``: the NVRTC name expression, a
    template instantiation (``copy_vec<float4, 4>``) or an ``extern "C"`` symbol. ``options``:
    extra ``ProgramOptions`` as ``(key, value)`` pairs, e.g. ``(("max_register_count", 32),)``.
    ``defines``: ``-D`` macros as ``(name, value)`` pairs. ``spills_expected``: a deliberate
    register-pressure demonstration (``max_register_count``), exempt from the no-spill check.
    ``min_sm``: the oldest arch it builds for (80: uses sm_80+ PTX); older archs skip it.
    """

    source: str
    name: str
    options: tuple[tuple[str, object], ...] = field(default=())
    defines: tuple[tuple[str, str], ...] = field(default=())
    spills_expected: bool = field(default=False, compare=False)
    min_sm: int = field(default=0, compare=False)

    @property
    def label(self) -> str:
        extra = [f"{k}={v}" for k, v in self.options] + [f"-D{k}={v}" for k, v in self.defines]
        return self.name + (f" [{' '.join(extra)}]" if extra else "")

    def with_options(self, **options) -> "KernelSpec":
        merged = dict(self.options)
        merged.update(options)
        return KernelSpec(self.source, self.name, tuple(sorted(merged.items())), self.defines, self.spills_expected,
                          self.min_sm)


LOCAL_INCLUDE = re.compile(r'^#include "([A-Za-z0-9_]+\.cuh)"[ \t]*$', re.M)


@cache
def source_text(source: str) -> str:
    """A family's CUDA source as NVRTC compiles it: each ``#include "NAME.cuh"`` of this folder spelled out in place,
    with ``#line`` marks so that compiler messages and line info keep each file's own line numbers (and the cubin
    cache key covers the headers). UsageError naming the files for a name the package does not have."""
    known = sorted(p.name for p in KERNEL_DIR.iterdir() if p.suffix in (".cu", ".cuh"))
    if source not in known:
        raise UsageError(f"unknown kernel source {source!r} (the package has {', '.join(known)})")
    text = (KERNEL_DIR / source).read_text(encoding="utf-8")

    def inline(m: re.Match) -> str:
        after = text.count("\n", 0, m.end()) + 2  # the line after the include, 1-based
        return f'#line 1 "{m.group(1)}"\n{source_text(m.group(1)).rstrip()}\n#line {after} "{source}"'

    return LOCAL_INCLUDE.sub(inline, text)


def family_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(KERNEL_DIR)]) if not m.name.startswith("_"))


def all_specs() -> list[KernelSpec]:
    """Every declared instantiation of every family, in family order, without duplicates."""
    seen: dict[KernelSpec, None] = {}
    for mod in family_modules():
        for spec in importlib.import_module(f"{__name__}.{mod}").KERNELS:
            seen.setdefault(spec, None)
    return list(seen)


def blocks_for(n: int, block: int) -> int:
    """Blocks of ``block`` threads (or elements per block) that cover ``n``: at least one."""
    return max(1, math.ceil(n / block))
