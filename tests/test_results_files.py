"""results.json on disk: any record set survives save and load unchanged; a truncated or corrupted file is refused
in one line (ResultsError; `report` and `compare` exit 2 and write nothing), never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpumemlab.bench.records import Record, RunResults
from gpumemlab.errors import ResultsError

RUN = Path(__file__).resolve().parent / "data" / "runs" / "nvidia-h200" / "results.json"  # cut from a real run
TEXT = RUN.read_bytes()


def examples(n: int) -> int:
    return max(10, int(n * float(os.environ.get("HYPOTHESIS_SCALE", "1"))))


# ---------------------------------------------------------------- save / load round trip

finite = st.floats(allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=0.0, exclude_min=True, allow_nan=False, allow_infinity=False)  # what a time or rate is
non_negative = st.floats(min_value=0.0, allow_nan=False, allow_infinity=False)
names = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # any text but lone surrogates
json_values = st.recursive(st.none() | st.booleans() | st.integers() | finite | names,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
                           max_leaves=8)
records = st.builds(
    Record, experiment=names, variant=names, params=st.dictionaries(names, json_values, max_size=3),
    bytes=st.none() | st.integers(0, 1 << 62), flops=st.none() | st.integers(0, 1 << 62),
    time_s=st.fixed_dictionaries(dict(median=positive), optional=dict(samples=st.lists(non_negative, max_size=5))),
    gbps=st.none() | positive, gflops=st.none() | positive, pct_of_ceiling=st.none() | non_negative,
    ceiling=st.none() | names,
    verified=st.booleans(), kind=st.sampled_from(["kernel", "baseline"]),
    model=st.none() | st.dictionaries(names, json_values, max_size=2),
    extra=st.dictionaries(names, json_values, max_size=2), flags=st.lists(names, max_size=2))


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(records, max_size=4), st.lists(st.fixed_dictionaries(dict(experiment=names, error=names)),
                                                max_size=2), st.dictionaries(names, json_values, max_size=3))
def test_any_run_survives_save_and_load(tmp_path, recs, errors, meta):
    res = RunResults(meta=meta, device=dict(name="GPU"), ceilings=dict(c=dict(value=1.5, unit="GB/s")), results=recs,
                     experiments={}, errors=errors)
    path = tmp_path / "results.json"
    res.save(path)
    back = RunResults.load(path)
    assert back.to_dict() == res.to_dict()
    assert list(back.results) == recs  # every field, types included (1 stays int, 1.0 float)
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary file left


# ---------------------------------------------------------------- truncated and corrupted files

CUTS = [0, 1, 2, len(TEXT) // 3, len(TEXT) // 2, len(TEXT) - 3, len(TEXT) - 2]  # the file ends "}\n"


@pytest.mark.parametrize("cut", CUTS)
def test_a_truncated_file_is_refused_in_one_line(tmp_path, run_cli, cut):
    path = tmp_path / "results.json"
    path.write_bytes(TEXT[:cut])
    with pytest.raises(ResultsError) as info:
        RunResults.load(path)
    assert str(info.value).startswith(f"{path}: not valid JSON (") and "\n" not in str(info.value)
    out = tmp_path / "report"
    code, stdout, err = run_cli("report", str(path), "--out", str(out))
    assert (code, stdout) == (2, "") and err.strip() == f"gpumemlab report: {info.value}"
    assert not out.exists()
    code, stdout, err = run_cli("compare", str(RUN), str(path))
    assert (code, stdout) == (2, "") and err.strip() == f"gpumemlab compare: {info.value}"


def test_a_file_that_lost_only_its_newline_still_loads(tmp_path):
    path = tmp_path / "results.json"
    path.write_bytes(TEXT.rstrip(b"\n"))
    assert len(RunResults.load(path).results) == len(json.loads(TEXT)["results"])


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, len(TEXT) - 1), st.binary(min_size=1, max_size=8), st.integers(0, 8))
def test_a_corrupted_file_loads_or_is_refused_in_one_line(tmp_path, at, garbage, removed):
    """Bytes overwritten (and some dropped) anywhere: either still a valid run, or ResultsError with one line."""
    path = tmp_path / "results.json"
    path.write_bytes(TEXT[:at] + garbage + TEXT[at + removed:])
    try:
        res = RunResults.load(path)
    except ResultsError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"{path}: ")
    else:
        assert isinstance(res.results, list) and all(isinstance(r, Record) for r in res.results)
