"""Element types, how the compiler splits them into loads, and C declarations."""

from __future__ import annotations

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model.access import parse_decl
from gpumemlab.model.types import lookup


@pytest.mark.parametrize("name, size, load_bytes, loads", [
    ("char", 1, 1, 1), ("short", 2, 2, 1), ("int", 4, 4, 1), ("float", 4, 4, 1), ("double", 8, 8, 1),
    ("float2", 8, 8, 1), ("int2", 8, 8, 1), ("float3", 12, 4, 3), ("float4", 16, 16, 1), ("int4", 16, 16, 1),
    ("double2", 16, 16, 1), ("double3", 24, 8, 3), ("char3", 3, 1, 3), ("char4", 4, 4, 1), ("short2", 4, 4, 1),
    ("unsigned int", 4, 4, 1), ("unsigned  char", 1, 1, 1), ("long long", 8, 8, 1),
])
def test_sizes_and_the_loads_the_compiler_emits(name, size, load_bytes, loads):
    t = lookup(name)
    assert (t.size, t.load_bytes, t.loads) == (size, load_bytes, loads)


def test_members_have_offsets_and_the_component_type():
    off, t = lookup("float4").member("w")
    assert (off, t.name, t.size) == (12, "float", 4)
    assert lookup("double2").member("y")[0] == 8
    with pytest.raises(UsageError, match=r"float3 has no member \.w \(it has \.x, \.y, \.z\)"):
        lookup("float3").member("w")
    with pytest.raises(UsageError, match="float has no member .x"):
        lookup("float").member("x")


def test_unknown_type_names_the_known_ones():
    with pytest.raises(UsageError, match=r"unknown element type 'flot' \(known: char, short, int, float"):
        lookup("flot")


@pytest.mark.parametrize("text, name, dims, shared, element", [
    ("float a[]", "a", (None,), False, "float"),
    ("float *a", "a", (None,), False, "float"),
    ("const float* __restrict__ idata", "idata", (None,), False, "float"),
    ("__shared__ float s[32][33]", "s", (32, 33), True, "float"),
    ("__shared__ float s[16*2][32+1];", "s", (32, 33), True, "float"),
    ("extern __shared__ double s[]", "s", (None,), True, "double"),
    ("unsigned int a[8]", "a", (8,), False, "unsigned int"),
    ("float3 pts[][4]", "pts", (None, 4), False, "float3"),
])
def test_declarations(text, name, dims, shared, element):
    d = parse_decl(text)
    assert (d.name, d.dims, d.shared, d.element.name) == (name, dims, shared, element)


def test_row_major_strides():
    assert parse_decl("float s[4][32][33]").strides == (32 * 33, 33, 1)
    assert parse_decl("float s[32][33]").row_words == 33
    assert parse_decl("double s[32][33]").row_words == 66


@pytest.mark.parametrize("text, fragment", [
    ("float s[-4]", "dimensions must be positive"),
    ("float s[0]", "dimensions must be positive"),
    ("float s[4][]", "only the first dimension may be left empty"),
    ("float a", "is not an array"),
    ("float s[TILE]", "unknown name 'TILE'"),
    ("flot a[]", "unknown element type 'flot'"),
    ("[3]", "cannot parse declaration"),
])
def test_bad_declarations(text, fragment):
    with pytest.raises(UsageError, match=fragment.replace("[", r"\[")):
        parse_decl(text)


# The CUDA C++ Programming Guide's table of built-in vector types (size and alignment of each), LP64 scalars
# as nvcc on Linux: name -> (component type, components, size, alignment). A 3-component type is aligned
# like its component; 1-, 2- and 4-component types are aligned to their size.
GUIDE_TABLE = {
    "char": ("char", 1, 1, 1), "signed char": ("signed char", 1, 1, 1), "unsigned char": ("unsigned char", 1, 1, 1),
    "short": ("short", 1, 2, 2), "unsigned short": ("unsigned short", 1, 2, 2),
    "int": ("int", 1, 4, 4), "unsigned int": ("unsigned int", 1, 4, 4), "unsigned": ("unsigned", 1, 4, 4),
    "float": ("float", 1, 4, 4), "long": ("long", 1, 8, 8), "unsigned long": ("unsigned long", 1, 8, 8),
    "long long": ("long long", 1, 8, 8), "unsigned long long": ("unsigned long long", 1, 8, 8),
    "double": ("double", 1, 8, 8),
    "char1": ("char", 1, 1, 1), "char2": ("char", 2, 2, 2), "char3": ("char", 3, 3, 1), "char4": ("char", 4, 4, 4),
    "uchar1": ("unsigned char", 1, 1, 1), "uchar2": ("unsigned char", 2, 2, 2), "uchar3": ("unsigned char", 3, 3, 1),
    "uchar4": ("unsigned char", 4, 4, 4),
    "short1": ("short", 1, 2, 2), "short2": ("short", 2, 4, 4), "short3": ("short", 3, 6, 2),
    "short4": ("short", 4, 8, 8),
    "ushort1": ("unsigned short", 1, 2, 2), "ushort2": ("unsigned short", 2, 4, 4),
    "ushort3": ("unsigned short", 3, 6, 2), "ushort4": ("unsigned short", 4, 8, 8),
    "int1": ("int", 1, 4, 4), "int2": ("int", 2, 8, 8), "int3": ("int", 3, 12, 4), "int4": ("int", 4, 16, 16),
    "uint1": ("unsigned int", 1, 4, 4), "uint2": ("unsigned int", 2, 8, 8), "uint3": ("unsigned int", 3, 12, 4),
    "uint4": ("unsigned int", 4, 16, 16),
    "float1": ("float", 1, 4, 4), "float2": ("float", 2, 8, 8), "float3": ("float", 3, 12, 4),
    "float4": ("float", 4, 16, 16),
    "double1": ("double", 1, 8, 8), "double2": ("double", 2, 16, 16), "double3": ("double", 3, 24, 8),
    "longlong1": ("long long", 1, 8, 8), "longlong2": ("long long", 2, 16, 16), "longlong3": ("long long", 3, 24, 8),
    "ulonglong1": ("unsigned long long", 1, 8, 8), "ulonglong2": ("unsigned long long", 2, 16, 16),
    "ulonglong3": ("unsigned long long", 3, 24, 8),
}


@pytest.mark.parametrize("built", ["at import", "again"])
def test_the_whole_type_table(built):
    from gpumemlab.model.types import TYPES, _build_table

    table = TYPES if built == "at import" else _build_table()  # the builder's own code runs only when called
    got = {name: (t.scalar, t.components, t.size, t.align) for name, t in table.items()}
    assert got == GUIDE_TABLE
    for name, t in table.items():
        assert t.name == name
        assert t.vector == (name[-1].isdigit())  # float1 has .x, float has none
        # one load of the alignment's width per aligned piece: size / alignment loads
        assert (t.load_bytes, t.loads) == (t.align, t.size // t.align)
        assert t.scalar_bytes == GUIDE_TABLE[t.scalar][2]


@pytest.mark.parametrize("name, member, offset, scalar", [
    ("char4", "w", 3, "char"), ("short3", "z", 4, "short"), ("uint2", "y", 4, "unsigned int"),
    ("double3", "z", 16, "double"), ("ulonglong2", "x", 0, "unsigned long long"), ("float1", "x", 0, "float"),
])
def test_member_offsets_are_component_multiples(name, member, offset, scalar):
    off, t = lookup(name).member(member)
    assert (off, t.name, t.size) == (offset, scalar, GUIDE_TABLE[scalar][2])


def test_member_refusals_name_the_members_the_type_has():
    with pytest.raises(UsageError) as info:
        lookup("float1").member("y")
    assert str(info.value) == "float1 has no member .y (it has .x)"
    with pytest.raises(UsageError) as info:
        lookup("int").member("x")
    assert str(info.value) == "int has no member .x: only vector types (float3, int2, ...) do"
