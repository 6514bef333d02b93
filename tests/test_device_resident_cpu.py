"""device_resident without a GPU: the pipeline's steps on NumPy, and the findings on stand-in records."""

from __future__ import annotations

import numpy as np


def test_the_pipeline_scales_roots_scans_and_normalizes():
    from gpumemlab.experiments.device_resident import steps_gpu

    got = steps_gpu(np, np.array([0.0, 1.5, 4.0]))
    want = np.cumsum(np.sqrt(np.array([1.0, 4.0, 9.0])))  # 1, 3, 6
    assert np.array_equal(got, want / 6.0)


def records():
    from test_findings_cite import _rec

    from gpumemlab.experiments.device_resident import VARIANTS

    out = []
    for v, t, transfers in zip(VARIANTS, (0.12, 0.09, 0.011), (8, 4, 2)):
        out.append(_rec("device_resident", v, dict(n=1 << 25, mib=256.0), t, 1 << 29))
        out[-1].extra["transfers"] = transfers
    return out


def test_findings_compare_each_pipeline_with_the_resident_one():
    from gpumemlab.experiments import registry

    found = registry()["device_resident"].describe(records())["findings"]
    assert found == ["round trip after every step: 120.0 ms with 8 transfers = 10.9x the pipeline kept on the device "
                     "(11.0 ms, 2 transfers)",
                     "prefix sum on the CPU: 90.0 ms with 4 transfers = 8.2x the pipeline kept on the device (11.0 ms, "
                     "2 transfers)"]


def test_findings_are_honest():
    from test_findings_cite import check_run

    from gpumemlab.bench.records import RunResults

    assert check_run(RunResults(meta={}, device={}, ceilings={}, results=records()))["device_resident"] == (True, [])
