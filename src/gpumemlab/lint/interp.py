"""Run a kernel's body once for every thread of one block, symbolically in the launch and the parameters.

Every value is evaluated for all threads at once (NumPy object arrays, C's integer types and conversions from
:mod:`gpumemlab.model.expr`). Statements run in order: locals are assigned, ``if`` masks the threads that take
each branch (and merges the variables after it), a loop runs its first iteration (its step is checked for being
warp-uniform), ``return``/``break``/``continue`` retire threads, ``__device__`` helpers run at their call site.
Each load and store through a pointer parameter, a ``__shared__`` array or a global ``__device__`` array is
recorded with every thread's byte address and whether it executes it. What cannot be known - a value loaded
from memory, an opaque call, floating point - is an :class:`Unknown` with its reason, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from ..model import expr
from . import frontend as fe
from .ltypes import BOOL, Array, Float, Int, Opaque, Pointer, Record, by_name

MAX_CALL_DEPTH = 12
MAX_STEPS = 200_000  # statements and expressions visited per kernel run
MAX_ITERATIONS = 16  # iterations of one loop entry evaluated after the first (the cost: one body run each)
PEEK_ITERATIONS = 4  # iterations of a loop too long to run whole: what a 16-byte vectorized unroll spans
REPEAT_STEPS = 40_000  # steps per kernel run after which later iterations are no longer evaluated
LAUNCH_SCALE = 16  # the launch average needs every iteration: its runs allow this many times more iterations
LAUNCH_STEPS = 300_000  # steps of all of one launch's block runs together (its runs' own limit as well)
FAST_FORWARD = 1024  # iterations of a long loop's condition and step run on (no body) to know its variables after it
# calls after which a value stored earlier must be loaded again (barriers, fences, atomics, async copies, waits)
_ORDERS_MEMORY = re.compile(r"sync|fence|atomic|barrier|arrive|wait|memcpy|pipeline")
MAX_DEPTH = 600  # expressions nested in each other (stays below Python's recursion limit set by lint_file)


class LintLimit(Exception):
    """The kernel is too large or deep to run (reported as one line)."""


@dataclass(frozen=True)
class Unknown:
    reason: str
    buf: object = None  # the memory an unknown address points into, when that much is known


@dataclass(frozen=True, eq=False)
class Closure(Unknown):
    """A lambda (an unknown value everywhere but at its call): the values it captured by copy when it was made, and
    the frame whose variables it captured by reference (``refs``: names; ``all_refs``: a ``[&]`` default)."""

    frame: object = None
    values: dict = field(default_factory=dict)
    refs: frozenset = frozenset()
    all_refs: bool = False
    this: str | None = None  # the maker's object: "ref" ([this], [=], [&] in a method), "copy" ([*this]), None


@dataclass
class Buffer:
    """Memory an access goes through: a pointer parameter, a __shared__ array or a global __device__ array."""

    name: str
    space: str  # "global", "shared", "constant", "local"
    type: object  # element type (pointer params) or the array type
    line: int
    decl_text: str
    restrict: bool = False
    const: bool = False


@dataclass
class PtrV:
    buf: Buffer
    off: np.ndarray  # byte offset per thread (object ints)
    to: object  # pointee type


@dataclass
class Elements:
    """An integer array member of a struct passed by value (``int sizes[4]`` of a tensor descriptor): the value of
    each element (``--let t.sizes[0]=...``), read by subscripts like any value."""

    values: list


@dataclass
class MemVar:
    """A scalar variable that lives in memory (``__shared__ float mean;``, ``__device__ int count;``): reading it is
    a load and assigning it a store, at the same address for every thread."""

    buf: Buffer
    off: np.ndarray
    type: object = None  # what it holds (None: the buffer's own type, a scalar variable)

    def place(self):
        return Place(self.buf, self.off, self.type if self.type is not None else self.buf.type)


@dataclass
class Place:
    """An lvalue in memory."""

    buf: Buffer
    off: np.ndarray
    type: object


@dataclass
class VarRef:
    name: str


@dataclass
class Loop:
    line: int
    var: str | None
    uniform: bool | None  # the step is the same for every lane of each warp (None: unknown)
    step: str
    lane_start: bool = False  # the variable starts at a different value in each lane (a per-thread chunk)
    additive: bool = False  # the step adds (++, +=, -=): a uniform one shifts every lane alike, keeping the pattern
    iterations: int = 0  # iterations evaluated (of the first entry)
    complete: bool = False  # every lane left the loop within them
    stopped: str | None = None  # why later iterations were not evaluated
    too_long: str | None = None  # the trip count is over MAX_ITERATIONS: stop after PEEK_ITERATIONS
    trips: int | None = None  # iterations of the first entry, where known (counted, or run to the end)


@dataclass
class Access:
    """One load or store as recorded (one per source location and call path)."""

    key: tuple
    line: int
    column: int
    file: str
    text: str
    kind: str  # "load", "store", "atomic", "texture"
    buf: Buffer | None
    type: object
    offsets: np.ndarray | None  # byte offset of each thread
    active: np.ndarray | None
    unknown: str | None = None
    call_lines: tuple = ()  # call sites (outermost first) when inside a __device__ helper
    loops: tuple = ()
    notes: list = field(default_factory=list)
    member: str | None = None
    record_type: object = None  # the struct an AoS member access reads from
    later: list = field(default_factory=list)  # (iteration path, offsets, active) of each later loop iteration
    assumption: str | None = None  # the guard on loaded data whose lanes were assumed to pass
    # lanes entering the innermost enclosing if or loop iteration: a predicated instruction issues in every warp
    # that has one of them (the first iteration; later_reach: each later one)
    reach: np.ndarray | None = None
    later_reach: list = field(default_factory=list)
    # a load of the address this thread stored last, nothing stored or synchronized since: the compiler keeps the
    # value in a register and issues no instruction (the first execution; later_held: each later one)
    held: bool = False
    later_held: list = field(default_factory=list)


class Frame:
    def __init__(self, env: dict, fn_name: str):
        self.env = env
        self.fn = fn_name
        self.ret = None  # return value (merged per lane)
        self.returned = None  # lanes that returned
        self.types: dict = {}  # declared type of each local
        self.this = None  # a method's object: "this" (its members in env["this"]) or a Place (an object in memory)
        self.returns_ref = False  # the function returns a reference: its return statements give a place


def _uninitialized(v) -> bool:
    """A variable declared without a value: assigning it in some lanes gives it that value (the others cannot read
    it without undefined behaviour)."""
    return isinstance(v, Unknown) and v.reason.endswith("not initialized")


def _read_bytes(name: str, parsed) -> bytes:
    if name == parsed.path:
        return parsed.text.encode()
    try:
        with open(name, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _objs(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


class Interpreter:
    def __init__(self, parsed: fe.Parsed, n: int, env0: dict, tenv: dict, records: dict[str, Record],
                 unbound: tuple = ()):
        self.ci = fe.cindex()
        self.K = self.ci.CursorKind
        self.parsed = parsed
        self.n = n
        self.env0 = env0  # builtins and bound parameters
        self.tenv = tenv  # template parameter -> type or int
        self.records = records
        self.accesses: dict[tuple, Access] = {}
        self.seen: dict[tuple, int] = {}
        self.calls: list[tuple[str, int]] = []  # (function, call line)
        self.loops: list[Loop] = []
        self.uncertain: list[str] = []  # reasons the executing lanes are not known
        self.assumed: list[str] = []  # guards on loaded data: every lane the known part selects is assumed to pass
        self.notes: list[str] = []
        self.steps = 0
        self.depth = 0
        self._types: dict = {}
        self._kids = parsed.children  # cursor -> its children (every run walks the same statements)
        self._nodes = parsed.nodes  # cursor -> (kind, type)
        self.frame: Frame | None = None
        self.globals: dict = {}
        self.unbound = tuple(unbound)  # template parameters not given
        self.param_info: list[dict] = []  # the kernel's parameters as the run bound them (for --validate)
        self._cursor_types: dict = {}  # expression cursor -> lint type of its value
        self._literals: dict = {}  # literal cursor -> (value, C type)
        self._bound_caches: dict = {}  # (helper, template bindings) -> its (type, cursor type) caches
        self._source_lines = None  # the file's lines (a loop's #pragma unroll)
        self.repeat = 0  # enclosing loops now past their first iteration
        self.iter_path: list[int] = []  # the iteration of each enclosing loop
        self.exits: list[tuple[np.ndarray, np.ndarray]] = []  # (break lanes, continue lanes) per enclosing loop
        self.regions: list[np.ndarray] = []  # lanes entering each enclosing if and loop iteration
        self.region_keys: list = []  # each region's identity: a fresh object per if, the Loop for its iterations
        self.shared_scalars: dict = {}  # id(buffer) -> (buffer, value, C type) of a __shared__ scalar one value stored
        self.stored: tuple | None = None  # (buffer, offsets, lanes, type) of the last store: its value is in a register
        self.scale = 1  # the launch average's runs: loops run to LAUNCH_SCALE times the iterations and steps
        self.max_steps = MAX_STEPS
        self.assume_data = False  # guards on loaded data: assume the lanes their known part selects (else unknown)
        self.constant_values: dict = {}  # --let values of __constant__ integers (NAME, NAME.MEMBER, NAME[I])

    # ------------------------------------------------------------ types

    def ltype(self, t, cursor=None):
        """A clang type -> lint's type, template parameters substituted (cached per spelling)."""
        TK = self.ci.TypeKind
        k = t.kind
        if k in (TK.DEPENDENTSIZEDARRAY, TK.CONSTANTARRAY) and self.dependent_sized(t):  # sizes: the declaration's
            return self._dependent_array(t, cursor)
        key = (k, t.spelling)
        hit = self._types.get(key)
        if hit is None:
            hit = self._types[key] = self._ltype(t, cursor)
        return hit

    def _ltype(self, t, cursor=None):
        TK = self.ci.TypeKind
        k = t.kind
        if k in (TK.ELABORATED, TK.TYPEDEF, TK.AUTO):
            c = t.get_canonical()
            if c.kind not in (TK.UNEXPOSED, k):
                return self.ltype(c, cursor)
            if k == TK.AUTO:
                return Opaque("auto type not deduced (template code)")
            bound = self._bound_type(t)
            if bound is not None:
                return bound
        if k == TK.POINTER:
            return Pointer(self.ltype(t.get_pointee()))
        if k in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
            return self.ltype(t.get_pointee())
        if k == TK.CONSTANTARRAY:
            return Array(self.ltype(t.element_type), t.element_count)
        if k == TK.INCOMPLETEARRAY:
            return Array(self.ltype(t.element_type), None)
        if k == TK.BOOL:
            return BOOL
        if k == TK.FLOAT:
            return Float(4)
        if k == TK.DOUBLE:
            return Float(8)
        if k == TK.HALF:
            return Float(2)
        if k == TK.RECORD:
            return self._record(t)
        if k == TK.ENUM:
            return Int(expr.INT)
        spelled = by_name(t.spelling)
        if spelled is not None:
            return spelled
        name = " ".join(w for w in t.spelling.split() if w not in ("const", "volatile"))
        if name in self.tenv:
            v = self.tenv[name]
            return v if not isinstance(v, int) else Opaque(f"template parameter {name} is a value")
        if name.endswith("*"):
            inner = name[:-1].strip()
            if inner in self.tenv and not isinstance(self.tenv[inner], int):
                return Pointer(self.tenv[inner])
        if name in self.records:
            return self.records[name]
        if name.startswith("type-parameter") or name in self.unbound:
            return Opaque(f"template type {name} not given (--template {name}=TYPE)")
        bound = self._bound_type(t)  # KeyPack<K, VEC>: a template struct of the parameters
        if bound is not None:
            return bound
        return Opaque(f"type {t.spelling!r} not understood")

    def _bound_type(self, t):
        """A type that depends on template parameters (``typedef typename Vec16<T>::type V``), with the kernel's
        template arguments substituted and instantiated by clang (frontend.resolve_type); None if it cannot be."""
        decl = t.get_declaration()
        under = decl.underlying_typedef_type if decl.kind == self.K.TYPEDEF_DECL else t
        spelling = re.sub(r"^(?:(?:const|volatile|typename)\s+)+", "", under.spelling)
        words = set(re.findall(r"\b[A-Za-z_]\w*\b", spelling))
        if not words & set(self.tenv):
            return None
        for name, v in self.tenv.items():
            arg = str(v) if isinstance(v, int) else getattr(v, "name", None)
            if arg is None or arg in ("?", "pointer"):
                if name in words:
                    return None
                continue
            spelling = re.sub(rf"\b{re.escape(name)}\b", arg, spelling)
        resolved = fe.resolve_type(self.parsed, spelling)
        return None if resolved is None else self.ltype(resolved)

    def _record(self, t):
        name = t.get_canonical().spelling.replace("struct ", "").replace("const ", "").strip()
        spelled = by_name(name)
        if spelled is not None:
            return spelled
        if name in self.records:
            return self.records[name]
        size, align = t.get_size(), t.get_align()
        if size <= 0:
            return Opaque(f"incomplete or dependent type {t.spelling!r}")
        fields = []
        for f in t.get_fields():
            off = t.get_offset(f.spelling)
            if off < 0 or off % 8:
                return Opaque(f"struct {name} has a field lint cannot place ({f.spelling})")
            fields.append((f.spelling, off // 8, self.ltype(f.type)))
        rec = Record(name, size, align, tuple(fields))
        self.records[name] = rec
        return rec

    def dependent_sized(self, t) -> bool:
        """An array type with a size that depends on a template parameter, at any level (T[32][32 + PAD])."""
        TK = self.ci.TypeKind
        while t.kind in (TK.CONSTANTARRAY, TK.DEPENDENTSIZEDARRAY, TK.INCOMPLETEARRAY):
            if t.kind == TK.DEPENDENTSIZEDARRAY:
                return True
            t = t.element_type
        return False

    def _dependent_array(self, t, cursor):
        """T[A][B] in a template: the element from the template argument, the sizes from the declaration (its size
        expressions: one per dimension, or one per dimension that depends on a template parameter)."""
        TK = self.ci.TypeKind
        levels, el = [], t
        while el.kind in (TK.DEPENDENTSIZEDARRAY, TK.CONSTANTARRAY, TK.INCOMPLETEARRAY):
            levels.append(el.element_count if el.kind == TK.CONSTANTARRAY else None)
            el = el.element_type
        exprs = []
        if cursor is not None:
            exprs = [c for c in self.children(cursor) if c.kind.is_expression()]
            exprs.sort(key=lambda c: c.extent.start.offset)
        if not exprs or len(exprs) not in (len(levels), levels.count(None)):
            return Opaque("array size not known")
        sizes = iter(exprs)
        dims = []
        for n in levels:
            if n is None or len(exprs) == len(levels):
                v = self.const_int(next(sizes))
                if v is None:
                    return Opaque("array size not known (give its template arguments)")
                if n is not None and v != n:
                    return Opaque("array size not known")
                n = v
            dims.append(n)
        base = self.ltype(el)
        out = base
        for d in reversed(dims):
            out = Array(out, d)
        return out

    # ------------------------------------------------------------ helpers

    def tick(self):
        self.steps += 1
        if self.steps > self.max_steps:
            raise LintLimit(f"more than {self.max_steps} expressions evaluated in one kernel")

    def const(self, value: int, ctype=expr.INT) -> expr.Value:
        return expr.Value(_objs([value] * self.n), ctype)

    def arith(self, node, values: dict, live) -> expr.Value | Unknown:
        """Evaluate a model.expr node over named Values with C's semantics; UB becomes Unknown."""
        try:
            return expr.Evaluator(values, self.n, "index arithmetic").typed(node, live)
        except UsageError as exc:
            return Unknown(str(exc))

    def convert(self, v, t, live):
        """C conversion of ``v`` to lint type ``t`` (integers: wrap; bool: != 0)."""
        if isinstance(v, expr.Value) and isinstance(t, Int):
            if t.boolean:
                return expr.Value((np.asarray(v.v != 0, dtype=bool)).astype(np.int64).astype(object), expr.INT)
            if t.ctype.bits < 32:
                return expr.Value(t.ctype.wrap(v.v), expr.INT)
            if t.ctype != v.type:
                widening = t.ctype.bits > v.type.bits and (t.ctype.signed or not v.type.signed)
                if not widening and v.v.size and t.ctype.lo <= min(v.v) and max(v.v) <= t.ctype.hi:
                    widening = True  # every value fits (int <-> unsigned of small indices): nothing to wrap
                return expr.Value(v.v if widening else t.ctype.wrap(v.v), t.ctype)  # widening keeps every value
            return v
        if isinstance(t, Float):
            return Unknown("floating-point value") if not isinstance(v, Unknown) else v
        if isinstance(t, Pointer) and isinstance(v, PtrV):
            return PtrV(v.buf, v.off, t.to)
        return v

    def const_int(self, cursor) -> int | None:
        v = self.value(cursor, np.ones(1, dtype=bool), probe=True)
        if isinstance(v, expr.Value) and len(set(v.v.tolist())) == 1:
            return int(v.v[0])
        return None

    def text(self, cursor) -> str:
        """The expression as written (from the file, or from an included header), spaces collapsed."""
        ext = cursor.extent
        s, e = ext.start, ext.end
        if s.file and e.file and s.file.name == e.file.name and e.offset > s.offset:
            data = self.parsed.sources.get(s.file.name)
            if data is None:
                data = self.parsed.sources[s.file.name] = _read_bytes(s.file.name, self.parsed)
            if data:
                return " ".join(data[s.offset:e.offset].decode(errors="replace").split())
        return " ".join(tok.spelling for tok in cursor.get_tokens())

    def tokens(self, c) -> list[str]:
        """The spellings of a cursor's tokens, read from libclang once per file."""
        key = (c, "tokens")
        toks = self._nodes.get(key)
        if toks is None:
            toks = self._nodes[key] = [t.spelling for t in c.get_tokens()]
        return toks

    def _semicolons(self, s) -> list[int]:
        """Offsets of a for statement's first two ';' (they separate init, condition and step)."""
        key = (s, "semicolons")
        semis = self._nodes.get(key)
        if semis is None:
            semis = self._nodes[key] = [t.extent.start.offset for t in s.get_tokens() if t.spelling == ";"][:2]
        return semis

    def node(self, c):
        """(kind, type) of a cursor, looked up in libclang once per file."""
        info = self._nodes.get(c)
        if info is None:
            info = self._nodes[c] = (c.kind, c.type)
        return info

    def children(self, c):
        kids = self._kids.get(c)
        if kids is None:
            kids = self._kids[c] = list(c.get_children())
        return kids

    def strip(self, c):
        """Skip implicit casts and parentheses."""
        while c.kind in (self.K.UNEXPOSED_EXPR, self.K.PAREN_EXPR) and len(self.children(c)) == 1:
            c = self.children(c)[0]
        return c

    # ------------------------------------------------------------ expressions

    def value(self, c, live, probe: bool = False):
        """The rvalue of expression ``c`` for every thread; loads are recorded (not when probing)."""
        self.tick()
        K = self.K
        k, t = self.node(c)
        saved_probe = getattr(self, "_probe", False)
        self._probe = probe or saved_probe
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise LintLimit(f"expressions nested more than {MAX_DEPTH} levels deep")
        try:
            v = self._value(c, live)
        finally:
            self._probe = saved_probe
            self.depth -= 1
        if isinstance(v, (expr.Value, PtrV)) and k not in (K.PAREN_EXPR,):
            lt = self._cursor_types.get(c, False)
            if lt is False:  # once per cursor and run: libclang's type calls are slow, loops revisit them
                lt = self._cursor_types[c] = None if t.kind == self.ci.TypeKind.DEPENDENT else self.ltype(t)
            if isinstance(lt, (Int, Pointer)):
                v = self.convert(v, lt, live)
        return v

    def _value(self, c, live):
        K = self.K
        k = self.node(c)[0]
        kids = self.children(c)
        if k == K.INTEGER_LITERAL or k == K.CXX_BOOL_LITERAL_EXPR:
            hit = self._literals.get(c)
            if hit is None:
                n = fe.evaluate_int(c)
                lt = self.ltype(c.type)
                hit = self._literals[c] = (n, lt.ctype if isinstance(lt, Int) and lt.ctype.bits >= 32 else expr.INT)
            n, ctype = hit
            if n is None:
                return Unknown(f"literal {self.text(c)!r} not understood")
            return self.const(n, ctype)
        if k in (K.FLOATING_LITERAL,):
            return Unknown("floating-point value")
        if k == K.CHARACTER_LITERAL:
            n = fe.evaluate_int(c)
            return self.const(n) if n is not None else Unknown("character literal")
        if k in (K.PAREN_EXPR, K.UNEXPOSED_EXPR) and len(kids) == 1:
            return self.value(kids[0], live)
        if k == K.DECL_REF_EXPR:
            return self._declref(c, live)
        if k == K.MEMBER_REF_EXPR:
            return self._member_value(c, kids, live)
        if k == K.BINARY_OPERATOR:
            return self._binary(c, kids, live)
        if k == K.COMPOUND_ASSIGNMENT_OPERATOR:
            return self._assign(c, kids, live, fe.binary_op(c)[:-1])
        if k == K.UNARY_OPERATOR:
            return self._unary(c, kids, live)
        if k == K.CONDITIONAL_OPERATOR:
            return self._conditional(kids, live)
        if k in (K.ARRAY_SUBSCRIPT_EXPR,):
            element = self._element(c, kids, live)
            return element if element is not None else self.load(c, live)
        if k in (K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR, K.CXX_REINTERPRET_CAST_EXPR, K.CXX_CONST_CAST_EXPR,
                 K.CXX_FUNCTIONAL_CAST_EXPR):
            return self._cast(c, kids, live)
        if k == K.CALL_EXPR:
            return self._call(c, kids, live)
        if k == K.CXX_UNARY_EXPR:
            n = fe.evaluate_int(c)
            if n is None:
                n = self._sizeof(c)
            return self.const(n, expr.ULONG) if n is not None else Unknown(f"{self.text(c)!r} not known")
        if k == K.LAMBDA_EXPR:
            return self._closure(c)
        if k in (K.INIT_LIST_EXPR,):
            vals = [self.value(ch, live) for ch in kids]
            t = self.ltype(c.type)
            if isinstance(t, Record) and len(vals) <= len(t.fields):  # Cfg d{4, 0}: members in order, then defaults
                obj = dict(zip([f for f, _, _ in t.fields], vals))
                rest = self._default_members(c.type, set(obj), live)
                return {f: obj[f] if f in obj else rest.get(f, self.const(0)) for f, _, _ in t.fields}
            return Unknown("initializer list")
        if k == K.CXX_NULL_PTR_LITERAL_EXPR or k == K.GNU_NULL_EXPR:
            return Unknown("null pointer")
        # anything else: evaluate the children for their accesses, the value is unknown
        for ch in kids:
            if ch.kind.is_expression():
                self.value(ch, live)
        return Unknown(f"{self.text(c)[:40]!r} ({k.name.lower().replace('_', ' ')}) not analyzed")

    def _closure(self, c):
        """A lambda's captures from its capture list: ``[=]``/``[x]`` copy the values now, ``[&]``/``[&x]`` refer to
        this frame's variables; an init-capture (``[n = 2 * k]``) is unknown inside the lambda."""
        toks = self.tokens(c)
        depth, items, cur = 0, [], []
        for t in toks[1:]:
            if t in ("[", "(", "{"):
                depth += 1
            elif t in ("]", ")", "}"):
                if depth == 0:
                    break
                depth -= 1
            if t == "," and depth == 0:
                items.append(cur)
                cur = []
            else:
                cur.append(t)
        items.append(cur)
        env = self.frame.env if self.frame is not None else {}
        values, refs, all_refs, this = {}, set(), False, None
        for it in items:
            if it in (["this"], ["="], ["&"]) or it == ["*", "this"]:
                this = "copy" if it[0] == "*" else "ref"
            if it == ["="]:
                values.update((n, v) for n, v in env.items() if n != "this")
            elif it == ["&"]:
                all_refs = True
            elif "=" in it:  # an init-capture: a new variable, its value not followed
                name = it[it.index("=") - 1]
                values[name] = Unknown(f"{name}: a lambda's init-capture (not followed)")
            elif it[:1] == ["&"] and len(it) == 2:
                refs.add(it[1])
            elif len(it) == 1 and it[0] in env:
                values[it[0]] = env[it[0]]
        for n in refs:
            values.pop(n, None)
        return Closure("a lambda (its value is known only at its call)", None, self.frame, values, frozenset(refs),
                       all_refs, this)

    def _captured(self, closure) -> tuple[dict, dict, set]:
        """A lambda's variables at its call: (values, declared types, names captured by reference). Variables in
        shared or global memory need no capture."""
        fr = closure.frame
        if fr is None:
            return {}, {}, set()
        env, refs = {}, set()
        for n, v in fr.env.items():
            if n in closure.values:
                env[n] = closure.values[n]
            elif n != "this" and (n in closure.refs or (closure.all_refs and n not in closure.values)):
                env[n] = v
                refs.add(n)
            elif isinstance(v, MemVar) or (isinstance(v, PtrV) and v.buf.space == "shared" and
                                           isinstance(fr.types.get(n), Array)):
                env[n] = v
        env.update((n, v) for n, v in closure.values.items() if n not in env)
        return env, {n: fr.types[n] for n in env if n in fr.types}, refs

    def _element(self, c, kids, live):
        """``t.sizes[d]`` of a struct parameter's integer array member: the element's value per lane (None: not
        such a subscript)."""
        b = self.strip(kids[0]) if kids else None
        if b is None or b.kind != self.K.MEMBER_REF_EXPR or not self.children(b) or self.frame is None:
            return None
        root = self.strip(self.children(b)[0])
        whole = self.frame.env.get(root.spelling) if root.kind == self.K.DECL_REF_EXPR else None
        arr = whole.get(b.spelling) if isinstance(whole, dict) else None
        if not isinstance(arr, Elements):
            return None
        idx = self.value(kids[1], live)
        if not isinstance(idx, expr.Value):
            return idx if isinstance(idx, Unknown) else Unknown(f"index of {self.text(c)!r} not an integer")
        out = []
        for lane, (i, m) in enumerate(zip(idx.v, live)):
            if not m:
                out.append(0)
                continue
            if not 0 <= int(i) < len(arr.values):
                return Unknown(f"{self.text(c)}: element {int(i)} is outside the array")
            v = arr.values[int(i)]
            if isinstance(v, Unknown):
                return v
            out.append(v.v[lane])
        return expr.Value(_objs(out), next(v.type for v in arr.values if isinstance(v, expr.Value)))

    def _sizeof(self, c):
        toks = [t.spelling for t in c.get_tokens()]
        if len(toks) >= 4 and toks[0] == "sizeof" and toks[1] == "(" and toks[-1] == ")":
            name = " ".join(toks[2:-1])
            t = by_name(name) or self.tenv.get(name)
            if t is not None and not isinstance(t, int) and getattr(t, "size", 0):
                return t.size
        for ref in self.children(c):  # sizeof(V) of a local typedef: its type, template arguments bound
            if ref.kind == self.K.TYPE_REF:
                t = self.ltype(ref.type)
                return getattr(t, "size", None) or None
        return None

    def _declref(self, c, live):
        name = c.spelling
        frame = self.frame
        if frame is not None and name in frame.env:
            v = frame.env[name]
            return self.load(c, live) if isinstance(v, MemVar) else v
        ref = c.referenced
        if ref is not None:
            if ref.kind == self.K.ENUM_CONSTANT_DECL:
                return self.const(ref.enum_value)
            if ref.kind == self.K.TEMPLATE_NON_TYPE_PARAMETER:
                v = self.tenv.get(name)
                if isinstance(v, int):
                    return self.const(v)
                return Unknown(f"template parameter {name} not given (--template {name}=VALUE)")
            if ref.kind == self.K.VAR_DECL and name in self.globals:
                g = self.globals[name]
                return self.load(c, live) if isinstance(g, MemVar) else g
        if name in self.env0:
            return self.env0[name]
        n = fe.evaluate_int(c)
        if n is not None:
            return self.const(n)
        if ref is not None and ref.kind == self.K.VAR_DECL:
            init = [ch for ch in self.children(ref) if ch.kind.is_expression()]
            if init and (ref.type.is_const_qualified() or "constexpr" in self.tokens(ref)[:3]):
                return self.value(init[-1], live, probe=True)
        return Unknown(f"{name} not known")

    def _member_value(self, c, kids, live):
        base_c = kids[0] if kids else None
        if base_c is not None:
            b = self.strip(base_c)
            if b.kind == self.K.DECL_REF_EXPR and not self._in_memory(b.spelling):
                bv = self._declref(b, live)
                if isinstance(bv, dict):
                    return bv.get(c.spelling, Unknown(f"no member .{c.spelling}"))
            fn = b.referenced if b.kind == self.K.CALL_EXPR else None
            if fn is not None and fn.kind in (self.K.FUNCTION_DECL, self.K.CXX_METHOD, self.K.FUNCTION_TEMPLATE) and \
                    fn.result_type.get_canonical().kind == self.ci.TypeKind.RECORD or (fn is not None and fn.kind == self.K.CONSTRUCTOR):
                bv = self.value(b, live)  # a struct returned by value: g.group_index().x
                return bv.get(c.spelling, Unknown(f"no member .{c.spelling}")) if isinstance(bv, dict) else \
                    (bv if isinstance(bv, Unknown) else Unknown(f"member .{c.spelling} of {self.text(b)[:40]!r}"))
        return self.load(c, live)

    def _binary(self, c, kids, live):
        op = fe.binary_op(c)
        if op == "=":
            return self._assign(c, kids, live, None)
        if op == ",":
            self.value(kids[0], live)
            return self.value(kids[1], live)
        if op in ("==", "!=") and len(kids) == 2 and (self._is_null(kids[0], kids[1]) or self._is_null(kids[1], kids[0])):
            v = self.value(kids[1] if self._is_null(kids[0], kids[1]) else kids[0], live)
            if isinstance(v, PtrV):  # lint's buffers are allocations: never null
                return self.const(int(op == "!="))
            return v if isinstance(v, Unknown) else Unknown("comparison with a null pointer")
        if op in ("&&", "||"):
            a = self.value(kids[0], live)
            if isinstance(a, PtrV):
                a = self.const(1)
            if isinstance(a, Unknown):
                self.value(kids[1], live)
                return a
            at = np.asarray(a.v != 0, dtype=bool)
            reach = live & (at if op == "&&" else ~at)
            self.regions.append(live)  # as for `?:`: the right operand's predicated loads issue where `&&` is reached
            self.region_keys.append(object())
            try:
                b = self.value(kids[1], reach)
            finally:
                self.regions.pop()
                self.region_keys.pop()
            if isinstance(b, Unknown):
                if not reach.any():
                    return expr.Value(_objs(at.astype(int).tolist()), expr.INT)
                return b
            if isinstance(b, PtrV):
                b = self.const(1)
            bt = np.asarray(b.v != 0, dtype=bool)
            r = (at & bt) if op == "&&" else (at | bt)
            return expr.Value(_objs(r.astype(int).tolist()), expr.INT)
        if op in ("&", "%"):
            low = self._address_bits(op, kids, live)
            if low is not None:
                return low
        a = self.value(kids[0], live)
        b = self.value(kids[1], live)
        if isinstance(a, PtrV) or isinstance(b, PtrV):
            return self._pointer_arith(op, a, b, live)
        if isinstance(a, Unknown):
            return a
        if isinstance(b, Unknown):
            return b
        if not isinstance(a, expr.Value) or not isinstance(b, expr.Value):
            return Unknown("operand not an integer")
        return self.arith(expr.Binary(op, expr.Name("a"), expr.Name("b")), {"a": a, "b": b}, live)

    ALIGNMENT = 256  # lint's buffers start at a multiple of this (what cudaMalloc gives)

    def _address_bits(self, op, kids, live):
        """``(uintptr_t)p & 15`` or ``(size_t)p % 16``: the low bits of a pointer converted to an integer, which the
        allocation's alignment decides (the rest of the address is not known); None for anything else."""
        cast = self.strip(kids[0])
        if cast.kind not in (self.K.CSTYLE_CAST_EXPR, self.K.CXX_REINTERPRET_CAST_EXPR, self.K.CXX_STATIC_CAST_EXPR,
                             self.K.CXX_FUNCTIONAL_CAST_EXPR) or not isinstance(self.ltype(cast.type), Int):
            return None
        operand = [ch for ch in self.children(cast) if ch.kind.is_expression()]
        casts = (self.K.CSTYLE_CAST_EXPR, self.K.CXX_REINTERPRET_CAST_EXPR, self.K.CXX_STATIC_CAST_EXPR,
                 self.K.CXX_FUNCTIONAL_CAST_EXPR)
        while operand and self.strip(operand[-1]).kind in casts and isinstance(self.ltype(operand[-1].type), Int):
            # (unsigned)(uintptr_t)p: a narrower integer keeps the low bits the mask reads
            operand = [ch for ch in self.children(self.strip(operand[-1])) if ch.kind.is_expression()]
        m = self.const_int(kids[1])
        if not operand or m is None or m <= 0 or (op == "&" and m >= self.ALIGNMENT) or \
                (op == "%" and self.ALIGNMENT % m):
            return None
        p = self.value(operand[-1], live)
        if not isinstance(p, PtrV) or p.buf.space == "local":
            return None
        bits = _objs([int(o) & m if op == "&" else int(o) % m for o in p.off])
        return expr.Value(bits, self.ltype(cast.type).ctype)

    def _is_null(self, c, other) -> bool:
        """``c`` is nullptr, NULL, or a literal 0 compared with a pointer."""
        c = self.strip(c)
        if c.kind in (self.K.CXX_NULL_PTR_LITERAL_EXPR, self.K.GNU_NULL_EXPR):
            return True
        return c.kind == self.K.INTEGER_LITERAL and self.const_int(c) == 0 and \
            self.strip(other).type.kind == self.ci.TypeKind.POINTER

    def _pointer_arith(self, op, a, b, live):
        if isinstance(a, PtrV) and isinstance(b, PtrV):
            if op in ("==", "!=", "<", ">", "<=", ">="):
                return Unknown("pointer comparison")
            return Unknown("difference of two pointers")
        p, i = (a, b) if isinstance(a, PtrV) else (b, a)
        if isinstance(i, Unknown):
            return Unknown(i.reason, p.buf)  # still into p's memory: an atomic on it is known to be shared/global
        if op not in ("+", "-") or (op == "-" and isinstance(b, PtrV)):
            return Unknown(f"pointer operation {op}")
        size = getattr(p.to, "size", 0)
        if not size:
            return Unknown(f"pointer to {getattr(p.to, 'name', '?')} (element size unknown)")
        step = i.v * size
        return PtrV(p.buf, p.off + step if op == "+" else p.off - step, p.to)

    def _unary(self, c, kids, live):
        op = fe.unary_op(c)
        if op in ("pre++", "pre--", "post++", "post--"):
            return self._increment(c, kids[0], live, op)
        if op == "*":
            return self.load(c, live)
        if op == "&":
            lv = self.lvalue(kids[0], live)
            if isinstance(lv, Place):
                return PtrV(lv.buf, lv.off, lv.type)
            if isinstance(lv, VarRef):  # a local's address: its accesses are the thread's own (registers or local)
                t = self.ltype(kids[0].type)
                return PtrV(Buffer(lv.name, "local", t, c.location.line, self.text(kids[0])), _objs([0] * self.n), t)
            return lv if isinstance(lv, Unknown) else Unknown("address of a local variable")
        a = self.value(kids[0], live)
        if isinstance(a, Unknown):
            return a
        if not isinstance(a, expr.Value):
            return Unknown(f"unary {op} of a pointer")
        if op in ("-", "+", "~", "!"):
            return self.arith(expr.Unary(op, expr.Name("a")), {"a": a}, live)
        return Unknown(f"unary {op}")

    def _conditional(self, kids, live):
        t = self.value(kids[0], live)
        if isinstance(t, Unknown):
            self.value(kids[1], live)
            self.value(kids[2], live)
            return t
        tt = np.asarray(t.v != 0, dtype=bool) if isinstance(t, expr.Value) else np.ones(self.n, bool)
        self.regions.append(live)  # a predicated load in an arm issues in every warp that reaches the `?:`
        self.region_keys.append(object())
        try:
            a = self.value(kids[1], live & tt)
            b = self.value(kids[2], live & ~tt)
        finally:
            self.regions.pop()
            self.region_keys.pop()
        return self.merge(tt, a, b, live)

    def merge(self, cond, a, b, live):
        """Per thread: ``a`` where ``cond``, else ``b`` (for the live threads)."""
        if a is b:
            return a
        if _uninitialized(b) and not _uninitialized(a):  # lanes that never assigned it cannot read it (UB)
            return a
        if _uninitialized(a) and not _uninitialized(b):
            return b
        la, lb = (live & cond).any(), (live & ~cond).any()
        if not lb:
            return a
        if not la:
            return b
        if isinstance(a, expr.Value) and isinstance(b, expr.Value):
            ty = expr.common_type(a.type, b.type)
            av = a.v if a.type == ty else ty.wrap(a.v)  # values of the type already are in its range
            bv = b.v if b.type == ty else ty.wrap(b.v)
            return expr.Value(np.where(cond, av, bv), ty)
        if isinstance(a, PtrV) and isinstance(b, PtrV) and a.buf is b.buf:
            return PtrV(a.buf, np.where(cond, a.off, b.off), a.to)
        if isinstance(a, Place) and isinstance(b, Place) and a.buf is b.buf and a.type == b.type:
            return Place(a.buf, np.where(cond, a.off, b.off), a.type)
        if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
            return {k: self.merge(cond, a[k], b[k], live) for k in a}
        if isinstance(a, Unknown):
            return a
        if isinstance(b, Unknown):
            return b
        return Unknown("differs between threads in a way lint cannot follow")

    def _cast(self, c, kids, live):
        operand = [ch for ch in kids if ch.kind.is_expression()]
        if not operand:
            return Unknown("cast")
        v = self.value(operand[-1], live)
        t = self.ltype(c.type)
        if isinstance(t, Pointer):
            if isinstance(v, PtrV):
                return PtrV(v.buf, v.off, t.to)
            return v if isinstance(v, Unknown) else Unknown("integer cast to a pointer")
        if isinstance(t, Int):
            if isinstance(v, expr.Value):
                return self.convert(v, t, live)
            return v if isinstance(v, Unknown) else Unknown("pointer cast to an integer")
        if isinstance(t, Float):
            return Unknown("floating-point value")
        if isinstance(t, Opaque):
            return v if isinstance(v, (expr.Value, PtrV)) and "template" not in t.reason else Unknown(t.reason)
        return Unknown(f"cast to {t.name}")

    # ------------------------------------------------------------ lvalues, loads and stores

    def lvalue(self, c, live):
        """VarRef, Place (memory) or Unknown."""
        self.tick()
        K = self.K
        c = self.strip(c)
        k = c.kind
        kids = self.children(c)
        if k == K.DECL_REF_EXPR:
            name = c.spelling
            if self.frame is not None and name in self.frame.env:
                v = self.frame.env[name]
                t = self.frame.types.get(name)
                if isinstance(v, MemVar):
                    return v.place()
                if isinstance(v, PtrV) and isinstance(t, Array) and self._is_array_var(c):
                    return Place(v.buf, v.off, t)
                return VarRef(name)
            if name in self.globals:
                g = self.globals[name]
                if isinstance(g, MemVar):
                    return g.place()
                if isinstance(g, PtrV):
                    return Place(g.buf, g.off, g.buf.type)
            return Unknown(f"{name} is not a local variable lint follows")
        if k == K.ARRAY_SUBSCRIPT_EXPR:
            base_c, idx_c = kids[0], kids[1]
            base = self.value(base_c, live)
            idx = self.value(idx_c, live)
            if isinstance(base, expr.Value) and isinstance(idx, PtrV):
                base, idx = idx, base
            if isinstance(base, Place) and isinstance(base.type, Array):
                base = PtrV(base.buf, base.off, base.type.of)
            if isinstance(base, Unknown):
                return base
            if not isinstance(base, PtrV):
                return Unknown("subscript of something that is not a pointer or array")
            if isinstance(idx, Unknown):
                return Unknown(f"index {self.text(idx_c)!r}: {idx.reason}", base.buf)
            size = getattr(base.to, "size", 0)
            if not size:
                return Unknown(f"element type {getattr(base.to, 'reason', getattr(base.to, 'name', '?'))}", base.buf)
            return Place(base.buf, base.off + idx.v * size, base.to)
        if k == K.UNARY_OPERATOR and fe.unary_op(c) == "*":
            p = self.value(kids[0], live)
            if isinstance(p, PtrV):
                return Place(p.buf, p.off, p.to)
            return p if isinstance(p, Unknown) else Unknown("dereference of a non-pointer")
        if k == K.MEMBER_REF_EXPR:
            if not kids:  # a member of the method's object (implicit this->)
                this = self.frame.this if self.frame is not None else None
                if this == "this":
                    return VarRef("this." + c.spelling)
                if not isinstance(this, Place):
                    return Unknown("member of this")
                return self._field(this, c.spelling)
            b = self.strip(kids[0])
            if b.kind == K.CXX_THIS_EXPR:  # this->member: as the implicit member
                this = self.frame.this if self.frame is not None else None
                if this == "this":
                    return VarRef("this." + c.spelling)
                return self._field(this, c.spelling) if isinstance(this, Place) else Unknown("member of this")
            arrow = isinstance(self.ltype(kids[0].type), Pointer)
            if arrow:
                p = self.value(kids[0], live)
                base = Place(p.buf, p.off, p.to) if isinstance(p, PtrV) else p
            else:
                base = self.lvalue(b, live)
            if isinstance(base, Unknown):
                return base
            if isinstance(base, VarRef):
                return VarRef(base.name + "." + c.spelling)
            if not isinstance(base, Place):
                return Unknown("member of an unknown object")
            return self._field(base, c.spelling)
        if k in (K.CSTYLE_CAST_EXPR, K.CXX_REINTERPRET_CAST_EXPR, K.CXX_STATIC_CAST_EXPR) and kids:
            return self.lvalue(kids[-1], live)
        if k == K.CALL_EXPR:  # a function returning a reference, assigned to
            v = self._call(c, kids, live, want_place=True)
            return v if isinstance(v, (Place, Unknown)) else Unknown(f"{self.text(c)[:40]!r} is not a memory location")
        v = self.value(c, live)
        return v if isinstance(v, Unknown) else Unknown(f"{self.text(c)[:40]!r} is not a memory location lint follows")

    def _in_memory(self, name) -> bool:
        """``name`` is a scalar variable in shared or global memory (reading it is a load)."""
        v = self.frame.env.get(name) if self.frame is not None else None
        return isinstance(v if v is not None else self.globals.get(name), MemVar)

    def _field(self, base, member):
        """The place of ``member`` of the struct at ``base``."""
        rec = base.type
        if not isinstance(rec, Record):
            return Unknown(f"member .{member} of {getattr(rec, 'name', '?')}")
        f = rec.field(member)
        if f is None:
            return Unknown(f"{rec.name} has no member .{member} lint can place")
        p = Place(base.buf, base.off + f[0], f[1])
        p.member = member  # type: ignore[attr-defined]
        p.record = rec  # type: ignore[attr-defined]
        return p

    def _is_array_var(self, c):
        return c.type.kind in (self.ci.TypeKind.CONSTANTARRAY, self.ci.TypeKind.DEPENDENTSIZEDARRAY,
                               self.ci.TypeKind.INCOMPLETEARRAY)

    def load(self, c, live):
        lv = self.lvalue(c, live)
        if isinstance(lv, VarRef):
            return self._read_var(lv.name)
        if isinstance(lv, Place):
            if isinstance(lv.type, Array):  # an array row decays to a pointer
                return PtrV(lv.buf, lv.off, lv.type.of)
            self.record(c, "load", lv, live)
            if lv.buf.space == "constant":
                return self._constant_value(lv, live)
            shared = self.shared_scalars.get(id(lv.buf))
            if shared is not None and shared[0] is lv.buf and isinstance(lv.type, Int):
                return expr.Value(_objs([shared[1]] * self.n), shared[2])
            return Unknown(f"value loaded from memory ({self.text(c)[:40]})")
        if isinstance(lv, Unknown) and self._touches_memory(c) and not self._is_array_var(c):
            self.record(c, "load", None, live, unknown=lv.reason, buf=lv.buf)  # a row (a[i] of a[i][j]) is no access
        return lv if isinstance(lv, Unknown) else Unknown("not a value")

    def _constant_value(self, place, live):
        """A __constant__ integer's value, as the host wrote it: from --let NAME (NAME.MEMBER of a struct, NAME[I] of
        an array), else unknown and naming the --let that gives it."""
        offs = {int(o) for o, m in zip(place.off, live) if m}
        name, t = place.buf.name, place.buf.type
        off = offs.pop() if len(offs) == 1 else None
        while off is not None and isinstance(t, (Record, Array)):  # the member or element at that offset
            if isinstance(t, Array):
                size = getattr(t.of, "size", 0)
                if not size or t.n is None or not 0 <= off < t.n * size:
                    break
                name, off, t = f"{name}[{off // size}]", off % size, t.of
                continue
            f = next((f for f in t.fields if f[1] <= off < f[1] + getattr(f[2], "size", 0)), None)
            if f is None:
                break
            name, off, t = f"{name}.{f[0]}", off - f[1], f[2]
        if off != 0 or not isinstance(t, Int) or not isinstance(place.type, Int):
            return Unknown(f"value loaded from memory (__constant__ {place.buf.name})")
        if name not in self.constant_values:
            return Unknown(f"value loaded from memory (__constant__ {name}: give --let {name}=VALUE)")
        return self.convert(self.const(self.constant_values[name]), place.type, live)

    def _read_var(self, name):
        if "." in name:
            base, member = name.split(".", 1)
            v = self.frame.env.get(base) if self.frame else None
            if isinstance(v, dict):
                return v.get(member, Unknown(f"{name} not known"))
            return Unknown(f"{name}: members of local structs are not followed")
        v = self.frame.env.get(name) if self.frame else None
        return v if v is not None else Unknown(f"{name} not known")

    def _base_expr(self, c):
        """The pointer or array an access expression goes through (a[i][j] -> a, *(p + 1) -> p + 1, s.x -> s)."""
        c = self.strip(c)
        kids = self.children(c)
        if c.kind == self.K.ARRAY_SUBSCRIPT_EXPR and kids:
            return self._base_expr(kids[0])
        if c.kind in (self.K.UNARY_OPERATOR, self.K.MEMBER_REF_EXPR) and kids:
            return kids[0]
        return c

    def _touches_memory(self, c) -> bool:
        """Whether an access lint could not resolve goes through global or shared memory (not a local array)."""
        TK = self.ci.TypeKind
        for d in self._base_expr(c).walk_preorder():
            if d.kind != self.K.DECL_REF_EXPR:
                continue
            v = self.frame.env.get(d.spelling) if self.frame else None
            if isinstance(v, (PtrV, MemVar)):
                return v.buf.space != "local"
            if isinstance(v, dict) and any(isinstance(m, PtrV) and m.buf.space != "local" for m in v.values()):
                return True
            if d.spelling in self.globals:
                return True
            ref = d.referenced
            if ref is None or ref.kind not in (self.K.PARM_DECL, self.K.VAR_DECL):
                continue
            if ref.type.kind == TK.POINTER or any(ch.kind == self.K.CUDASHARED_ATTR for ch in self.children(ref)):
                return True
        return False

    def _ticket(self, c, name, vals, live):
        """``atomicAdd(counter, k)`` by one thread of the block (the last-block ticket of a one-pass reduction):
        under the named assumption that the counter starts at 0 and the blocks take it in blockIdx order, block b
        draws k * b, so the block with the last index runs the tail."""
        t = self.ltype(c.type)
        if name != "atomicAdd" or len(vals) < 2 or int(live.sum()) != 1 or not isinstance(t, Int):
            return None
        k = vals[1]
        if not isinstance(k, expr.Value) or len({int(v) for v in np.asarray(k.v)[live]}) != 1:
            return None
        b, g = self.env0["blockIdx"], self.env0["gridDim"]
        idx = int(b["x"].v[0]) + int(g["x"].v[0]) * (int(b["y"].v[0]) + int(g["y"].v[0]) * int(b["z"].v[0]))
        self.note(c, f"{name} by one thread per block: a ticket, assumed to start at 0 and be taken in blockIdx "
                     f"order (block b draws b * step; the last block runs what follows `== gridDim.x - 1`)")
        return expr.Value(_objs([idx * int(np.asarray(k.v)[live][0])] * self.n), t.ctype)

    def _stored_after_loop(self, loop, before) -> None:
        """After a loop whose body (at its top level) stored the address a store before the loop wrote, the value is
        in a register on every path out of it (the loop's or the earlier store's): the store now stands around the
        loop."""
        st, keys = self.stored, tuple(self.region_keys)
        if st is None or before is None or st[4] != keys + (loop,) or before[4] != keys or st[0] is not before[0] \
                or st[3] != before[3]:
            return
        lanes = st[2] & before[2]
        if np.array_equal(lanes, before[2]) and bool(np.all(st[1][lanes] == before[1][lanes])):
            self.stored = (st[0], st[1], before[2], st[3], keys)

    def _forwarded(self, c, kind, place, live) -> bool:
        """Whether a load reads, in every live lane, the address this thread's last store wrote (the compiler
        forwards the stored value: `acc[i] += ...` in a loop loads acc[i] once, or never after `acc[i] = 0`);
        a store becomes the one held, anything else that writes or orders memory forgets it."""
        if place is None or kind not in ("load", "store") or c.type.is_volatile_qualified():
            if kind != "load" or place is not None or c.type.is_volatile_qualified():
                self.stored = None
            return False
        if kind == "store":
            self.stored = (place.buf, place.off.copy(), live.copy(), place.type, tuple(self.region_keys))
            return False
        st = self.stored
        keys = st[4] if st is not None else ()
        # the store must be on every path to the load (the compiler sees branches, not lanes): made where the load
        # is, or in a region around it (a loop's earlier iteration counts as the same region)
        dominates = len(keys) <= len(self.region_keys) and all(a is b for a, b in zip(keys, self.region_keys))
        return (st is not None and dominates and st[0] is place.buf and st[3] == place.type and bool(live.any())
                and not (live & ~st[2]).any() and bool(np.all(place.off[live] == st[1][live])))

    def record(self, c, kind, place, live, unknown=None, buf=None):
        if getattr(self, "_probe", False):
            return
        loc = c.extent.start
        fname = loc.file.name if loc.file else ""
        base = (fname, loc.line, loc.column, tuple(line for _, line in self.calls), kind)
        k = self.seen.get(base, 0)
        self.seen[base] = k + 1
        key = base + (k,)
        if place is not None and place.buf.space == "local":
            return
        reach = self.regions[-1] if self.regions else live
        held = self._forwarded(c, kind, place, live)
        if self.repeat and key in self.accesses:  # a later iteration of a loop: kept beside the first
            if place is not None and unknown is None and not self.uncertain:
                self.accesses[key].later.append((tuple(self.iter_path), place.off.copy(), live.copy()))
                self.accesses[key].later_reach.append(reach.copy())
                self.accesses[key].later_held.append(held)
            return
        if unknown is None and self.uncertain:
            unknown = self.uncertain[-1]
        assumption = self.assumed[-1] if self.assumed and unknown is None else None
        a = Access(key, loc.line, loc.column, fname, self.text(c), kind, place.buf if place else buf,
                   place.type if place else None, place.off.copy() if place is not None else None,
                   live.copy(), unknown, tuple(line for _, line in self.calls), tuple(self.loops))
        a.assumption = assumption
        a.reach = reach.copy()
        a.held = held
        if place is not None:
            a.member = getattr(place, "member", None)
            a.record_type = getattr(place, "record", None)
        self.accesses[key] = a

    def store(self, lhs_c, lv, value, live, c_for_loc=None):
        if isinstance(lv, VarRef):
            self.assign_var(lv.name, value, live)
        elif isinstance(lv, Place):
            self.record(lhs_c, "store", lv, live)
            if lv.buf.space == "shared":
                self._share_scalar(lv, value, live)
        elif isinstance(lv, Unknown) and self._touches_memory(lhs_c):
            self.record(lhs_c, "store", None, live, unknown=lv.reason, buf=lv.buf)

    def _share_scalar(self, place, value, live) -> None:
        """A __shared__ integer or bool (not an array) given one value by the lanes that store it: the block reads
        that value back (a flag or count one thread publishes for the block after a barrier)."""
        self.shared_scalars.pop(id(place.buf), None)
        if not isinstance(place.buf.type, Int) or not isinstance(value, expr.Value) or not live.any():
            return
        vals = {int(v) for v in np.asarray(value.v)[live]}
        if len(vals) == 1:
            self.shared_scalars[id(place.buf)] = (place.buf, vals.pop(), place.type.ctype)

    def assign_var(self, name, value, live):
        env = self.frame.env
        if "." in name:  # a member of a local struct (a dict of its members' values)
            base, member = name.split(".", 1)
            old = env.get(base)
            if not isinstance(old, dict) or "." in member or member not in old:
                env[base] = Unknown(f"{base}: member .{member} not followed")
                return
            new = dict(old)
            new[member] = value if live.all() else self._partial(old[member], value, live)
            env[base] = new
            return
        old = env.get(name)
        t = self.frame.types.get(name)
        if t is not None:
            value = self.convert(value, t, live)
        env[name] = value if old is None or live.all() else self._partial(old, value, live)

    def _partial(self, old, new, live):
        return self.merge(live, new, old, np.ones(self.n, dtype=bool))

    def _assign(self, c, kids, live, op):
        lhs_c, rhs_c = kids[0], kids[1]
        rhs = self.value(rhs_c, live)
        lv = self.lvalue(lhs_c, live)
        if op is None:
            self.store(lhs_c, lv, rhs, live)
            return rhs
        if isinstance(lv, Place):
            self.record(lhs_c, "load", lv, live)
            self.record(lhs_c, "store", lv, live)
            return Unknown("value loaded from memory")
        old = self._read_var(lv.name) if isinstance(lv, VarRef) else lv
        if isinstance(old, PtrV):
            new = self._pointer_arith(op, old, rhs, live)
        elif isinstance(old, Unknown):
            new = old
        elif isinstance(rhs, Unknown):
            new = rhs
        elif isinstance(rhs, expr.Value):
            new = self.arith(expr.Binary(op, expr.Name("a"), expr.Name("b")), {"a": old, "b": rhs}, live)
        else:
            new = Unknown("pointer operand")
        self.store(lhs_c, lv, new, live)
        return new

    def _increment(self, c, operand, live, op):
        lv = self.lvalue(operand, live)
        if isinstance(lv, Place):
            self.record(operand, "load", lv, live)
            self.record(operand, "store", lv, live)
            return Unknown("value loaded from memory")
        if not isinstance(lv, VarRef):
            return lv
        old = self._read_var(lv.name)
        sign = "+" if "++" in op else "-"
        if isinstance(old, PtrV):
            new = self._pointer_arith(sign, old, self.const(1), live)
        elif isinstance(old, expr.Value):
            new = self.arith(expr.Binary(sign, expr.Name("a"), expr.Num(1)), {"a": old}, live)
        else:
            new = old
        self.assign_var(lv.name, new, live)
        return new if op.startswith("pre") else old

    # ------------------------------------------------------------ calls

    MEMORY_INTRINSICS = ("__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv")
    STORE_INTRINSICS = ("__stcg", "__stcs", "__stwb", "__stwt")
    TEXTURES = ("tex1Dfetch", "tex1D", "tex2D", "tex3D", "tex2Dgather", "tex2DLod", "tex1DLod", "tex3DLod",
                "tex1DLayered", "tex2DLayered", "tex2DGrad", "surf1Dread", "surf2Dread", "surf3Dread", "surf1Dwrite",
                "surf2Dwrite", "surf3Dwrite")

    def _call(self, c, kids, live, want_place=False):
        """A call's value (a helper's body run at the call site); ``want_place``: the place a function returning a
        reference gives (an assignment's target), else that place is loaded."""
        name = c.spelling
        args = [a for a in kids if a.kind.is_expression()]
        callee = c.referenced
        if _ORDERS_MEMORY.search(name):  # barriers, fences, atomics, async copies: memory may have changed
            self.stored = None
        # the first child is the callee expression for ordinary calls
        if args and self.strip(args[0]).kind in (self.K.DECL_REF_EXPR, self.K.OVERLOADED_DECL_REF,
                                                  self.K.MEMBER_REF_EXPR) and self.strip(args[0]).spelling == name \
                and len(args) > len(list(c.get_arguments())):
            args = args[1:]
        args = list(c.get_arguments()) or args
        candidates, explicit = [], []
        if callee is None and not name and kids:  # a call in template code, resolved only at instantiation
            name, candidates, explicit = self._unresolved_callee(kids[0])
            args = [a for a in kids[1:] if a.kind.is_expression()]
        if callee is not None and callee.kind == self.K.CONSTRUCTOR and len(args) == 1 and \
                self._same_record(args[0].type, c.type):  # a struct copied (passed or returned by value)
            v = self.value(args[0], live)
            return dict(v) if isinstance(v, dict) else v
        if callee is not None and callee.kind == self.K.CONSTRUCTOR:
            t = self.ltype(c.type)
            if isinstance(t, Record):  # T x; a default-built struct, or one a constructor of the file builds
                obj = {f: Unknown(f"member .{f} not initialized") for f, _, _ in t.fields}
                obj.update(self._default_members(c.type, set(), live))
                ctor = callee.get_definition()
                return self._construct(c, ctor, args, obj, live) if ctor is not None and self._has_body(ctor) else obj
        if name == "operator=" and len(args) == 2:  # struct assignment (out[i] = make_float4(...)): a store
            rhs = self.value(args[1], live)
            self.store(args[0], self.lvalue(args[0], live), rhs, live)
            return rhs
        if name in self.MEMORY_INTRINSICS and args:
            p = self.value(args[0], live)
            if isinstance(p, PtrV):
                self.record(c, "load", Place(p.buf, p.off, p.to), live)
            elif self._touches_memory(args[0]):
                self.record(c, "load", None, live, unknown=getattr(p, "reason", "pointer not known"))
            return Unknown(f"value loaded from memory ({name})")
        if name in self.STORE_INTRINSICS and len(args) >= 2:
            p = self.value(args[0], live)
            self.value(args[1], live)
            if isinstance(p, PtrV):
                self.record(c, "store", Place(p.buf, p.off, p.to), live)
            return Unknown("store")
        if name.startswith("atomic"):
            vals = [self.value(a, live) for a in args]
            target = vals[0] if vals else None
            if isinstance(target, PtrV):  # a known address: the model's sectors or wavefronts, as for a store
                self.record(c, "atomic", Place(target.buf, target.off, target.to), live)
                return self._ticket(c, name, vals, live) or Unknown(f"result of {name}")
            buf = target.buf if isinstance(target, Unknown) else None
            if buf is not None or self._touches_memory(c):
                why = target.reason if isinstance(target, Unknown) else "not a pointer lint follows"
                self.record(c, "atomic", None, live, buf=buf, unknown=f"{name} address: {why}")
            return Unknown(f"result of {name}")
        if name in self.TEXTURES:
            for a in args:
                self.value(a, live)
            what = "surface stores" if "write" in name else "surface loads" if name.startswith("surf") else \
                "texture fetches"
            self.record(c, "texture", None, live, unknown=f"{name}: {what} go through the texture path, not modeled")
            return Unknown(f"texture fetch ({name})")
        if name in self.SHUFFLES and len(args) >= (3 if name.endswith("_sync") else 2):
            return self._shuffle(name, args, live)
        if name in ("__umul24", "__mul24") and len(args) == 2:
            vals = [self.value(a, live) for a in args]
            if not all(isinstance(v, expr.Value) for v in vals):
                return next((v for v in vals if isinstance(v, Unknown)), Unknown(f"{name} of non-integers"))
            lo, hi = (0, 1 << 24) if name == "__umul24" else (-(1 << 23), 1 << 23)
            if any(not lo <= int(x) < hi for v in vals for x in v.v):  # only the low 24 bits take part
                return Unknown(f"{name} of a value wider than 24 bits")
            t = expr.UINT if name == "__umul24" else expr.INT
            a, b = (expr.Value(v.v, t) for v in vals)  # in range: the conversion keeps every value
            return self.arith(expr.Binary("*", expr.Name("a"), expr.Name("b")), {"a": a, "b": b}, live)
        if name in self.VOTES:  # the warp's lanes that vote: a bit mask, or whether all / any of them do
            vals = [self.value(a, live) for a in args]
            pred = vals[-1] if name != "__activemask" else self.const(1)
            if not isinstance(pred, expr.Value):
                return pred if isinstance(pred, Unknown) else Unknown(f"{name} of a non-integer")
            votes = live & self._truth(pred)
            out = np.zeros(self.n, dtype=object)
            for w in range(0, self.n, 32):
                mask = sum(1 << lane for lane, v in enumerate(votes[w:w + 32]) if v)
                every = sum(1 << lane for lane, v in enumerate(live[w:w + 32]) if v)
                out[w:w + 32] = {"all": int(mask == every), "any": int(mask != 0)}.get(self.VOTES[name], mask)
            return expr.Value(out, expr.UINT if self.VOTES[name] == "mask" else expr.INT)
        if name in self.BIT_INTRINSICS and len(args) == 1:  # __popc(mask & lanemask_lt): a lane's rank
            v = self.value(args[0], live)
            if not isinstance(v, expr.Value):
                return v if isinstance(v, Unknown) else Unknown(f"{name} of a non-integer")
            bits = 64 if name.endswith("ll") else 32
            f = self.BIT_INTRINSICS[name]
            return expr.Value(_objs([f(int(x) & ((1 << bits) - 1), bits) for x in v.v]), expr.INT)
        if name in ("min", "max", "abs") and len(args) == len({"abs": 1}.get(name, 2) * [0]):
            vals = [self.value(a, live) for a in args]
            if all(isinstance(v, expr.Value) for v in vals):
                names = [expr.Name(f"a{i}") for i in range(len(vals))]
                return self.arith(expr.Call(name, tuple(names)), {f"a{i}": v for i, v in enumerate(vals)}, live)
            return next((v for v in vals if isinstance(v, Unknown)), Unknown(f"{name} of non-integers"))
        if callee is None and kids and kids[0].kind in (self.K.TEMPLATE_REF, self.K.TYPE_REF):
            conv = self._conversion(kids[0].referenced)
            if conv is not None:  # T* p = SharedMemory<T>(): a temporary converted by its operator T*()
                return self._inline(c, conv, [], live)
        defn = callee.get_definition() if callee is not None else None
        if defn is None and callee is not None and callee.kind == self.K.FUNCTION_TEMPLATE:
            defn = callee
        if defn is None and callee is not None and callee.kind == self.K.FUNCTION_DECL:
            spec = self.ci.conf.lib.clang_getSpecializedCursorTemplate(callee)
            if spec is not None and spec.kind == self.K.FUNCTION_TEMPLATE and self._has_body(spec):
                defn = spec  # a specialization template code names but clang did not instantiate: its arguments
                explicit = self._specialization_args(callee)
        if defn is None and candidates:
            defn = next((d for d in candidates if self._has_body(d) and self._arity_fits(d, len(args))
                         and self._types_fit(d, args, live)), None)
        obj = None  # an operator method's object comes first among the call's arguments: v(r, c), v[i]
        if callee is not None and callee.kind == self.K.CXX_METHOD and name.startswith("operator") and args and \
                len(args) == len([p for p in self.children(callee) if p.kind == self.K.PARM_DECL]) + 1:
            obj, args = args[0], args[1:]
        if defn is not None and self._has_body(defn):
            r = self._inline(c, defn, args, live, explicit, self._this_of(callee, kids, live, obj))
            if isinstance(r, Place) and not want_place:  # a reference returned and read
                self.record(c, "load", r, live)
                return Unknown(f"value loaded from memory ({self.text(c)[:40]})")
            return r
        for a in args:  # the arguments' own accesses
            self.value(a, live)
        return Unknown(f"result of call to {name or 'an unknown function'}")

    def _default_members(self, ctype, given: set, live) -> dict:
        """The struct's members with an initializer in its declaration (``int stride = 2;``), but those ``given``."""
        out = {}
        for fd in self.children(ctype.get_canonical().get_declaration()):
            if fd.kind == self.K.FIELD_DECL and fd.spelling not in given:
                init = [ch for ch in self.children(fd) if ch.kind.is_expression()]
                if init:
                    out[fd.spelling] = self.value(init[-1], live)
        return out

    def _construct(self, c, ctor, args, obj, live):
        """The members a constructor gives a new struct: its initializer list (``: x(a), y(b * 2)``), then its body,
        run with the new object as ``this``."""
        tmp = f"(new {c.spelling} at {c.location.line}:{c.location.column})"
        self.frame.env[tmp] = obj
        try:
            self._inline(c, ctor, args, live, this=VarRef(tmp))
            return self.frame.env.get(tmp, obj)
        finally:
            self.frame.env.pop(tmp, None)

    def _this_of(self, callee, kids, live, obj=None):
        """The object a method is called on: a Place (in memory, or through a pointer), a VarRef (a local or
        parameter struct), "same" (another method of the caller's object), or None (not a method call).
        ``obj``: an operator method's object, given as the call's first argument."""
        if callee is None or callee.kind != self.K.CXX_METHOD or not kids:
            return None
        if obj is None:
            head = self.strip(kids[0])
            if head.kind != self.K.MEMBER_REF_EXPR:
                return None
            objs = self.children(head)
            if not objs:
                return "same"
            obj = objs[0]
        o = self.strip(obj)
        if o.kind == self.K.LAMBDA_EXPR:  # [&](int i) { ... }(i): called where it is made
            return self.value(o, live)
        if o.kind == self.K.CXX_THIS_EXPR or (o.kind == self.K.UNARY_OPERATOR and fe.unary_op(o) == "*" and
                                               self.strip(self.children(o)[0]).kind == self.K.CXX_THIS_EXPR):
            return "same"
        if isinstance(self.ltype(obj.type), Pointer):
            p = self.value(obj, live)
            return Place(p.buf, p.off, p.to) if isinstance(p, PtrV) else None
        lv = self.lvalue(obj, live)
        return lv if isinstance(lv, (Place, VarRef)) else None

    def _mutable_ref(self, p) -> bool:
        """A parameter that is a non-const reference (``const float*& p``, ``int& x``): the helper writes the
        caller's object."""
        t = p.type
        return t.kind == self.ci.TypeKind.LVALUEREFERENCE and not t.get_pointee().is_const_qualified()

    def _has_body(self, defn) -> bool:
        return any(ch.kind == self.K.COMPOUND_STMT for ch in self.children(defn))

    def _arity_fits(self, defn, nargs: int) -> bool:
        params = [p for p in self.children(defn) if p.kind == self.K.PARM_DECL]
        required = [p for p in params if not any(ch.kind.is_expression() for ch in self.children(p))]
        return len(required) <= nargs <= len(params)

    def _types_fit(self, defn, args, live) -> bool:
        """Overload resolution as far as lint's types go: no pointer parameter of a non-template candidate points to
        another element type than its argument (store16(float*, ...) vs store16(double*, ...))."""
        if defn.kind == self.K.FUNCTION_TEMPLATE:
            return True
        params = [p for p in self.children(defn) if p.kind == self.K.PARM_DECL]
        for p, a in zip(params, args):
            pt, at = self.ltype(p.type), self.ltype(a.type)
            if isinstance(at, Opaque):  # a dependent type: the pointer's element type as evaluated
                v = self.value(a, live, probe=True)
                at = Pointer(v.to) if isinstance(v, PtrV) else at
            if isinstance(pt, Pointer) and isinstance(at, Pointer) and not isinstance(pt.to, Opaque) and \
                    not isinstance(at.to, Opaque) and getattr(pt.to, "size", 0) and pt.to != at.to:
                return False  # pointers to different element types do not convert (scalars do: not compared)
        return True

    def _unresolved_callee(self, head):
        """(name, candidate declarations, explicit template arguments) of a call clang left unresolved in template
        code (``__ldg(p)``, ``store<Acc, W>(dst, t)``): the overload set the name refers to."""
        lib = self.ci.conf.lib
        for d in head.walk_preorder():
            if d.kind != self.K.OVERLOADED_DECL_REF:
                continue
            cands = [lib.clang_getOverloadedDecl(d, i) for i in range(lib.clang_getNumOverloadedDecls(d))]
            parent = next((p for p in head.walk_preorder() if d in self.children(p)), None)
            sibs = self.children(parent) if parent is not None else []
            explicit = sibs[sibs.index(d) + 1:] if d in sibs else []
            return d.spelling, cands, [("type", a.type) if a.kind == self.K.TYPE_REF else ("expr", a) for a in explicit]
        return "", [], []

    def _specialization_args(self, callee) -> list:
        """The template arguments of a function template specialization, as explicit arguments are given."""
        out = []
        for i in range(callee.get_num_template_arguments()):
            kind = callee.get_template_argument_kind(i)
            if kind == self.ci.TemplateArgumentKind.TYPE:
                out.append(("type", callee.get_template_argument_type(i)))
            elif kind == self.ci.TemplateArgumentKind.INTEGRAL:
                out.append(("int", callee.get_template_argument_value(i)))
            else:
                break
        return out

    def _template_bindings(self, defn, explicit, args, live) -> dict:
        """The function template's parameters: explicit arguments in order, then type parameters deduced from the
        arguments of parameters declared as T, T* or const T& (what lint's types can tell)."""
        if defn.kind != self.K.FUNCTION_TEMPLATE:
            return {}
        tparams = [ch for ch in self.children(defn) if ch.kind in (self.K.TEMPLATE_TYPE_PARAMETER,
                                                                   self.K.TEMPLATE_NON_TYPE_PARAMETER)]
        out = {}
        for tp, (kind, a) in zip(tparams, explicit):
            if kind == "type":
                t = self.ltype(a)
                if not isinstance(t, Opaque):
                    out[tp.spelling] = t
            elif kind == "int":
                out[tp.spelling] = int(a)
            else:
                v = self.value(a, live, probe=True)
                if isinstance(v, expr.Value) and len(set(v.v.tolist())) == 1:
                    out[tp.spelling] = int(v.v[0])
        types = {tp.spelling for tp in tparams if tp.kind == self.K.TEMPLATE_TYPE_PARAMETER} - set(out)
        params = [p for p in self.children(defn) if p.kind == self.K.PARM_DECL]
        for p, a in zip(params, args):
            words = [w for w in re.findall(r"[A-Za-z_]\w*|\*", p.type.spelling) if w not in ("const", "volatile")]
            if len(words) in (1, 2) and words[0] in types and words[1:] in ([], ["*"]):
                t = self.ltype(a.type)
                t = t.to if words[1:] and isinstance(t, Pointer) else t if not words[1:] else None
                if t is not None and not isinstance(t, Opaque):
                    out[words[0]] = t
                    types.discard(words[0])
        return out

    VOTES = {"__ballot_sync": "mask", "__ballot": "mask", "__activemask": "mask", "__all_sync": "all", "__all": "all",
             "__any_sync": "any", "__any": "any"}

    BIT_INTRINSICS = {"__popc": lambda x, b: bin(x).count("1"), "__popcll": lambda x, b: bin(x).count("1"),
                      "__clz": lambda x, b: b - x.bit_length(), "__clzll": lambda x, b: b - x.bit_length(),
                      "__ffs": lambda x, b: (x & -x).bit_length(), "__ffsll": lambda x, b: (x & -x).bit_length()}

    SHUFFLES = {"__shfl_sync": "idx", "__shfl_down_sync": "down", "__shfl_up_sync": "up", "__shfl_xor_sync": "xor",
                "__shfl": "idx", "__shfl_down": "down", "__shfl_up": "up", "__shfl_xor": "xor"}

    def _shuffle(self, name, args, live):
        """A warp shuffle of an integer: each lane gets the value of the lane it reads (within segments of
        ``width`` lanes), as CUDA defines it; unknown if that lane does not execute the shuffle."""
        vals = [self.value(a, live) for a in args]
        first = 1 if name.endswith("_sync") else 0
        v, k = vals[first], vals[first + 1]
        width = vals[first + 2] if len(vals) > first + 2 and self.text(args[first + 2]) else self.const(32)
        if not isinstance(v, expr.Value):
            return v if isinstance(v, Unknown) else Unknown(f"{name} of a pointer")
        if not isinstance(k, expr.Value) or not isinstance(width, expr.Value):
            return next((x for x in (k, width) if isinstance(x, Unknown)), Unknown(f"{name}: lane not known"))
        kind, out = self.SHUFFLES[name], np.empty(self.n, dtype=object)
        for t in range(self.n):
            if not live[t]:
                out[t] = v.v[t]
                continue
            w, lane, d = int(width.v[t]), t % 32, int(k.v[t])
            seg = lane - lane % w
            src = {"idx": seg + d % w, "down": lane + d if lane % w + d < w else lane,
                   "up": lane - d if lane % w >= d else lane, "xor": lane ^ d}[kind]
            if kind == "xor" and src >= seg + w:  # a later segment: the lane keeps its own value
                src = lane
            if t - lane + src >= self.n or not live[t - lane + src]:
                return Unknown(f"{name} reads lane {src}, which does not execute it")
            out[t] = v.v[t - lane + src]
        return expr.Value(out, v.type)

    def _same_record(self, a, b) -> bool:
        strip = lambda t: t.get_canonical().spelling.replace("const ", "").replace("volatile ", "")  # noqa: E731
        return strip(a) == strip(b)

    def _conversion(self, cls):
        """The conversion operator (with a body) of class ``cls`` or its template, if it has exactly one."""
        if cls is None:
            return None
        ops = [ch for ch in self.children(cls) if ch.kind == self.K.CONVERSION_FUNCTION
               and any(g.kind == self.K.COMPOUND_STMT for g in self.children(ch))]
        if len(ops) > 1:  # operator T*() and operator const T*() const (cuda-samples' SharedMemory): same pointer
            ops = [o for o in ops if not o.is_const_method()] or ops[:1]
        return ops[0] if len(ops) == 1 else None

    def _inline(self, c, defn, args, live, explicit=(), this=None):
        name = defn.spelling
        if any(f == defn.get_usr() for f, _ in self.calls):
            self.note(c, f"recursive call to {name}: not followed")
            return Unknown(f"recursive call to {name}")
        if len(self.calls) >= MAX_CALL_DEPTH:
            return Unknown(f"calls nested deeper than {MAX_CALL_DEPTH}")
        params = [p for p in self.children(defn) if p.kind == self.K.PARM_DECL]
        vals, refs = [], {}  # refs: a reference parameter bound to a caller's local -> that local (written back)
        for i, a in enumerate(args):
            if i < len(params) and a.kind == self.K.UNEXPOSED_EXPR and not self.children(a) and not self.text(a):
                default = [ch for ch in self.children(params[i]) if ch.kind.is_expression()]
                a = default[-1] if default else a  # an argument left out: the parameter's default
            if i < len(params) and self._mutable_ref(params[i]):
                lv = self.lvalue(a, live)
                if isinstance(lv, VarRef):
                    refs[params[i].spelling] = lv.name
                    vals.append(self._read_var(lv.name))
                elif isinstance(lv, Place):  # a reference to memory: reading it loads, assigning it stores
                    vals.append(MemVar(lv.buf, lv.off, lv.type))
                else:
                    vals.append(lv if isinstance(lv, Unknown) else Unknown(f"reference to {self.text(a)[:40]!r}"))
            else:
                vals.append(self.value(a, live))
        bound = self._template_bindings(defn, explicit, args, live)
        saved_t = (self.tenv, self._types, self._cursor_types)
        if bound:  # the helper's own template parameters; its cursors' types are cached per binding
            self.tenv = {**self.tenv, **bound}
            key = (defn.get_usr(), tuple(sorted((k, str(v)) for k, v in self.tenv.items())))
            self._types, self._cursor_types = self._bound_caches.setdefault(key, ({}, {}))
        env, types = {}, {}
        for i, p in enumerate(params):
            t = self.ltype(p.type, p)
            v = vals[i] if i < len(vals) else Unknown(f"default argument of {p.spelling}")
            if isinstance(t, Int) and isinstance(v, expr.Value):
                v = self.convert(v, t, live)
            env[p.spelling] = v
            types[p.spelling] = t
        closure = self._read_var(this.name) if isinstance(this, VarRef) else this
        lam_refs = set()
        if isinstance(closure, Closure):  # a lambda's body: its captures, then its parameters
            captured, ctypes, lam_refs = self._captured(closure)
            env, types, this = {**captured, **env}, {**ctypes, **types}, None
            lam_refs -= {p.spelling for p in params}
            maker = closure.frame.this if closure.frame is not None and closure.this else None
            if isinstance(maker, Place):  # a method's lambda: its object's members
                this = maker
            elif maker == "this" and isinstance(closure.frame.env.get("this"), dict):
                env["this"] = closure.frame.env["this"]
                if closure.this == "ref":
                    lam_refs.add("this")
        frame = Frame(env, name)
        frame.types.update(types)
        frame.returns_ref = defn.result_type.kind == self.ci.TypeKind.LVALUEREFERENCE
        if "this" in env and this is None:  # a lambda's copy of its maker's object
            frame.this = "this"
        if this == "same" and self.frame is not None:
            this = self.frame.this if isinstance(self.frame.this, Place) else \
                VarRef("this") if self.frame.this == "this" else None
        if isinstance(this, Place):
            frame.this = this
        elif isinstance(this, VarRef) and isinstance(self._read_var(this.name), dict):
            env["this"], frame.this, refs["this"] = dict(self._read_var(this.name)), "this", this.name
        saved = self.frame
        self.calls.append((defn.get_usr(), c.location.line))
        self.frame = frame
        try:
            body = [ch for ch in self.children(defn) if ch.kind == self.K.COMPOUND_STMT][0]
            if defn.kind == self.K.CONSTRUCTOR and frame.this == "this":  # its member initializers first
                kids = self.children(defn)
                for m, e in zip(kids, kids[1:]):
                    if m.kind == self.K.MEMBER_REF and e.kind.is_expression() and m.spelling in env["this"]:
                        self.assign_var("this." + m.spelling, self.value(e, live), live)
            self.run_body(body, live)
        finally:
            self.frame = saved
            self.calls.pop()
            self.tenv, self._types, self._cursor_types = saved_t
        for param, local in refs.items():  # what the helper did to a reference parameter, the caller's local sees
            self.assign_var(local, frame.env.get(param, Unknown(f"{param} not known")), live)
        if lam_refs:  # what a lambda did to the variables it captured by reference, its maker's frame sees
            self._write_captures(closure.frame, {n: frame.env[n] for n in lam_refs
                                                 if frame.env.get(n) is not closure.frame.env.get(n)}, live)
        return frame.ret if frame.ret is not None else Unknown(f"result of {name}")

    def _write_captures(self, fr, changed: dict, live) -> None:
        saved, self.frame = self.frame, fr
        try:
            for n, v in changed.items():
                self.assign_var(n, v, live)
        finally:
            self.frame = saved

    def note(self, c, text):
        msg = f"{c.location.line}:{c.location.column}: {text}"
        if msg not in self.notes:
            self.notes.append(msg)

    # ------------------------------------------------------------ statements

    def run_body(self, body, live):
        self.frame.returned = np.zeros(self.n, dtype=bool)
        return self.stmt(body, live)

    def stmt(self, s, live):
        """Execute statement ``s`` for the ``live`` threads; return the threads that go on to the next one."""
        self.tick()
        K = self.K
        k = s.kind
        if k == K.COMPOUND_STMT:
            for ch in self.children(s):
                live = self.stmt(ch, live)
            return live
        if k == K.DECL_STMT:
            for d in self.children(s):
                if d.kind == K.VAR_DECL:
                    self.declare(d, live)
            return live
        if k == K.IF_STMT:
            return self._if(s, live)
        if k == K.FOR_STMT:
            return self._for(s, live)
        if k in (K.WHILE_STMT, K.DO_STMT):
            return self._while(s, live, k == K.DO_STMT)
        if k == K.RETURN_STMT:
            kids = [ch for ch in self.children(s) if ch.kind.is_expression()]
            if kids:
                v = self.lvalue(kids[0], live) if self.frame.returns_ref else self.value(kids[0], live)
                if isinstance(v, VarRef):
                    v = Unknown(f"reference to {v.name}")
                f = self.frame
                f.ret = v if f.ret is None else self.merge(live, v, f.ret, np.ones(self.n, bool))
            self.frame.returned |= live
            return np.zeros(self.n, dtype=bool)
        if k in (K.BREAK_STMT, K.CONTINUE_STMT):
            if self.exits:
                self.exits[-1][0 if k == K.BREAK_STMT else 1][:] |= live
            return np.zeros(self.n, dtype=bool)
        if k in (K.ASM_STMT, K.MS_ASM_STMT) or k.name == "GCC_ASM_STMT":
            if not self._asm_accesses(s, live):
                self.note(s, "inline PTX (asm): its memory accesses are not analyzed")
            toks = self.tokens(s)  # each operand is "constraint"(expression); outputs' constraints start = or +
            constraints = [t for t, nxt in zip(toks, toks[1:]) if t.startswith('"') and nxt == "("]
            operands = [ch for ch in self.children(s) if ch.kind.is_expression()]
            special = self._ptx_special(s)
            for i, (con, ch) in enumerate(zip(constraints, operands)):
                if con[1:2] not in ("=", "+"):
                    continue
                if special is not None and special[0] == i:  # mov.u32 %0, %laneid: the register's value
                    lv = self.lvalue(ch, live)
                    if isinstance(lv, VarRef):
                        self.assign_var(lv.name, special[1], live)
                        continue
                for d in ch.walk_preorder():
                    if d.kind == K.DECL_REF_EXPR and self.frame and d.spelling in self.frame.env:
                        self.frame.env[d.spelling] = Unknown(f"{d.spelling} written by inline PTX")
            return live
        if k == K.SWITCH_STMT:
            kids = self.children(s)
            cv = self.value(kids[0], live)
            if isinstance(cv, expr.Value) and kids[-1].kind == K.COMPOUND_STMT:
                return self._switch(kids[-1], cv, live)
            self.uncertain.append(f"switch on a value lint does not know ({getattr(cv, 'reason', 'not an integer')})")
            self.exits.append((np.zeros(self.n, bool), np.zeros(self.n, bool)))  # a break leaves the switch
            try:
                self.stmt(kids[-1], live)
            finally:
                self.uncertain.pop()
                self.exits.pop()
            return live
        if k in (K.CASE_STMT, K.DEFAULT_STMT, K.LABEL_STMT):
            for ch in self.children(s)[1 if k == K.CASE_STMT else 0:]:  # a case's first child is its value
                live = self.stmt(ch, live)
            return live
        if k == K.NULL_STMT or k == K.GOTO_STMT:
            return live
        if k.is_expression():
            self.value(s, live)
            return live
        for ch in self.children(s):
            live = self.stmt(ch, live) if ch.kind.is_statement() else live
        return live

    _PTX_MEMORY = re.compile(r"\b(ld|st|atom|red|cp\.async(?:\.bulk)?|prefetch)((?:\.[a-z0-9_:]+)*)")

    _PTX_TYPE_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
    _PTX_WIDTH_TYPE = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "uint2", 16: "uint4"}

    def _asm_accesses(self, s, live):
        """Inline PTX that loads or stores through a pointer operand. Each ``ld``/``st`` whose address is an operand
        (``st.global.v4.f32 [%0], {...}``, ``ld.global.nc.f32 %0, [%1+8]``) is that access, its width from the vector
        and type qualifiers, however many instructions the statement holds; any other pointer operand of a memory
        instruction is an access, unknown with the instruction named (and why). True when every memory instruction
        of the statement was modeled."""
        template = "".join(self._c_string(t) for t in self.tokens(s) if t.startswith('"'))
        pieces = (re.sub(r"^@!?%?\w+\s+", "", i.strip(" \t{}")) for i in re.split(r"[;\n]", template))
        instructions = [(m.group(1), m.group(2), m.string) for m in map(self._PTX_MEMORY.match, pieces) if m]
        operands = [ch for ch in self.children(s) if ch.kind.is_expression()]
        values = [self.value(ch, live, probe=True) for ch in operands]
        if not instructions:  # no memory instruction lint knows: nothing to analyze unless a pointer goes in
            return not any(isinstance(v, PtrV) for v in values)
        done, all_modeled = set(), True
        for op, quals, text in instructions:
            kind = {"ld": "load", "st": "store", "atom": "atomic", "red": "atomic"}.get(op, "load")
            addrs = [(int(n), int(off or 0)) for n, off in re.findall(r"\[\s*%(\d+)\s*(?:\+\s*(-?\d+)\s*)?\]", text)]
            addrs = [(n, off) for n, off in addrs if n < len(operands)]
            if not addrs:  # the address is a PTX register: computed in the asm from the operands
                all_modeled = False
                continue
            for n, off in addrs:
                done.add(n)
                v, why = values[n], None
                t = self._ptx_width(op, quals) if op in ("ld", "st") and len(addrs) == 1 else None
                space = next((w.split("::")[0] for w in quals.strip(".").split(".")
                              if w.split("::")[0] in ("global", "shared", "local", "const")), None)
                if not isinstance(v, PtrV):
                    all_modeled = False
                    continue
                if t is None:
                    why = "lint does not model memory accesses written in PTX"
                elif space is not None and space != v.buf.space:
                    why = f"its state space is not the pointer's ({v.buf.space}); lint does not model memory " \
                          f"accesses written in PTX"
                if why is None:
                    self.record(operands[n], kind, Place(v.buf, v.off + off, t), live)
                else:
                    all_modeled = False
                    self.record(operands[n], kind, None, live, unknown=f"inline PTX `{op}{quals}`: {why}", buf=v.buf)
        op, quals, _ = next((i for i in instructions if not re.search(r"\[\s*%\d", i[2])), instructions[0])
        for n, (ch, v) in enumerate(zip(operands, values)):  # a pointer the PTX may turn into an address itself
            if n not in done and isinstance(v, PtrV) and not all_modeled:
                self.record(ch, {"st": "store", "atom": "atomic", "red": "atomic"}.get(op, "load"), None, live,
                            unknown=f"inline PTX `{op}{quals}`: its address is computed in the PTX (not modeled)",
                            buf=v.buf)
        return all_modeled

    _PTX_SPECIAL = re.compile(r"\s*mov\.[bu]32\s+%(\d+)\s*,\s*%%(laneid|tid|ntid|ctaid|nctaid|lanemask_(?:lt|le|eq|ge|gt))"
                              r"(?:\.([xyz]))?\s*;?\s*$")

    def _ptx_special(self, s):
        """(output operand, value) of ``asm("mov.u32 %0, %%laneid;" : "=r"(lane))`` and the other special registers
        whose value lint knows (tid, ntid, ctaid, nctaid, the lane masks); None for any other asm."""
        template = "".join(self._c_string(t) for t in self.tokens(s) if t.startswith('"') and "%" in t)
        m = self._PTX_SPECIAL.match(template)
        if m is None:
            return None
        reg, axis = m.group(2), m.group(3) or "x"
        name = {"tid": "threadIdx", "ntid": "blockDim", "ctaid": "blockIdx", "nctaid": "gridDim"}.get(reg)
        if name is not None:
            v = self.env0.get(name, {}).get(axis) if isinstance(self.env0.get(name), dict) else None
            return (int(m.group(1)), v) if isinstance(v, expr.Value) else None
        lane = np.arange(self.n, dtype=np.int64) % 32
        bits = {"laneid": lane, "lanemask_eq": 1 << lane, "lanemask_lt": (1 << lane) - 1,
                "lanemask_le": (2 << lane) - 1, "lanemask_gt": 0xFFFFFFFF ^ ((2 << lane) - 1),
                "lanemask_ge": 0xFFFFFFFF ^ ((1 << lane) - 1)}[reg]
        return int(m.group(1)), expr.Value(_objs([int(b) for b in bits]), expr.UINT)

    @staticmethod
    def _c_string(tok: str) -> str:
        """A C string literal token's characters (``"a\\n\\t"`` -> a, newline, tab; other escapes kept)."""
        return tok[1:-1].replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')

    def _ptx_width(self, op, quals):
        """The lint type of the bytes one ``ld``/``st`` moves, from its vector and type qualifiers (None: not one)."""
        words = quals.strip(".").split(".")
        sizes = [self._PTX_TYPE_BYTES.get(w[1:]) for w in words if w[:1] in "bsuf" and w[1:].isdigit()]
        vec = next((int(w[1:]) for w in words if w in ("v2", "v4", "v8")), 1)
        if len(sizes) != 1 or sizes[0] is None:
            return None
        return by_name(self._PTX_WIDTH_TYPE.get(vec * sizes[0], ""))

    def declare(self, d, live):
        K = self.K
        t = self.ltype(d.type, d)
        name = d.spelling
        shared = any(ch.kind == K.CUDASHARED_ATTR for ch in self.children(d))
        init = [ch for ch in self.children(d) if ch.kind.is_expression()]
        if shared and isinstance(t, (Int, Float, Pointer, Record)):  # a __shared__ scalar: memory, one address
            self.frame.env[name] = MemVar(Buffer(name, "shared", t, d.location.line, self.text(d)), _objs([0] * self.n))
            self.frame.types[name] = None
            return
        if isinstance(t, Array) or (isinstance(t, Opaque) and shared):
            dims_exprs = init if self.dependent_sized(d.type) else []
            space = "shared" if shared else "local"
            if isinstance(t, Opaque):
                self.frame.env[name] = Unknown(f"{name}: {t.reason}")
                return
            buf = Buffer(name, space, t, d.location.line, self.text(d))
            self.frame.env[name] = PtrV(buf, _objs([0] * self.n), t.of)  # the array decays to a pointer
            self.frame.types[name] = t
            if space == "local" and init and not dims_exprs:
                for ch in init:
                    self.value(ch, live)
            return
        if init and self.dependent_sized(d.type):
            init = []
        v = self.value(init[-1], live) if init else Unknown(f"{name} is not initialized")
        if isinstance(t, (Int, Pointer)):
            v = self.convert(v, t, live)
        elif isinstance(t, Float):  # a loaded value keeps its reason (a guard on it is a guard on data)
            v = v if isinstance(v, Unknown) and self._data_guard(v.reason) else Unknown("floating-point value")
        elif isinstance(t, Opaque) and not isinstance(v, (expr.Value, PtrV)):
            v = v if isinstance(v, Unknown) else Unknown(t.reason)
        elif isinstance(t, Record):  # a struct: a dict of its members' values
            if not init:
                v = {f: Unknown(f"{name}.{f} not initialized") for f, _, _ in t.fields}
            elif isinstance(v, dict):
                v = dict(v)
        self.frame.env[name] = v
        self.frame.types[name] = t if not isinstance(t, Opaque) else None

    def _switch(self, body, cv, live):
        """A switch on a known value: each lane enters at its case (or default) and runs on until a break."""
        K = self.K
        labels, default = [], False
        for d in body.walk_preorder():
            if d.kind == K.CASE_STMT:
                n = self.const_int(self.children(d)[0])
                if n is None:
                    self.uncertain.append("switch case value not known")
                    try:
                        self.stmt(body, live)
                    finally:
                        self.uncertain.pop()
                    return live
                labels.append(n)
            default |= d.kind == K.DEFAULT_STMT
        vals = [int(x) for x in cv.v]
        unmatched = np.asarray([v not in labels for v in vals], dtype=bool)
        self.exits.append((np.zeros(self.n, bool), np.zeros(self.n, bool)))
        cur = np.zeros(self.n, dtype=bool)
        try:
            for ch in self.children(body):
                while ch.kind in (K.CASE_STMT, K.DEFAULT_STMT):  # labels, then the statement they mark
                    kids = self.children(ch)
                    if ch.kind == K.CASE_STMT:
                        n = self.const_int(kids[0])
                        cur = cur | (live & np.asarray([v == n for v in vals], dtype=bool))
                    else:
                        cur = cur | (live & unmatched)
                    ch = kids[-1]
                cur = self.stmt(ch, cur)
        finally:
            brk, cont = self.exits.pop()
        if self.exits:  # continue inside a switch goes to the enclosing loop
            self.exits[-1][1][:] |= cont
        return live & ~self.frame.returned & ~cont

    def _truth(self, v):
        return np.asarray(v.v != 0, dtype=bool)

    def _if(self, s, live):
        kids = self.children(s)
        # children: [init or condition variable], condition, then, [else]; the condition is the first expression
        conds = [ch for ch in kids if ch.kind.is_expression()]
        if not conds:
            return live
        cond_c = conds[0]
        branches = kids[kids.index(cond_c) + 1:]
        then_s = branches[0] if branches else None
        else_s = branches[1] if len(branches) > 1 else None
        const_if = "constexpr" in self.tokens(s)[:2]
        cv = self.value(cond_c, live)
        if isinstance(cv, PtrV):  # if (p): a buffer lint allocated is never null
            cv = self.const(1)
        if isinstance(cv, Unknown):
            reason = cv.reason if isinstance(cv, Unknown) else "pointer test"
            why = f"guard `{self.text(cond_c)[:60]}` (line {cond_c.location.line}) not known: {reason}"
            if const_if:
                why = f"if constexpr `{self.text(cond_c)[:60]}` not known: {reason}"
            stack = self.assumed if self._on_data(reason) and not const_if else self.uncertain
            stack.append(why + self._data_hint(reason))
            env0 = dict(self.frame.env)
            self.regions.append(live)
            self.region_keys.append(object())
            try:
                taken = live & self._known_conjuncts(cond_c, live)
                after_t = self.stmt(then_s, taken) if then_s is not None else taken
                env_t = self.frame.env
                self.frame.env = dict(env0)
                after_e = self.stmt(else_s, live) if else_s is not None else live
            finally:
                stack.pop()
                self.regions.pop()
                self.region_keys.pop()
            env_e = self.frame.env
            self.frame.env = {k: (env_t.get(k) if env_t.get(k) is env_e.get(k) else
                                  Unknown(f"{k} assigned under an unknown guard")) for k in set(env_t) | set(env_e)}
            if not (after_t == taken).all() or not (after_e == live).all():
                stack.append(why)  # threads may have left: the rest of the function is uncertain
            return live
        c = self._truth(cv)
        env0 = self.frame.env
        self.frame.env = dict(env0)
        if not const_if:
            self.regions.append(live)
            self.region_keys.append(object())
        try:
            after_t = self.stmt(then_s, live & c) if (then_s is not None and
                                                      not (const_if and not (live & c).any())) else live & c
            env_t = self.frame.env
            self.frame.env = dict(env0)
            after_e = self.stmt(else_s, live & ~c) if (else_s is not None and
                                                       not (const_if and (live & c).all())) else live & ~c
        finally:
            if not const_if:
                self.regions.pop()
                self.region_keys.pop()
        env_e = self.frame.env
        merged = {}
        for k in set(env_t) | set(env_e):
            a, b = env_t.get(k), env_e.get(k)
            if a is b:
                merged[k] = a
            elif a is None or b is None:
                continue  # declared in one branch only: out of scope
            else:
                merged[k] = self.merge(c, a, b, live)
        self.frame.env = merged
        return after_t | after_e

    @staticmethod
    def _data_guard(reason: str) -> bool:
        """An unknown guard that only depends on data (loaded values, atomics' results): the lanes it selects are
        unknown, but the addresses of the accesses it guards are not."""
        return "loaded from memory" in reason or "result of atomic" in reason

    def _on_data(self, reason: str) -> bool:
        """A data guard whose lanes are assumed to pass (only when asked for: --assume-data-guards)."""
        return self.assume_data and self._data_guard(reason)

    def _data_hint(self, reason: str) -> str:
        return "" if self.assume_data or not self._data_guard(reason) else \
            " (--assume-data-guards: numbers if every lane its known part selects executes)"

    def _known_conjuncts(self, cond_c, live):
        """The lanes that pass every known operand of a chain of ``&&`` (all lanes when none is known)."""
        c = self.strip(cond_c)
        if c.kind == self.K.BINARY_OPERATOR and fe.binary_op(c) == "&&":
            a, b = self.children(c)[:2]
            return self._known_conjuncts(a, live) & self._known_conjuncts(b, live)
        v = self.value(c, live, probe=True)
        return self._truth(v) if isinstance(v, expr.Value) else np.ones(self.n, dtype=bool)

    def _loop_var(self, init_c):
        if init_c is None:
            return None
        for d in init_c.walk_preorder():
            if d.kind == self.K.VAR_DECL:
                return d.spelling
        if init_c.kind == self.K.BINARY_OPERATOR:
            lhs = self.strip(self.children(init_c)[0])
            if lhs.kind == self.K.DECL_REF_EXPR:
                return lhs.spelling
        return None

    def _for(self, s, live):
        kids = self.children(s)
        # clang gives for(init; cond; inc) body as children, any of the first three may be missing: use the tokens
        body = kids[-1]
        parts = kids[:-1]
        init_c = cond_c = inc_c = None
        semis = self._semicolons(s)
        if len(semis) == 2 and not s.extent.start.offset <= semis[0] < semis[1] < body.extent.start.offset:
            semis = []  # the tokens are a macro's (CUDA_KERNEL_LOOP(i, n) { ... }), not the statement's header
        if len(semis) < 2:  # no tokens (a loop written inside a macro): all three parts, or a declaration first
            if len(parts) == 3:
                init_c, cond_c, inc_c = parts
            elif parts and parts[0].kind == self.K.DECL_STMT:
                init_c, cond_c = parts[0], (parts[1] if len(parts) > 1 else None)
            elif parts:
                raise LintLimit(f"for loop at line {s.location.line}: cannot tell its init, condition and step apart")
        for p in parts if len(semis) == 2 else ():
            o = p.extent.start.offset
            if o < semis[0]:
                init_c = p
            elif o < semis[1]:
                cond_c = p
            else:
                inc_c = p
        if init_c is not None:
            live = self.stmt(init_c, live) if not init_c.kind.is_expression() else (self.value(init_c, live), live)[1]
        declared = {d.spelling for d in init_c.walk_preorder() if d.kind == self.K.VAR_DECL} \
            if init_c is not None and init_c.kind == self.K.DECL_STMT else set()
        return self._loop(s, cond_c, body, inc_c, live, self._loop_var(init_c), declared=declared)

    def _while(self, s, live, do):
        kids = self.children(s)
        if do:
            body, cond_c = kids[0], kids[-1]
            return self._loop(s, None, body, None, live, None, post_cond=cond_c)
        c = self.strip(kids[0])  # while (i < n) { ...; i += stride; }: i is the loop's variable, stepped in the body
        var = None
        if c.kind == self.K.BINARY_OPERATOR and fe.binary_op(c) in ("<", "<=", ">", ">=", "!="):
            lhs = self.strip(self.children(c)[0])
            var = lhs.spelling if lhs.kind == self.K.DECL_REF_EXPR else None
        return self._loop(s, kids[0], kids[-1], None, live, var)

    def _loop(self, s, cond_c, body, inc_c, live, var, post_cond=None, declared=frozenset()):
        """Run the loop's iterations for the lanes that take them: the first always; later ones while the
        condition is known, up to MAX_ITERATIONS (their accesses are kept beside the first iteration's)."""
        entry = live
        env_before = dict(self.frame.env)
        loop = Loop(s.location.line, var, None, self.text(inc_c) if inc_c is not None else "")
        loop.additive = inc_c is not None and self._additive(inc_c)
        start = self.frame.env.get(var) if var is not None else None
        if isinstance(start, expr.Value):
            loop.lane_start = self._uniform_step(self.const(0), start, live) is False
        seen0 = dict(self.seen)
        stored_before = self.stored
        self.loops.append(loop)
        self.iter_path.append(0)
        cur, it, pushed, repeating = live, 0, False, False
        try:
            while True:
                if it:
                    self.seen = dict(seen0)  # the same accesses again: recorded as later iterations
                if cond_c is not None:
                    cv = self.value(cond_c, cur)
                    if isinstance(cv, Unknown):
                        if it:
                            loop.stopped = f"its condition is not known ({cv.reason})"
                            break
                        if it == 0:
                            pushed = self.assumed if self._on_data(cv.reason) else self.uncertain
                            pushed.append(f"loop condition `{self.text(cond_c)[:60]}` (line "
                                          f"{cond_c.location.line}) not known: {cv.reason}"
                                          + self._data_hint(cv.reason))
                            cur = cur & self._known_conjuncts(cond_c, cur)
                        loop.stopped = f"its condition is not known ({cv.reason})"
                    elif isinstance(cv, expr.Value):
                        cur = cur & self._truth(cv)
                if it and not cur.any():
                    loop.complete = True
                    loop.trips = it
                    break
                self.exits.append((np.zeros(self.n, bool), np.zeros(self.n, bool)))
                self.regions.append(cur)
                self.region_keys.append(loop)  # every iteration of the loop: one region
                start = self.frame.env.get(var) if var is not None else None
                try:
                    out = self.stmt(body, cur)
                finally:
                    _, cont = self.exits.pop()
                    self.regions.pop()
                    self.region_keys.pop()
                nxt = (out | cont) & ~self.frame.returned
                if post_cond is not None:
                    cv = self.value(post_cond, nxt)
                    if isinstance(cv, expr.Value):
                        nxt = nxt & self._truth(cv)
                    else:
                        loop.stopped = f"its condition is not known ({getattr(cv, 'reason', 'not an integer')})"
                if inc_c is not None and var is not None:
                    before = self.frame.env.get(var)
                    self.value(inc_c, nxt)
                    if it == 0:
                        loop.uniform = self._uniform_step(before, self.frame.env.get(var), nxt)
                        trips = self._trips_left(cond_c, var, before, nxt) if loop.additive else None
                        loop.trips = trips + 1 if trips is not None else None
                        if trips is not None and trips > MAX_ITERATIONS * self.scale:  # not worth the body runs
                            loop.too_long = f"about {trips + 1} iterations, more than {MAX_ITERATIONS * self.scale + 1}"
                elif inc_c is not None:
                    self.value(inc_c, nxt)
                elif var is not None and it == 0:  # a while loop: the step is whatever the body did to var
                    self._body_step(loop, cond_c, var, start, nxt)
                it += 1
                loop.iterations = it
                cur = nxt
                if post_cond is not None and not cur.any() and loop.stopped is None:
                    loop.complete = True
                    break
                if loop.stopped is None and loop.too_long and (it >= PEEK_ITERATIONS or not (
                        self._unrolled(s) or self._constant_trips(s))):
                    loop.stopped = loop.too_long
                if loop.stopped is None and it > MAX_ITERATIONS * self.scale:
                    loop.stopped = f"more than {MAX_ITERATIONS * self.scale} iterations"
                if loop.stopped is None and self.steps > REPEAT_STEPS * self.scale:
                    loop.stopped = "the evaluation budget for later iterations is spent"
                if loop.stopped is not None:
                    break
                if not repeating:
                    self.repeat, repeating = self.repeat + 1, True
                self.iter_path[-1] = it
        finally:
            if repeating:
                self.repeat -= 1
            self.loops.pop()
            self.iter_path.pop()
            if pushed:
                pushed.pop()
        self._stored_after_loop(loop, stored_before)
        stepped = loop.stopped is not None and not loop.stopped.startswith("its condition")
        body_only = None  # the loop's step variables were run to its end: only what its body assigns is unknown
        cond_c = cond_c if cond_c is not None else post_cond  # a do-while loop: its condition after the body
        steps = self._body_steps(body) if stepped and cond_c is not None and not loop.complete else None
        step_names = set() if steps is None else \
            steps[1] | ((self._assigned_names(inc_c) or set()) if inc_c is not None else set())
        if step_names & (set(env_before) - declared):  # the stepped variables outlive the loop
            body_only = self._fast_forward(s, cond_c, inc_c, body, cur, steps, post_cond is not None)
        changed = {k for k, v in self.frame.env.items() if env_before.get(k) is not v}
        for k in changed:
            if k in env_before and not loop.complete and (body_only is None or k in body_only):
                self.frame.env[k] = Unknown(f"{k} after the loop at line {s.location.line}")
            elif k not in env_before:
                self.frame.env.pop(k, None)
        if var is not None and var not in env_before:
            self.frame.env.pop(var, None)
        return entry & ~self.frame.returned

    def _fast_forward(self, s, cond_c, inc_c, body, cur, steps, post=False) -> set | None:
        """A loop stopped early (too long to run its body): run only its condition and step on to its end, so that
        the variables the step alone changes (``j += 4 * RB, p += 4 * step``) are known after it. ``steps``: the
        body's own step statements and the names they alone assign (a while loop's ``i += stride``, a double
        buffer's ``buf ^= 1``), run with the step. Returns the names the rest of the body assigns (unknown after the
        loop), or None where the body may change the step's variables or leave the loop early, or the end is not
        reached within FAST_FORWARD iterations. ``post``: a do-while loop (its steps, then its condition)."""
        body_steps, stepped = steps
        assigned = self._assigned_names(body) - stepped
        env = self.frame.env
        for k in assigned & set(env):
            env[k] = Unknown(f"{k} after the loop at line {s.location.line}")
        if not body_steps and not post and self._closed_form(cond_c, inc_c, cur):
            return assigned
        for _ in range(FAST_FORWARD):
            if post:
                for st in body_steps:
                    self.value(st, cur, probe=True)
            cv = self.value(cond_c, cur, probe=True)
            if not isinstance(cv, expr.Value):
                return None
            cur = cur & self._truth(cv)
            if not cur.any():
                return assigned
            for st in body_steps if not post else ():
                self.value(st, cur, probe=True)
            if inc_c is not None:
                self.value(inc_c, cur, probe=True)
        return None

    STEP_OPS = ("=", "+=", "-=", "*=", "<<=", ">>=", "&=", "^=", "|=")
    STEP_LEAVES = ("DECL_REF_EXPR", "INTEGER_LITERAL", "UNEXPOSED_EXPR", "PAREN_EXPR", "BINARY_OPERATOR",
                   "UNARY_OPERATOR", "CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR", "CONDITIONAL_OPERATOR")

    def _body_steps(self, body) -> tuple[list, set] | None:
        """The statements of a loop body that step a local scalar on its own: top-level assignments (``i +=
        stride;``, ``buf ^= 1;``, ``k = k + 2;``) of a variable nothing else in the body assigns, from integer
        arithmetic on variables the rest of the body neither assigns nor declares. ([statements], their names);
        None where the body may leave the loop early or write through a reference."""
        assigned = self._assigned_names(body)
        if assigned is None:
            return None
        if any(d.kind == self.K.CONTINUE_STMT for d in body.walk_preorder()):
            return [], set()  # an iteration may skip them: only the loop's own step is run on
        top = self.children(body) if body.kind == self.K.COMPOUND_STMT else [body]
        while any(self.strip(st).kind == self.K.BINARY_OPERATOR and fe.binary_op(self.strip(st)) == "," for st in top):
            top = [p for st in top for p in (self.children(self.strip(st)) if self.strip(st).kind ==
                                             self.K.BINARY_OPERATOR and fe.binary_op(self.strip(st)) == "," else [st])]
        declared = {d.spelling for d in body.walk_preorder() if d.kind == self.K.VAR_DECL}
        cands = {}
        for st in top:
            c = self.strip(st)
            op = fe.binary_op(c) if c.kind in (self.K.BINARY_OPERATOR, self.K.COMPOUND_ASSIGNMENT_OPERATOR) else \
                fe.unary_op(c) if c.kind == self.K.UNARY_OPERATOR else None
            kids = self.children(c)
            target = self.strip(kids[0]) if kids else None
            if op not in self.STEP_OPS + ("pre++", "pre--", "post++", "post--") or target is None or \
                    target.kind != self.K.DECL_REF_EXPR or target.spelling in declared or \
                    not isinstance(self.ltype(target.type), Int):
                continue
            reads = [d for k in kids[1:] for d in k.walk_preorder()]
            if all(d.kind.name in self.STEP_LEAVES for d in reads) and \
                    all(d.kind != self.K.UNARY_OPERATOR or fe.unary_op(d) in ("-", "~", "!", "+") for d in reads):
                cands[st] = (target.spelling, {d.spelling for d in reads if d.kind == self.K.DECL_REF_EXPR})
        while True:  # a candidate whose variable another statement assigns, or that reads one, is not a step
            others = set()
            for st in top:
                if st not in cands:
                    others |= self._assigned_names(st) or set()
            drop = [st for st, (name, reads) in cands.items() if name in others or (reads - {name}) & (others | declared)
                    or sum(n == name for n, _ in cands.values()) > 1]
            if not drop:
                break
            for st in drop:
                cands.pop(st)
        return [st for st in top if st in cands], {name for name, _ in cands.values()}

    def _closed_form(self, cond_c, inc_c, cur) -> bool:
        """``for (...; i < bound; i += d, p += e)`` with a loop-invariant bound and constant steps: every variable the
        step changes jumps to its value at the loop's end, lane by lane (i + n d, p + n e for the n iterations left),
        instead of being stepped there. False (nothing changed) where the loop is not of that form."""
        c = self.strip(cond_c)
        if c.kind != self.K.BINARY_OPERATOR or fe.binary_op(c) not in ("<", "<=", ">", ">=") or \
                not self._additive(inc_c):
            return False
        lhs, rhs = self.children(c)[:2]
        stepped = self._assigned_names(inc_c) or set()
        lhs = self.strip(lhs)
        if lhs.kind != self.K.DECL_REF_EXPR or lhs.spelling not in stepped or \
                stepped & {d.spelling for d in rhs.walk_preorder() if d.kind == self.K.DECL_REF_EXPR} or \
                self._step_reads_stepped(inc_c, stepped):
            return False
        env = self.frame.env
        before = {x: env.get(x) for x in stepped}
        bound = self.value(rhs, cur, probe=True)
        if not isinstance(bound, expr.Value) or not all(isinstance(v, (expr.Value, PtrV)) for v in before.values()):
            return False
        self.value(inc_c, cur, probe=True)
        after = {x: env.get(x) for x in stepped}
        env.update(before)
        var, op = lhs.spelling, fe.binary_op(c)
        if not isinstance(after[var], expr.Value) or any(type(after[x]) is not type(before[x]) for x in stepped):
            return False
        n = np.zeros(self.n, dtype=object)
        for t in np.flatnonzero(cur):
            v, d, b = int(before[var].v[t]), int(after[var].v[t]) - int(before[var].v[t]), int(bound.v[t])
            holds = {"<": v < b, "<=": v <= b, ">": v > b, ">=": v >= b}[op]
            if holds and (d == 0 or (d > 0) != (op in ("<", "<="))):
                return False  # it would not end
            gap = b - v + (1 if op == "<=" else -1 if op == ">=" else 0)
            n[t] = -(-gap // d) if holds else 0
        for x in stepped:
            b0, a0 = before[x], after[x]
            if isinstance(b0, PtrV):
                env[x] = PtrV(b0.buf, b0.off + n * (a0.off - b0.off), b0.to)
                continue
            vals = _objs([int(p) + int(k) * (int(q) - int(p)) for p, q, k in zip(b0.v, a0.v, n)])
            if vals.size and not b0.type.lo <= min(vals) <= max(vals) <= b0.type.hi:
                env[x] = before[x]
                return False
            env[x] = expr.Value(vals, b0.type)
        return True

    def _step_reads_stepped(self, inc_c, stepped) -> bool:
        """A step whose increments read a stepped variable (``i += i``): not a constant step."""
        for d in inc_c.walk_preorder():
            if d.kind == self.K.COMPOUND_ASSIGNMENT_OPERATOR:
                amount = self.children(d)[1]
                if stepped & {e.spelling for e in amount.walk_preorder() if e.kind == self.K.DECL_REF_EXPR}:
                    return True
        return False

    def _assigned_names(self, body) -> set | None:
        """Local names the statement may assign (written to, incremented, address taken); None when it can leave
        early (break, return, goto), runs inline PTX or calls a function that takes a non-const reference."""
        key = (body, "assigned")
        if key in self._nodes:
            return self._nodes[key]
        K, names, out = self.K, set(), None
        for d in body.walk_preorder():
            k = d.kind
            if k in (K.BREAK_STMT, K.RETURN_STMT, K.GOTO_STMT, K.ASM_STMT, K.MS_ASM_STMT) or k.name == "GCC_ASM_STMT":
                break
            target = None
            if k in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and \
                    fe.binary_op(d) in ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="):
                target = self.children(d)[0]
            elif k == K.UNARY_OPERATOR and fe.unary_op(d) in ("pre++", "pre--", "post++", "post--", "&"):
                target = self.children(d)[0]
            elif k == K.CALL_EXPR and d.spelling == "operator()" and d.referenced is not None and \
                    self._lambda_class(d.referenced):  # a lambda assigns what it captured by reference
                inner = self._assigned_names(d.referenced) if self._has_body(d.referenced) else None
                if inner is None:
                    break
                names |= inner
            elif k == K.CALL_EXPR and d.referenced is not None and any(
                    p.kind == K.PARM_DECL and p.type.kind == self.ci.TypeKind.LVALUEREFERENCE and
                    not p.type.get_pointee().is_const_qualified() for p in self.children(d.referenced)):
                break
            # a member of a local struct names the struct; a subscript or an arrow writes memory, not the variable
            while target is not None and self.children(target) and (
                    target.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) or (target.kind == K.MEMBER_REF_EXPR and
                                                                        not self._arrow(target))):
                target = self.children(target)[0]
            if target is not None and target.kind == K.DECL_REF_EXPR:
                names.add(target.spelling)
        else:
            out = names
        self._nodes[key] = out
        return out

    def _lambda_class(self, method) -> bool:
        """``operator()`` of a lambda's closure type (clang names the class ``(lambda at FILE:L:C)`` or not at all)."""
        parent = method.semantic_parent
        return parent is not None and (not parent.spelling or parent.spelling.startswith("(lambda"))

    def _arrow(self, member) -> bool:
        kids = self.children(member)
        return bool(kids) and kids[0].type.kind == self.ci.TypeKind.POINTER

    def _unrolled(self, s) -> bool:
        """``#pragma unroll`` (not ``unroll 1``) on the line before the loop: ptxas may vectorize across its
        iterations, so the first few are kept for the as-compiled comparison."""
        loc = s.location
        if loc.file is None or loc.file.name != self.parsed.path or loc.line < 2:
            return False
        lines = self._source_lines
        if lines is None:
            lines = self._source_lines = self.parsed.text.splitlines()
        prev = lines[loc.line - 2].strip() if loc.line - 2 < len(lines) else ""
        return prev.startswith("#pragma unroll") and prev.split()[2:3] != ["1"]

    def _constant_trips(self, s) -> bool:
        """A ``for`` loop whose header reads only literals, macros, template and enum constants and its own
        variables: its trip count is known when compiled, and the compiler unrolls it without a pragma."""
        K = self.K
        if s.kind != K.FOR_STMT:
            return False
        parts = self.children(s)[:-1]
        own = {d.spelling for p in parts for d in p.walk_preorder() if d.kind == K.VAR_DECL}
        own |= {d.spelling for d in parts[-1].walk_preorder() if d.kind == K.DECL_REF_EXPR} if parts else set()
        for p in parts:
            for d in p.walk_preorder():
                if d.kind in (K.MEMBER_REF_EXPR, K.CALL_EXPR):
                    return False
                if d.kind != K.DECL_REF_EXPR or d.spelling in own:
                    continue
                ref = d.referenced
                if ref is None or not (ref.kind in (K.TEMPLATE_NON_TYPE_PARAMETER, K.ENUM_CONSTANT_DECL) or
                                       (ref.kind == K.VAR_DECL and ref.type.is_const_qualified()
                                        and ref.semantic_parent.kind == K.TRANSLATION_UNIT)):
                    return False
        return bool(parts)

    def _body_step(self, loop, cond_c, var, start, live) -> None:
        """Uniformity, additivity (the same shift for every lane) and the trip count of a while loop's variable."""
        after = self.frame.env.get(var)
        if not isinstance(start, expr.Value) or not isinstance(after, expr.Value) or not live.any():
            return
        loop.uniform = self._uniform_step(start, after, live)
        deltas = {int(a) - int(b) for a, b, m in zip(after.v, start.v, live) if m}
        loop.additive = len(deltas) == 1 and 0 not in deltas
        loop.step = f"{var} changed in the body by {deltas.pop()}" if loop.additive else f"{var} changed in the body"
        trips = self._trips_left(cond_c, var, start, live) if loop.additive else None
        if trips is not None and trips > MAX_ITERATIONS * self.scale:
            loop.too_long = f"about {trips + 1} iterations, more than {MAX_ITERATIONS * self.scale + 1}"

    def _trips_left(self, cond_c, var, before, live) -> int | None:
        """Iterations still to come of ``for (...; var < bound; var += step)`` (also <=, >, >=) over the ``live``
        lanes, the bound as it is now; None when the loop is not of that form."""
        after = self.frame.env.get(var)
        c = self.strip(cond_c) if cond_c is not None else None
        if c is None or c.kind != self.K.BINARY_OPERATOR or not isinstance(after, expr.Value) or \
                not isinstance(before, expr.Value) or not live.any():
            return None
        op = fe.binary_op(c)
        lhs, rhs = self.children(c)[:2]
        if op not in ("<", "<=", ">", ">=") or self.strip(lhs).kind != self.K.DECL_REF_EXPR or \
                self.strip(lhs).spelling != var:
            return None
        bound = self.value(rhs, live, probe=True)
        if not isinstance(bound, expr.Value):
            return None
        most = 0
        for v, b, a, m, bd in zip(after.v, before.v, after.v, live, bound.v):
            step = int(a) - int(b)
            if not m or step == 0:
                continue
            gap = int(bd) - int(v) + (1 if op == "<=" else -1 if op == ">=" else 0)
            n = -(-gap // step) if (step > 0) == (op in ("<", "<=")) else 0
            most = max(most, n)
        return most

    def _additive(self, inc_c) -> bool:
        c = self.strip(inc_c)
        if c.kind == self.K.UNARY_OPERATOR:
            return fe.unary_op(c) in ("pre++", "pre--", "post++", "post--")
        if c.kind == self.K.COMPOUND_ASSIGNMENT_OPERATOR:
            return fe.binary_op(c) in ("+=", "-=")
        if c.kind == self.K.BINARY_OPERATOR and fe.binary_op(c) == ",":  # a += aStep, b += bStep
            return all(self._additive(k) for k in self.children(c))
        return False

    def _uniform_step(self, before, after, live):
        if isinstance(before, expr.Value) and isinstance(after, expr.Value):
            d = np.asarray([int(a) - int(b) for a, b in zip(after.v, before.v)], dtype=object)
        elif isinstance(before, PtrV) and isinstance(after, PtrV):
            d = after.off - before.off
        else:
            return None
        for w in range(0, self.n, 32):
            sel = live[w:w + 32]
            vals = set(d[w:w + 32][sel].tolist())
            if len(vals) > 1:
                return False
        return True
