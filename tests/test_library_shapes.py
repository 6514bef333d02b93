"""library_shapes without a GPU: the shape set covers what issue 11 names, and the shape arithmetic."""

import numpy as np

from gpumemlab.experiments import library_shapes as L


def test_the_set_holds_the_cases_issue_11_names():
    sums = {(s, a) for f, s, a in L.SHAPES if f == "sum"}
    assert {((16384, 16384), 0), ((16384, 16384), 1)} <= sums and any(len(s) == 3 for s, _ in sums)
    transposes = {s for f, s, _ in L.SHAPES if f == "transpose"}
    assert {(16384, 16384), (3, 70000), (70000, 3), (16380, 16388)} <= transposes
    assert {f for f, _, _ in L.SHAPES} == set(L.EXPERIMENT.params["functions"]) == set(L.CUPY)


def test_reduced_is_numpy_s_result_shape():
    for shape, axis in [((4, 5), 0), ((4, 5), 1), ((4, 5), -1), ((4, 5), None), ((2, 3, 4), (0, 2)), ((2, 3, 4), 1)]:
        assert L.reduced(shape, axis) == np.sum(np.zeros(shape), axis=axis).shape


def test_fitted_cuts_the_longest_side_only():
    assert L.fitted((16384, 16384), 1 << 28) == (16384, 16384)
    assert L.fitted((3, 1 << 24), 3 << 20) == (3, 1 << 20)
    assert L.fitted((1 << 20, 31), 31 << 10) == (1 << 10, 31)
    assert L.fitted((512, 512, 256), 512 * 256 * 100) == (100, 512, 256)
    assert L.fitted((10, 7), 3) == (1, 7)  # never below one element per side
