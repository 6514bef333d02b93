"""From (ACCESS, DECL, launch shape) to the byte address every thread loads.

Threads are numbered by linear thread id (x fastest) and form warps of 32. Addresses are bytes
from the start of the allocation, which is aligned to 256 bytes (what cudaMalloc guarantees)
and shifted by ``offset``. Each element is split into the loads the compiler emits for it
(see :mod:`.types`), so ``addresses`` has one row per load instruction.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import AnalyzerWarning, UsageError
from . import args, expr
from .types import ElementType, lookup

WARP = 32
BASE_ALIGN = 256
MAX_BLOCK = (1024, 1024, 64)
MAX_THREADS = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_OFFSET = 2**40  # bytes; far beyond any allocation, and keeps every address exact in int64
ADDRESS_LIMIT = 2**62  # |byte offset| of an access; beyond it the request is refused, not wrapped
FAR_BYTES = 16 * 2**20  # a lane this far from its warp's first warns (a column of a 128K-wide float matrix is not)
C_KEYWORDS = {"auto", "char", "const", "int", "long", "short", "signed", "unsigned", "volatile", "void", "float",
              "double", "bool", "sizeof", "return", "if", "else", "for", "while", "do"}
BUILTINS = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize")

_QUALIFIERS = {"__shared__", "extern", "const", "volatile", "static", "__restrict__", "__device__"}
_DECL = re.compile(r"^(?P<type>[A-Za-z_][\w\s]*?)\s*(?P<ptr>\*?)\s*(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(\[[^\]]*\]\s*)*);?\s*$")


@dataclass(frozen=True)
class Decl:
    """A parsed C array declaration, e.g. ``__shared__ float s[32][33]``."""

    text: str
    element: ElementType
    name: str
    dims: tuple  # ints; the first may be None (unsized: ``float a[]`` or ``float *a``)
    shared: bool

    @property
    def strides(self) -> tuple[int, ...]:
        """Elements between consecutive indices of each dimension (row-major)."""
        out, step = [], 1
        for d in reversed(self.dims):
            out.append(step)
            step *= d if d is not None else 1
        return tuple(reversed(out))

    @property
    def row_words(self) -> int | None:
        """4-byte words per row of a 2-D (or more) array, for padding advice."""
        if len(self.dims) < 2:
            return None
        return self.strides[-2] * self.element.size // 4


def parse_decl(text: str) -> Decl:
    """Parse ``[__shared__] TYPE NAME[D1][D2]...`` (or ``TYPE *NAME``); dims are constant expressions."""
    words = args.text(text, "decl").replace("*", " * ").split()
    shared = "__shared__" in words
    body = " ".join(w for w in words if w not in _QUALIFIERS)
    m = _DECL.match(body)
    if not m or not m.group("type").strip():
        raise UsageError(f"cannot parse declaration {text!r}: expected e.g. 'float a[]' or '__shared__ float s[32][33]'")
    element = lookup(m.group("type"))
    dims: list = []
    for i, d in enumerate(re.findall(r"\[([^\]]*)\]", m.group("dims"))):
        if not d.strip():
            if i:
                raise UsageError(f"declaration {text!r}: only the first dimension may be left empty")
            dims.append(None)
            continue
        n = expr.constant(d, f"array dimension in {text!r}")
        if n <= 0:
            raise UsageError(f"declaration {text!r}: array dimensions must be positive, got {n}")
        dims.append(n)
    if m.group("ptr"):
        if dims:
            raise UsageError(f"declaration {text!r}: arrays of pointers are not supported")
        dims = [None]
    if not dims:
        raise UsageError(f"declaration {text!r} is not an array: write e.g. '{element.name} {m.group('name')}[]'")
    return Decl(text, element, m.group("name"), tuple(dims), shared)


def dim3(value, what: str, minimum: int = 1) -> tuple[int, int, int]:
    """(x, y, z) from an int, a sequence, or text "X[,Y[,Z]]" / "XxY"; missing ones are 1 (0 for indices)."""
    if isinstance(value, str):
        parts = re.split(r"\s*[,x]\s*|\s+", value.strip())
        if "" in parts:  # "32,,1" or "32,": C has no empty dimension, and guessing one changes the answer
            raise UsageError(f"bad {what} {value!r}: dimension {parts.index('') + 1} is empty; expected X[,Y[,Z]]")
        try:
            vals = [int(p) for p in parts]
        except ValueError:
            raise UsageError(f"bad {what} {value!r}: expected X[,Y[,Z]] integers") from None
    elif isinstance(value, (tuple, list)):
        vals = [args.integer(v, f"{what} {value!r}: each dimension") for v in value]
    else:
        vals = [args.integer(value, what)]
    if not 1 <= len(vals) <= 3:
        raise UsageError(f"bad {what} {value!r}: expected 1 to 3 dimensions")
    vals += [minimum] * (3 - len(vals))
    if any(v < minimum for v in vals):
        raise UsageError(f"bad {what} {value!r}: each must be >= {minimum}")
    return tuple(vals)


@dataclass(frozen=True)
class Launch:
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    block_idx: tuple[int, int, int]

    @property
    def nthreads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def nwarps(self) -> int:
        return -(-self.nthreads // WARP)

    def env(self) -> dict:
        """threadIdx/blockIdx/blockDim/gridDim/warpSize for every thread of the block."""
        n = self.nthreads
        t = np.arange(n, dtype=np.int64)
        bx, by, _ = self.block
        xyz = lambda v: {k: expr.Value(expr.value_of(c, n).v, expr.UINT) for k, c in zip("xyz", v)}  # noqa: E731
        return {  # uint3 and dim3 members are unsigned int, warpSize is int
            "threadIdx": xyz((t % bx, (t // bx) % by, t // (bx * by))),
            "blockIdx": xyz(self.block_idx), "blockDim": xyz(self.block), "gridDim": xyz(self.grid),
            "warpSize": expr.value_of(WARP, n),
        }


def make_launch(block=(256, 1, 1), grid=(1, 1, 1), block_idx=(0, 0, 0)) -> Launch:
    b, g, i = dim3(block, "block"), dim3(grid, "grid"), dim3(block_idx, "block index", minimum=0)
    if any(v > m for v, m in zip(b, MAX_BLOCK)) or b[0] * b[1] * b[2] > MAX_THREADS:
        raise UsageError(f"block {b[0]}x{b[1]}x{b[2]} has {b[0] * b[1] * b[2]} threads: CUDA allows at most "
                         f"{MAX_THREADS} per block (x, y <= 1024, z <= 64)")
    if any(v > m for v, m in zip(g, MAX_GRID)):
        raise UsageError(f"grid {g[0]}x{g[1]}x{g[2]}: CUDA allows at most {MAX_GRID[0]} x {MAX_GRID[1]} x "
                         f"{MAX_GRID[2]} blocks")
    if any(v >= n for v, n in zip(i, g)):
        raise UsageError(f"block index {i} is outside the grid {g}")
    return Launch(b, g, i)


def normalize_lets(lets) -> list[tuple[str, str]]:
    """Accept "N=EXPR" strings, (name, expr) pairs or a mapping; values may be ints. (Types: see typed_lets.)"""
    return [(name, value) for name, value, _ in typed_lets(lets)]


def typed_lets(lets) -> list[tuple[str, str, expr.CType | None]]:
    """(name, expression, declared type or None) of each let, in order. A let may declare its C type,
    ``"int i = threadIdx.x - 16"``: the value is converted to it as C converts an initializer (so that i is -16
    for thread 0, where ``auto i`` - no type given - stays the unsigned int 4294967280). A name defined twice
    warns (the later definition wins)."""
    if lets is None:
        return []
    if isinstance(lets, str) or not isinstance(lets, (Mapping, list, tuple)):
        raise UsageError(f"lets must be a list of 'NAME=EXPR' strings, (name, expr) pairs or a mapping, "
                         f"got {type(lets).__name__} {lets!r:.40}")
    items: Iterable = lets.items() if isinstance(lets, Mapping) else lets
    out, seen = [], {}
    for item in items:
        if isinstance(item, str):
            name, sep, value = item.partition("=")
            if not sep:
                raise UsageError(f"bad --let {item!r}: expected NAME=EXPR")
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            name, value = item
        else:
            raise UsageError(f"bad let {item!r:.40}: expected 'NAME=EXPR' or a (name, expr) pair")
        words, value = str(name).split(), str(value).strip()
        name = words[-1] if words else ""
        ctype = _let_type(words[:-1], str(item))
        if not re.fullmatch(r"[A-Za-z_]\w*", name) or name in C_KEYWORDS:
            raise UsageError(f"bad --let name {name!r}: expected a C identifier")
        if name in BUILTINS:
            raise UsageError(f"--let {name}: {name} is a CUDA built-in and cannot be redefined")
        if name in seen:
            warn(f"--let {name} is defined twice ({name}={seen[name]}, then {name}={value}): the second one is used "
                 f"from here on")
        seen[name] = value
        out.append((name, value, ctype))
    return out


def _let_type(words: list[str], item: str) -> expr.CType | None:
    """The C type a let declares ("const unsigned int" -> unsigned int); None for none or ``auto``."""
    words = [w for w in words if w not in ("const", "volatile", "auto")]
    if not words:
        return None
    ctype = expr.cast_type(words)
    if ctype is None:
        raise UsageError(f"bad --let {item!r}: {' '.join(words)!r} is not a C integer type (int, unsigned, long, "
                         f"size_t, ...)")
    return ctype


def warn(message: str) -> None:
    """A legal but suspicious input: the answer is given, and this line says what to check."""
    warnings.warn(message, AnalyzerWarning, stacklevel=3)


@dataclass
class LaneAccesses:
    """Every thread's load addresses for one access: the input of the coalescing and bank models."""

    access: str
    decl: Decl
    space: str  # "global" or "shared"
    launch: Launch
    offset: int
    load_type: ElementType  # what one lane loads: the element, or the member's scalar
    member: str | None
    widths: tuple[int, ...]  # bytes of each load instruction
    addresses: np.ndarray  # (loads, threads) int64 byte addresses
    active: np.ndarray  # (threads,) bool

    def warps(self):
        """Yield (warp, addresses[:, lanes], active[lanes]) for each warp of the block."""
        for w in range(self.launch.nwarps):
            sl = slice(w * WARP, min((w + 1) * WARP, self.launch.nthreads))
            yield w, self.addresses[:, sl], self.active[sl]


def _split_access(node, text: str):
    """ACCESS must be NAME[i]...[k] optionally followed by .member."""
    member = None
    if isinstance(node, expr.Member):
        member, node = node.name, node.obj
    indices = []
    while isinstance(node, expr.Index):
        indices.append(node.index)
        node = node.obj
    if not indices or not isinstance(node, expr.Name):
        raise UsageError(f"access {text!r} must index the declared array, e.g. a[threadIdx.x] or s[ty][tx].x")
    return node.id, list(reversed(indices)), member


def resolve(access: str, decl: str | Decl, *, space: str | None = None, block=(256, 1, 1), grid=(1, 1, 1),
            lets=(), active: str | None = None, offset: int = 0, block_idx=(0, 0, 0)) -> LaneAccesses:
    """Evaluate ``access`` for every thread of block ``block_idx``; UsageError for bad input."""
    args.text(access, "access"), args.text(active, "active", optional=True), args.text(space, "space", optional=True)
    d = decl if isinstance(decl, Decl) else parse_decl(decl)
    space = _space(space, d)
    launch = make_launch(block, grid, block_idx)
    offset = check_offset(offset)
    env = launch.env()
    n = launch.nthreads
    for name, value, ctype in typed_lets(lets):
        v = expr.Evaluator(env, n, f"--let {name}", value).typed(expr.parse(value, f"--let {name}"))
        env[name] = v if ctype is None else expr.convert(v, ctype)
    mask = np.ones(n, dtype=bool)
    if active is not None and active.strip():
        mask = expr.Evaluator(env, n, "--active condition", active)(expr.parse(active, "--active condition")) != 0
    if not mask.any():
        raise UsageError(f"--active {active!r} selects none of the block's {n} threads")
    name, indices, member = _split_access(expr.parse(access, "access"), access)
    if name != d.name:
        raise UsageError(f"access {access!r} reads {name!r} but the declaration names {d.name!r}")
    if len(indices) != len(d.dims):
        raise UsageError(f"access {access!r} gives {len(indices)} index(es) but {d.name} has {len(d.dims)} dimension(s)")
    ev = expr.Evaluator(env, n, "access", access)
    values = [ev(i, mask) for i in indices]
    _check_bounds(values, d, mask, space, access)
    values = _byte_offsets(values, d, mask, offset, access)
    linear = sum(v * s for v, s in zip(values, d.strides))
    if member is not None:
        moff, load_type = d.element.member(member)
        widths = (load_type.size,)
    else:
        moff, load_type = 0, d.element
        widths = (d.element.load_bytes,) * d.element.loads
    first = offset + linear * d.element.size + moff
    starts = np.cumsum((0,) + widths[:-1])
    addresses = first[None, :] + np.asarray(starts, dtype=np.int64)[:, None]
    _check_alignment(addresses, widths, mask, load_type, offset, access)
    _warn_far(addresses[0], mask, access)
    return LaneAccesses(access, d, space, launch, offset, load_type, member, widths, addresses, mask)


def _space(space: str | None, d: Decl) -> str:
    if space is None:
        return "shared" if d.shared else "global"
    if space not in ("global", "shared"):
        raise UsageError(f"bad space {space!r}: expected global or shared")
    if d.shared and space == "global":
        raise UsageError(f"declaration {d.text!r} is __shared__ but the space given is global")
    return space


def _warn_far(first: np.ndarray, mask, access: str) -> None:
    """Warn when a lane's address is more than FAR_BYTES from its warp's first active lane: legal, but as a rule an
    unsigned index that wrapped (threadIdx.x - 1 for thread 0 is 4294967295)."""
    for w in range(0, len(first), WARP):
        lanes = np.flatnonzero(mask[w:w + WARP])
        if len(lanes) < 2:
            continue
        row = first[w:w + WARP][lanes]
        far = np.abs(row - row[0])
        k = int(np.argmax(far))
        if far[k] > FAR_BYTES:
            warn(f"access {access!r}: thread {w + lanes[k]} reads {_bytes(int(far[k]))} away from thread "
                 f"{w + lanes[0]} of the same warp (more than {_bytes(FAR_BYTES)}): an index that wrapped "
                 f"(unsigned arithmetic)? Give the let its type: --let 'int i=...'")
            return


def _bytes(n: int) -> str:
    return next(f"{n / 2**s:.3g} {u}" for s, u in ((60, "EiB"), (50, "PiB"), (40, "TiB"), (30, "GiB"), (20, "MiB"),
                                                    (10, "KiB"), (0, "B")) if n >= 2**s or s == 0)


def _check_bounds(values, d: Decl, mask, space: str, access: str) -> None:
    for k, (v, dim) in enumerate(zip(values, d.dims)):
        may_be_negative = dim is None and space == "global" and k == 0  # a pointer into the middle
        neg = mask & (v < 0)
        if may_be_negative and neg.any():
            lane = int(np.flatnonzero(neg)[0])
            warn(f"access {access!r}: index {k + 1} of {d.name} is {int(v[lane])} for thread {lane}: it reads before "
                 f"the address {d.name} points at (fine only if {d.name} points into the middle of an allocation)")
        bad = mask & (((v < 0) & (not may_be_negative)) | ((v >= dim) if dim is not None else False))
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            limit = f"0..{dim - 1}" if dim is not None else ">= 0"
            raise UsageError(f"access {access!r}: index {k + 1} of {d.name} is {int(v[lane])} for thread {lane}, "
                             f"outside {limit}")


def check_offset(offset) -> int:
    """--offset as an int in 0..MAX_OFFSET (bytes past the aligned base)."""
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise UsageError(f"--offset must be an integer number of bytes, got {offset!r}")
    if offset < 0:
        raise UsageError(f"--offset must be >= 0 bytes past a {BASE_ALIGN}-byte-aligned base, got {offset}")
    if offset > MAX_OFFSET:
        raise UsageError(f"--offset must be at most {MAX_OFFSET} bytes (1 TiB), got {offset}")
    return int(offset)


def _byte_offsets(values, d: Decl, mask, offset: int, access: str) -> list[np.ndarray]:
    """Index values as int64, after checking (exactly) that every active byte offset is below ADDRESS_LIMIT.

    Pointer arithmetic is not wrapped: an index whose byte offset leaves that range (e.g. a 64-bit
    index that went negative as unsigned) is refused rather than folded back into the allocation.
    """
    linear = sum(v * s for v, s in zip(values, d.strides))
    byte = offset + linear * d.element.size
    bad = mask & ((byte <= -ADDRESS_LIMIT) | (byte >= ADDRESS_LIMIT))
    if bad.any():
        lane = int(np.flatnonzero(bad)[0])
        idx = "][".join(str(v[lane]) for v in values)
        raise UsageError(f"access {access!r}: thread {lane} reads {d.name}[{idx}], {byte[lane]} bytes from the "
                         f"base: beyond the {ADDRESS_LIMIT}-byte address range the model accepts")
    return [np.where(mask, v, 0).astype(np.int64) for v in values]


def _check_alignment(addresses, widths, mask, load_type: ElementType, offset: int, access: str) -> None:
    for row, w in zip(addresses, widths):
        bad = mask & (row % w != 0)
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise UsageError(f"misaligned access {access!r}: {load_type.name} loads of {w} bytes need {w}-byte "
                             f"alignment but thread {lane} reads byte {int(row[lane])} (--offset {offset})")
