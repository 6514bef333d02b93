"""Rules the committed reports must keep, checked on every committed run (no GPU)."""

from __future__ import annotations

import dataclasses

import pytest

from committed_runs import H200, NAMES, committed_run
from gpumemlab.bench.records import RunResults
from gpumemlab.experiments import registry


def above_dram_without_a_note(run: RunResults) -> list[str]:
    """Records whose effective bandwidth beats the DRAM peak without saying why: each must be judged against no
    DRAM ceiling (``ceiling`` None) and either carry notes or belong to an experiment whose note names L2 (the
    bytes were served from a cache, not DRAM)."""
    peak = (run.ceilings.get("dram_theoretical_gbps") or {}).get("value")
    if not peak:
        return []
    reg = registry()
    bad = []
    for r in run.results:
        if not (r.verified and r.gbps and r.gbps > peak):
            continue
        exp = reg.get(r.experiment)
        said = bool(r.notes) or (exp is not None and "L2" in (exp.modern_note or ""))
        if r.ceiling is not None or not said:
            bad.append(f"{r.experiment} / {r.variant} {r.params}: {r.gbps:,.0f} GB/s above the DRAM peak {peak:,.0f}")
    return bad


@pytest.mark.parametrize("name", NAMES)
def test_no_effective_bandwidth_above_the_dram_peak_without_a_note(name):
    assert above_dram_without_a_note(committed_run(name)) == []


def test_the_dram_rule_catches_a_copy_counted_twice():
    """A record like zero_copy's before its bytes were counted once: above the peak, against the copy ceiling."""
    run = committed_run(NAMES[0])
    peak = run.ceilings["dram_theoretical_gbps"]["value"]
    fine = next(r for r in run.results if r.verified and r.ceiling == "copy_gbps" and r.gbps)
    rec = dataclasses.replace(fine, gbps=2 * peak)
    assert above_dram_without_a_note(dataclasses.replace(run, results=[fine])) == []
    assert above_dram_without_a_note(dataclasses.replace(run, results=[fine, rec])) == [
        f"{rec.experiment} / {rec.variant} {rec.params}: {2 * peak:,.0f} GB/s above the DRAM peak {peak:,.0f}"]


def _findings(name: str) -> list[str]:
    recs = [r for r in committed_run(H200).results if r.experiment == name]
    return [str(f) for f in registry()[name].describe(recs)["findings"]]


def test_the_texts_say_what_the_numbers_support():
    stride = " ".join(_findings("stride_copy"))
    assert "-byte sector per 4-byte element predicts 12.5% (the L1/L2 sector model), DRAM's 64 bytes per missed " \
           "sector (the model's hypothesis) 6.25%" in stride
    batching = " ".join(_findings("transfer_batching"))
    assert "at least" not in batching and "from issue to completion (its latency" in batching
    pitched = _findings("pitched_copy")
    assert any("% of it)" in f or "packed (" in f for f in pitched)
    assert all("%, a tie within the noise)" in f or "%, faster)" in f or "%, slower)" in f
               for f in pitched if ": row_scale " in f)
    reduce = " ".join(_findings("reduce"))
    assert "interleaved samples" in reduce and "x cupy.sum (" not in reduce  # cupy.sum is timed interleaved
    vector = " ".join(_findings("vector_copy"))
    assert "float x1: " in vector and "one load in flight each" in vector
