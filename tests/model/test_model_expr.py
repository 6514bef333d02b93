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
    ("1 << 70", "shift count 70 out of range 0..31 for int"),
])
def test_bad_names_and_operands(text, fragment):
    with pytest.raises(UsageError, match=fragment.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        ev(text)


def test_constant_evaluates_dimensions():
    assert expr.constant("32 + 1") == 33
    with pytest.raises(UsageError, match="unknown name 'TILE'"):
        expr.constant("TILE")


def typed(text: str, block=1):
    env = make_launch(block=block).env()
    v = expr.Evaluator(env, make_launch(block=block).nthreads, "expression", text).typed(expr.parse(text))
    return v.v.tolist(), v.type.name


# Each answer is what C gives (C11 6.3.1.8 usual arithmetic conversions, 6.4.4.1 literal types, LP64).
@pytest.mark.parametrize("text, want, ctype", [
    ("threadIdx.x - 1", [4294967295, 0], "unsigned int"),            # unsigned wraps modulo 2^32
    ("(threadIdx.x - 1) / 2", [2147483647, 0], "unsigned int"),      # the reported bug: not 0 for thread 0
    ("(int)threadIdx.x - 1", [-1, 0], "int"),
    ("-1 < 0u", [0, 0], "int"),                                      # -1 converts to 4294967295
    ("-1 < 0", [1, 1], "int"),
    ("-1 / 2u", [2147483647, 2147483647], "unsigned int"),
    ("-7 % 3u", [0, 0], "unsigned int"),                            # 4294967289 % 3 = 0
    ("-7 >> 1", [-4, -4], "int"),                                    # arithmetic shift, as nvcc
    ("0xffffffff >> 4", [268435455, 268435455], "unsigned int"),    # hex fits unsigned int
    ("4294967295", [4294967295, 4294967295], "long"),               # decimal never becomes unsigned
    ("2147483647", [2147483647, 2147483647], "int"),
    ("2147483648", [2147483648, 2147483648], "long"),
    ("0x80000000", [2147483648, 2147483648], "unsigned int"),
    ("0x100000000", [4294967296, 4294967296], "long"),
    ("0xffffffffffffffff", [2**64 - 1, 2**64 - 1], "unsigned long"),
    ("5u", [5, 5], "unsigned int"), ("5l", [5, 5], "long"), ("5ull", [5, 5], "unsigned long"),
    ("4294967296u", [4294967296, 4294967296], "unsigned long"),
    ("1 << 31", [-2147483648, -2147483648], "int"),                 # C++17: representable as unsigned
    ("1u << 31", [2147483648, 2147483648], "unsigned int"),
    ("(long long)threadIdx.x - 1", [-1, 0], "long"),
    ("(size_t)threadIdx.x - 1", [2**64 - 1, 0], "unsigned long"),
    ("threadIdx.x - 1ll", [-1, 0], "long"),                         # long holds every unsigned int
    ("threadIdx.x - 1ull", [2**64 - 1, 0], "unsigned long"),
    ("sizeof(float) - 5", [2**64 - 1, 2**64 - 1], "unsigned long"),  # size_t
    ("(char)300", [44, 44], "int"), ("(unsigned char)-1", [255, 255], "int"), ("(short)40000", [-25536, -25536], "int"),
    ("(unsigned short)-1", [65535, 65535], "int"), ("(signed char)200", [-56, -56], "int"),
    ("(int)4294967295u", [-1, -1], "int"), ("(unsigned)-1", [4294967295, 4294967295], "unsigned int"),
    ("(unsigned long long int)-1", [2**64 - 1, 2**64 - 1], "unsigned long"),
    ("(uint32_t)-2", [4294967294, 4294967294], "unsigned int"), ("(int64_t)-2", [-2, -2], "long"),
    ("-threadIdx.x", [0, 4294967295], "unsigned int"), ("~threadIdx.x", [4294967295, 4294967294], "unsigned int"),
    ("~0", [-1, -1], "int"), ("!threadIdx.x", [1, 0], "int"), ("+threadIdx.x", [0, 1], "unsigned int"),
    ("threadIdx.x ? -1 : 0u", [0, 4294967295], "unsigned int"),   # ?: converts both arms
    ("min(-1, threadIdx.x)", [0, 1], "unsigned int"), ("max(-1, 0)", [0, 0], "int"),
    ("abs(-5)", [5, 5], "int"), ("abs((long long)-5)", [5, 5], "long"),
    ("threadIdx.x * 4294967295", [0, 4294967295], "long"),         # the literal is long
    ("threadIdx.x * 0xffffffff", [0, 4294967295], "unsigned int"),
    ("(threadIdx.x + 0xffffffff) & 7", [7, 0], "unsigned int"),
    ("threadIdx.x == -1 + 1u", [1, 0], "int"), ("(threadIdx.x - 2) > 5", [1, 1], "int"),
    ("warpSize - 33", [-1, -1], "int"),                              # warpSize is an int
    ("blockDim.x - 3", [4294967295, 4294967295], "unsigned int"),
    ("threadIdx.x ^ -1", [4294967295, 4294967294], "unsigned int"), ("threadIdx.x | 8", [8, 9], "unsigned int"),
])
def test_c_types_and_conversions(text, want, ctype):
    assert typed(text, block=2) == (want, ctype)


@pytest.mark.parametrize("text, fragment", [
    ("2147483647 + 1", "signed overflow: '+' gives 2147483648 for thread 0, outside int"),
    ("-2147483647 - 2", "signed overflow: '-' gives -2147483649"),
    ("65536 * 65536", "signed overflow: '*' gives 4294967296"),
    ("0x7fffffffffffffff + 1", "outside long"),
    ("(-2147483647 - 1) / -1", "signed overflow: '/' gives 2147483648"),
    ("(-2147483647 - 1) % -1", "signed overflow: '%'"),
    ("-(-2147483647 - 1)", "signed overflow: unary -"),
    ("abs(-2147483647 - 1)", "signed overflow: abs()"),
    ("abs(threadIdx.x)", "abs() of an unsigned int value"),
    ("-1 << 2", "left shift of -1 by 2 in int is undefined"),
    ("3 << 31", "left shift of 3 by 31 in int is undefined"),
    ("1u << 32", "shift count 32 out of range 0..31 for unsigned int"),
    ("1ll << -1", "shift count -1 out of range 0..63 for long"),
    ("99999999999999999999", "integer literal 99999999999999999999 in expression '99999999999999999999' is too large"),
    ("18446744073709551615", "too large for any integer type (at most 9223372036854775807)"),
    ("5lu5", "unexpected"), ("5lul", "bad integer suffix 'lul'"), ("5lL", "bad integer suffix 'lL'"),
    ("(float)3", "unsupported cast type 'float' (integer types only)"), ("(unsigned signed)3", "unsupported cast type 'unsigned signed'"),
    ("(long short)3", "unsupported cast type 'long short'"),
    ("threadIdx.x % 0u", "division by zero"),
])
def test_undefined_or_unsupported_c_is_refused(text, fragment):
    with pytest.raises(UsageError) as info:
        typed(text, block=2)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_signed_overflow_only_counts_on_threads_that_evaluate_it():
    # thread 0 takes the 0 arm; the overflowing arm is for thread 1 only -> refused; guarded -> fine
    assert typed("threadIdx.x == 0 ? 2147483647 + (int)threadIdx.x : 0", block=2) == ([2147483647, 0], "int")
    with pytest.raises(UsageError, match="for thread 1"):
        typed("threadIdx.x == 1 ? 2147483647 + (int)threadIdx.x : 0", block=2)


@pytest.mark.parametrize("text, fragment", [
    ("(" * 70 + "1" + ")" * 70, "nested more than 32 levels deep"),
    ("-" * 40 + "1", "nested more than 32 levels deep"),
    ("a[" * 40 + "1" + "]" * 40, "nested more than 32 levels deep"),
    ("1 ? " * 40 + "1" + " : 1" * 40, "nested more than 32 levels deep"),
    ("+".join(["1"] * 202), "more than 200 operators applied one after another"),
    ("1 +" * 2000 + " 1", "is 6002 characters long: at most 4096"),
])
def test_deep_or_huge_expressions_are_refused_in_one_line(text, fragment):
    with pytest.raises(UsageError) as info:
        expr.parse(text)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_the_limits_themselves_are_accepted():
    assert expr.constant("(" * 32 + "1" + ")" * 32) == 1
    assert expr.constant("+".join(["1"] * 200)) == 200


@pytest.mark.parametrize("text, want, ctype", [
    ("5lu", [5, 5], "unsigned long"), ("5LLU", [5, 5], "unsigned long"), ("5uLL", [5, 5], "unsigned long"),
    ("0xffffffffffffffffl", [2**64 - 1] * 2, "unsigned long"),   # hex with l: long, then unsigned long
    ("1 << 0", [1, 1], "int"), ("3 << 30", [-1073741824] * 2, "int"),  # 3 * 2^30 fits unsigned int
    ("threadIdx.x << 31", [0, 2147483648], "unsigned int"), ("-8 >> threadIdx.x", [-8, -4], "int"),
])
def test_more_c_cases(text, want, ctype):
    assert typed(text, block=2) == (want, ctype)


@pytest.mark.parametrize("text, fragment", [
    ("4 << 30", "left shift of 4 by 30 in int is undefined in C (thread 0)"),
    ("(int)threadIdx.x * 2 << 31", "left shift of 2 by 31 in int is undefined in C (thread 1)"),  # 2^32 > UINT_MAX
    ("1 << (int)threadIdx.x * 40", "shift count 40 out of range 0..31 for int (thread 1)"),
    ("5 << -(int)threadIdx.x", "shift count -1 out of range 0..31 for int (thread 1)"),
    ("18446744073709551615l", "too large for any integer type of its suffix"),
    ("5Ll", "bad integer suffix 'Ll'"),
    ("2147483647 + (int)threadIdx.x", "signed overflow: '+' gives 2147483648 for thread 1"),
])
def test_more_refusals(text, fragment):
    with pytest.raises(UsageError) as info:
        typed(text, block=2)
    assert fragment in str(info.value)
