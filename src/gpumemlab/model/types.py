"""Element types and how the compiler loads them.

One rule covers every CUDA vector type: a type whose size is 1, 2, 4, 8 or 16 bytes and that
has 1, 2 or 4 components is aligned to its size and loaded with one instruction; a
3-component type (float3: 12 bytes, aligned to 4) is aligned like its component, so the
compiler splits it into one load per component (three 4-byte loads).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError

# C scalar spellings -> bytes (LP64, as nvcc on Linux).
SCALARS: dict[str, int] = {
    "char": 1, "signed char": 1, "unsigned char": 1,
    "short": 2, "unsigned short": 2,
    "int": 4, "unsigned int": 4, "unsigned": 4, "float": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8, "double": 8,
}

# Vector family prefix -> component type, and the component counts CUDA defines for it.
_VECTOR_FAMILIES: dict[str, tuple[str, tuple[int, ...]]] = {
    "char": ("char", (1, 2, 3, 4)), "uchar": ("unsigned char", (1, 2, 3, 4)),
    "short": ("short", (1, 2, 3, 4)), "ushort": ("unsigned short", (1, 2, 3, 4)),
    "int": ("int", (1, 2, 3, 4)), "uint": ("unsigned int", (1, 2, 3, 4)),
    "float": ("float", (1, 2, 3, 4)),
    "double": ("double", (1, 2, 3)), "longlong": ("long long", (1, 2, 3)),
    "ulonglong": ("unsigned long long", (1, 2, 3)),
}

MEMBERS = ("x", "y", "z", "w")


@dataclass(frozen=True)
class ElementType:
    """An array element type: ``name`` as written in C, made of ``components`` scalars."""

    name: str
    scalar: str
    scalar_bytes: int
    components: int = 1
    vector: bool = False  # has .x/.y/... members (float1 does, float does not)

    @property
    def size(self) -> int:
        return self.scalar_bytes * self.components

    @property
    def align(self) -> int:
        if self.components in (1, 2, 4) and self.size <= 16:
            return self.size
        return self.scalar_bytes

    @property
    def load_bytes(self) -> int:
        """Width of each load instruction the compiler emits for a whole element."""
        return self.align

    @property
    def loads(self) -> int:
        """Number of load instructions for a whole element (float3: 3)."""
        return self.size // self.load_bytes

    def member(self, name: str) -> tuple[int, "ElementType"]:
        """(byte offset, type) of member ``.x``/``.y``/``.z``/``.w``."""
        if not self.vector:
            raise UsageError(f"{self.name} has no member .{name}: only vector types (float3, int2, ...) do")
        idx = MEMBERS.index(name) if name in MEMBERS else -1
        if not 0 <= idx < self.components:
            have = ", ".join("." + m for m in MEMBERS[: self.components])
            raise UsageError(f"{self.name} has no member .{name} (it has {have})")
        return idx * self.scalar_bytes, lookup(self.scalar)


def _build_table() -> dict[str, ElementType]:
    table = {name: ElementType(name, name, size) for name, size in SCALARS.items()}
    for prefix, (scalar, counts) in _VECTOR_FAMILIES.items():
        for n in counts:
            table[f"{prefix}{n}"] = ElementType(f"{prefix}{n}", scalar, SCALARS[scalar], n, vector=True)
    return table


TYPES: dict[str, ElementType] = _build_table()

# The types most kernels use; error messages list them first.
COMMON = ("char", "short", "int", "float", "double", "float2", "float3", "float4", "int2", "int4", "double2")


def lookup(name: str) -> ElementType:
    if not isinstance(name, str):
        raise UsageError(f"element type must be a string, got {type(name).__name__} {name!r:.40}")
    key = " ".join(name.split())
    if key in TYPES:
        return TYPES[key]
    raise UsageError(f"unknown element type {name!r} (known: {', '.join(COMMON)}, other CUDA vector types "
                     "and unsigned variants)")
