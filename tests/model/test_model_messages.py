"""Every refusal of the analyzer's input, as the exact one-line message.

Columns are 1-based character positions counted by hand in the text (the end of the text is
column len + 1); numbers in the messages come from C's limits (INT_MAX = 2**31 - 1, ...) or from
the input itself.
"""

from __future__ import annotations

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model import cc as cc_
from gpumemlab.model import expr, parse_cc, resolve
from gpumemlab.model.access import dim3, make_launch, normalize_lets, parse_decl
from gpumemlab.model.types import lookup

KNOWN_TYPES = ("char, short, int, float, double, float2, float3, float4, int2, int4, double2, other CUDA vector "
               "types and unsigned variants")


def message(fn, *args, **kw) -> str:
    with pytest.raises(UsageError) as info:
        fn(*args, **kw)
    return str(info.value)


def evaluate(text: str, block=2, **names):
    launch = make_launch(block=block)
    env = launch.env()
    env.update(names)
    return expr.Evaluator(env, launch.nthreads, "expression", text)(expr.parse(text)).tolist()


@pytest.mark.parametrize("text, what, want", [
    ("3 $ 4", "expression", "cannot parse expression '3 $ 4': unexpected '$' at column 3"),
    # "1.5" starts at column 5
    ("2 + 1.5", "access", "cannot parse access '2 + 1.5': floating-point literal '1.5' at column 5 (index expressions "
                          "are integer)"),
    # 13 characters: the end is column 14
    ("a[threadIdx.x", "access", "cannot parse access 'a[threadIdx.x': expected ']', found the end at column 14"),
    ("1 +", "expression", "cannot parse expression '1 +': expected a number, a name or '(', found the end at column 4"),
    ("1 + )", "expression", "cannot parse expression '1 + )': expected a number, a name or '(', found ')' at column 5"),
    ("(1 + 2", "expression", "cannot parse expression '(1 + 2': expected ')', found the end at column 7"),
    ("1 2", "expression", "cannot parse expression '1 2': expected an operator or the end, found '2' at column 3"),
    ("1 ? 2 3", "expression", "cannot parse expression '1 ? 2 3': expected ':', found '3' at column 7"),
    ("09", "expression", "cannot parse expression '09': bad octal number, found '09' at column 1"),
    # the token is the digits; the suffix is named apart
    ("1 + 5lul", "expression", "cannot parse expression '1 + 5lul': bad integer suffix 'lul', found '5' at column 5"),
    ("(float)3", "expression", "cannot parse expression '(float)3': unsupported cast type 'float' (integer types "
                               "only), found '(' at column 1"),
    ("(int 3", "expression", "cannot parse expression '(int 3': expected ')', found '3' at column 6"),
    # every name up to ')' belongs to the cast's type
    ("(int x)3", "expression", "cannot parse expression '(int x)3': unsupported cast type 'int x' (integer types "
                               "only), found '(' at column 1"),
    ("sizeof()", "expression", "cannot parse expression 'sizeof()': expected a type name, found ')' at column 8"),
    ("sizeof int", "expression", "cannot parse expression 'sizeof int': expected '(', found 'int' at column 8"),
    ("sizeof(int", "expression", "cannot parse expression 'sizeof(int': expected ')', found the end at column 11"),
    ("sizeof(foo)", "expression", "unknown element type 'foo' (known: " + KNOWN_TYPES + ")"),
    ("min(1)", "expression", "cannot parse expression 'min(1)': min() takes 2 argument(s), found the end at column 7"),
    ("abs(1, 2)", "expression", "cannot parse expression 'abs(1, 2)': abs() takes 1 argument(s), found the end at "
                                "column 10"),
    ("min(1, 2", "expression", "cannot parse expression 'min(1, 2': expected ')', found the end at column 9"),
    ("threadIdx.", "expression", "cannot parse expression 'threadIdx.': expected a member name after '.', found the "
                                 "end at column 11"),
    ("threadIdx.+", "expression", "cannot parse expression 'threadIdx.+': expected a member name after '.', found "
                                  "'+' at column 11"),
    # '.1' is a floating-point literal, not a member
    ("threadIdx.1", "expression", "cannot parse expression 'threadIdx.1': floating-point literal '.1' at column 10 "
                                  "(index expressions are integer)"),
    ("", "access", "empty access"),
    ("   ", "--active condition", "empty --active condition"),
    # 10**20 > LONG_MAX and a decimal literal without u never becomes unsigned
    ("100000000000000000000", "expression", "integer literal 100000000000000000000 in expression "
                                            "'100000000000000000000' is too large for any integer type (at most "
                                            "9223372036854775807)"),
    # 2**64 does not fit unsigned long either: the limit quoted is ULONG_MAX for a u suffix and for hex
    ("18446744073709551616u", "expression", "integer literal 18446744073709551616u in expression "
                                            "'18446744073709551616u' is too large for any integer type of its suffix "
                                            "(at most 18446744073709551615)"),
    ("0x10000000000000000", "expression", "integer literal 0x10000000000000000 in expression '0x10000000000000000' "
                                          "is too large for any integer type (at most 18446744073709551615)"),
    # 34 '(' and the same ')': the 33rd nested '(' is refused; the next token, the 34th '(', is column 34
    ("(" * 34 + "1" + ")" * 34, "expression", "expression is nested more than 32 levels deep (parentheses, brackets, "
                                              "unary operators, casts, ?:) at column 34"),
    ("1 +" * 1366, "expression", "expression is 4098 characters long: at most 4096 are accepted"),
    ("+".join(["1"] * 201), "expression", "expression has more than 200 operators applied one after another: split it "
                                          "with --let names"),
])
def test_parse_refusals(text, what, want):
    assert message(expr.parse, text, what) == want


def test_the_parser_limits_themselves_are_accepted():
    # 32 nested parentheses; 4096 characters
    assert expr.constant("(" * 32 + "1" + ")" * 32) == 1
    assert expr.constant("1" + " " * 4095) == 1
    assert expr.parse("   1") == expr.Num(1, expr.INT)


@pytest.mark.parametrize("text, names, want", [
    ("foo + 1", {}, "unknown name 'foo' (give it with --let foo=EXPR) in expression 'foo + 1'"),
    ("threadIdx + 1", {}, "threadIdx needs a member (.x, .y, .z) in expression 'threadIdx + 1'"),
    ("threadIdx.w", {}, "threadIdx has no member .w in expression 'threadIdx.w'"),
    ("n.x", {"n": 3}, "unexpected member .x in expression 'n.x'"),
    ("(1).x", {}, "unexpected member .x in expression '(1).x'"),
    ("foo.x", {}, "unexpected member .x in expression 'foo.x'"),
    ("b[1]", {"b": 3}, "array reads inside an index are not supported in expression 'b[1]'"),
    # INT_MAX + 1 = 2147483648
    ("2147483647 + 1", {}, "signed overflow: '+' gives 2147483648 for thread 0, outside int (-2147483648..2147483647; "
                           "undefined behaviour in C) in expression '2147483647 + 1'"),
    # LONG_MAX + 1 = 2**63
    ("9223372036854775807 + (long)threadIdx.x", {},
     "signed overflow: '+' gives 9223372036854775808 for thread 1, outside long "
     "(-9223372036854775808..9223372036854775807; undefined behaviour in C) in expression "
     "'9223372036854775807 + (long)threadIdx.x'"),
    ("-(-2147483647 - 1)", {}, "signed overflow: unary - gives 2147483648 for thread 0, outside int "
                               "(-2147483648..2147483647; undefined behaviour in C) in expression '-(-2147483647 - 1)'"),
    ("abs(threadIdx.x)", {}, "abs() of an unsigned int value: cast it to a signed type first in expression "
                             "'abs(threadIdx.x)'"),
    ("1 / (int)threadIdx.x", {}, "division by zero in expression '1 / (int)threadIdx.x'"),
    ("1 % 0", {}, "division by zero in expression '1 % 0'"),
    ("1u << 32", {}, "shift count 32 out of range 0..31 for unsigned int (thread 0) in expression '1u << 32'"),
    ("1 >> -1", {}, "shift count -1 out of range 0..31 for int (thread 0) in expression '1 >> -1'"),
    ("1L << 64", {}, "shift count 64 out of range 0..63 for long (thread 0) in expression '1L << 64'"),
    ("-1 << 2", {}, "left shift of -1 by 2 in int is undefined in C (thread 0) in expression '-1 << 2'"),
    # 2 << 31 = 2**32 > UINT_MAX: undefined for int
    ("(int)threadIdx.x + 1 << 31", {}, "left shift of 2 by 31 in int is undefined in C (thread 1) in expression "
                                       "'(int)threadIdx.x + 1 << 31'"),
])
def test_evaluation_refusals(text, names, want):
    assert message(evaluate, text, **names) == want


def test_an_evaluator_without_text_names_no_expression():
    assert message(expr.Evaluator({}, 1), expr.parse("1 / 0")) == "division by zero"


def test_constant_names_its_purpose():
    assert message(expr.constant, "N + 1") == ("unknown name 'N' (give it with --let N=EXPR) in constant expression "
                                               "'N + 1'")


@pytest.mark.parametrize("decl, want", [
    ("float a[4", "cannot parse declaration 'float a[4': expected e.g. 'float a[]' or '__shared__ float s[32][33]'"),
    ("__shared__ a[4]", "cannot parse declaration '__shared__ a[4]': expected e.g. 'float a[]' or "
                        "'__shared__ float s[32][33]'"),
    ("float a[4][]", "declaration 'float a[4][]': only the first dimension may be left empty"),
    ("float a[2 - 2]", "declaration 'float a[2 - 2]': array dimensions must be positive, got 0"),
    ("float *a[4]", "declaration 'float *a[4]': arrays of pointers are not supported"),
    ("float a", "declaration 'float a' is not an array: write e.g. 'float a[]'"),
    ("unsigned   int a", "declaration 'unsigned   int a' is not an array: write e.g. 'unsigned int a[]'"),
    ("half a[]", "unknown element type 'half' (known: " + KNOWN_TYPES + ")"),
    ("float a[N]", "unknown name 'N' (give it with --let N=EXPR) in array dimension in 'float a[N]' 'N'"),
])
def test_declaration_refusals(decl, want):
    assert message(parse_decl, decl) == want


@pytest.mark.parametrize("call, want", [
    (lambda: dim3("4,y", "block"), "bad block '4,y': expected X[,Y[,Z]] integers"),
    (lambda: dim3("1,2,3,4", "grid"), "bad grid '1,2,3,4': expected 1 to 3 dimensions"),
    (lambda: dim3((), "grid"), "bad grid (): expected 1 to 3 dimensions"),
    (lambda: dim3("0", "block"), "bad block '0': each must be >= 1"),
    (lambda: dim3((0, -1), "block index", minimum=0), "bad block index (0, -1): each must be >= 0"),
    # 1025 > 1024 threads; 32 x 32 x 2 = 2048; z = 65 > 64 (with 1 x 1 x 65 = 65 threads)
    (lambda: make_launch(block=1025), "block 1025x1x1 has 1025 threads: CUDA allows at most 1024 per block "
                                      "(x, y <= 1024, z <= 64)"),
    (lambda: make_launch(block=(32, 32, 2)), "block 32x32x2 has 2048 threads: CUDA allows at most 1024 per block "
                                             "(x, y <= 1024, z <= 64)"),
    (lambda: make_launch(block=(1, 1, 65)), "block 1x1x65 has 65 threads: CUDA allows at most 1024 per block "
                                            "(x, y <= 1024, z <= 64)"),
    (lambda: make_launch(grid=(1, 65536)), "grid 1x65536x1: CUDA allows at most 2147483647 x 65535 x 65535 blocks"),
    (lambda: make_launch(grid=(2, 1, 1), block_idx=(2, 0, 0)), "block index (2, 0, 0) is outside the grid (2, 1, 1)"),
    (lambda: normalize_lets(["n"]), "bad --let 'n': expected NAME=EXPR"),
    (lambda: normalize_lets({"2n": "1"}), "bad --let name '2n': expected a C identifier"),
    (lambda: normalize_lets([("blockDim", "4")]), "--let blockDim: blockDim is a CUDA built-in and cannot be redefined"),
    (lambda: normalize_lets(["warpSize=4"]), "--let warpSize: warpSize is a CUDA built-in and cannot be redefined"),
])
def test_launch_and_let_refusals(call, want):
    assert message(call) == want


def test_let_forms_are_equivalent():
    # strings, pairs and a mapping give the same stripped pairs; None gives none
    want = [("n", "4"), ("m", "n + 1")]
    assert normalize_lets([" n = 4", "m=n + 1 "]) == want
    assert normalize_lets([("n", 4), ("m", "n + 1")]) == want
    assert normalize_lets({"n": 4, "m": "n + 1"}) == want
    assert normalize_lets(None) == []
    assert normalize_lets(["e=a==b"]) == [("e", "a==b")]  # only the first '=' splits


@pytest.mark.parametrize("access, decl, kw, want", [
    ("a[threadIdx.x]", "float a[]", dict(space="local"), "bad space 'local': expected global or shared"),
    ("s[threadIdx.x]", "__shared__ float s[32]", dict(space="global"),
     "declaration '__shared__ float s[32]' is __shared__ but the space given is global"),
    ("a[threadIdx.x]", "float a[]", dict(block=32, active="threadIdx.x > 40"),
     "--active 'threadIdx.x > 40' selects none of the block's 32 threads"),
    ("b[threadIdx.x]", "float a[]", dict(block=32), "access 'b[threadIdx.x]' reads 'b' but the declaration names 'a'"),
    ("a[1][2]", "float a[4]", dict(block=32), "access 'a[1][2]' gives 2 index(es) but a has 1 dimension(s)"),
    ("a", "float a[]", dict(block=32),
     "access 'a' must index the declared array, e.g. a[threadIdx.x] or s[ty][tx].x"),
    ("a.x", "float4 a[]", dict(block=32),
     "access 'a.x' must index the declared array, e.g. a[threadIdx.x] or s[ty][tx].x"),
    ("(a)[1 + 1][0]", "float a[4][4]", dict(block=32), None),  # parentheses are fine: reads a[2][0]
    ("a[1](2)", "float a[4]", dict(block=32),
     "cannot parse access 'a[1](2)': expected an operator or the end, found '(' at column 5"),
    ("(a + 1)[0]", "float a[4]", dict(block=32),
     "access '(a + 1)[0]' must index the declared array, e.g. a[threadIdx.x] or s[ty][tx].x"),
    # thread 32 reads a[32] of a[32]: first bad lane, 0-based
    ("a[threadIdx.x]", "float a[32]", dict(block=64), "access 'a[threadIdx.x]': index 1 of a is 32 for thread 32, "
                                                      "outside 0..31"),
    ("s[threadIdx.x][threadIdx.x - 1u]", "__shared__ float s[32][32]", dict(block=32),
     "access 's[threadIdx.x][threadIdx.x - 1u]': index 2 of s is 4294967295 for thread 0, outside 0..31"),
    # a shared unsized array (extern __shared__) may not go below 0; neither a later dimension
    ("s[(int)threadIdx.x - 1]", "extern __shared__ float s[]", dict(block=32),
     "access 's[(int)threadIdx.x - 1]': index 1 of s is -1 for thread 0, outside >= 0"),
    # 2**62 / 4 bytes per float = 2**60 elements reach the limit exactly
    ("a[1152921504606846976L * (long)threadIdx.x]", "float a[]", dict(block=2),
     "access 'a[1152921504606846976L * (long)threadIdx.x]': thread 1 reads a[1152921504606846976], "
     "4611686018427387904 bytes from the base: beyond the 4611686018427387904-byte address range the model accepts"),
    ("a[-1152921504606846976L * (long)threadIdx.x]", "float a[]", dict(block=2),
     "access 'a[-1152921504606846976L * (long)threadIdx.x]': thread 1 reads a[-1152921504606846976], "
     "-4611686018427387904 bytes from the base: beyond the 4611686018427387904-byte address range the model accepts"),
    # float2 needs 8-byte alignment; offset 4 shifts every lane by 4 bytes, thread 0 reads byte 4
    ("a[threadIdx.x]", "float2 a[]", dict(block=32, offset=4),
     "misaligned access 'a[threadIdx.x]': float2 loads of 8 bytes need 8-byte alignment but thread 0 reads byte 4 "
     "(--offset 4)"),
    ("a[threadIdx.x]", "float a[]", dict(offset=-4), "--offset must be >= 0 bytes past a 256-byte-aligned base, got -4"),
    ("a[threadIdx.x]", "float a[]", dict(offset=2**40 + 1),
     "--offset must be at most 1099511627776 bytes (1 TiB), got 1099511627777"),
    ("a[threadIdx.x]", "float a[]", dict(offset=4.0), "--offset must be an integer number of bytes, got 4.0"),
    ("a[threadIdx.x]", "float a[]", dict(offset=True), "--offset must be an integer number of bytes, got True"),
    ("a[threadIdx.x].w", "float2 a[]", dict(block=32), "float2 has no member .w (it has .x, .y)"),
    ("a[threadIdx.x].x", "float a[]", dict(block=32), "float has no member .x: only vector types (float3, int2, ...) do"),
    ("a[threadIdx.x].q", "float4 a[]", dict(block=32), "float4 has no member .q (it has .x, .y, .z, .w)"),
    ("a[n]", "float a[]", dict(block=32, lets=["n=m"]), "unknown name 'm' (give it with --let m=EXPR) in --let n 'm'"),
    ("a[n]", "float a[]", dict(block=32, lets=["n=1 +"]),
     "cannot parse --let n '1 +': expected a number, a name or '(', found the end at column 4"),
    ("a[0]", "float a[]", dict(block=32, active="q"),
     "unknown name 'q' (give it with --let q=EXPR) in --active condition 'q'"),
])
def test_resolve_refusals(access, decl, kw, want):
    if want is None:
        lanes = resolve(access, decl, **kw)
        assert lanes.addresses[0].tolist() == [(2 * 4 + 0) * 4] * 32  # row 2 of 4 floats, element 0
    else:
        assert message(resolve, access, decl, **kw) == want


def test_the_address_limit_is_exclusive_one_element_below():
    # (2**60 - 1) floats = 2**62 - 4 bytes: just inside the limit
    lanes = resolve("a[1152921504606846975L * (long)threadIdx.x]", "float a[]", block=2)
    assert lanes.addresses[0].tolist() == [0, 2**62 - 4]


def test_a_global_pointer_may_start_in_the_middle():
    # the first index of an unsized global array may be negative (a pointer into the middle of an allocation)
    lanes = resolve("a[(int)threadIdx.x - 1]", "float a[]", block=2)
    assert lanes.addresses[0].tolist() == [-4, 0]


@pytest.mark.parametrize("name", ["half", "float5", "double4", "longlong4", "float 4"])
def test_unknown_types(name):
    assert message(lookup, name) == f"unknown element type {name!r} (known: {KNOWN_TYPES})"


@pytest.mark.parametrize("value, want", [
    ("9.9", "unknown compute capability 9.9 (known: " + ", ".join(cc_.cc_str(c) for c in cc_.SUPPORTED_CC) + ")"),
    ("nine", "bad compute capability 'nine': expected MAJOR.MINOR, e.g. 9.0"),
    (("9", "x"), "bad compute capability ('9', 'x'): expected MAJOR.MINOR, e.g. 9.0"),
    ((9, None), "bad compute capability (9, None): expected MAJOR.MINOR, e.g. 9.0"),
    ("9.00", "bad compute capability '9.00': expected MAJOR.MINOR, e.g. 9.0"),
    ("sm_9", "bad compute capability 'sm_9': expected MAJOR.MINOR, e.g. 9.0"),
    ("123.0", "bad compute capability '123.0': expected MAJOR.MINOR, e.g. 9.0"),
])
def test_cc_refusals(value, want):
    assert message(parse_cc, value) == want


def test_cc_refusal_with_a_scope_and_a_short_list():
    assert message(parse_cc, "9.0", ((8, 0), (8, 6)), " for occupancy") == ("unknown compute capability 9.0 for "
                                                                             "occupancy (known: 8.0, 8.6)")
    assert message(cc_.require, (9, 0), ((8, 0),), "the tile model") == ("the tile model is not modelled for compute "
                                                                         "capability 9.0 (it is for 8.0)")
    assert cc_.require((8, 0), ((8, 0),), "x") == (8, 0)


@pytest.mark.parametrize("value, want", [
    ("9.0", (9, 0)), (" 9.0 ", (9, 0)), ("sm_90", (9, 0)), ("SM_90A", (9, 0)), ("compute_86", (8, 6)), ("90", (9, 0)),
    ("90a", (9, 0)), ("120", (12, 0)), ("12.1", (12, 1)), ("sm_121", (12, 1)), ("9", (9, 0)), ("10", (1, 0)),  # "10" is sm_10
    (9.0, (9, 0)), (8.6, (8, 6)), ((9, 0), (9, 0)), ([8, 6], (8, 6)), (("8", "6"), (8, 6)), (12, (1, 2)),
    ("1.0", (1, 0)), ("10.3", (10, 3)),
])
def test_cc_spellings(value, want):
    assert parse_cc(value) == want
