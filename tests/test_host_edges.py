"""Host-side edges a user meets as one line of output: an unsaveable value, an empty sample list, a check's
message, the per-element matmul bound's k, a finding's links, the run a ceiling's record came from."""

from __future__ import annotations

import numpy as np
import pytest

from gpumemlab.bench import stats, verify
from gpumemlab.bench.records import Record, RunResults
from gpumemlab.errors import VerificationError
from gpumemlab.report import format as fmt
from gpumemlab.report import html
from gpumemlab.suite import run as suite_run


def test_a_value_json_cannot_hold_fails_the_save_by_its_type_and_leaves_no_file(tmp_path):
    rec = Record("e", "v", {}, None, None, {"median": 1.0}, None, None, None, None, True,
                 extra=dict(counts=np.arange(2), peak=np.float32(1.5), seen={1}))
    res = RunResults(meta={}, device={}, ceilings={}, results=[rec])
    with pytest.raises(TypeError, match=r"^not JSON serializable: set$"):
        res.save(tmp_path / "results.json")
    assert list(tmp_path.iterdir()) == []
    rec.extra.pop("seen")
    res.save(tmp_path / "results.json")  # NumPy arrays and scalars are written as lists and numbers
    assert RunResults.load(tmp_path / "results.json").results[0].extra == dict(counts=[0, 1], peak=1.5)


def test_quantile_of_no_samples_says_so():
    with pytest.raises(ValueError, match=r"^quantile of no samples$"):
        stats.quantile([], 0.5)


def test_check_within_names_what_it_checked():
    with pytest.raises(VerificationError, match=r"^sums: 1 of 2 elements wrong; first at \(1,\)"):
        verify.check_within(np.array([1.0, 2.5]), np.array([1.0, 2.0]), 0.1, what="sums")


def test_matmul_bound_takes_k_from_a_s_columns():
    a, b = np.full((2, 3), -1.0), np.full((3, 4), 2.0)  # |A||B| = 3 x 2 = 6 everywhere, k = 3
    assert np.array_equal(verify.matmul_bound(a, b), np.full((2, 4), 6 * verify.gamma(3, np.float32)))
    one = verify.matmul_bound(np.full((2, 1), 3.0), np.full((1, 5), 1.0))  # k = 1: one rounding
    assert np.array_equal(one, np.full((2, 5), 3 * verify.gamma(1, np.float32)))
    batch = verify.matmul_bound(np.ones((4, 2, 3)), np.ones((4, 3, 2)), dtype=np.float64)  # a batch of 2x3 @ 3x2
    assert np.array_equal(batch, np.full((4, 2, 2), 3 * verify.gamma(3, np.float64)))


def test_a_finding_links_its_table_and_each_variant_it_names():
    got = html._finding("vec4 beats naive & vec2", "copy", {"vec4": 0, "naive": 2, "vec": 3})
    assert got == ('<li class="finding">Measured here: vec4 beats naive &amp; vec2 (<a href="#records-copy">records</a>, '
                   '<a href="#rec-copy-0">vec4</a>, <a href="#rec-copy-2">naive</a>)</li>')


def test_run_of_names_the_merged_run_that_measured_an_experiment_else_the_document_s_own():
    meta = dict(command="gpumemlab run", date="2026-01-01",
                merged_runs=[dict(experiments=["copy"], command="gpumemlab run --only copy"),
                             dict(date="2026-01-03"), dict(experiments=["scan"], date="2026-01-02")])
    assert fmt.run_of("copy", meta) == "gpumemlab run --only copy (date not recorded)"
    assert fmt.run_of("scan", meta) == "? (2026-01-02)"
    assert fmt.run_of("hist", meta) == "gpumemlab run (2026-01-01)"
    assert fmt.run_of("hist", {}) == "? (date not recorded)"


def test_findings_are_refreshed_only_for_experiments_with_records():
    res = RunResults(meta={}, device={}, ceilings={}, results=[],
                     experiments={"vector_copy": dict(title="t", skipped="needs two GPUs")})
    suite_run._refresh_findings(res)
    assert res.experiments == {"vector_copy": dict(title="t", skipped="needs two GPUs")}
