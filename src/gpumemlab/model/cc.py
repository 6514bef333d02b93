"""Compute capabilities the analyzer knows, parsed from "9.0", "sm_90", (9, 0) or 9.0.

SUPPORTED_CC is the one list every entry point accepts (analyze, occupancy, the intensity
devices). A model that has no rules for an accepted CC says so through :func:`require`, so every
refusal reads the same.
"""

from __future__ import annotations

import re

from ..errors import UsageError

# Every compute capability NVIDIA has shipped up to Blackwell (public CUDA docs).
SUPPORTED_CC: tuple[tuple[int, int], ...] = (
    (1, 0), (1, 1), (1, 2), (1, 3), (2, 0), (2, 1), (3, 0), (3, 2), (3, 5), (3, 7),
    (5, 0), (5, 2), (5, 3), (6, 0), (6, 1), (6, 2), (7, 0), (7, 2), (7, 5),
    (8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1),
)

KNOWN_CC = SUPPORTED_CC  # the former name
CC = tuple[int, int]


def cc_str(cc: CC) -> str:
    return f"{cc[0]}.{cc[1]}"


def parse_cc(value, known: tuple[CC, ...] = SUPPORTED_CC, scope: str = "") -> CC:
    """Return (major, minor) for "9.0", "sm_90", "90", (9, 0) or 9.0; UsageError if not in ``known``.

    ``scope`` completes the message, e.g. " for occupancy".
    """
    if isinstance(value, (tuple, list)) and len(value) == 2:
        try:
            cc = (int(value[0]), int(value[1]))
        except (TypeError, ValueError):
            raise UsageError(f"bad compute capability {value!r}: expected MAJOR.MINOR, e.g. 9.0") from None
    else:
        text = str(value).strip().lower()
        m = (re.fullmatch(r"(\d{1,2})\.(\d)", text) or re.fullmatch(r"(?:sm_|compute_)?(\d{1,2})(\d)a?", text)
             or re.fullmatch(r"(\d{1,2})()", text))
        if not m:
            raise UsageError(f"bad compute capability {value!r}: expected MAJOR.MINOR, e.g. 9.0")
        cc = (int(m.group(1)), int(m.group(2) or 0))
    if cc not in known:
        listed = ", ".join(cc_str(c) for c in known)
        raise UsageError(f"unknown compute capability {cc_str(cc)}{scope} (known: {listed})")
    return cc


def require(cc: CC, modelled, what: str) -> CC:
    """``cc`` if ``what`` (e.g. "occupancy") has rules for it; else one line naming those it has."""
    if cc not in modelled:
        listed = ", ".join(cc_str(c) for c in modelled)
        raise UsageError(f"{what} is not modelled for compute capability {cc_str(cc)} (it is for {listed})")
    return cc
