"""The library_overhead declaration without a GPU: derived microseconds per call and the finding sentences,
from records built here (the numbers are inputs of this test, not measurements)."""

from gpumemlab.bench.records import Record
from gpumemlab.experiments import registry


def _rec(variant, kind, median_s, h2h=None):
    params = dict(function="sum", calls=200, shapes="4096", dims=[[4096]])
    extra = {"head_to_head": {"cupy.sum": h2h}} if h2h else {}
    return Record(experiment="library_overhead", variant=variant, params=params, bytes=None, flops=None,
                  time_s=dict(median=median_s, min=median_s * 0.9, max=median_s * 1.5, n=20), gbps=None, gflops=None,
                  pct_of_ceiling=None, ceiling=None, verified=True, kind=kind, extra=extra)


def test_derive_and_findings_state_us_per_call_and_the_verdict():
    exp = registry()["library_overhead"]
    h2h = dict(speedup=1.6, p10=1.5, p90=1.7, rounds=30)
    recs = [_rec("gpumemlab.sum", "kernel", 2e-3, h2h), _rec("cupy.sum", "baseline", 4e-3)]
    exp.derive(recs, None)
    assert recs[0].extra["us_per_call"] == 10.0 and recs[1].extra["us_per_call"] == 20.0
    assert recs[0].extra["us_per_call_min_max"] == [9.0, 15.0]
    assert list(exp.findings(recs)) == [
        "sum (4096): gpumemlab.sum 10.0 us/call, cupy.sum 20.0 us/call (host clock, 200 calls back to back): "
        "2.00x CuPy's speed",
        "gpumemlab.sum vs cupy.sum, interleaved samples: 160.0% of its speed (p10-p90 150.0-170.0%, 30 rounds): faster"]


def test_the_declaration_times_each_function_against_its_cupy_equivalent():
    exp = registry()["library_overhead"]
    assert exp.group_by == ("function",)
    assert exp.params["functions"] == ["matmul", "sum", "transpose", "copy", "sample2d"]
    assert any(c.from_seed for c in exp.claims) and any(not c.from_seed for c in exp.claims)
