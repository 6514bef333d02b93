"""The C expression evaluator: C integer semantics, precedence, errors with a column."""

from __future__ import annotations

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model import expr
from gpumemlab.model.access import make_launch


def ev(text: str, block=4, **names):
    env = make_launch(block=block).env()
    env.update(names)
    return expr.Evaluator(env, make_launch(block=block).nthreads, "expression", text)(expr.parse(text)).tolist()


@pytest.mark.parametrize("text, want", [
    ("-7 / 2", -3), ("7 / -2", -3), ("-7 % 2", -1), ("7 % -2", 1), ("-8 / 4", -2), ("7 / 2", 3),
])
def test_division_truncates_toward_zero_as_in_c(text, want):
    assert ev(text, block=1) == [want]


@pytest.mark.parametrize("text, want", [
    ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("1 << 2 + 1", 8), ("5 & 3 == 3", 1), ("10 - 4 - 3", 3),
    ("2 * 3 % 4", 2), ("1 < 2 == 1", 1), ("6 | 1 ^ 3", 6 | (1 ^ 3)), ("!0 + ~0", 0), ("-(3)", -3),
    ("0x10 + 010 + 4u + 2UL", 30), ("sizeof(float3) + sizeof(double)", 20), ("(int)7 + (unsigned int)1", 8),
    ("min(3, 9) * max(2, -1) + abs(-4)", 10), ("1 ? 2 : 3 ? 4 : 5", 2), ("0 ? 2 : 0 ? 4 : 5", 5),
    ("warpSize", 32),
])
def test_constants_follow_c_precedence(text, want):
    assert ev(text, block=1) == [want]


def test_thread_builtins_are_per_thread():
    assert ev("threadIdx.x", block=(2, 2)) == [0, 1, 0, 1]
    assert ev("threadIdx.y * blockDim.x + threadIdx.x", block=(2, 2)) == [0, 1, 2, 3]
    assert ev("threadIdx.x < 2 ? 10 : 20") == [10, 10, 20, 20]
    assert ev("blockIdx.x * blockDim.x + threadIdx.x") == [0, 1, 2, 3]


def test_logical_operators_only_evaluate_the_side_they_reach():
    # lane 0 has n == 0: 10 / n must not be evaluated there
    assert ev("n > 0 && 10 / n > 4", n=[0, 1, 2, 3]) == [0, 1, 1, 0]
    assert ev("n == 0 || 10 % n == 1", n=[0, 1, 2, 3]) == [1, 0, 0, 1]
    assert ev("n ? 12 / n : -1", n=[0, 1, 2, 3]) == [-1, 12, 6, 4]
    with pytest.raises(UsageError, match="division by zero"):
        ev("10 / n", n=[0, 1, 2, 3])


@pytest.mark.parametrize("text, fragment", [
    ("a[threadIdx.x", "expected ']'"),
    ("1 +", "expected a number"),
    ("1.5 + 2", "floating-point literal"),
    ("3 $ 4", "unexpected '$' at column 3"),
    ("(1 + 2", "expected ')'"),
    ("09", "bad octal"),
    ("", "empty"),
])
def test_unparsable_text_is_one_clear_line(text, fragment):
    with pytest.raises(UsageError) as info:
        expr.parse(text, "access")
    msg = str(info.value)
    assert fragment in msg and "\n" not in msg


@pytest.mark.parametrize("text, fragment", [
    ("foo + 1", "unknown name 'foo' (give it with --let foo=EXPR)"),
    ("threadIdx.w", "threadIdx has no member .w"),
    ("threadIdx + 1", "threadIdx needs a member"),
    ("1 << 70", "shift count out of range"),
])
def test_bad_names_and_operands(text, fragment):
    with pytest.raises(UsageError, match=fragment.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        ev(text)


def test_constant_evaluates_dimensions():
    assert expr.constant("32 + 1") == 33
    with pytest.raises(UsageError, match="unknown name 'TILE'"):
        expr.constant("TILE")
