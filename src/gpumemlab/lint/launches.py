"""Launch configurations written in the file's host code: ``kernel<<<grid, block>>>(args)`` with constant values.

Where the user gives no --block (or --grid, --template, --let), lint takes them from the launches of the kernel in
the same file when every launch agrees on a compile-time constant: ``dim3 threads(32, 8)`` or ``256`` for the block,
``k<32><<<...>>>`` for template arguments, literal arguments for integer parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import frontend as fe

CONFIG_CALLS = ("cudaConfigureCall", "__cudaPushCallConfiguration")


@dataclass
class Launch:
    line: int
    grid: tuple | None = None
    block: tuple | None = None
    templates: list = field(default_factory=list)  # values (int) or type spellings, in order; None: not constant
    args: list = field(default_factory=list)  # int values or None, one per kernel argument


def _strip(c, K):
    while c.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) and len(list(c.get_children())) == 1:
        c = next(iter(c.get_children()))
    return c


def _dim3(c, K) -> tuple | None:
    """A dim3 expression's constant value: dim3(x, y, z), a dim3 variable so initialized, or an integer."""
    c = _strip(c, K)
    n = fe.evaluate_int(c)
    if n is not None:
        return (n, 1, 1)
    kids = [_strip(k, K) for k in c.get_children()]
    if c.kind == K.CALL_EXPR and c.spelling == "dim3":
        if len(kids) == 1 and kids[0].kind == K.DECL_REF_EXPR:  # a copy of a dim3 variable
            return _dim3(kids[0], K)
        vals = []
        for k in kids:
            if k.kind == K.UNEXPOSED_EXPR and k.location.line == 0:  # a default argument
                vals.append(1)
                continue
            v = fe.evaluate_int(k)
            if v is None:
                return None
            vals.append(v)
        return tuple((vals + [1, 1, 1])[:3]) if vals else None
    if c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced.kind == K.VAR_DECL:
        init = [k for k in c.referenced.get_children() if k.kind.is_expression()]
        return _dim3(init[-1], K) if init else None
    return None


def find_launches(parsed) -> dict[str, list[Launch]]:
    """{kernel name: [Launch]} for every ``<<<...>>>`` launch in the file."""
    K = fe.cindex().CursorKind
    out: dict[str, list[Launch]] = {}
    tops = [t for t in parsed.tu.cursor.get_children() if t.location.file and t.location.file.name == parsed.path]
    for c in (c for t in tops for c in t.walk_preorder()):
        if c.kind != K.CALL_EXPR:
            continue
        kids = list(c.get_children())
        config = [k for k in kids if k.kind == K.CALL_EXPR and k.spelling in CONFIG_CALLS]
        if not config:
            continue
        launch = Launch(c.location.line)
        cfg = [k for k in config[0].get_children() if k.kind.is_expression()][1:]  # after the callee
        if len(cfg) >= 2:
            launch.grid, launch.block = _dim3(cfg[0], K), _dim3(cfg[1], K)
        callee = _strip(kids[0], K)
        for t in callee.get_children():
            if t.kind == K.TYPE_REF:
                launch.templates.append(t.type.spelling)
            elif t.kind.is_expression():
                launch.templates.append(fe.evaluate_int(t))
        args = [k for k in kids[1:] if k not in config and k.kind.is_expression()]
        launch.args = [fe.evaluate_int(a) for a in args]
        out.setdefault(c.spelling, []).append(launch)
    return out


def agreed(values: list):
    """The one value every launch gives (None if they differ or one is not constant)."""
    if not values or any(v is None for v in values) or any(v != values[0] for v in values):
        return None
    return values[0]
