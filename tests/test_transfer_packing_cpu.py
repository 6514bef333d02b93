"""transfer_batching's packing (seed 003, 9.1) without a GPU: the finding on stand-in records, quoted honestly."""

from __future__ import annotations


def records():
    from test_findings_cite import _rec

    from gpumemlab.experiments.transfer_batching import PACKING

    params = dict(direction="H2D", bytes=4 << 20, size="4 MiB", piece=4096, pieces=1024)
    out = [_rec("transfer_batching", v, params, t, 4 << 20) for v, t in zip(PACKING, (2.5e-3, 0.5e-3))]
    for r in out:
        r.extra["per_transfer_s"] = r.median_s / 1024
    return out


def test_the_packing_finding():
    from gpumemlab.experiments import registry

    found = list(registry()["transfer_batching"].findings(records()))
    assert found == ["1024 regions of 4 KiB: one copy each 2.500 ms; packed on the host, one copy, unpacked on the "
                     "GPU 0.500 ms (5.0x as long one by one; host clock)"]


def test_the_packing_finding_is_honest():
    from test_findings_cite import check_run

    from gpumemlab.bench.records import RunResults

    found = check_run(RunResults(meta={}, device={}, ceilings={}, results=records()))
    assert found["transfer_batching"][1] == []
