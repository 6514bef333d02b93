"""The evaluator's comparison operators against C: both operands converted to their common type (C11 6.3.1.8),
then compared; ties (a == b), neighbours (a == b +- 1) and the sign boundary are where a wrong operator shows."""

from __future__ import annotations

import operator
import os

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpumemlab.model import expr
from gpumemlab.model.access import make_launch

# (C name, bits, signed), LP64: long is 64-bit
TYPES = {"int": (32, True), "unsigned int": (32, False), "long": (64, True), "unsigned long": (64, False)}
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
       "!=": operator.ne}


def examples(n: int) -> int:
    return max(10, int(n * float(os.environ.get("HYPOTHESIS_SCALE", "1"))))


def common(a: str, b: str) -> str:
    """The usual arithmetic conversions, written out for the four types (not taken from the model)."""
    table = {frozenset({"int", "unsigned int"}): "unsigned int", frozenset({"int", "long"}): "long",
             frozenset({"int", "unsigned long"}): "unsigned long", frozenset({"unsigned int", "long"}): "long",
             frozenset({"unsigned int", "unsigned long"}): "unsigned long",
             frozenset({"long", "unsigned long"}): "unsigned long"}
    return a if a == b else table[frozenset({a, b})]


def convert(value: int, ctype: str) -> int:
    bits, signed = TYPES[ctype]
    m = value % (1 << bits)
    return m - (1 << bits) if signed and m >= 1 << (bits - 1) else m


def literal(value: int, ctype: str) -> str:
    """C text for ``value`` of ``ctype``: its bit pattern in hex, cast (hex literals are never negative)."""
    bits, _ = TYPES[ctype]
    return f"(({ctype}){value % (1 << bits):#x})"


def c_compare(a: int, ta: str, op: str, b: int, tb: str) -> int:
    t = common(ta, tb)
    return int(OPS[op](convert(a, t), convert(b, t)))


def evaluate(text: str) -> tuple[int, str]:
    v = expr.Evaluator({}, 1, "expression", text).typed(expr.parse(text))
    return int(v.v[0]), v.type.name


def in_range(ctype: str):
    bits, signed = TYPES[ctype]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    edges = [lo, lo + 1, -1, 0, 1, hi - 1, hi]
    return st.one_of(st.sampled_from([e for e in edges if lo <= e <= hi]), st.integers(lo, hi))


@st.composite
def operands(draw):
    ta, tb = draw(st.sampled_from(list(TYPES))), draw(st.sampled_from(list(TYPES)))
    a = draw(in_range(ta))
    # b: the same value (a tie once converted), a neighbour of it, or anything of its type
    near = convert(a + draw(st.sampled_from([0, 0, 1, -1])), tb)
    b = draw(st.one_of(st.just(near), in_range(tb)))
    return a, ta, b, tb


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("ctype", TYPES)
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_each_operator_at_a_tie_and_its_neighbours(op, ctype, delta):
    a, b = 5, 5 + delta
    got, rtype = evaluate(f"{literal(a, ctype)} {op} {literal(b, ctype)}")
    assert (got, rtype) == (int(OPS[op](a, b)), "int")


@pytest.mark.parametrize("text, want", [
    ("-1 <= 0u", 0), ("-1 < 0u", 0), ("-1 >= 0u", 1), ("-1 > 0u", 1),       # -1 becomes 4294967295
    ("-1 <= 0l", 1), ("-1 > 0l", 0),                                          # int -> long keeps -1
    ("-1l <= 0u", 1), ("-1l >= 0u", 0),                                       # long holds every unsigned int
    ("-1 <= 0ul", 0), ("-1l >= 0ul", 1),                                      # unsigned long wins
    ("4294967295u <= -1", 1), ("4294967295u >= -1", 1), ("4294967295u < -1", 0), ("4294967295u > -1", 0),
    ("(int)threadIdx.x <= 0", 1), ("threadIdx.x - 1 >= 0", 1), ("threadIdx.x - 1 > 4294967294u", 1),
])
def test_signed_and_unsigned_operands_compare_after_the_usual_conversions(text, want):
    v = expr.Evaluator(make_launch(block=1).env(), 1, "expression", text).typed(expr.parse(text))  # threadIdx.x 0
    assert (int(v.v[0]), v.type.name) == (want, "int")


@settings(max_examples=examples(300), deadline=None)
@given(operands(), st.sampled_from(list(OPS)))
@example((7, "int", 7, "int"), "<=")
@example((7, "int", 7, "int"), ">=")
@example((-1, "int", 4294967295, "unsigned int"), "<=")
@example((-1, "long", 4294967295, "unsigned int"), "<")
def test_comparisons_match_c_for_any_operands(ab, op):
    a, ta, b, tb = ab
    text = f"{literal(a, ta)} {op} {literal(b, tb)}"
    assert evaluate(text) == (c_compare(a, ta, op, b, tb), "int"), text
