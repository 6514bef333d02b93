"""Result records and the results.json document (the source of truth for every table and plot)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

SCHEMA_VERSION = 1


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
    env: dict | None = None      # NVML snapshot after timing
    extra: dict = field(default_factory=dict)

    @property
    def median_s(self) -> float:
        return float(self.time_s["median"])

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Record":
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})


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
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1, default=_json_default))

    @classmethod
    def load(cls, path: Path) -> "RunResults":
        d = json.loads(Path(path).read_text())
        if not isinstance(d, dict) or "results" not in d or "device" not in d:
            raise ValueError(f"{path}: not a gpumemlab results.json")
        return cls(meta=d.get("meta", {}), device=d["device"], ceilings=d.get("ceilings", {}),
                   results=[Record.from_dict(r) for r in d["results"]],
                   experiments=d.get("experiments", {}), errors=d.get("errors", []))


def _json_default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
