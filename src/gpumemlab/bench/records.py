"""Result records and the results.json document (the source of truth for every table and plot)."""

from __future__ import annotations

import contextlib
import copy
import json
import lzma
import math
import os
import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path

from ..errors import ResultsError

SCHEMA_VERSION = 2   # 2: records carry ``flags`` and time_s["stop"]
READS = (1, 2)       # version 1 files read with no flags
XZ_MAGIC = b"\xfd7zXZ\x00"


@dataclass
class Record:
    experiment: str
    variant: str
    params: dict
    bytes: int | None            # bytes the algorithm must move (read + write), None if not meaningful
    flops: int | None
    time_s: dict                 # median, min, max, rel_spread, samples, ...
    gbps: float | None           # bytes / median time
    gflops: float | None
    pct_of_ceiling: float | None
    ceiling: str | None          # which ceiling pct_of_ceiling refers to
    verified: bool
    kind: str = "kernel"         # "kernel" (ours) or "baseline" (library measured in the same run)
    baselines: dict = field(default_factory=dict)   # name -> {median_s, gbps, gflops, ratio}
    model: dict | None = None    # the analyzer's prediction for the main access
    speedup_vs_naive: float | None = None
    notes: str | None = None
    env: dict | None = None      # NVML snapshot after timing (its "before": the one before)
    extra: dict = field(default_factory=dict)
    flags: list = field(default_factory=list)       # doubts about the median (bench.session.flags_for)

    @property
    def median_s(self) -> float:
        return float(self.time_s["median"])

    def to_dict(self) -> dict:
        """A deep copy as plain dicts and lists (dataclasses.asdict's result, without its per-value dispatch)."""
        return {f.name: _tree_copy(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> "Record":
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


def _tree_copy(v):
    """A copy of a JSON-like value: dicts and lists rebuilt, immutable leaves shared, anything else deep-copied."""
    t = type(v)
    if t is dict:
        return {k: _tree_copy(x) for k, x in v.items()}
    if t is list:
        return [_tree_copy(x) for x in v]
    if t in (str, float, int, bool) or v is None:
        return v
    return copy.deepcopy(v)


@dataclass
class RunResults:
    meta: dict
    device: dict
    ceilings: dict           # name -> {value, unit, how}
    results: list[Record]
    experiments: dict = field(default_factory=dict)   # name -> {title, seed, seed_claim, modern_note}
    errors: list = field(default_factory=list)        # experiments that failed: {experiment, error}

    def to_dict(self) -> dict:
        return dict(schema=SCHEMA_VERSION, meta=self.meta, device=self.device, ceilings=self.ceilings,
                    experiments=self.experiments, errors=self.errors,
                    results=[r.to_dict() for r in self.results])

    def save(self, path: Path) -> None:
        """Write results.json atomically: a temporary file beside it, then ``os.replace``; a path ending in
        ``.xz`` is written xz-compressed (how runs are committed: docs/developing.md, "Large files")."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(self.to_dict(), indent=1, default=_json_default).encode()
        if path.suffix == ".xz":
            data = lzma.compress(data, preset=9)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())  # the data on disk before the name points at it (a crash keeps one of the two)
            os.replace(tmp, path)
            _fsync_dir(path.parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path: Path) -> "RunResults":
        """Read and validate a results.json, plain or xz-compressed (results.json.xz); ResultsError (one line) for
        anything that is not a valid one."""
        path = Path(path)
        try:
            data = path.read_bytes()
            d = json.loads((lzma.decompress(data) if data.startswith(XZ_MAGIC) else data).decode())
        except lzma.LZMAError as exc:
            raise ResultsError(f"{path}: not a gpumemlab results.json (broken xz data: {exc})") from None
        except RecursionError:
            raise ResultsError(f"{path}: not a gpumemlab results.json (nested too deeply to be one)") from None
        except UnicodeDecodeError:
            raise ResultsError(f"{path}: not a gpumemlab results.json (not text)") from None
        except json.JSONDecodeError as exc:
            raise ResultsError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
        except OSError as exc:
            raise ResultsError(f"{path}: cannot read ({exc.strerror or exc})") from None
        problem = validate(d)
        if problem:
            raise ResultsError(f"{path}: {problem}")
        return cls(meta=d["meta"], device=d["device"], ceilings=d["ceilings"],
                   results=[Record.from_dict(r) for r in d["results"]],
                   experiments=d.get("experiments", {}), errors=d.get("errors", []))


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX: the directory entry is data of the folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ---------------------------------------------------------------- schema

NUMBER, INT, STR, BOOL, DICT, LIST, NULL = "number", "integer", "string", "boolean", "object", "array", "null"

# results.json, version SCHEMA_VERSION: field -> (JSON types allowed, required)
TOP_FIELDS = {"schema": ((INT,), True), "meta": ((DICT,), True), "device": ((DICT,), True),
              "ceilings": ((DICT,), True), "results": ((LIST,), True), "experiments": ((DICT,), False),
              "errors": ((LIST,), False)}
RECORD_FIELDS = {
    "experiment": ((STR,), True), "variant": ((STR,), True), "params": ((DICT,), True),
    "bytes": ((NUMBER, NULL), True), "flops": ((NUMBER, NULL), True), "time_s": ((DICT,), True),
    "gbps": ((NUMBER, NULL), True), "gflops": ((NUMBER, NULL), True), "pct_of_ceiling": ((NUMBER, NULL), True),
    "ceiling": ((STR, NULL), True), "verified": ((BOOL,), True), "kind": ((STR,), False),
    "baselines": ((DICT,), False), "model": ((DICT, NULL), False), "speedup_vs_naive": ((NUMBER, NULL), False),
    "notes": ((STR, NULL), False), "env": ((DICT, NULL), False), "extra": ((DICT,), False),
    "flags": ((LIST,), False),
}
TIME_FIELDS = {"median": ((NUMBER,), True), "samples": ((LIST,), False)}
CEILING_FIELDS = {"value": ((NUMBER,), True), "unit": ((STR,), True)}
ERROR_FIELDS = {"experiment": ((STR,), True), "error": ((STR,), True), "traceback": ((STR,), False)}

# What each number can physically be, beyond its JSON type: field -> (least value, least value allowed itself).
# The median (and what lies above it) and rates are > 0; one sample, and so min and p10, may read 0 at a
# timer's resolution; counts and spreads may be 0. Every number is finite.
POSITIVE, NON_NEGATIVE = (0.0, False), (0.0, True)
TIME_BOUNDS = {"median": POSITIVE, "min": NON_NEGATIVE, "max": POSITIVE, "mean": POSITIVE, "p10": NON_NEGATIVE,
               "p90": POSITIVE, "stdev": NON_NEGATIVE, "rel_spread": NON_NEGATIVE}
RECORD_BOUNDS = {"bytes": NON_NEGATIVE, "flops": NON_NEGATIVE, "gbps": POSITIVE, "gflops": POSITIVE,
                 "pct_of_ceiling": NON_NEGATIVE, "speedup_vs_naive": POSITIVE}
BASELINE_BOUNDS = {"median_s": POSITIVE, "gbps": POSITIVE, "gflops": POSITIVE, "ratio": POSITIVE}
CEILING_BOUNDS = {"value": POSITIVE, "measured_as": POSITIVE}
TIME_ORDER = ("min", "p10", "median", "p90", "max")
MAX_NESTING = 64   # deeper than any results.json; deeper documents are refused before anything walks them


def json_type(v) -> str:
    if v is None:
        return NULL
    if isinstance(v, bool):  # before int: JSON true is no number
        return BOOL
    if isinstance(v, int):
        return INT
    if isinstance(v, float):
        return NUMBER
    return {str: STR, dict: DICT, list: LIST}.get(type(v), type(v).__name__)


def _check_fields(d, fields: dict, where: str) -> str | None:
    if not isinstance(d, dict):
        return f"{where}: expected an object, got {json_type(d)}"
    for name, (types, required) in fields.items():
        if name not in d:
            if required:
                return f"{where}: missing field {name!r}"
            continue
        got = json_type(d[name])
        if got not in types and not (got == INT and NUMBER in types):
            shown = got if d[name] is None else f"{got} {d[name]!r:.40}"
            return f"{where}: field {name!r} is {shown}, expected {' or '.join(types)}"
    return None


def check_number(value, bound: tuple[float, bool], what: str) -> str | None:
    """Why ``value`` cannot be what ``what`` names (None if it can): not finite, or below its bound."""
    if json_type(value) not in (INT, NUMBER):
        return None  # the type checks name it, or null where null is allowed
    least, inclusive = bound
    if not math.isfinite(value):
        return f"{what} is {value}: expected a finite number"
    if value < least or (value == least and not inclusive):
        return f"{what} is {value!r}: expected a number {'>=' if inclusive else '>'} {least:g}"
    return None


def _check_bounds(d: dict, bounds: dict, where: str) -> str | None:
    return next((p for name, b in bounds.items() if name in d
                 for p in [check_number(d[name], b, f"{where}: field {name!r}")] if p), None)


def _check_times(t: dict, where: str) -> str | None:
    problem = _check_bounds(t, TIME_BOUNDS, where)
    if problem:
        return problem
    samples = t.get("samples") or []
    if all((type(v) is float or type(v) is int) and 0 <= v < math.inf for v in samples):
        samples = []  # all valid (the common case, thousands per run): the loop below only names a bad one
    for i, v in enumerate(samples):
        problem = check_number(v, NON_NEGATIVE, f"{where}: samples[{i}]")
        if problem or json_type(v) not in (INT, NUMBER):
            return problem or f"{where}: samples[{i}] is {json_type(v)}, expected number"
    present = [(k, t[k]) for k in TIME_ORDER if json_type(t.get(k)) in (INT, NUMBER)]
    for (k1, v1), (k2, v2) in zip(present, present[1:]):
        if v1 > v2:
            return f"{where}: {k1} {v1!r} is above {k2} {v2!r}"
    return None


def nesting_depth(d) -> int:
    """How many lists and objects nest in a JSON document (walked level by level, no recursion; stops past
    MAX_NESTING)."""
    nested = lambda xs: [x for x in xs if isinstance(x, (dict, list))]  # noqa: E731
    depth, level = 0, nested([d])
    while level and depth <= MAX_NESTING:
        depth += 1
        level = nested(c for x in level for c in (x.values() if isinstance(x, dict) else x))
    return depth


def validate(d) -> str | None:
    """The first problem of a results.json document (None if it is valid), naming the record and field."""
    return next((p for p in _problems(d) if p), None)


def _problems(d):
    """Each check's problem or None, lazily: a later check runs only once the earlier ones passed."""
    if not isinstance(d, dict) or "results" not in d or "device" not in d:
        yield "not a gpumemlab results.json (no 'results' and 'device')"
    if json_type(d.get("schema")) == INT and d["schema"] not in READS:
        newer = " (written by a newer gpumemlab)" if d["schema"] > SCHEMA_VERSION else ""
        yield f"schema version {d['schema']}, this gpumemlab reads versions {', '.join(map(str, READS))}{newer}"
    if nesting_depth(d) > MAX_NESTING:
        yield f"not a gpumemlab results.json (lists and objects nested more than {MAX_NESTING} deep)"
    yield _check_fields(d, TOP_FIELDS, "results.json")
    for name, c in d["ceilings"].items():
        yield _check_fields(c, CEILING_FIELDS, f"ceiling {name!r}")
        yield _check_bounds(c, CEILING_BOUNDS, f"ceiling {name!r}")
    for i, e in enumerate(d.get("errors", [])):
        yield _check_fields(e, ERROR_FIELDS, f"errors[{i}]")
    for i, r in enumerate(d["results"]):
        what = f"record {i} ({r.get('experiment', '?')} / {r.get('variant', '?')})" if isinstance(r, dict) else f"record {i}"
        yield _check_fields(r, RECORD_FIELDS, what)
        yield _check_bounds(r, RECORD_BOUNDS, what)
        yield _check_fields(r["time_s"], TIME_FIELDS, f"{what} time_s")
        yield _check_times(r["time_s"], f"{what} time_s")
        for name, b in (r.get("baselines") or {}).items():
            yield _check_bounds(b, BASELINE_BOUNDS, f"{what} baseline {name!r}") if isinstance(b, dict) else \
                f"{what} baseline {name!r}: expected an object, got {json_type(b)}"


def _json_default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
