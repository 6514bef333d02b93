"""library_shapes without a GPU: the shape set covers what issue 11 names, and the shape arithmetic."""

import numpy as np

from gpumemlab.experiments import library_shapes as L


def test_the_set_holds_the_cases_issue_11_names():
    sums = {(s, a) for f, s, a, _ in L.SHAPES if f == "sum"}
    assert {((16384, 16384), 0), ((16384, 16384), 1)} <= sums and any(len(s) == 3 for s, _ in sums)
    transposes = {s for f, s, _, _ in L.SHAPES if f == "transpose"}
    assert {(16384, 16384), (3, 70000), (70000, 3), (16380, 16388)} <= transposes
    assert {f for f, _, _, _ in L.SHAPES} == set(L.EXPERIMENT.params["functions"]) == set(L.CUPY)


def test_the_transposes_grow_past_the_tuned_shapes():
    """Odd sides, N-D permutations and 1-, 2- and 8-byte elements, after the records whose index is kept."""
    later = [(s, a, d) for f, s, a, d in L.SHAPES[-len(L.LATER_TRANSPOSES):]]
    assert later == L.LATER_TRANSPOSES and all(f == "transpose" for f, *_ in L.SHAPES[-len(later):])
    assert {d for _, _, d in later} >= {"int8", "float16", "float64", "int64", "float32"}
    assert any(len(s) == 4 for s, _, _ in later) and any(s[0] % 2 and s[1] % 2 for s, _, _ in later if len(s) == 2)


def test_reduced_is_numpy_s_result_shape():
    for shape, axis in [((4, 5), 0), ((4, 5), 1), ((4, 5), -1), ((4, 5), None), ((2, 3, 4), (0, 2)), ((2, 3, 4), 1)]:
        assert L.reduced(shape, axis) == np.sum(np.zeros(shape), axis=axis).shape


def test_fitted_cuts_the_longest_side_only():
    assert L.fitted((16384, 16384), 1 << 28) == (16384, 16384)
    assert L.fitted((3, 1 << 24), 3 << 20) == (3, 1 << 20)
    assert L.fitted((1 << 20, 31), 31 << 10) == (1 << 10, 31)
    assert L.fitted((512, 512, 256), 512 * 256 * 100) == (100, 512, 256)
    assert L.fitted((10, 7), 3) == (1, 7)  # never below one element per side
