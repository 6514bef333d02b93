"""Kernels of a file -> accesses -> the model's numbers, verdict and fix per access.

One warp is analyzed per access: the first warp of block ``--block-idx`` (default block 0) whose 32 lanes all
execute it, else the warp with the most executing lanes (a guard that selects none gives 0 requests). Kernel
parameters not given with ``--let`` are tried at two values; an access whose addresses or executing lanes differ
between them depends on the parameter and is reported as unknown, naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import UsageError
from ..model import constant, predict
from ..model.access import Decl, LaneAccesses, make_launch
from ..model.cc import parse_cc
from . import frontend as fe
from . import launch as _launch
from .interp import (LAUNCH_SCALE, MAX_STEPS, Access, Buffer, Elements, Frame, Interpreter, LintLimit, MemVar, PtrV,
                     Unknown, _objs)
from .launches import agreed, find_launches
from ..model.types import TYPES as VECTOR_TYPES
from .ltypes import Array, Float, Int, Pointer, Record, by_name, element_type, loads

WARP = 32
DEFAULT_BLOCK = (256, 1, 1)
DEFAULT_GRID = (4, 4, 1)  # the gridDim lint assumes: room for the blocks next to block 0
SAMPLES = (4096, 4099)  # values tried for a parameter not given with --let: large, and not a power of two


@dataclass
class Options:
    kernel: str | None = None
    block: object = None  # None: from the file's launches of the kernel, else DEFAULT_BLOCK
    grid: object = None  # None: from the file's launches, else DEFAULT_GRID
    block_idx: object = None  # None: block 0, or the next blocks for an access that has no full warp in block 0
    defines: list = field(default_factory=list)
    lets: dict = field(default_factory=dict)
    templates: dict = field(default_factory=dict)
    arch: str = "sm_90"
    launch_average: bool = False  # also run every block of the grid: Finding.launch (what ncu's counters average)
    assume_data_guards: bool = False  # a guard on loaded data: assume its known part's lanes pass (else unknown)


@dataclass
class Finding:
    kernel: str
    file: str
    line: int
    column: int
    text: str
    access: str  # load / store / atomic / texture
    space: str | None
    array: str | None
    element_bytes: int | None
    requests: int | None = None
    sectors_per_request: float | None = None
    ideal_sectors_per_request: float | None = None
    wavefronts_per_request: float | None = None
    ideal_wavefronts_per_request: float | None = None
    conflict_ways: int | None = None
    reads_per_request: float | None = None  # __constant__: the constant cache's serialized reads (one per word)
    ideal_reads_per_request: float | None = None
    verdict: str = "unknown"
    block: list | None = None  # the analyzed block (blockIdx)
    warp: int | None = None
    active_lanes: int | None = None
    fix: str | None = None
    fix_predicted: dict | None = None
    unknown_reason: str | None = None
    not_modelled: str | None = None  # what the numbers leave out (atomics on one address are serialized)
    call_lines: list = field(default_factory=list)
    loops: list = field(default_factory=list)
    explanation: str | None = None
    iterations: list = field(default_factory=list)  # classes of loop iterations with the same numbers
    assumption: str | None = None  # a guard on loaded data: its lanes were assumed to pass
    compiled: dict | None = None  # the SASS instruction when it is wider/narrower than written (lint/compiled.py)
    over_iterations: dict | None = None  # per request over every iteration of its loops, when all were evaluated
    launch: dict | None = None  # per request over every warp of the launch (lint/launch.py), when asked for
    # a load of the address the thread stored last: {issued: the share of its executions that issue an instruction,
    # why}; the numbers stay the access's as written
    in_register: dict | None = None

    @property
    def rule(self) -> str:
        if self.verdict == "unknown":
            return "unknown"
        if self.space == "shared":
            return "bank-conflict" if (self.conflict_ways or 0) > 1 else "ok"
        if self.space == "constant":
            return "constant-serialized" if self.verdict == "serialized" else "ok"
        if self.verdict in ("coalesced", "broadcast", "same address", "not executed"):
            return "ok"
        return "uncoalesced"


@dataclass
class KernelReport:
    name: str
    line: int
    template: dict
    launch_bounds: tuple | None
    findings: list
    notes: list
    error: str | None = None
    block: list | None = None  # the launch shape lint used (given, from the file's launches, or the default)
    grid: list | None = None
    resources: dict | None = None
    occupancy: dict | None = None
    unbound: list = field(default_factory=list)  # template parameters not given
    params: list = field(default_factory=list)  # name, kind (pointer/int/float/other), type, value (for --validate)
    dynamic_shared: bool = False  # the kernel uses extern __shared__ memory
    out_of_bounds: list = field(default_factory=list)  # shared accesses past their array at this block (notes too)
    sass: list | None = None  # the kernel's SASS memory instructions (lint/compiled.py), where NVRTC ran
    constant_lets: list = field(default_factory=list)  # __constant__ integers given with --let (not on the device)


# ------------------------------------------------------------------ kernels and their parameters

def _attrs(c, K):
    return {ch.kind for ch in c.get_children()}


def find_functions(parsed: fe.Parsed):
    """Top-level (and namespaced) function definitions of the file: (cursor, is_global, is_device)."""
    ci = fe.cindex()
    K = ci.CursorKind
    out = []

    def visit(node):
        for c in node.get_children():
            if c.location.file is None or c.location.file.name != parsed.path:
                continue
            if c.kind in (K.NAMESPACE, K.UNEXPOSED_DECL, K.LINKAGE_SPEC):
                visit(c)
            elif c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE):
                kinds = _attrs(c, K)
                body = any(ch.kind == K.COMPOUND_STMT for ch in c.get_children())
                if body:
                    out.append((c, K.CUDAGLOBAL_ATTR in kinds, K.CUDADEVICE_ATTR in kinds))
    visit(parsed.tu.cursor)
    return out


def _head_tokens(c) -> list[str]:
    """The tokens of a function's declaration up to its name (cursor.get_tokens is empty when it starts in a macro)."""
    ci = fe.cindex()
    tu = c.translation_unit
    f = c.location.file
    start = ci.SourceLocation.from_position(tu, f, c.extent.start.line, 1)
    return [t.spelling for t in tu.get_tokens(extent=ci.SourceRange.from_locations(start, c.location))]


def _uses_axis(parsed, c, axis: str) -> bool:
    """The kernel's text names threadIdx.AXIS or blockDim.AXIS (a note's hint: macros are not looked into)."""
    text = parsed.text.encode()[c.extent.start.offset:c.extent.end.offset].decode(errors="replace")
    return re.search(rf"\b(threadIdx|blockDim)\s*\.\s*{axis}\b", text) is not None


def _launch_bounds(c, tenv) -> tuple | None:
    toks = _head_tokens(c)
    if "__launch_bounds__" not in toks:
        return None
    i = toks.index("__launch_bounds__")
    if i + 1 >= len(toks) or toks[i + 1] != "(":
        return None
    depth, args, cur = 0, [], []
    for t in toks[i + 1:]:
        if t == "(":
            depth += 1
            if depth == 1:
                continue
        elif t == ")":
            depth -= 1
            if depth == 0:
                args.append(cur)
                break
        if depth == 1 and t == ",":
            args.append(cur)
            cur = []
        else:
            cur.append(t)
    vals = []
    for a in args:
        word = " ".join(a)
        if re.fullmatch(r"\d+", word):
            vals.append(int(word))
        elif word in tenv and isinstance(tenv[word], int):
            vals.append(tenv[word])
        else:
            return None
    return tuple(vals) or None


def template_params(c, ci):
    K = ci.CursorKind
    out = []
    for ch in c.get_children():
        if ch.kind == K.TEMPLATE_TYPE_PARAMETER:
            default = [t for t in ch.get_children() if t.kind == K.TYPE_REF]
            out.append((ch.spelling, "type", default[0].type.spelling if default else None))
        elif ch.kind == K.TEMPLATE_NON_TYPE_PARAMETER:
            default = [e for e in ch.get_children() if e.kind.is_expression()]
            value = fe.evaluate_int(default[0]) if default else None
            if value is None and default:  # another parameter (int TR = TILE): bound with the others
                ref = [d.spelling for d in default[0].walk_preorder() if d.kind == K.DECL_REF_EXPR]
                value = ref[0] if len(ref) == 1 else None
            out.append((ch.spelling, "value", value))
    return out


def _records(parsed, ci) -> dict:
    """Top-level struct types of the file by name (for --template NAME=STRUCT)."""
    K = ci.CursorKind
    recs = {}
    for c in parsed.tu.cursor.get_children():
        if c.kind in (K.STRUCT_DECL, K.CLASS_DECL) and c.is_definition() and c.type.get_size() > 0:
            recs[c.spelling] = c.type
    return recs


# ------------------------------------------------------------------ running one kernel

def _bind_templates(c, opts, ci, interp_records, rec_types):
    tenv, unbound = {}, []
    for name, kind, default in template_params(c, ci):
        given = opts.templates.get(name)
        if kind == "type":
            spelled = given if given is not None else default
            t = None
            if spelled is not None:
                t = by_name(spelled)
                if t is None and spelled in rec_types:
                    t = ("record", spelled)
                if t is None:
                    raise UsageError(f"--template {name}={spelled}: unknown type (a C scalar, a CUDA vector type or a "
                                     f"struct of the file)")
            if t is None:
                unbound.append(name)
            else:
                tenv[name] = t
        else:
            v = given if given is not None else default
            if given is None and isinstance(default, str):  # the default names an earlier parameter
                v = tenv.get(default)
            if v is None:
                unbound.append(name)
                continue
            try:
                tenv[name] = {"true": 1, "false": 0}.get(str(v)) if str(v) in ("true", "false") else int(str(v), 0)
            except ValueError:
                raise UsageError(f"--template {name}={v}: expected an integer value (or true/false)") from None
    return tenv, unbound


_ENVS: dict = {}


def _launch_env(launch) -> dict:
    """threadIdx/blockIdx/... for every thread, built once per launch shape (the values are never modified)."""
    if launch not in _ENVS:
        if len(_ENVS) >= 16:  # block 0 and its neighbours for a few block shapes
            _ENVS.pop(next(iter(_ENVS)))
        _ENVS[launch] = launch.env()
    return _ENVS[launch]


class KernelRun:
    """Runs one kernel for one set of parameter values."""

    def __init__(self, parsed, cursor, opts: Options, launch, tenv, unbound, globals_, values: dict, scale: int = 1):
        self.parsed, self.cursor, self.opts, self.launch = parsed, cursor, opts, launch
        self.tenv, self.unbound, self.globals_, self.values = tenv, unbound, globals_, values
        self.scale = scale  # > 1: the launch average's runs (every loop iteration)
        self.steps_left = MAX_STEPS

    def _struct(self, it, name: str, rec: Record, p, n: int) -> dict:
        """A struct parameter passed by value: its pointers are global buffers, its integers --let NAME.MEMBER."""
        out = {}
        for f, _, t in rec.fields:
            full = f"{name}.{f}"
            if isinstance(t, Pointer):
                out[f] = PtrV(Buffer(full, "global", t.to, p.location.line, it.text(p)), _objs([0] * n), t.to)
            elif isinstance(t, Int) and full in self.values:
                out[f] = it.convert(it.const(self.values[full]), t, np.ones(n, bool))
            elif isinstance(t, Record):
                out[f] = self._struct(it, full, t, p, n)
            elif isinstance(t, Array) and isinstance(t.of, Int) and t.n:  # int sizes[4]: one value per element
                out[f] = Elements([it.convert(it.const(self.values[e]), t.of, np.ones(n, bool)) if e in self.values
                                   else Unknown(f"member {e} not given (--let {e}=VALUE)") for e in _elements(full, t)])
            else:
                out[f] = Unknown(f"member {full} not given (--let {full}=VALUE)" if isinstance(t, Int) else
                                 f"member {full} of type {t.name}")
        return out

    def run(self) -> Interpreter:
        ci = fe.cindex()
        K = ci.CursorKind
        n = self.launch.nthreads
        env0 = _launch_env(self.launch)
        it = Interpreter(self.parsed, n, env0, self.tenv, {}, self.unbound)
        key = (self.cursor.spelling, self.cursor.location.line, tuple(sorted(map(str, self.opts.templates.items()))))
        caches = self.parsed.run_caches.get(key)
        if caches is None:  # every run of this kernel (samples, blocks) maps the same cursors to the same types
            caches = self.parsed.run_caches[key] = (it._types, it._cursor_types, it._literals)
        it._types, it._cursor_types, it._literals = caches
        it.assume_data = self.opts.assume_data_guards
        it.scale = self.scale
        if self.scale > 1:
            it.max_steps = self.steps_left
        for name, rt in list(self.tenv.items()):
            if isinstance(rt, tuple) and rt[0] == "record":
                self.tenv[name] = it._record(self.globals_["__records__"][rt[1]])
        frame = Frame({}, self.cursor.spelling)
        for p in [ch for ch in it.children(self.cursor) if ch.kind == K.PARM_DECL]:
            t = it.ltype(p.type, p)
            name = p.spelling
            if isinstance(t, Pointer):
                const = p.type.get_pointee().is_const_qualified()
                restrict = p.type.is_restrict_qualified()
                buf = Buffer(name, "global", t.to, p.location.line, it.text(p), restrict, const)
                frame.env[name] = PtrV(buf, _objs([0] * n), t.to)
            elif isinstance(t, Int):
                if name in self.values:
                    frame.env[name] = it.convert(it.const(self.values[name]), t, np.ones(n, bool))
                else:
                    frame.env[name] = Unknown(f"parameter {name} not given (--let {name}=VALUE)")
            elif isinstance(t, Float):
                frame.env[name] = Unknown(f"floating-point parameter {name}")
            elif isinstance(t, Record) and t.name not in VECTOR_TYPES:
                frame.env[name] = self._struct(it, name, t, p, n)
            else:
                frame.env[name] = Unknown(f"parameter {name} of type {p.type.spelling}")
            frame.types[name] = t if isinstance(t, (Int, Pointer)) else None
            kind = "pointer" if isinstance(t, Pointer) else "int" if isinstance(t, Int) else \
                "float" if isinstance(t, Float) else "other"
            value = self.values.get(name) if kind == "int" else 1.0 if kind == "float" else None
            it.param_info.append(dict(name=name, kind=kind, type=getattr(t, "name", "?"), value=value))
        it.globals = {}
        for name, entry in self.globals_.items():
            if name == "__records__":
                continue
            space, cur = entry
            t = it.ltype(cur.type, cur)
            buf = Buffer(name, space, t, cur.location.line, it.text(cur))
            if isinstance(t, Array):
                it.globals[name] = PtrV(buf, _objs([0] * n), t.of)
            elif isinstance(t, (Int, Float, Pointer, Record)) and not cur.type.is_const_qualified():
                # a scalar in memory: reading it is a load (a const one is a value the compiler folds)
                it.globals[name] = MemVar(buf, _objs([0] * n))
        it.constant_values = {k: v for k, v in self.values.items()
                              if self.globals_.get(_root(k), ("",))[0] == "constant"}
        it.frame = frame
        body = [ch for ch in it.children(self.cursor) if ch.kind == K.COMPOUND_STMT][0]
        it.run_body(body, np.ones(n, dtype=bool))
        return it


def _struct_slots(name: str, rec: Record) -> list[tuple[str, object]]:
    """(dotted name, type) of every member of a struct parameter, nested structs flattened (A.elements, A.stride),
    integer arrays by element (t.sizes[0])."""
    out = []
    for f, _, t in rec.fields:
        full = f"{name}.{f}"
        if isinstance(t, Record):
            out += _struct_slots(full, t)
        elif isinstance(t, Array) and isinstance(t.of, Int) and t.n:
            out += [(e, t.of) for e in _elements(full, t)]
        else:
            out.append((full, t))
    return out


def _elements(name: str, t: Array) -> list[str]:
    return [f"{name}[{j}]" for j in range(t.n)]


def _globals(parsed, ci) -> dict:
    K = ci.CursorKind
    out = {"__records__": _records(parsed, ci)}

    def visit(node):
        for c in node.get_children():
            if c.location.file is None or c.location.file.name != parsed.path:
                continue
            if c.kind in (K.NAMESPACE, K.UNEXPOSED_DECL, K.LINKAGE_SPEC):  # namespace cfg { ... }, extern "C" { ... }
                visit(c)
                continue
            if c.kind != K.VAR_DECL:
                continue
            kinds = _attrs(c, K)
            if K.CUDASHARED_ATTR in kinds:
                out[c.spelling] = ("shared", c)
            elif K.CUDACONSTANT_ATTR in kinds:
                out[c.spelling] = ("constant", c)
            elif K.CUDADEVICE_ATTR in kinds:
                out[c.spelling] = ("global", c)
    visit(parsed.tu.cursor)
    return out


def _root(name: str) -> str:
    """The variable a --let name starts with (c_params of c_params.width, c_offsets of c_offsets[1])."""
    return re.split(r"[.\[]", name, maxsplit=1)[0]


def _int_params(cursor, ci, it_ltype) -> list[str]:
    """Integer parameters, and the integer members of struct parameters (A.stride), that --let can give."""
    out = []
    for p in cursor.get_children():
        if p.kind != ci.CursorKind.PARM_DECL:
            continue
        t = it_ltype(p.type, p)
        if isinstance(t, Int):
            out.append(p.spelling)
        elif isinstance(t, Record) and t.name not in VECTOR_TYPES:
            out += [name for name, mt in _struct_slots(p.spelling, t) if isinstance(mt, Int)]
    return out


def _warp_of(active: np.ndarray) -> int | None:
    """The analyzed warp: the first whose lanes all execute the access, else the one with the most lanes."""
    n = active.size
    counts = [int(active[w:w + WARP].sum()) for w in range(0, n, WARP)]
    full = [i for i, c in enumerate(counts) if c == min(WARP, n - i * WARP) and c == WARP]
    if full:
        return full[0]
    best = max(counts) if counts else 0
    return counts.index(best) if best else None


def _same(a: Access, b: Access) -> bool:
    if (a.offsets is None) != (b.offsets is None) or (a.unknown is None) != (b.unknown is None):
        return False
    if a.offsets is None:
        return True
    w = _warp_of(a.active)
    if w != _warp_of(b.active):
        return False
    if w is None:
        return True
    sl = slice(w * WARP, (w + 1) * WARP)
    if not np.array_equal(a.active[sl], b.active[sl]):
        return False
    m = a.active[sl]
    return bool(np.all(a.offsets[sl][m] == b.offsets[sl][m]))


# ------------------------------------------------------------------ the model per access

def _decl(buf: Buffer, el) -> Decl:
    if buf.space == "shared" and isinstance(buf.type, Array):
        dims, t = [], buf.type
        while isinstance(t, Array):
            dims.append(t.n)
            t = t.of
        return Decl(buf.decl_text, el, buf.name, tuple(dims), True)
    return Decl(buf.decl_text, el, buf.name, (None,), False)


def lane_accesses(a: Access, warp: int, launch, offsets=None) -> LaneAccesses | str:
    """The model's input for access ``a`` on one warp (other lanes masked); a reason string if it cannot be built."""
    parts = loads(a.type)
    if parts is None:
        return f"loads of {getattr(a.type, 'name', '?')} cannot be split into instructions"
    el = element_type(a.record_type or a.type)
    n = launch.nthreads
    act = np.zeros(n, dtype=bool)
    sl = slice(warp * WARP, min((warp + 1) * WARP, n))
    act[sl] = a.active[sl]
    base = np.asarray([int(x) if m else 0 for x, m in zip(a.offsets if offsets is None else offsets, act)],
                      dtype=np.int64)
    widths = tuple(w for _, w in parts)
    addresses = base[None, :] + np.asarray([o for o, _ in parts], dtype=np.int64)[:, None]
    for row, w in zip(addresses, widths):
        bad = act & (row % w != 0)
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            return f"misaligned: thread {lane} accesses {w} bytes at byte offset {int(row[lane])}"
    load_type = element_type(a.type)
    return LaneAccesses(a.text, _decl(a.buf, el), a.buf.space, launch, 0, load_type, a.member, widths, addresses, act)


def _global_verdict(lanes: LaneAccesses, res: dict) -> str:
    act = lanes.active
    row = lanes.addresses[0][act]
    width = lanes.widths[0]
    if np.unique(row).size == 1 and row.size > 1:
        return "broadcast"
    if res["sectors"] == res["min_sectors"]:
        return "coalesced"
    idx = np.flatnonzero(act)
    d = np.diff(row)
    if d.size and np.all(d == width):
        return "offset"
    dl = np.diff(idx)
    if d.size and np.all(d == d[0]) and np.all(dl == dl[0]):
        stride = abs(int(d[0]) // int(dl[0]))
        if len(lanes.decl.dims) > 1 and stride >= lanes.decl.strides[-2] * lanes.decl.element.size:
            return "column-major"
        return "column-major" if stride >= 128 else "strided"
    return "scattered"


def _synthetic(lanes: LaneAccesses, width: int, start: int = 0, cc=(9, 0)) -> dict:
    """The model's numbers if the same lanes read consecutive ``width``-byte elements from an aligned start."""
    act = lanes.active
    k = np.cumsum(act) - 1
    addr = (start + k * width).astype(np.int64)[None, :]
    syn = LaneAccesses(lanes.access, lanes.decl, lanes.space, lanes.launch, 0, lanes.load_type, None, (width,), addr,
                       act)
    return predict(syn, cc)


def _padded(lanes: LaneAccesses, a: Access, cc) -> dict | None:
    """Bank numbers with each row of the 2-D shared array padded by one element."""
    dims = lanes.decl.dims
    if len(dims) < 2 or dims[-1] is None:
        return None
    es = lanes.decl.element.size
    row_bytes = dims[-1] * es
    addr = lanes.addresses
    row, col = addr // row_bytes, addr % row_bytes
    new = row * (row_bytes + es) + col
    syn = LaneAccesses(lanes.access, lanes.decl, lanes.space, lanes.launch, 0, lanes.load_type, lanes.member,
                       lanes.widths, new, lanes.active)
    return predict(syn, cc)


def _per_request(v, reqs):
    return None if not reqs else round(v / reqs, 3)


def evaluate(a: Access, kernel: str, launch, cc, unknown: str | None, neighbours: bool = False) -> Finding:
    """The model's numbers for access ``a``; ``neighbours``: the thread also accesses the next element(s)."""
    buf = a.buf
    f = Finding(kernel, a.file, a.line, a.column, a.text, a.kind, buf.space if buf else None,
                buf.name if buf else None, getattr(a.type, "size", None) if a.type is not None else None,
                call_lines=list(a.call_lines),
                loops=[dict(line=lp.line, var=lp.var, step=lp.step, uniform_step=lp.uniform,
                           pattern_kept=bool(lp.uniform and lp.additive), per_thread_start=lp.lane_start,
                           iterations_evaluated=lp.iterations, all_iterations=lp.complete, stopped=lp.stopped)
                       for lp in a.loops])
    reason = unknown or a.unknown
    if a.assumption and reason is None:
        f.assumption = (f"{a.assumption}; every lane its known part selects is assumed to execute (the addresses "
                        f"do not depend on the data)")
    if reason is None and a.offsets is None:
        reason = "address not known"
    if reason is not None:
        f.unknown_reason = reason
        return f
    w = _warp_of(a.active)
    if w is None:
        f.requests, f.verdict, f.active_lanes = 0, "not executed", 0
        f.explanation = "The guards select none of the block's threads: 0 requests."
        return f
    lanes = lane_accesses(a, w, launch)
    if isinstance(lanes, str):
        f.unknown_reason = lanes
        return f
    f.warp, f.active_lanes = w, int(lanes.active.sum())
    if buf.space == "constant":
        if not _constant(f, lanes, cc):
            return f
    else:
        res = predict(lanes, cc)
        f._lanes = lanes  # not a field: kept for the comparison with the compiled instructions, not in the JSON
        f.requests = res["requests"]
        f.explanation = res["explanation"]
    if buf.space == "shared":
        f.wavefronts_per_request = _per_request(res["wavefronts"], res["requests"])
        f.ideal_wavefronts_per_request = _per_request(res["ideal_wavefronts"], res["requests"])
        f.conflict_ways = res["ways"]
        row = lanes.addresses[0][lanes.active]
        f.verdict = "broadcast" if np.unique(row // 4).size == 1 and row.size > 1 else res["verdict"]
        if res["ways"] > 1:
            _shared_fix(f, lanes, a, cc)
    elif buf.space != "constant":
        f.sectors_per_request = _per_request(res["sectors"], res["requests"])
        f.ideal_sectors_per_request = _per_request(res["min_sectors"], res["requests"])
        f.verdict = _global_verdict(lanes, res)
        if f.verdict not in ("coalesced", "broadcast"):
            _global_fix(f, lanes, a, cc, neighbours)
    if a.kind == "atomic":
        _atomic(f, lanes)
    if a.later:
        f._instances = [(a.offsets, a.active)] + [(off, act) for _, off, act in a.later]  # for lint/compiled.py
        f.iterations = _iteration_classes(a, w, launch, cc)
        if all(lp.complete for lp in a.loops):
            f.over_iterations = _over_iterations(f.iterations)
    f.in_register = _in_register(a)
    return f


def _in_register(a: Access) -> dict | None:
    """The share of a load's executions the compiler serves from the register of the thread's last store to the
    same address (nothing stored or synchronized in between), or None where every execution issues."""
    held = [a.held] + list(a.later_held)
    if not any(held):
        return None
    trips = a.loops[-1].trips if a.loops else None
    if not a.held and all(a.later_held) and trips and len(held) < trips:  # loaded once, then held: 1 of trips
        return dict(issued=round(1 / trips, 6), why=f"loaded in the first of {trips} iterations, then kept in a "
                                                     f"register (the thread's own store of it)")
    issued = held.count(False) / len(held)
    why = ("the thread stored this address last: the compiler keeps the value in a register, no instruction"
           if not issued else f"{held.count(True)} of {len(held)} executions evaluated read the thread's own last "
                              f"store: kept in a register")
    return dict(issued=round(issued, 6), why=why)


def _constant_numbers(lanes: LaneAccesses) -> dict:
    """The constant cache's serialized reads per load instruction of one warp (the model: one per distinct word);
    an unknown reason where the words depend on the symbol's alignment, which lint does not know (elements
    narrower than a word: the compiler need not align the array to 4 bytes)."""
    loads_ = len(lanes.widths)
    reads = [constant.warp_reads(lanes.addresses + shift, lanes.active)
             for shift in (range(4) if min(lanes.widths) < 4 else (0,))]
    if len(set(reads)) > 1:
        return dict(unknown_reason=f"__constant__ {lanes.decl.element.name} array: its distinct 4-byte words "
                                   f"({min(reads)} or {max(reads)}) depend on the symbol's alignment, not known")
    return dict(requests=loads_, reads_per_request=_per_request(reads[0], loads_), ideal_reads_per_request=1.0,
                verdict=constant.verdict(reads[0], loads_))


def _constant(f: Finding, lanes: LaneAccesses, cc) -> bool:
    """``f``'s numbers for a ``__constant__`` load (False: unknown, the reason set); a serialized load gets the
    seeds' remedy with the same lanes' global-memory numbers."""
    nums = _constant_numbers(lanes)
    if "unknown_reason" in nums:
        f.unknown_reason = nums["unknown_reason"]
        return False
    for k, v in nums.items():
        setattr(f, k, v)
    reads = round(nums["reads_per_request"] * nums["requests"])
    f.explanation = (f"The warp's {f.active_lanes} lanes read one word per load: the constant cache broadcasts it "
                     f"(1 read per request)." if f.verdict == "broadcast" else
                     f"The warp's lanes read {nums['reads_per_request']:g} distinct words per load: the constant "
                     f"cache serves one address at a time, {reads} reads in turn where a broadcast needs "
                     f"{nums['requests']}.")
    if f.verdict == "serialized":
        f.fix = ("index __constant__ memory with a value the whole warp shares; a table that lanes index by thread "
                 "is read faster from global memory through the read-only path (const __restrict__ or __ldg) or "
                 "from shared memory (seed 003, 'Device memory spaces': constant memory is cached and read-only; "
                 "CUDA C++ Programming Guide: constant reads of different addresses are serialized)")
        g = replace(lanes, space="global")
        f.fix_predicted = dict(reads_per_request=1.0, **_numbers_global(predict(g, cc)))
    return True


def _atomic(f: Finding, lanes: LaneAccesses) -> None:
    """Atomics: the numbers are those of a store of the same addresses; lanes that update one address are applied
    one after another (by L2 or by the shared-memory unit), which the model does not count."""
    same = max(int(np.unique(row[lanes.active], return_counts=True)[1].max()) for row in lanes.addresses)
    if f.verdict == "broadcast":
        f.verdict = "same address"
    if same > 1:
        where = "the shared-memory atomic unit" if f.space == "shared" else "L2"
        f.not_modelled = (f"up to {same} lanes of the warp update the same address: {where} applies them one after "
                          f"another, which these numbers (those of a store of the same addresses) do not count")


def _over_iterations(classes: list[dict]) -> dict | None:
    """Per-request numbers of the analyzed warp summed over every iteration in which it makes requests (what a
    profiler's per-line counters average for a warp that runs the whole loop)."""
    keys = [k for k in ("sectors_per_request", "ideal_sectors_per_request", "wavefronts_per_request",
                        "ideal_wavefronts_per_request", "reads_per_request", "ideal_reads_per_request")
            if k in classes[0]]
    run = [c for c in classes if c.get("requests") and all(c.get(k) is not None for k in keys)]
    if len(run) != len([c for c in classes if c.get("requests") != 0]) or not run:
        return None  # an iteration lint could not evaluate
    reqs = sum(c["count"] * c["requests"] for c in run)
    out = {k: round(sum(c["count"] * c["requests"] * c[k] for c in run) / reqs, 3) for k in keys}
    return dict(requests=reqs, iterations=sum(c["count"] for c in run), **out)


def _iteration_numbers(a: Access, w: int, launch, cc) -> dict:
    """The analyzed warp's numbers for one iteration (a copy of ``a`` with that iteration's addresses)."""
    sl = slice(w * WARP, (w + 1) * WARP)
    if not a.active[sl].any():
        return dict(requests=0, active_lanes=0)
    lanes = lane_accesses(a, w, launch)
    if isinstance(lanes, str):
        return dict(unknown_reason=lanes)
    if a.buf.space == "constant":
        return dict(active_lanes=int(lanes.active.sum()), **_constant_numbers(lanes))
    res = predict(lanes, cc)
    out = dict(requests=res["requests"], active_lanes=int(lanes.active.sum()))
    if a.buf.space == "shared":
        out.update(wavefronts_per_request=_per_request(res["wavefronts"], res["requests"]),
                   ideal_wavefronts_per_request=_per_request(res["ideal_wavefronts"], res["requests"]),
                   conflict_ways=res["ways"])
    else:
        out.update(_numbers_global(res))
    return out


def _iteration_classes(a: Access, w: int, launch, cc) -> list[dict]:
    """Runs of consecutive loop iterations (0 = the first, the one reported) with the same numbers for the
    analyzed warp: [{"first", "last", "count", numbers...}]."""
    instances = [(a.offsets, a.active)] + [(off, act) for _, off, act in a.later]
    out, seen = [], {}
    sl = slice(w * WARP, (w + 1) * WARP)
    for i, (off, act) in enumerate(instances):
        m = act[sl]
        rel = [int(x) for x in off[sl][m]]
        # sectors (32 B), lines (128 B) and banks (32 x 4 B) repeat every 128 bytes: a shift by a multiple of 128
        # bytes gives the same numbers
        key = (tuple(m.tolist()), tuple(x - rel[0] for x in rel), rel[0] % 128 if rel else 0)
        nums = seen.get(key)
        if nums is None:
            nums = seen[key] = _iteration_numbers(replace(a, offsets=off, active=act, later=[]), w, launch, cc)
        if out and {k: v for k, v in out[-1].items() if k not in ("first", "last", "count")} == nums:
            out[-1].update(last=i, count=out[-1]["count"] + 1)
        else:
            out.append(dict(first=i, last=i, count=1, **nums))
    return out


def _numbers_global(r: dict) -> dict:
    return dict(sectors_per_request=_per_request(r["sectors"], r["requests"]),
                ideal_sectors_per_request=_per_request(r["min_sectors"], r["requests"]))


def _global_fix(f: Finding, lanes: LaneAccesses, a: Access, cc, neighbours: bool = False) -> None:
    width = lanes.widths[0]
    if a.member is not None or len(lanes.widths) > 1:
        what = f".{a.member} of {a.record_type.name}" if a.member and a.record_type else lanes.decl.element.name
        f.fix = (f"SoA: keep {what} in an array of its own so that consecutive threads read consecutive "
                 f"{width}-byte words (seed 001, 'Use a Structure of Arrays (SoA) instead of AoS')")
        f.fix_predicted = _numbers_global(_synthetic(lanes, width, cc=cc))
        return
    if f.verdict == "offset":
        f.fix = ("align the start to 32 bytes: pad rows (cudaMallocPitch) or shift the index so that a warp's first "
                 "element starts a sector (seed 003, offsetCopy)")
        f.fix_predicted = _numbers_global(_synthetic(lanes, width, cc=cc))
        return
    in_chunk_loop = any(lp.uniform and lp.lane_start and lp.var and re.search(rf"\b{re.escape(lp.var)}\b", a.text)
                        for lp in a.loops)
    if f.verdict in ("strided", "column-major") and in_chunk_loop:
        f.fix = ("grid-stride loop: let thread t handle elements t, t + blockDim.x*gridDim.x, ... instead of a "
                 "contiguous chunk, so that each iteration's warp reads consecutive elements (seed 004, squaresSum "
                 "read every THREAD_NUM elements)")
        f.fix_predicted = _numbers_global(_synthetic(lanes, width, cc=cc))
        return
    row = lanes.addresses[0][lanes.active]
    d = np.diff(row)
    if f.verdict == "strided" and neighbours and d.size and d[0] in (8, 16) and d[0] > width and np.all(d == d[0]):
        vec = {8: "float2", 16: "float4"}[int(d[0])]
        parts = int(d[0]) // width
        f.fix = (f"load the {parts} neighbouring elements in one {vec} per thread (reinterpret_cast<const {vec}*>): "
                 f"1 request instead of {parts} (seed 001: 8- and 16-byte words per thread coalesce)")
        f.fix_predicted = _numbers_global(_synthetic(lanes, int(d[0]), cc=cc))
        return
    if f.verdict == "column-major":
        f.fix = ("corner turning: load the tile with consecutive threads on consecutive elements into shared "
                 "memory and read the column from there (seed 000, 'Corner Turning'); pad the tile [32][33]")
    else:
        f.fix = ("make consecutive threads access consecutive elements, or stage the data through shared memory "
                 "(seed 003, strideCopy)")
    f.fix_predicted = _numbers_global(_synthetic(lanes, width, cc=cc))


def _shared_fix(f: Finding, lanes: LaneAccesses, a: Access, cc) -> None:
    padded = _padded(lanes, a, cc)
    if padded is not None and padded["ways"] < f.conflict_ways:
        d = lanes.decl
        dims = "".join(f"[{x}]" for x in d.dims[:-1])
        f.fix = (f"pad each row by one element: {d.element.name} {d.name}{dims}[{d.dims[-1] + 1}] (seed 001, "
                 f"'Shared memory bank conflicts'; cuda-samples transposeNoBankConflicts)")
        f.fix_predicted = dict(wavefronts_per_request=_per_request(padded["wavefronts"], padded["requests"]),
                               conflict_ways=padded["ways"])
        return
    if a.member is not None:
        f.fix = (f"SoA: keep .{a.member} in an array of its own so that consecutive threads read consecutive "
                 f"words (seed 001)")
        return
    f.fix = ("give consecutive threads consecutive words: sequential addressing as in reduce's "
             "sdata[tid] += sdata[tid + s] (seed 004), an odd word stride, or an XOR swizzle")


# ------------------------------------------------------------------ the file

def _error_in(err: fe.Diagnostic, c) -> bool:
    ext = c.extent
    return ext.start.line <= err.line <= ext.end.line


def lint_parsed(parsed: fe.Parsed, opts: Options) -> list[KernelReport]:
    ci = fe.cindex()
    cc = parse_cc(_cc_of(opts.arch))
    funcs = find_functions(parsed)
    errors = [d for d in parsed.diagnostics if d.file == parsed.path or not d.file]
    device_fns = [c for c, g, dv in funcs if g or dv]
    host_fns = [c for c, g, dv in funcs if not g and not dv]
    fatal = [e for e in errors if not any(_error_in(e, c) for c in device_fns + host_fns)]
    if fatal:
        e = fatal[0]
        more = f" (+{len(fatal) - 1} more)" if len(fatal) > 1 else ""
        raise UsageError(f"{parsed.path}:{e.line}:{e.column}: error: {e.message}{more}")
    kernels = all_kernels = [c for c, g, _ in funcs if g]
    if opts.kernel:
        names = sorted({c.spelling for c in kernels})
        kernels = [c for c in kernels if c.spelling == opts.kernel]
        if not kernels:
            raise UsageError(f"--kernel {opts.kernel}: no __global__ function of that name "
                             f"(the file has: {', '.join(names) or 'none'})")
    if not kernels:
        raise UsageError(f"{parsed.path}: no __global__ kernel found")
    globals_ = _globals(parsed, ci)
    constants = {name for name, entry in globals_.items() if name != "__records__" and entry[0] == "constant"}
    params = {p.spelling for c in all_kernels for p in c.get_children() if p.kind == ci.CursorKind.PARM_DECL}
    # a parameter, a struct parameter's member (A.stride, t.sizes[0]), or a __constant__ integer (c_n, c_p.w, c_o[1])
    unknown_lets = {n for n in opts.lets if not (_root(n) in constants or n.split(".")[0] in params)}
    if unknown_lets:
        raise UsageError(f"--let {sorted(unknown_lets)[0]}: no kernel of the file has a parameter of that name, nor "
                         f"is it a __constant__ variable")
    launches = find_launches(parsed)
    reports = []
    for k in kernels:
        try:
            kopts, notes = _from_launches(k, opts, launches.get(k.spelling, []), ci)
            launch = make_launch(kopts.block, kopts.grid, kopts.block_idx or (0, 0, 0))
            r = lint_kernel(parsed, k, kopts, launch, cc, globals_, errors, device_fns)
            r.notes[:0] = notes
            r.block, r.grid = list(launch.block), list(launch.grid)
            reports.append(r)
        except UsageError:
            raise
        except Exception as exc:  # a construct lint does not handle: one line for this kernel, the others go on
            reports.append(KernelReport(k.spelling, k.location.line, {}, None, [], [],
                                        error=f"lint cannot analyze this kernel ({type(exc).__name__}: {exc})"))
    return reports


def _from_launches(k, opts: Options, launches: list, ci) -> tuple[Options, list[str]]:
    """The kernel's options: what the user gave, else what every launch of it in the file agrees on."""
    notes, block, grid = [], opts.block, opts.grid
    where = f"the launch{'es' if len(launches) > 1 else ''} at line{'s' if len(launches) > 1 else ''} " + \
        ", ".join(str(x.line) for x in launches)
    if block is None:
        block = agreed([x.block for x in launches])
        if block is not None:
            notes.append(f"block {'x'.join(map(str, block))} from {where}")
        else:
            block = DEFAULT_BLOCK
            notes.append(f"block {DEFAULT_BLOCK[0]} threads assumed (give --block"
                         f"{'; the launches do not give one constant shape' if launches else ''})")
    if grid is None:
        grid = agreed([x.grid for x in launches]) or DEFAULT_GRID
    templates, lets = dict(opts.templates), dict(opts.lets)
    for i, (name, _, _) in enumerate(template_params(k, ci)):
        if name not in templates:
            v = agreed([x.templates[i] if i < len(x.templates) else None for x in launches])
            if v is not None:
                templates[name] = str(v)
                notes.append(f"template {name}={v} from {where}")
    params = [p for p in k.get_children() if p.kind == ci.CursorKind.PARM_DECL]
    for i, p in enumerate(params):
        if p.spelling not in lets and p.type.get_canonical().kind in INT_KINDS(ci):
            v = agreed([x.args[i] if i < len(x.args) else None for x in launches])
            if v is not None:
                lets[p.spelling] = v
                notes.append(f"{p.spelling}={v} from {where}")
    return replace(opts, block=block, grid=grid, templates=templates, lets=lets), notes


def INT_KINDS(ci):  # noqa: N802 - a constant that needs the loaded library
    TK = ci.TypeKind
    return (TK.INT, TK.UINT, TK.LONG, TK.ULONG, TK.LONGLONG, TK.ULONGLONG, TK.SHORT, TK.USHORT)


def _cc_of(arch: str) -> str:
    m = re.fullmatch(r"(?:sm_|compute_)?(\d{1,2})(\d)[af]?", str(arch).strip().lower())
    if not m:
        raise UsageError(f"bad --arch {arch!r}: expected e.g. sm_90")
    return f"{m.group(1)}.{m.group(2)}"


def lint_kernel(parsed, k, opts, launch, cc, globals_, errors, device_fns) -> KernelReport:
    ci = fe.cindex()
    tenv, unbound = _bind_templates(k, opts, ci, {}, globals_["__records__"])
    bounds = _launch_bounds(k, tenv)
    rep = KernelReport(k.spelling, k.location.line, {n: (v if isinstance(v, int) else getattr(v, "name", str(v)))
                                                      for n, v in tenv.items()}, bounds, [], [])
    rep.unbound = list(unbound)
    if unbound:
        rep.notes.append(f"template parameter(s) {', '.join(unbound)} not given: accesses that need them are unknown "
                         f"(--template {unbound[0]}=...)")
    errs = [e for e in errors if _error_in(e, k)]
    if errs:
        e = errs[0]
        rep.error = f"{e.line}:{e.column}: {e.message}"
        return rep
    for axis, size in (("y", launch.block[1]), ("z", launch.block[2])):
        if size == 1 and _uses_axis(parsed, k, axis):
            rep.notes.append(f"the kernel reads threadIdx.{axis} or blockDim.{axis} but the block has {axis} = 1: give "
                             f"the launch's shape with --block")
    if bounds and launch.nthreads > bounds[0]:
        rep.notes.append(f"block of {launch.nthreads} threads exceeds __launch_bounds__({bounds[0]}): the launch "
                         f"would fail")
    try:
        chosen = _choose_blocks(parsed, k, opts, launch, tenv, unbound, globals_)
    except LintLimit as exc:
        rep.error = str(exc)
        return rep
    except RecursionError:
        rep.error = "expressions nested too deeply to analyze"
        return rep
    base = chosen[0][1]
    rep.notes += base.notes
    executions = None
    if opts.launch_average:
        values = _values(parsed, k, opts, tenv, unbound)
        executions = _launch.collect(lambda blk: KernelRun(parsed, k, opts, blk, dict(tenv), unbound, globals_,
                                                           values, LAUNCH_SCALE), launch, list(base.accesses),
                                     _launch.same_rows(_source_texts(parsed)))
    rep.params = base.param_info
    rep.constant_lets = sorted(base.constant_values)
    rep.dynamic_shared = any(a.buf is not None and a.buf.space == "shared" and isinstance(a.buf.type, Array)
                             and a.buf.type.n is None for a in base.accesses.values())
    for key in base.accesses:
        blk, it, others = next((c for c in chosen if key in c[3]), chosen[0])[:3]
        a = it.accesses[key]
        depends = [name for name, o in others if key not in o.accesses or not _same(a, o.accesses[key])]
        unknown = None
        if depends:
            unknown = ("depends on " + ", ".join(f"parameter {d}" for d in depends) +
                       f" (give --let {depends[0]}=VALUE)")
        f = evaluate(a, k.spelling, blk, cc, unknown, _has_neighbour(a, it.accesses.values()))
        f.block = list(blk.block_idx)
        if executions is not None:
            f._access, f._launch_instances = a, executions[key]  # for lint/launch.py (not in the JSON)
            if a.buf is not None and a.type is not None:
                f._decl = _decl(a.buf, element_type(a.record_type or a.type))
        rep.findings.append(f)
    rep.findings.sort(key=lambda f: (f.line, f.column, f.call_lines))
    rep.out_of_bounds = [_out_of_bounds(a) for a in base.accesses.values() if _out_of_bounds(a)]
    rep.notes += rep.out_of_bounds
    return rep


def _out_of_bounds(a: Access) -> str | None:
    """A static shared array indexed past its end (or before it) by some thread of the block: the launch would
    write other memory or fault (a kernel written for another block size)."""
    buf = a.buf
    if buf is None or buf.space != "shared" or not isinstance(buf.type, Array) or a.offsets is None:
        return None
    size, t = buf.type.size, buf.type
    while isinstance(t, Array):
        if t.n is None:
            return None  # extern __shared__: sized at launch
        t = t.of
    width = getattr(a.type, "size", 0) or 1
    bad = [i for i, (o, m) in enumerate(zip(a.offsets, a.active)) if m and (int(o) < 0 or int(o) + width > size)]
    if not bad:
        return None
    return (f"{a.line}:{a.column}: shared {a.kind} `{a.text}` is out of the bounds of {buf.name} ({size} bytes) in "
            f"threads {bad[0]}..{bad[-1]} of the block: the launch would touch other memory or fault")


# blocks tried, in order, for an access that has no warp whose 32 lanes all execute it in block 0 (a boundary
# guard such as i > 0 or j > 0 of a stencil): the neighbours of block 0 are interior blocks of most grids
NEXT_BLOCKS = ((1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, 1))


def _has_neighbour(a: Access, others) -> bool:
    """Another access of the same buffer reads, in every lane, the element next to this one's (a[2i], a[2i+1])."""
    if a.offsets is None or a.buf is None:
        return False
    size = getattr(a.type, "size", 0)
    for b in others:
        if b is a or b.buf is not a.buf or b.kind != a.kind or b.offsets is None or b.active is None:
            continue
        for step in (size, -size):
            if np.array_equal(a.active, b.active) and all(int(y) - int(x) == step for x, y, m in
                                                            zip(a.offsets, b.offsets, a.active) if m):
                return True
    return False


def _full_warp(a: Access) -> bool:
    w = _warp_of(a.active) if a.active is not None else None
    if a.unknown is not None or a.offsets is None:
        return True  # nothing to gain from another block
    return w is not None and int(a.active[w * WARP:(w + 1) * WARP].sum()) == WARP


def _choose_blocks(parsed, k, opts, launch, tenv, unbound, globals_):
    """[(launch, base run, sample runs, keys taken from this block)]: block 0 (or --block-idx) first."""
    base, others = _run_samples(parsed, k, opts, launch, tenv, unbound, globals_)
    chosen = [(launch, base, others, set(base.accesses))]
    pending = {key for key, a in base.accesses.items() if not _full_warp(a)}
    if opts.block_idx is not None or not pending:
        return chosen
    unexecuted = {key for key in pending if not base.accesses[key].active.any()}
    for idx in NEXT_BLOCKS:
        if not pending:
            break
        if any(i >= g for i, g in zip(idx, launch.grid)):
            continue
        blk = make_launch(launch.block, launch.grid, idx)
        b, o = _run_samples(parsed, k, opts, blk, tenv, unbound, globals_)
        taken = {key for key in pending if key in b.accesses and _full_warp(b.accesses[key])}
        # not executed in block 0 at all (a stencil's left halo, gx >= 1): the first block that executes it
        taken |= {key for key in pending & unexecuted if key in b.accesses and b.accesses[key].active.any()}
        if taken:
            chosen[0][3].difference_update(taken)
            chosen.append((blk, b, o, taken))
            pending -= taken
    return chosen


def _source_texts(parsed) -> list[str]:
    """The file's text and its included headers' that are not the toolkit's (where blockIdx may be read)."""
    texts = [parsed.text]
    for inc in parsed.tu.get_includes():
        name = inc.include.name
        if "/include/" in name or name.startswith("/usr/"):
            continue  # the CUDA and C++ headers
        try:
            with open(name, encoding="utf-8", errors="replace") as fh:
                texts.append(fh.read())
        except OSError:
            texts.append("blockIdx")  # unreadable: assume every axis is read
    return texts


def _values(parsed, k, opts, tenv, unbound, with_ints=False):
    """The integer parameters' values of the base run: --let, else SAMPLES[0]."""
    probe = Interpreter(parsed, 1, {}, tenv, {}, unbound)
    ints = [p for p in _int_params(k, fe.cindex(), probe.ltype) if p not in opts.lets]
    values = {**dict.fromkeys(ints, SAMPLES[0]), **opts.lets}
    return (ints, values) if with_ints else values


def _run_samples(parsed, k, opts, launch, tenv, unbound, globals_):
    """The base run (unbound int parameters at SAMPLES[0]) and, per unbound parameter, a run at SAMPLES[1]."""
    ints, values = _values(parsed, k, opts, tenv, unbound, with_ints=True)
    base = KernelRun(parsed, k, opts, launch, dict(tenv), unbound, globals_, values).run()
    if not ints:
        return base, []
    together = KernelRun(parsed, k, opts, launch, dict(tenv), unbound, globals_,
                         {**values, **dict.fromkeys(ints, SAMPLES[1])}).run()
    if all(key in together.accesses and _same(a, together.accesses[key]) for key, a in base.accesses.items()):
        return base, []
    if len(ints) == 1:
        return base, [(ints[0], together)]
    others = []
    for p in ints:
        others.append((p, KernelRun(parsed, k, opts, launch, dict(tenv), unbound, globals_,
                                    {**values, p: SAMPLES[1]}).run()))
    return base, others
