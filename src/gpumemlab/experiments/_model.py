"""The analyzer's prediction for an experiment's main access (None if the model cannot answer)."""

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
