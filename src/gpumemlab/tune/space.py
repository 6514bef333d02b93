"""A tuning space as data: allowed values per parameter, restrictions, derived values (kernel_tuner's model).

A restriction or a derived value is a callable of the point's context (a dict: the problem's values such
as ``m`` or ``n``, the device's such as ``sm_count``, the parameters, and the values derived before it) or a
C-like expression string over the same names (``"tiles * splits <= slots"``), evaluated by a small
whitelisting evaluator: names, numbers, arithmetic, comparisons, ``and``/``or``/``not``, conditional
expressions and the functions ``min``, ``max``, ``abs``, ``ceil``, ``floor``.
"""

from __future__ import annotations

import ast
import itertools
import math
import operator
from dataclasses import dataclass, field
from collections.abc import Callable, Iterator

from ..errors import UsageError

Rule = str | Callable[[dict], object]

_FUNCS = {"min": min, "max": max, "abs": abs, "ceil": math.ceil, "floor": math.floor}
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_CMPOPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge}


def _eval(node: ast.AST, names: dict):
    if isinstance(node, ast.Expression):
        return _eval(node.body, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise UsageError(f"unknown name {node.id!r} in a space expression (known: {', '.join(sorted(names))})")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, names), _eval(node.right, names))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        v = _eval(node.operand, names)
        return -v if isinstance(node.op, ast.USub) else not v
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, names) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, names)
        for op, right_node in zip(node.ops, node.comparators):
            if type(op) not in _CMPOPS:
                break
            right = _eval(right_node, names)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        else:
            return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, names) else node.orelse, names)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS
            and not node.keywords):
        return _FUNCS[node.func.id](*(_eval(a, names) for a in node.args))
    raise UsageError(f"not allowed in a space expression: {ast.unparse(node)!r}")


def evaluate(rule: Rule, context: dict):
    """The value of a restriction or derived value for one point's context."""
    if callable(rule):
        return rule(context)
    try:
        tree = ast.parse(rule, mode="eval")
    except SyntaxError as exc:
        raise UsageError(f"space expression {rule!r}: {exc.msg}") from None
    return _eval(tree, context)


def describe_rule(rule: Rule) -> str:
    """A rule as text for the JSON record: the expression, or the callable's name."""
    return rule if isinstance(rule, str) else getattr(rule, "__name__", repr(rule))


def default_name(params: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())


@dataclass(frozen=True)
class Point:
    """One valid point: its parameters (in declaration order), the derived values and its name."""

    params: dict
    derived: dict
    name: str


@dataclass(frozen=True)
class Space:
    """``params``: {name: allowed values}; ``restrictions``: rules that must all hold; ``derive``: {name: rule},
    computed in order (later ones see earlier ones), before the restrictions; ``namer``: params -> name."""

    params: dict
    restrictions: tuple = ()
    derive: dict = field(default_factory=dict)
    namer: Callable[[dict], str] = default_name

    def __post_init__(self):
        for name, values in self.params.items():
            if not values:
                raise UsageError(f"space parameter {name!r} has no values")
        clash = set(self.params) & set(self.derive)
        if clash:
            raise UsageError(f"derived values shadow parameters: {', '.join(sorted(clash))}")

    def product_size(self) -> int:
        return math.prod(len(v) for v in self.params.values())

    def points(self, context: dict | None = None) -> Iterator[Point]:
        """Every valid point, in the order of the parameters' value lists (last parameter fastest)."""
        names = list(self.params)
        for values in itertools.product(*self.params.values()):
            params = dict(zip(names, values))
            ctx = {**(context or {}), **params}
            derived = {}
            for key, rule in self.derive.items():
                derived[key] = ctx[key] = evaluate(rule, ctx)
            if all(evaluate(r, ctx) for r in self.restrictions):
                yield Point(params, derived, self.namer(params))

    def point(self, name: str, context: dict | None = None) -> Point:
        """The valid point called ``name``; UsageError if there is none."""
        for p in self.points(context):
            if p.name == name:
                return p
        raise UsageError(f"no valid point named {name!r} in this space")

    def describe(self) -> dict:
        """The space as JSON data (values, restrictions and derived names as text)."""
        return dict(params={k: list(v) for k, v in self.params.items()},
                    restrictions=[describe_rule(r) for r in self.restrictions],
                    derive={k: describe_rule(r) for k, r in self.derive.items()})
