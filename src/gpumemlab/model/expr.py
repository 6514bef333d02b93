"""A safe parser and vectorized evaluator for C index expressions (no Python eval).

Integers only, evaluated for every thread at once as 64-bit signed NumPy arrays, with C's rules
where they differ from Python's: ``/`` and ``%`` truncate toward zero, comparisons and logical
operators give 0 or 1, ``&&``, ``||`` and ``?:`` evaluate a side only for the threads that reach it
(so ``n > 0 && x / n`` never divides by zero). Unsigned wrap-around is not modelled: ``unsigned``
arithmetic on index values that stay non-negative gives the same answer.

Grammar: C's operator precedence from ``?:`` down to unary ``- + ! ~``, casts to integer types
(no effect), ``sizeof(type)``, ``min``/``max``/``abs``, postfix ``[...]`` and ``.member``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from . import types as ctypes_

# ---------------------------------------------------------------- syntax tree


@dataclass(frozen=True)
class Num:
    value: int


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
_CAST_WORDS = {"char", "short", "int", "long", "unsigned", "signed", "size_t", "ptrdiff_t",
               "int32_t", "int64_t", "uint32_t", "uint64_t"}

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
        if kind != "ws":
            out.append(Token(kind, m.group("num") if kind == "num" else m.group(), pos + 1))
        pos = m.end()
    out.append(Token("end", "", len(text) + 1))
    return out


class _Parser:
    def __init__(self, text: str, what: str):
        self.text, self.what = text, what
        self.toks = tokenize(text, what)
        self.i = 0

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

    # -- grammar
    def parse(self):
        node = self.conditional()
        if self.tok.kind != "end":
            self.fail("expected an operator or the end")
        return node

    def conditional(self):
        test = self.binary(0)
        if self.take("?", "op"):
            then = self.conditional()
            self.expect(":")
            return Cond(test, then, self.conditional())
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
            return Unary(op, self.unary())
        if self.tok.text == "(" and self._cast_ahead():
            self.take()
            self._type_words()
            self.expect(")")
            return self.unary()  # integer casts do not change a 64-bit index
        return self.postfix(self.primary())

    def _cast_ahead(self) -> bool:
        nxt = self.toks[self.i + 1]
        return nxt.kind == "name" and nxt.text in _CAST_WORDS

    def _type_words(self) -> str:
        words = []
        while self.tok.kind == "name":
            words.append(self.take().text)
        if not words:
            self.fail("expected a type name")
        return " ".join(words)

    def primary(self):
        t = self.tok
        if self.take(kind="num"):
            base = 16 if t.text[:2].lower() == "0x" else 8 if len(t.text) > 1 and t.text[0] == "0" else 10
            try:
                return Num(int(t.text, base))
            except ValueError:
                self.fail("bad octal number", t)
        if self.take("(", "op"):
            node = self.conditional()
            self.expect(")")
            return node
        if self.take(kind="name"):
            if t.text == "sizeof":
                self.expect("(")
                ty = ctypes_.lookup(self._type_words())
                self.expect(")")
                return Num(ty.size)
            if t.text in FUNCTIONS and self.tok.text == "(":
                self.take()
                args = [self.conditional()]
                while self.take(",", "op"):
                    args.append(self.conditional())
                self.expect(")")
                if len(args) != FUNCTIONS[t.text]:
                    self.fail(f"{t.text}() takes {FUNCTIONS[t.text]} argument(s)")
                return Call(t.text, tuple(args))
            return Name(t.text)
        self.fail("expected a number, a name or '('")

    def postfix(self, node):
        while True:
            if self.take("[", "op"):
                idx = self.conditional()
                self.expect("]")
                node = Index(node, idx)
            elif self.take(".", "op"):
                name = self.take(kind="name") or self.fail("expected a member name after '.'")
                node = Member(node, name.text)
            else:
                return node


def parse(text: str, what: str = "expression"):
    """Parse C expression ``text``; UsageError (one line, with the column) if it is not one."""
    if not text or not text.strip():
        raise UsageError(f"empty {what}")
    return _Parser(text, what).parse()


# ---------------------------------------------------------------- evaluation

def _c_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _c_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a - b * _c_div(a, b)


_UNARY = {"-": np.negative, "+": np.positive, "~": np.invert, "!": lambda x: (x == 0).astype(np.int64)}
_ARITH = {
    "+": np.add, "-": np.subtract, "*": np.multiply,
    "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
    "==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
    ">": np.greater, ">=": np.greater_equal,
}


class Evaluator:
    """Evaluate parsed expressions for ``n`` threads.

    ``env`` maps a name to an int, an int64 array of length n, or a dict of members
    (``threadIdx`` -> {"x": array, ...}).
    """

    def __init__(self, env: dict, n: int, what: str = "expression", text: str = ""):
        self.env, self.n, self.what, self.text = env, n, what, text

    def fail(self, msg: str):
        where = f" in {self.what} {self.text!r}" if self.text else ""
        raise UsageError(f"{msg}{where}")

    def __call__(self, node, live: np.ndarray | None = None) -> np.ndarray:
        live = np.ones(self.n, dtype=bool) if live is None else live
        return self.eval(node, live)

    def _value(self, v):
        if isinstance(v, dict):
            return v
        return np.broadcast_to(np.asarray(v, dtype=np.int64), (self.n,))

    def eval(self, node, live: np.ndarray) -> np.ndarray:
        if isinstance(node, Num):
            return np.full(self.n, node.value, dtype=np.int64)
        if isinstance(node, Name):
            if node.id not in self.env:
                self.fail(f"unknown name {node.id!r} (give it with --let {node.id}=EXPR)")
            v = self._value(self.env[node.id])
            if isinstance(v, dict):
                self.fail(f"{node.id} needs a member ({', '.join('.' + k for k in v)})")
            return v
        if isinstance(node, Member):
            base = self.env.get(node.obj.id) if isinstance(node.obj, Name) else None
            if not isinstance(base, dict):
                self.fail(f"unexpected member .{node.name}")
            if node.name not in base:
                self.fail(f"{node.obj.id} has no member .{node.name}")
            return self._value(base[node.name])
        if isinstance(node, Index):
            self.fail("array reads inside an index are not supported")
        if isinstance(node, Unary):
            return _UNARY[node.op](self.eval(node.operand, live))
        if isinstance(node, Cond):
            t = self.eval(node.test, live) != 0
            return np.where(t, self.eval(node.then, live & t), self.eval(node.other, live & ~t))
        if isinstance(node, Call):
            args = [self.eval(a, live) for a in node.args]
            return {"min": np.minimum, "max": np.maximum, "abs": np.abs}[node.fn](*args)
        if isinstance(node, Binary):
            return self._binary(node, live)
        raise TypeError(f"unknown node {node!r}")  # pragma: no cover - parser makes only the above

    def _binary(self, node: Binary, live: np.ndarray) -> np.ndarray:
        left = self.eval(node.left, live)
        if node.op in ("&&", "||"):
            lt = left != 0
            reach = live & (~lt if node.op == "||" else lt)
            rt = self.eval(node.right, reach) != 0
            return ((lt | rt) if node.op == "||" else (lt & rt)).astype(np.int64)
        right = self.eval(node.right, live)
        if node.op in ("/", "%"):
            zero = right == 0
            if np.any(zero & live):
                self.fail("division by zero")
            safe = np.where(zero, 1, right)
            return _c_div(left, safe) if node.op == "/" else _c_mod(left, safe)
        if node.op in ("<<", ">>"):
            if np.any(((right < 0) | (right > 62)) & live):
                self.fail("shift count out of range 0..62")
            r = np.clip(right, 0, 62)
            return np.left_shift(left, r) if node.op == "<<" else np.right_shift(left, r)
        return _ARITH[node.op](left, right).astype(np.int64)


def constant(text: str, what: str = "constant expression") -> int:
    """Evaluate an expression with no names (array dimensions)."""
    node = parse(text, what)
    return int(Evaluator({}, 1, what, text)(node)[0])
