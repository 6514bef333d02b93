"""The model against what the GPU measured (recorded by ``python -m gpumemlab.ncu.recorded`` on an H100/H200).

Re-measure with:  python -m gpumemlab.ncu.recorded OUTDIR
then copy OUTDIR/ncu_cases.json and OUTDIR/occupancy_cases.json to tests/model/data/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpumemlab.model import occupancy, predict, resolve

DATA = Path(__file__).parent / "data"


def _load(name: str) -> dict:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{path.name} not recorded yet (run python -m gpumemlab.ncu.recorded on a GPU)")
    return json.loads(path.read_text())


def _ncu_cases():
    path = DATA / "ncu_cases.json"
    if not path.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason="ncu_cases.json not recorded yet"))]
    doc = json.loads(path.read_text())
    return [pytest.param(dict(c, cc=doc["cc"]), id=c["name"]) for c in doc["cases"] if c.get("measured")]


@pytest.mark.parametrize("case", _ncu_cases())
def test_model_matches_ncu(case):
    lanes = resolve(case["access"], case["decl"], block=case["block"], lets=case["lets"], active=case["active"],
                    offset=case["offset"])
    pred = predict(lanes, tuple(case["cc"]))
    assert {q: pred[q] for q in case["measured"]} == case["measured"]


def test_model_matches_the_driver_occupancy():
    doc = _load("occupancy_cases.json")
    rows = [r for r in doc["cases"] if "driver" in r]
    assert rows, "no driver answers recorded"
    for r in rows:
        got = occupancy(r["threads"], r["registers"], r["shared_bytes"] + r["dynamic_smem"], tuple(doc["cc"]),
                        barriers=r["barriers"], opt_in=False)
        assert got["blocks_per_sm"] == r["driver"], r
