"""Fuzzing the index expressions: the analyzer answers or says UsageError, and agrees with C.

The reference below is written from the C standard (C11 6.3.1.1 integer promotions, 6.3.1.3
conversions, 6.3.1.8 usual arithmetic conversions, 6.4.4.1 literal types, 6.5.5 / 6.5.7 for
division and shifts, with C++17's left-shift rule and nvcc's LP64 sizes) on plain Python ints,
one thread at a time; it shares no code with the model.
"""

from __future__ import annotations

import os
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpumemlab.errors import UsageError
from gpumemlab.model import analyze_global, analyze_shared, expr
from gpumemlab.model.access import make_launch


def examples(n: int) -> int:
    """Hypothesis examples, scaled by HYPOTHESIS_SCALE (mutation runs rerun every test per mutant)."""
    return max(10, int(n * float(os.environ.get("HYPOTHESIS_SCALE", "1"))))

I32, U32, I64, U64 = (32, True), (32, False), (64, True), (64, False)
NAMES = {I32: "int", U32: "unsigned int", I64: "long", U64: "unsigned long"}
CASTS = {"int": I32, "unsigned": U32, "long long": I64, "unsigned long long": U64, "size_t": U64,
         "char": (8, True), "unsigned char": (8, False), "short": (16, True), "unsigned short": (16, False)}
BINARY = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", ">=", "==", "!=", "&&", "||"]
BLOCK, GRID, BLOCK_IDX = (4, 2, 1), (3, 2, 1), (1, 0, 0)
BUILTINS = {"threadIdx.x", "threadIdx.y", "blockIdx.x", "blockDim.x", "gridDim.y", "warpSize"}


class Undefined(Exception):
    """The C program has undefined behaviour for this thread."""


def low_high(t):
    bits, signed = t
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def convert(v: int, t) -> int:
    bits, signed = t
    v %= 1 << bits
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def usual(a, b):
    if a == b:
        return a
    if a[1] == b[1]:
        return a if a[0] > b[0] else b
    uns, sig = (a, b) if not a[1] else (b, a)
    return uns if uns[0] >= sig[0] else sig


def literal_type(value: int, suffix: str, base: int):
    lists = {"": [I32, I64] if base == 10 else [I32, U32, I64, U64], "u": [U32, U64],
             "l": [I64] if base == 10 else [I64, U64], "ll": [I64] if base == 10 else [I64, U64],
             "ul": [U64], "ull": [U64]}
    return next((t for t in lists[suffix] if value <= low_high(t)[1]), None)


def ctype(tree):
    """The static C type of a tree (a ?: has the common type of both arms, whichever runs)."""
    kind = tree[0]
    if kind == "lit":
        return literal_type(*tree[1:])
    if kind == "name":
        return I32 if tree[1] == "warpSize" else U32
    if kind == "cast":
        t = CASTS[tree[1]]
        return t if t[0] >= 32 else I32
    if kind == "un":
        return I32 if tree[1] == "!" else ctype(tree[2])
    if kind == "cond":
        return usual(ctype(tree[2]), ctype(tree[3]))
    op, left, right = tree[1:]
    if op in ("<<", ">>"):
        return ctype(left)
    if op in ("<", ">=", "==", "!=", "&&", "||"):
        return I32
    return usual(ctype(left), ctype(right))


def checked(v: int, t) -> int:
    lo, hi = low_high(t)
    if t[1] and not lo <= v <= hi:
        raise Undefined("signed overflow")
    return convert(v, t)


def run(tree, thread: dict) -> int:
    kind = tree[0]
    if kind == "lit":
        return tree[1]
    if kind == "name":
        return thread[tree[1]]
    if kind == "cast":
        return convert(run(tree[2], thread), CASTS[tree[1]])
    if kind == "un":
        op, t, v = tree[1], ctype(tree), run(tree[2], thread)
        return {"-": lambda: checked(-v, t), "~": lambda: convert(~v, t), "!": lambda: int(v == 0),
                "+": lambda: v}[op]()
    if kind == "cond":
        t = ctype(tree)
        return convert(run(tree[2] if run(tree[1], thread) else tree[3], thread), t)
    op, left, right = tree[1:]
    a = run(left, thread)
    if op == "&&":
        return int(bool(a) and bool(run(right, thread)))
    if op == "||":
        return int(bool(a) or bool(run(right, thread)))
    b = run(right, thread)
    if op in ("<<", ">>"):
        t = ctype(left)
        if not 0 <= b < t[0]:
            raise Undefined("shift count")
        if op == ">>":
            return a >> b
        if t[1] and (a < 0 or a << b >= 1 << t[0]):
            raise Undefined("left shift")
        return convert(a << b, t)
    t = usual(ctype(left), ctype(right))
    a, b = convert(a, t), convert(b, t)
    if op in ("/", "%"):
        if b == 0:
            raise Undefined("division by zero")
        q = checked(abs(a) // abs(b) * (-1 if (a < 0) != (b < 0) else 1), t)
        return q if op == "/" else a - b * q
    if op in ("<", ">=", "==", "!="):
        return int({"<": a < b, ">=": a >= b, "==": a == b, "!=": a != b}[op])
    return checked({"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op], t)


def text(tree) -> str:
    kind = tree[0]
    if kind == "lit":
        value, suffix, base = tree[1:]
        return (hex(value) if base == 16 else str(value)) + suffix
    if kind == "name":
        return tree[1]
    if kind == "cast":
        return f"(({tree[1]}){text(tree[2])})"
    if kind == "un":
        return f"({tree[1]}{text(tree[2])})"
    if kind == "cond":
        return f"({text(tree[1])} ? {text(tree[2])} : {text(tree[3])})"
    return f"({text(tree[2])} {tree[1]} {text(tree[3])})"


def depth(tree) -> int:
    return 1 + max((depth(c) for c in tree[1:] if isinstance(c, tuple)), default=0)


def threads() -> list[dict]:
    out = []
    for t in range(BLOCK[0] * BLOCK[1]):
        out.append({"threadIdx.x": t % BLOCK[0], "threadIdx.y": t // BLOCK[0], "blockIdx.x": BLOCK_IDX[0],
                    "blockDim.x": BLOCK[0], "gridDim.y": GRID[1], "warpSize": 32})
    return out


small = st.sampled_from([0, 1, 2, 3, 7, 31, 32, 255, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63,
                         2**64 - 1, 2**64, 10**20])
leaves = st.one_of(
    st.sampled_from(sorted(BUILTINS)).map(lambda n: ("name", n)),
    st.tuples(st.just("lit"), st.one_of(small, st.integers(0, 2**66)),
              st.sampled_from(["", "u", "l", "ll", "ul", "ull"]), st.sampled_from([10, 16])),
)
trees = st.recursive(leaves, lambda kids: st.one_of(
    st.tuples(st.just("bin"), st.sampled_from(BINARY), kids, kids),
    st.tuples(st.just("un"), st.sampled_from(["-", "~", "!", "+"]), kids),
    st.tuples(st.just("cond"), kids, kids, kids),
    st.tuples(st.just("cast"), st.sampled_from(sorted(CASTS)), kids),
), max_leaves=10)


def literals(tree):
    if tree[0] == "lit":
        yield tree
    for c in tree[1:]:
        if isinstance(c, tuple):
            yield from literals(c)


@settings(max_examples=examples(600), deadline=None)
@given(trees)
def test_model_agrees_with_c_per_thread(tree):
    assume(depth(tree) <= 12)  # within the parser's nesting limit (tested on its own)
    source = text(tree)
    launch = make_launch(BLOCK, GRID, BLOCK_IDX)
    model = expr.Evaluator(launch.env(), launch.nthreads, "expression", source)
    if any(literal_type(*lit[1:]) is None for lit in literals(tree)):
        try:
            model.typed(expr.parse(source))
        except UsageError as e:
            assert "too large" in str(e)
            return
        raise AssertionError(f"{source}: a literal too large for C was accepted")
    try:
        want = [run(tree, th) for th in threads()]
    except Undefined:
        try:
            model.typed(expr.parse(source))
        except UsageError:
            return
        raise AssertionError(f"{source}: undefined in C for some thread, but the model answered") from None
    got = model.typed(expr.parse(source))
    assert got.v.tolist() == want, source
    assert got.type.name == NAMES[ctype(tree)], source


# Text made of the grammar's tokens and some that are not, nested deep: only answers or UsageError.
tokens = st.sampled_from(["threadIdx.x", "blockIdx.y", "blockDim.z", "gridDim.x", "warpSize", "n", "(", ")",
                          "[", "]", "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "~", "!", "?", ":",
                          "&&", "||", "<", "==", "0", "1", "31", "4294967295u", "0xffffffff",
                          "99999999999999999999", "18446744073709551615ull", "(unsigned)", "(long long)",
                          "(size_t)", "(char)", "sizeof(float4)", "min(", "max(", "abs(", ",", ".x", " ",
                          "1.5", "$", "(float)", "a[0]"])


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(tokens, max_size=30), st.integers(0, 80))
def test_any_text_gives_an_answer_or_a_usage_error(parts, nest):
    index = "(" * nest + "".join(parts) + ")" * nest
    for call, decl in ((analyze_global, "float a[]"), (analyze_shared, "__shared__ float a[64]")):
        try:
            call(f"a[{index}]", decl, block=64, lets=["n=threadIdx.x - 3"], active="threadIdx.x != 5")
        except UsageError as e:
            assert "\n" not in str(e)


@settings(max_examples=examples(300), deadline=None)
@given(trees, st.sampled_from(["float a[]", "double2 a[]", "char a[][3]", "float3 a[]"]),
       st.integers(0, 2**41), st.sampled_from(["9.0", "1.1", "1.3", "2.0", "7.5"]))
def test_random_trees_through_the_whole_analyzer(tree, decl, offset, cc):
    access = f"a[{text(tree)}]" if "][" not in decl else f"a[{text(tree)}][threadIdx.x % 3]"
    for call, d in ((analyze_global, decl), (analyze_shared, "__shared__ " + decl.replace("[]", "[256]", 1))):
        try:
            r = call(access, d, block=(8, 4), offset=offset, cc=cc)
        except UsageError as e:
            assert "\n" not in str(e)
        else:
            assert r["requests"] >= 1
