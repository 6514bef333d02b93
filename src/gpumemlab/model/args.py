"""Argument checks of the model's public functions: a wrong type or an impossible value is a one-line
:class:`~gpumemlab.errors.UsageError` naming the argument, never an AttributeError from deep inside."""

from __future__ import annotations

import math
import numbers

from ..errors import UsageError


def _shown(value) -> str:
    return f"{type(value).__name__} {value!r:.40}"


def text(value, name: str, optional: bool = False):
    """``value`` if it is a str (or None when ``optional``)."""
    if isinstance(value, str) or (optional and value is None):
        return value
    raise UsageError(f"{name} must be a string{' or None' if optional else ''}, got {_shown(value)}")


def integer(value, name: str, least: int | None = None, optional: bool = False):
    """``value`` as an int if it is an integer (not a bool, not a float) of at least ``least``."""
    if optional and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise UsageError(f"{name} must be an integer, got {_shown(value)}")
    if least is not None and value < least:
        raise UsageError(f"{name} must be >= {least}, got {int(value)}")
    return int(value)


def number(value, name: str, positive: bool = True, optional: bool = False):
    """``value`` as a float if it is a finite real number (> 0 when ``positive``, else >= 0)."""
    if optional and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise UsageError(f"{name} must be a number, got {_shown(value)}")
    what = "positive" if positive else ">= 0"
    if not math.isfinite(value):
        raise UsageError(f"{name} must be a finite number, {what}, got {value}")
    if value < 0 or (positive and value == 0):
        raise UsageError(f"{name} must be {what}, got {value:g}")
    return float(value)


def instance(value, cls: type, name: str, hint: str = ""):
    """``value`` if it is a ``cls``."""
    if isinstance(value, cls):
        return value
    raise UsageError(f"{name} must be a {cls.__name__}{hint}, got {_shown(value)}")
