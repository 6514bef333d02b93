"""Helpers for experiment records: the analyzer's prediction for the main access, and the
sentences of interleaved head-to-head comparisons."""

from __future__ import annotations

KEYS_GLOBAL = ("requests", "sectors", "sectors_per_request", "efficiency_pct", "verdict")
KEYS_SHARED = ("wavefronts", "ideal_wavefronts", "conflicts", "ways", "verdict")


def predict_global(access: str, decl: str, **kw) -> dict | None:
    try:
        from ..model import analyze_global

        res = analyze_global(access, decl, **kw)
    except Exception as exc:  # the model is advisory here: never fail a measurement for it
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"access": access, "decl": decl, **{k: res.get(k) for k in KEYS_GLOBAL}}


def predict_shared(access: str, decl: str, **kw) -> dict | None:
    try:
        from ..model import analyze_shared

        res = analyze_shared(access, decl, **kw)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"access": access, "decl": decl, **{k: res.get(k) for k in KEYS_SHARED}}


def head_to_head_findings(label: str, rec) -> list[str]:
    """Sentences for the interleaved comparisons stored in ``rec.extra["head_to_head"]``."""
    out = []
    for name, h in (rec.extra.get("head_to_head") or {}).items():
        out.append(f"{label} vs {name}, interleaved samples: {100 * h['speedup']:.1f}% of its speed "
                   f"(p10-p90 {100 * h['p10']:.1f}-{100 * h['p90']:.1f}%, {h['rounds']} rounds)")
    return out
