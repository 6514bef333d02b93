"""Experiment registry: each module in this package defines ``EXPERIMENT``, a declaration
(:class:`~gpumemlab.experiments._declare.Experiment`) that the suite's runner (``gpumemlab.suite.runner``)
measures. Modules never import each other; what several share lives in the private ``_*.py`` modules."""

from __future__ import annotations

import importlib
import math
import pkgutil
from pathlib import Path

from ..errors import UsageError
from ._declare import Case, Check, Claim, Experiment, Plot, Source, outside, seed

__all__ = ["Case", "Check", "Claim", "Experiment", "Plot", "Source", "outside", "seed", "registry", "get",
           "parse_params"]


_MODULES_DIR = Path(__file__).resolve().parent


def registry() -> dict[str, Experiment]:
    found = {}
    for m in pkgutil.iter_modules([str(_MODULES_DIR)]):
        if m.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{m.name}")
        exp = getattr(mod, "EXPERIMENT", None)
        if isinstance(exp, Experiment):
            found[exp.name] = exp
    return dict(sorted(found.items(), key=lambda kv: (kv[1].order, kv[0])))


def get(name: str) -> Experiment:
    reg = registry()
    if name not in reg:
        raise UsageError(f"unknown experiment {name!r}; known: {', '.join(reg)}")
    return reg[name]


def parse_params(exp: Experiment, pairs: list[str]) -> dict:
    """Merge ``k=v`` strings into the declared defaults, converting to each default's type."""
    params = dict(exp.params)
    for pair in pairs or []:
        if "=" not in pair:
            raise UsageError(f"bad --param {pair!r}: expected KEY=VALUE")
        key, raw = (s.strip() for s in pair.split("=", 1))
        if key not in params:
            raise UsageError(f"{exp.name} has no parameter {key!r}; it has: {', '.join(params) or 'none'}")
        params[key] = _check_sign(key, _convert(key, raw, params[key]), params[key])
    return params


def _check_sign(key: str, value, default):
    """Sizes and counts stay positive: a parameter whose defaults are all > 0 (or >= 0) refuses values that are not."""
    numbers = lambda v: [x for x in (v if isinstance(v, (list, tuple)) else [v])  # noqa: E731
                         if isinstance(x, (int, float)) and not isinstance(x, bool)]
    defaults, values = numbers(default), numbers(value)
    if defaults and values and min(defaults) >= 0:
        positive = min(defaults) > 0
        bad = [x for x in values if (x <= 0 if positive else x < 0)]
        if bad:
            raise UsageError(f"bad value {bad[0]!r} for {key}: must be {'> 0' if positive else '>= 0'}")
    if isinstance(default, (list, tuple)) and default and isinstance(value, list) and not value:
        raise UsageError(f"bad value for {key}: expected at least one value")
    return value


def _convert(key: str, raw: str, default):
    def one(text: str, like):
        try:
            if isinstance(like, bool):
                if text.lower() in ("1", "true", "yes", "on"):
                    return True
                if text.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError
            if isinstance(like, int):
                return int(text, 0)
            if isinstance(like, float):
                if not math.isfinite(float(text)):  # nan, inf: no size or factor can be one
                    raise UsageError(f"bad value {text!r} for {key}: expected a finite float")
                return float(text)
            return text
        except UsageError:
            raise
        except ValueError:
            raise UsageError(f"bad value {text!r} for {key}: expected {type(like).__name__}") from None

    if isinstance(default, (list, tuple)):
        like = default[0] if default else 0
        return [one(t, like) for t in raw.split(",") if t.strip()]
    return one(raw, default)
