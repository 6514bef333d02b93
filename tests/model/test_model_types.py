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
