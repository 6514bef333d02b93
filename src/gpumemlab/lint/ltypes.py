"""C types as lint needs them: integer types with C's conversions (model.expr), floats, records, pointers, arrays."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import expr
from ..model.types import TYPES, ElementType


@dataclass(frozen=True)
class Int:
    ctype: expr.CType
    boolean: bool = False

    @property
    def size(self) -> int:
        return 1 if self.boolean else self.ctype.bits // 8

    @property
    def name(self) -> str:
        return "bool" if self.boolean else self.ctype.name


@dataclass(frozen=True)
class Float:
    size: int

    @property
    def name(self) -> str:
        return {2: "half", 4: "float", 8: "double"}.get(self.size, "float")


@dataclass(frozen=True)
class Record:
    name: str
    size: int
    align: int
    fields: tuple = field(default=())  # (name, byte offset, type)

    def field(self, name: str):
        for f in self.fields:
            if f[0] == name:
                return f[1], f[2]
        return None


@dataclass(frozen=True)
class Pointer:
    to: object

    size = 8
    name = "pointer"


@dataclass(frozen=True)
class Array:
    of: object
    n: int | None  # None: unsized (extern __shared__ T s[])

    @property
    def size(self) -> int:
        return (self.n or 0) * self.of.size

    @property
    def name(self) -> str:
        return f"{self.of.name}[{self.n if self.n is not None else ''}]"


@dataclass(frozen=True)
class Opaque:
    reason: str
    size = 0
    name = "?"


_INT_WORDS = {"bool": None, "char": ["char"], "signed char": ["signed", "char"], "unsigned char": ["unsigned", "char"],
              "short": ["short"], "unsigned short": ["unsigned", "short"], "int": ["int"], "unsigned int": ["unsigned"],
              "unsigned": ["unsigned"], "long": ["long"], "unsigned long": ["unsigned", "long"],
              "long long": ["long", "long"], "unsigned long long": ["unsigned", "long", "long"],
              "size_t": ["size_t"], "ptrdiff_t": ["ptrdiff_t"], "int32_t": ["int32_t"], "uint32_t": ["uint32_t"],
              "int64_t": ["int64_t"], "uint64_t": ["uint64_t"], "uint": ["unsigned"], "ushort": ["unsigned", "short"],
              "uchar": ["unsigned", "char"], "ulong": ["unsigned", "long"]}
_NARROW = {"char": expr.CType("char", 8, True), "signed char": expr.CType("signed char", 8, True),
           "unsigned char": expr.CType("unsigned char", 8, False), "short": expr.CType("short", 16, True),
           "unsigned short": expr.CType("unsigned short", 16, False)}
BOOL = Int(expr.CType("bool", 8, False), boolean=True)


def int_type(words: list[str]) -> Int | None:
    t = expr.cast_type(words)
    return Int(t) if t is not None else None


def vector_record(e: ElementType) -> Record:
    scalar = by_name(e.scalar)
    fields = tuple((m, i * e.scalar_bytes, scalar) for i, m in enumerate("xyzw"[: e.components]))
    return Record(e.name, e.size, e.align, fields)


def by_name(name: str):
    """A type from its spelling (qualifiers dropped); None if it is not a scalar or CUDA vector type."""
    words = [w for w in name.replace("*", " * ").split() if w not in ("const", "volatile", "struct", "__restrict",
                                                                       "__restrict__", "restrict")]
    key = " ".join(words)
    if key == "bool":
        return BOOL
    if key in ("float",):
        return Float(4)
    if key == "double":
        return Float(8)
    if key in ("half", "__half", "__nv_bfloat16"):
        return Float(2)
    if key in _INT_WORDS:
        return int_type(_INT_WORDS[key])
    if key in TYPES and TYPES[key].vector:
        return vector_record(TYPES[key])
    return None


def element_type(t) -> ElementType:
    """The model's ElementType naming a load of type ``t`` (name and size; the loads come from :func:`loads`)."""
    if isinstance(t, Record) and t.name in TYPES:
        return TYPES[t.name]
    scalars = [f[2] for f in t.fields] if isinstance(t, Record) else [t]
    s = scalars[0].size if scalars and all(isinstance(x, (Int, Float)) and x.size == scalars[0].size
                                            for x in scalars) else 1
    scalar = {1: "char", 2: "short", 4: "float", 8: "double"}.get(s, "char")
    return ElementType(t.name, scalar, s, max(1, t.size // s), vector=False)


def loads(t) -> list[tuple[int, int]] | None:
    """(byte offset, width) of each load instruction the compiler emits for a whole value of type ``t``.

    A value aligned to its size of 1-16 bytes is one load (float4, or a struct declared __align__(16)); other
    records are loaded field by field (float3, struct {float x, y, z;}); None for what lint cannot split.
    """
    if isinstance(t, (Int, Float, Pointer)):
        return [(0, t.size)]
    if isinstance(t, Record):
        if t.size in (1, 2, 4, 8, 16) and t.align >= t.size:
            return [(0, t.size)]
        out = []
        for _, off, ft in t.fields:
            sub = loads(ft)
            if sub is None:
                return None
            out += [(off + o, w) for o, w in sub]
        return out or None
    if isinstance(t, Array) and t.n:
        sub = loads(t.of)
        return None if sub is None else [(k * t.of.size + o, w) for k in range(t.n) for o, w in sub]
    return None
