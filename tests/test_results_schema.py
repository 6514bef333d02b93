"""What RunResults.load refuses, word for word, and what it fills in: xz files, unreadable paths, documents nested
too deeply, the type and bound of each field, the order of the time statistics (records.validate)."""

from __future__ import annotations

import lzma

import pytest

from gpumemlab.bench.records import MAX_NESTING, Record, RunResults, nesting_depth, validate
from gpumemlab.errors import ResultsError


def a_doc(**record) -> dict:
    """A valid results.json document of one record, with ``record``'s fields replaced."""
    r = Record("copy", "vec4", {"n": 4}, 32, None, {"median": 1.0, "samples": [1.0]}, 2.0, None, None, None, True)
    d = RunResults(meta={}, device={"name": "X"}, ceilings={}, results=[r]).to_dict()
    d["results"][0].update(record)
    return d


def test_an_xz_results_file_loads_and_a_broken_one_is_refused(tmp_path):
    RunResults(meta={"m": 1}, device={}, ceilings={}, results=[]).save(tmp_path / "results.json.xz")
    assert RunResults.load(tmp_path / "results.json.xz").meta == {"m": 1}
    broken = tmp_path / "broken.json.xz"
    broken.write_bytes(lzma.compress(b"{}")[:12])
    with pytest.raises(ResultsError) as err:
        RunResults.load(broken)
    assert str(err.value).startswith(f"{broken}: not a gpumemlab results.json (broken xz data: Compressed data ended")


def test_unreadable_and_too_deep_files_are_refused_in_one_line(tmp_path):
    with pytest.raises(ResultsError) as err:
        RunResults.load(tmp_path)
    assert str(err.value) == f"{tmp_path}: cannot read (Is a directory)"
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)  # beyond the JSON parser's recursion
    with pytest.raises(ResultsError) as err:
        RunResults.load(deep)
    assert str(err.value) == f"{deep}: not a gpumemlab results.json (nested too deeply to be one)"


def test_a_problem_is_named_with_the_path_and_optional_lists_default_to_empty(tmp_path):
    d = a_doc()
    del d["experiments"], d["errors"]
    path = tmp_path / "results.json"
    RunResults(**{k: d[k] for k in ("meta", "device", "ceilings")}, results=[]).save(path)
    path.write_text(path.read_text().replace('"experiments": {},', "").replace('"errors": [],', ""))
    res = RunResults.load(path)
    assert (res.experiments, res.errors) == ({}, [])
    path.write_text(path.read_text().replace('"results": []', '"results": 1'))
    with pytest.raises(ResultsError) as err:
        RunResults.load(path)
    assert str(err.value) == f"{path}: results.json: field 'results' is integer 1, expected array"


def test_nesting_depth_counts_lists_and_objects_and_stops_past_the_limit():
    assert [nesting_depth(v) for v in (1, {}, [], {"a": [1, {"b": []}]}, [[], {}])] == [0, 1, 1, 4, 2]
    deep = []
    for _ in range(MAX_NESTING + 5):
        deep = [deep]
    assert nesting_depth(deep) == MAX_NESTING + 1
    d = a_doc(extra={"x": deep})
    assert validate(d) == f"not a gpumemlab results.json (lists and objects nested more than {MAX_NESTING} deep)"


@pytest.mark.parametrize("change, problem", [
    (dict(gbps=0), ": field 'gbps' is 0: expected a number > 0"),  # a rate is never 0
    (dict(bytes=-1), ": field 'bytes' is -1: expected a number >= 0"),
    (dict(gflops=float("inf")), ": field 'gflops' is inf: expected a finite number"),
    (dict(gbps="fast"), ": field 'gbps' is string 'fast', expected number or null"),
    (dict(kind=None), ": field 'kind' is null, expected string"),
    (dict(notes=["x" * 50]), ": field 'notes' is array ['" + "x" * 38 + ", expected string or null"),  # 40 shown
    (dict(time_s={"median": 1.0, "min": 2.0}), " time_s: min 2.0 is above median 1.0"),
    (dict(time_s={"min": 0.1, "p10": 0.5, "median": 0.4}), " time_s: p10 0.5 is above median 0.4"),
    (dict(time_s={"median": 1.0, "samples": [0.5, -1.0]}), " time_s: samples[1] is -1.0: expected a number >= 0"),
    (dict(time_s={"median": 1.0, "samples": [1, True]}), " time_s: samples[1] is boolean, expected number"),
])
def test_a_record_field_out_of_its_type_or_bound(change, problem):
    assert validate(a_doc(**change)) == "record 0 (copy / vec4)" + problem


def test_zero_where_zero_is_possible_and_an_optional_field_left_out():
    assert validate(a_doc(bytes=0, time_s={"median": 1.0, "min": 0, "samples": [0.0, 0, 2.5]})) is None
    d = a_doc()
    del d["experiments"]
    d["errors"] = "x"  # checked although the optional field before it is missing
    assert validate(d) == "results.json: field 'errors' is string 'x', expected array"
    d = a_doc()
    d["results"] = ["x"]
    assert validate(d) == "record 0: expected an object, got string"


@pytest.mark.parametrize("change, problem", [
    (dict(schema=99), "schema version 99, this gpumemlab reads versions 1, 2 (written by a newer gpumemlab)"),
    (dict(schema=0), "schema version 0, this gpumemlab reads versions 1, 2"),
    (dict(schema="2"), "results.json: field 'schema' is string '2', expected integer"),
    (dict(schema=1), None),
])
def test_the_schema_versions_read(change, problem):
    assert validate({**a_doc(), **change}) == problem


@pytest.mark.parametrize("doc", [["results", "device"], {"results": []}, {"device": {}}, None])
def test_a_document_without_results_and_device_is_no_results_file(doc):
    assert validate(doc) == "not a gpumemlab results.json (no 'results' and 'device')"


def test_a_ceiling_an_error_entry_and_an_unnamed_record_are_named_in_the_problem():
    assert validate({**a_doc(), "ceilings": {"copy_gbps": {"value": 0, "unit": "GB/s"}}}) == \
        "ceiling 'copy_gbps': field 'value' is 0: expected a number > 0"
    assert validate({**a_doc(), "ceilings": {"copy_gbps": {"value": 1.0}}}) == "ceiling 'copy_gbps': missing field 'unit'"
    assert validate({**a_doc(), "errors": [{"experiment": "x"}]}) == "errors[0]: missing field 'error'"
    d = a_doc()
    del d["results"][0]["experiment"], d["results"][0]["variant"]
    assert validate(d) == "record 0 (? / ?): missing field 'experiment'"
    assert validate(a_doc(params=(1,))) == "record 0 (copy / vec4): field 'params' is tuple (1,), expected object"


def test_a_document_nested_exactly_to_the_limit_is_read():
    def nested(depth):
        v = []
        for _ in range(depth - 1):
            v = [v]
        return v

    # the document, its results list, the record and its extra are 4 levels
    assert validate(a_doc(extra={"x": nested(MAX_NESTING - 4)})) is None
    assert validate(a_doc(extra={"x": nested(MAX_NESTING - 3)})).endswith(f"nested more than {MAX_NESTING} deep)")


def test_a_baseline_is_an_object_with_positive_numbers():
    assert validate(a_doc(baselines={"cuBLAS": {"ratio": 0}})) == \
        "record 0 (copy / vec4) baseline 'cuBLAS': field 'ratio' is 0: expected a number > 0"
    assert validate(a_doc(baselines={"cuBLAS": 3})) == "record 0 (copy / vec4) baseline 'cuBLAS': expected an object, got integer"
    assert validate(a_doc(baselines={"cuBLAS": {"ratio": 1.5, "median_s": 1e-3}})) is None


def test_save_makes_the_folders_and_writes_indented_json_with_no_temporary_file_left(tmp_path):
    import os

    path = tmp_path / "a" / "b" / "results.json"
    RunResults(meta={}, device={}, ceilings={}, results=[]).save(path)
    assert path.read_text().startswith('{\n "schema": 2,\n "meta": {},\n "device": {},')  # one space per level
    assert os.listdir(path.parent) == ["results.json"]
