"""A safe parser and vectorized evaluator for C index expressions (no Python eval).

Integers only, evaluated for every thread at once with the types and conversions of CUDA C++
(LP64, as nvcc on Linux):

- ``threadIdx``, ``blockIdx``, ``blockDim``, ``gridDim`` members are ``unsigned int``;
  ``warpSize`` and ``sizeof`` are ``int`` and ``size_t``; a literal has the first type of C's
  list for its base and suffix that holds it (decimal: int, long; hex/octal also unsigned ones).
- Operands get the integer promotions and the usual arithmetic conversions (int op unsigned ->
  unsigned); unsigned results wrap modulo 2^32 or 2^64, so ``threadIdx.x - 1`` is 4294967295 for
  thread 0. ``/`` and ``%`` truncate toward zero; ``>>`` of a negative value is arithmetic.
- What C leaves undefined is refused with a UsageError instead of guessed: signed overflow,
  division by zero, shift counts outside 0..width-1, left shifts of negative values (C++17).
- ``&&``, ``||`` and ``?:`` evaluate a side only for the threads that reach it (so
  ``n > 0 && x / n`` never divides by zero); comparisons and logical operators give int 0 or 1.

Grammar: C's operator precedence from ``?:`` down to unary ``- + ! ~``, casts to integer types,
``sizeof(type)``, ``min``/``max`` (CUDA's overloads: usual conversions) and ``abs``, postfix
``[...]`` and ``.member``. Limits keep every input answerable: MAX_LENGTH characters,
MAX_NESTING levels of parentheses/operators, and literals that fit in 64 bits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from . import types as ctypes_

MAX_LENGTH = 4096  # characters of one expression
MAX_NESTING = 32  # parentheses, unary operators and ?: inside each other
MAX_TREE_DEPTH = 200  # operators applied to the result of another (a chain of 200 '+' is the limit)

# ---------------------------------------------------------------- C integer types


@dataclass(frozen=True)
class CType:
    name: str
    bits: int
    signed: bool

    @property
    def lo(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def hi(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def wrap(self, v):
        """C conversion to this type: modulo 2^bits (signed: two's complement, as nvcc does)."""
        if v.size and self.lo <= v.min() and v.max() <= self.hi:
            return v  # every value is in range (most index arithmetic): nothing to wrap
        m = v & ((1 << self.bits) - 1)
        return np.where(m > self.hi, m - (1 << self.bits), m) if self.signed else m


INT = CType("int", 32, True)
UINT = CType("unsigned int", 32, False)
LONG = CType("long", 64, True)  # long and long long are both 64-bit (LP64)
ULONG = CType("unsigned long", 64, False)

# Narrow types: a cast converts to them, then the integer promotion makes the value an int.
_NARROW = {"char": CType("char", 8, True), "signed char": CType("signed char", 8, True),
           "unsigned char": CType("unsigned char", 8, False), "short": CType("short", 16, True),
           "unsigned short": CType("unsigned short", 16, False)}
_TYPEDEFS = {"size_t": ULONG, "ptrdiff_t": LONG, "int32_t": INT, "uint32_t": UINT, "int64_t": LONG,
             "uint64_t": ULONG}
_CAST_WORDS = {"char", "short", "int", "long", "unsigned", "signed"} | set(_TYPEDEFS)


def cast_type(words: list[str]) -> CType:
    """The type named by a cast's words ("unsigned long long int" -> unsigned long); None if not one."""
    if len(words) == 1 and words[0] in _TYPEDEFS:
        return _TYPEDEFS[words[0]]
    if any(w not in _CAST_WORDS - set(_TYPEDEFS) for w in words):
        return None
    sign = [w for w in words if w in ("signed", "unsigned")]
    rest = [w for w in words if w not in ("signed", "unsigned")]
    unsigned = sign == ["unsigned"]
    if len(sign) > 1:
        return None
    if rest in (["char"], ["short"], ["short", "int"]):
        key = ("unsigned " if unsigned else "signed " if sign and rest == ["char"] else "") + rest[0]
        return _NARROW[key]
    if rest in ([], ["int"]):
        return UINT if unsigned else INT
    if rest in (["long"], ["long", "int"], ["long", "long"], ["long", "long", "int"]):
        return ULONG if unsigned else LONG
    return None


def common_type(a: CType, b: CType) -> CType:
    """The usual arithmetic conversions of two promoted operand types."""
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.bits > b.bits else b
    u, s = (a, b) if b.signed else (b, a)
    return u if u.bits >= s.bits else s  # long + unsigned int -> long: it holds every unsigned value


def literal_type(value: int, suffix: str, decimal: bool) -> CType | None:
    """C's literal typing: the first type of the list that holds ``value`` (None: too large)."""
    s = suffix.lower()
    if s not in ("", "u", "l", "ll", "ul", "lu", "ull", "llu") or "lL" in suffix or "Ll" in suffix:
        raise ValueError(suffix)
    if "u" in s:
        candidates = [UINT, ULONG] if "l" not in s else [ULONG]
    elif "l" in s:
        candidates = [LONG] if decimal else [LONG, ULONG]
    else:
        candidates = [INT, LONG] if decimal else [INT, UINT, LONG, ULONG]
    return next((t for t in candidates if value <= t.hi), None)


@dataclass
class Value:
    """Per-thread values (an object array of exact Python ints, in range of ``type``)."""

    v: np.ndarray
    type: CType


def value_of(x, n: int) -> Value | dict:
    """Wrap an env entry: a Value, a dict of members, or an int/sequence (int, or long if too large)."""
    if isinstance(x, (Value, dict)):
        return x
    arr = np.empty(n, dtype=object)
    arr[:] = [int(v) for v in np.broadcast_to(np.asarray(x, dtype=object), (n,))]
    fits = all(INT.lo <= v <= INT.hi for v in arr)
    return Value(arr, INT if fits else LONG)


# ---------------------------------------------------------------- syntax tree


@dataclass(frozen=True)
class Num:
    value: int
    type: CType = INT


@dataclass(frozen=True)
class Name:
    id: str


@dataclass(frozen=True)
class Member:
    obj: object
    name: str


@dataclass(frozen=True)
class Index:
    obj: object
    index: object


@dataclass(frozen=True)
class Unary:
    op: str
    operand: object


@dataclass(frozen=True)
class Cast:
    type: CType
    operand: object


@dataclass(frozen=True)
class Binary:
    op: str
    left: object
    right: object


@dataclass(frozen=True)
class Cond:
    test: object
    then: object
    other: object


@dataclass(frozen=True)
class Call:
    fn: str
    args: tuple


FUNCTIONS = {"min": 2, "max": 2, "abs": 1}

# Binary operators by precedence level, loosest first (C order; ?: is handled above these).
_LEVELS: tuple[tuple[str, ...], ...] = (
    ("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", "<=", ">", ">="),
    ("<<", ">>"), ("+", "-"), ("*", "/", "%"),
)

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<float>(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?|\d+[eE][-+]?\d+[fF]?)
  | (?P<num>0[xX][0-9a-fA-F]+|\d+)(?P<suffix>[uUlL]*)(?![\w])
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>&|^~!?:()\[\].,])
""", re.VERBOSE)


@dataclass(frozen=True)
class Token:
    kind: str  # "num", "name", "op", "end"
    text: str
    col: int  # 1-based column, for messages
    suffix: str = ""  # of a number: u, l, ul, ll, ...


def tokenize(text: str, what: str = "expression") -> list[Token]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise UsageError(f"cannot parse {what} {text!r}: unexpected {text[pos]!r} at column {pos + 1}")
        kind = m.lastgroup if m.lastgroup != "suffix" else "num"
        if kind == "float":
            raise UsageError(f"cannot parse {what} {text!r}: floating-point literal {m.group()!r} at column "
                             f"{pos + 1} (index expressions are integer)")
        if kind == "num":
            out.append(Token(kind, m.group("num"), pos + 1, m.group("suffix")))
        elif kind != "ws":
            out.append(Token(kind, m.group(), pos + 1))
        pos = m.end()
    out.append(Token("end", "", len(text) + 1))
    return out


class _Parser:
    def __init__(self, text: str, what: str):
        self.text, self.what = text, what
        self.toks = tokenize(text, what)
        self.i = 0
        self.nesting = 0

    # -- helpers
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def fail(self, msg: str, tok: Token | None = None):
        tok = tok or self.tok
        found = f"{tok.text!r}" if tok.kind != "end" else "the end"
        raise UsageError(f"cannot parse {self.what} {self.text!r}: {msg}, found {found} at column {tok.col}")

    def take(self, text: str | None = None, kind: str | None = None) -> Token | None:
        t = self.tok
        if (text is None or t.text == text) and (kind is None or t.kind == kind) and t.kind != "end":
            self.i += 1
            return t
        return None

    def expect(self, text: str) -> Token:
        return self.take(text, "op") or self.fail(f"expected {text!r}")

    def _nested(self, rule):
        """Parse ``rule`` one level deeper; refuse beyond MAX_NESTING (Python's stack is the limit)."""
        if self.nesting == MAX_NESTING:
            raise UsageError(f"{self.what} is nested more than {MAX_NESTING} levels deep (parentheses, brackets, "
                             f"unary operators, casts, ?:) at column {self.tok.col}")
        self.nesting += 1
        node = rule()
        self.nesting -= 1
        return node

    # -- grammar
    def parse(self):
        node = self.conditional()
        if self.tok.kind != "end":
            self.fail("expected an operator or the end")
        return node

    def conditional(self):
        test = self.binary(0)
        if self.take("?", "op"):
            then = self._nested(self.conditional)
            self.expect(":")
            return Cond(test, then, self._nested(self.conditional))
        return test

    def binary(self, level: int):
        if level == len(_LEVELS):
            return self.unary()
        node = self.binary(level + 1)
        while self.tok.kind == "op" and self.tok.text in _LEVELS[level]:
            op = self.take().text
            node = Binary(op, node, self.binary(level + 1))
        return node

    def unary(self):
        if self.tok.kind == "op" and self.tok.text in ("-", "+", "!", "~"):
            op = self.take().text
            return Unary(op, self._nested(self.unary))
        if self.tok.text == "(" and self._cast_ahead():
            start = self.take()
            words = self._type_words()
            ty = cast_type(words)
            if ty is None:
                self.fail(f"unsupported cast type {' '.join(words)!r} (integer types only)", start)
            self.expect(")")
            return Cast(ty, self._nested(self.unary))
        return self.postfix(self.primary())

    def _cast_ahead(self) -> bool:
        nxt = self.toks[self.i + 1]
        return nxt.kind == "name" and nxt.text in _CAST_WORDS | {"float", "double", "bool"}  # refused by name

    def _type_words(self) -> list[str]:
        words = []
        while self.tok.kind == "name":
            words.append(self.take().text)
        if not words:
            self.fail("expected a type name")
        return words

    def primary(self):
        t = self.tok
        if self.take(kind="num"):
            return self._number(t)
        if self.take("(", "op"):
            node = self._nested(self.conditional)
            self.expect(")")
            return node
        if self.take(kind="name"):
            if t.text == "sizeof":
                self.expect("(")
                ty = ctypes_.lookup(" ".join(self._type_words()))
                self.expect(")")
                return Num(ty.size, ULONG)
            if t.text in FUNCTIONS and self.tok.text == "(":
                self.take()
                args = [self._nested(self.conditional)]
                while self.take(",", "op"):
                    args.append(self._nested(self.conditional))
                self.expect(")")
                if len(args) != FUNCTIONS[t.text]:
                    self.fail(f"{t.text}() takes {FUNCTIONS[t.text]} argument(s)")
                return Call(t.text, tuple(args))
            return Name(t.text)
        self.fail("expected a number, a name or '('")

    def _number(self, t: Token) -> Num:
        hexa = t.text[:2].lower() == "0x"
        base = 16 if hexa else 8 if len(t.text) > 1 and t.text[0] == "0" else 10
        try:
            value = int(t.text, base)
        except ValueError:
            self.fail("bad octal number", t)
        try:
            ty = literal_type(value, t.suffix, base == 10)
        except ValueError:
            self.fail(f"bad integer suffix {t.suffix!r}", t)
        if ty is None:
            raise UsageError(f"integer literal {t.text}{t.suffix} in {self.what} {self.text!r} is too large for "
                             f"any integer type{' of its suffix' if t.suffix else ''} (at most "
                             f"{LONG.hi if base == 10 and 'u' not in t.suffix.lower() else ULONG.hi})")
        return Num(value, ty)

    def postfix(self, node):
        while True:
            if self.take("[", "op"):
                idx = self._nested(self.conditional)
                self.expect("]")
                node = Index(node, idx)
            elif self.take(".", "op"):
                name = self.take(kind="name") or self.fail("expected a member name after '.'")
                node = Member(node, name.text)
            else:
                return node


def _children(node) -> tuple:
    if isinstance(node, (Unary, Cast)):
        return (node.operand,)
    if isinstance(node, Binary):
        return node.left, node.right
    if isinstance(node, Cond):
        return node.test, node.then, node.other
    if isinstance(node, Call):
        return node.args
    if isinstance(node, (Member, Index)):
        return (node.obj,) + ((node.index,) if isinstance(node, Index) else ())
    return ()


def tree_depth(node) -> int:
    """Depth of the syntax tree (without recursion: it is what the limit protects)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        stack += [(c, d + 1) for c in _children(n)]
    return deepest


def parse(text: str, what: str = "expression"):
    """Parse C expression ``text``; UsageError (one line, with the column) if it is not one."""
    if not text or not text.strip():
        raise UsageError(f"empty {what}")
    if len(text) > MAX_LENGTH:
        raise UsageError(f"{what} is {len(text)} characters long: at most {MAX_LENGTH} are accepted")
    node = _Parser(text, what).parse()
    if tree_depth(node) > MAX_TREE_DEPTH:
        raise UsageError(f"{what} has more than {MAX_TREE_DEPTH} operators applied one after another: "
                         f"split it with --let names")
    return node


# ---------------------------------------------------------------- evaluation

def _c_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Quotient truncated toward zero (b has no zeros)."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _objects(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


class Evaluator:
    """Evaluate parsed expressions for ``n`` threads.

    ``env`` maps a name to a :class:`Value`, an int, a sequence of n ints (int, or long if one is
    too large for int) or a dict of members (``threadIdx`` -> {"x": Value, ...}). Calling it gives
    the values (an object array of Python ints); :meth:`typed` gives the :class:`Value`.
    """

    def __init__(self, env: dict, n: int, what: str = "expression", text: str = ""):
        self.env, self.n, self.what, self.text = env, n, what, text

    def fail(self, msg: str):
        where = f" in {self.what} {self.text!r}" if self.text else ""
        raise UsageError(f"{msg}{where}")

    def __call__(self, node, live: np.ndarray | None = None) -> np.ndarray:
        return self.typed(node, live).v

    def typed(self, node, live: np.ndarray | None = None) -> Value:
        live = np.ones(self.n, dtype=bool) if live is None else live
        return self.eval(node, live)

    def _const(self, value: int, ty: CType) -> Value:
        return Value(_objects([value] * self.n), ty)

    def _result(self, v: np.ndarray, ty: CType, live: np.ndarray, what: str) -> Value:
        """A signed result out of range on a live thread is undefined in C: refuse; else wrap."""
        if ty.signed:
            out = (v < ty.lo) | (v > ty.hi)
            bad = live & out
            if bad.any():
                lane = int(np.flatnonzero(bad)[0])
                self.fail(f"signed overflow: {what} gives {v[lane]} for thread {lane}, outside {ty.name} "
                          f"({ty.lo}..{ty.hi}; undefined behaviour in C)")
            if not out.any():
                return Value(v, ty)  # in range on every thread: nothing to wrap
        return Value(ty.wrap(v), ty)

    def eval(self, node, live: np.ndarray) -> Value:
        if isinstance(node, Num):
            return self._const(node.value, node.type)
        if isinstance(node, Name):
            if node.id not in self.env:
                self.fail(f"unknown name {node.id!r} (give it with --let {node.id}=EXPR)")
            v = value_of(self.env[node.id], self.n)
            if isinstance(v, dict):
                self.fail(f"{node.id} needs a member ({', '.join('.' + k for k in v)})")
            return v
        if isinstance(node, Member):
            base = self.env.get(node.obj.id) if isinstance(node.obj, Name) else None
            if not isinstance(base, dict):
                self.fail(f"unexpected member .{node.name}")
            if node.name not in base:
                self.fail(f"{node.obj.id} has no member .{node.name}")
            return value_of(base[node.name], self.n)
        if isinstance(node, Index):
            self.fail("array reads inside an index are not supported")
        if isinstance(node, Cast):
            return convert(self.eval(node.operand, live), node.type)
        if isinstance(node, Unary):
            return self._unary(node, live)
        if isinstance(node, Cond):
            t = self.eval(node.test, live).v != 0
            a, b = self.eval(node.then, live & t), self.eval(node.other, live & ~t)
            ty = common_type(a.type, b.type)
            return Value(np.where(t, ty.wrap(a.v), ty.wrap(b.v)), ty)
        if isinstance(node, Call):
            return self._call(node, live)
        if isinstance(node, Binary):
            return self._binary(node, live)
        raise TypeError(f"unknown node {node!r}")  # pragma: no cover - parser makes only the above

    def _unary(self, node: Unary, live: np.ndarray) -> Value:
        x = self.eval(node.operand, live)
        if node.op == "!":
            return Value(_objects((x.v == 0).astype(int).tolist()), INT)
        if node.op == "-":
            return self._result(-x.v, x.type, live, "unary -")
        if node.op == "~":
            return Value(x.type.wrap(~x.v), x.type)
        return x  # unary + (operands are already promoted)

    def _call(self, node: Call, live: np.ndarray) -> Value:
        args = [self.eval(a, live) for a in node.args]
        if node.fn == "abs":
            (x,) = args
            if not x.type.signed:
                self.fail(f"abs() of an {x.type.name} value: cast it to a signed type first")
            return self._result(np.abs(x.v), x.type, live, "abs()")
        ty = common_type(args[0].type, args[1].type)
        a, b = ty.wrap(args[0].v), ty.wrap(args[1].v)
        return Value(np.where(a < b, a, b) if node.fn == "min" else np.where(a > b, a, b), ty)

    def _binary(self, node: Binary, live: np.ndarray) -> Value:
        op = node.op
        left = self.eval(node.left, live)
        if op in ("&&", "||"):
            lt = left.v != 0
            reach = live & (~lt if op == "||" else lt)
            rt = self.eval(node.right, reach).v != 0
            return Value(_objects(((lt | rt) if op == "||" else (lt & rt)).astype(int).tolist()), INT)
        right = self.eval(node.right, live)
        if op in ("<<", ">>"):
            return self._shift(op, left, right, live)
        ty = common_type(left.type, right.type)
        a, b = ty.wrap(left.v), ty.wrap(right.v)
        if op in ("==", "!=", "<", "<=", ">", ">="):
            cmp = {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
            return Value(_objects(np.asarray(cmp, dtype=bool).astype(int).tolist()), INT)
        if op in ("/", "%"):
            zero = b == 0
            if np.any(zero & live):
                self.fail("division by zero")
            safe = np.where(zero, 1, b)
            q = self._result(_c_div(a, safe), ty, live, f"'{op}'")  # INT_MIN / -1 (and % -1) is undefined
            return q if op == "/" else Value(a - safe * q.v, ty)
        exact = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "&": lambda: a & b,
                 "|": lambda: a | b, "^": lambda: a ^ b}[op]()
        return self._result(exact, ty, live, f"'{op}'")

    def _shift(self, op: str, left: Value, right: Value, live: np.ndarray) -> Value:
        ty = left.type  # the promoted left operand's type
        count = right.v
        bad = live & ((count < 0) | (count >= ty.bits))
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            self.fail(f"shift count {count[lane]} out of range 0..{ty.bits - 1} for {ty.name} (thread {lane})")
        c = np.where((count < 0) | (count >= ty.bits), 0, count)
        if op == ">>":
            return Value(left.v >> c, ty)  # arithmetic for negative signed values, as nvcc
        if ty.signed:  # C++17: defined only for a non-negative value whose result fits the unsigned type
            bad = live & ((left.v < 0) | ((left.v << c) > 2 * ty.hi + 1))
            if bad.any():
                lane = int(np.flatnonzero(bad)[0])
                self.fail(f"left shift of {left.v[lane]} by {c[lane]} in {ty.name} is undefined in C "
                          f"(thread {lane})")
        return Value(ty.wrap(left.v << c), ty)


def convert(value: Value, ctype: CType) -> Value:
    """C's conversion of a value to ``ctype`` (an initializer, a cast): modulo 2^bits, as nvcc does for signed
    targets too; narrow types then promote to int."""
    return Value(ctype.wrap(value.v), ctype if ctype.bits >= 32 else INT)


def constant(text: str, what: str = "constant expression") -> int:
    """Evaluate an expression with no names (array dimensions)."""
    node = parse(text, what)
    return int(Evaluator({}, 1, what, text)(node)[0])
