"""Numbers in findings that carry where they come from.

A finding quotes numbers of its run (a record's field, a ratio or mean of such fields) and numbers of a claim
(a seed or outside figure). Built from :class:`Num` values and :func:`sentence`, a finding is a :class:`Finding`:
the text plus, for each number printed in it, the expression that produced it, so a test can recompute every
quoted number from results.json alone and reject one that came from nowhere (tests/test_findings_cite.py).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Num:
    """A value and the expression it came from:

    ``("field", key, path)``: ``record[path]`` of the record whose (variant, params) is ``key``;
    ``("claim", text)``: a figure as printed in a claim; ``("ratio", a, b)``, ``("scale", a, k)``,
    ``("over", k, a)`` (k / a), ``("log2", a)``, ``("product", a, b)``, ``("sum", a, b)``, ``("diff", a, b)``,
    ``("mean", (a, ...))``, ``("geomean", (a, ...))``: arithmetic on other Nums (``k``: a plain constant such as 100
    for a percentage); ``("count", (key, ...))``: how many records those are (each key must be in the run);
    ``("constant", module, name)``: a named threshold of the analysis (see :func:`constant`)."""

    value: float
    expr: tuple

    def __truediv__(self, other: "Num") -> "Num":
        return Num(self.value / other.value, ("ratio", self, other))

    def __mul__(self, k) -> "Num":
        if isinstance(k, Num):
            return Num(self.value * k.value, ("product", self, k))
        return Num(self.value * k, ("scale", self, k))

    __rmul__ = __mul__

    def __rtruediv__(self, k: float) -> "Num":
        return Num(k / self.value, ("over", k, self))

    def __add__(self, other: "Num") -> "Num":
        return Num(self.value + other.value, ("sum", self, other))

    def __sub__(self, other: "Num") -> "Num":
        return Num(self.value - other.value, ("diff", self, other))


def record_key(rec) -> tuple:
    """(variant, params): what identifies a record in its run (a stand-in record without a variant keys as None)."""
    return getattr(rec, "variant", None), tuple(sorted((k, repr(v)) for k, v in rec.params.items()))


def field(rec, *path: str) -> Num:
    """``rec.<path[0]>[path[1]]...`` as a Num (e.g. field(r, "gbps"), field(r, "time_s", "median"))."""
    value = getattr(rec, path[0])
    for p in path[1:]:
        value = value[p]
    return Num(float(value), ("field", record_key(rec), path))


def claim(text: str) -> Num:
    """A figure as a claim prints it ("3,494", "356"): the test checks it appears in the experiment's claims."""
    return Num(float(text.replace(",", "")), ("claim", text))


def constant(module: str, name: str) -> Num:
    """``module.name``, a named constant of the analysis (a threshold such as "reaches 90% of the best", a hardware
    unit such as the 32-byte sector): not a measurement, so the test reads it back from the code (a module of
    gpumemlab.experiments), where a reviewer sees it named."""
    import importlib

    return Num(float(getattr(importlib.import_module(module), name)), ("constant", module, name))


def log2(num: Num) -> Num:
    """log2 of a Num ("n=2^26.0" prints log2 of the record's n)."""
    return Num(math.log2(num.value), ("log2", num))


def mean(nums) -> Num:
    nums = tuple(nums)
    return Num(statistics.fmean(n.value for n in nums), ("mean", nums))


def geomean(nums) -> Num:
    nums = tuple(nums)
    return Num(math.exp(statistics.fmean(math.log(n.value) for n in nums)), ("geomean", nums))


def count(records) -> Num:
    """How many ``records`` a finding counts ("46 shapes", "7 faster"): the test finds each of them in the run."""
    keys = tuple(record_key(r) for r in records)
    return Num(float(len(keys)), ("count", keys))


@dataclass(frozen=True)
class Quoted:
    """A number as printed: ``text`` (``format(num.value, spec)``) and its Num."""

    num: Num
    spec: str

    @property
    def text(self) -> str:
        return format(self.num.value, self.spec)


def q(num: Num, spec: str) -> Quoted:
    return Quoted(num, spec)


class Finding(str):
    """A finding's text (a str, as results.json stores it) with ``quoted``: every number printed from a Num."""

    quoted: tuple[Quoted, ...] = ()


def sentence(*parts) -> Finding:
    """Join strings and :class:`Quoted` numbers into a Finding that remembers the numbers it printed."""
    text = "".join(p.text if isinstance(p, Quoted) else str(p) for p in parts)
    out = Finding(text)
    out.quoted = tuple(x for p in parts for x in ((p,) if isinstance(p, Quoted) else getattr(p, "quoted", ())))
    return out


def join(sep: str, parts) -> Finding:
    """``sep.join(parts)`` for strings and Findings, keeping every part's quoted numbers."""
    items = []
    for part in parts:
        items += [sep, part] if items else [part]
    return sentence(*items)
