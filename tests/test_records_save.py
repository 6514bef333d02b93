"""RunResults.save's failure path and durability, and Record.to_dict's copy: the parts of bench/records.py that a
results.json written once and read back does not exercise."""

import os
import stat

import numpy as np
import pytest

from gpumemlab.bench import records
from gpumemlab.bench.records import Record, RunResults


def _run(tag: str) -> RunResults:
    return RunResults(meta={"tag": tag}, device={"name": "X"}, ceilings={}, results=[])


def test_the_temporary_file_is_a_hidden_name_beside_the_target(tmp_path, monkeypatch):
    target = tmp_path / "run" / "results.json"
    renames = []
    real = os.replace
    monkeypatch.setattr(records.os, "replace", lambda src, dst: (renames.append((src, dst)), real(src, dst)))
    _run("a").save(target)
    (src, dst), = renames
    # beside it: a rename within one folder is atomic; hidden and not *.json: never read as a run while it is written
    assert os.path.dirname(src) == str(target.parent) and dst == target
    assert os.path.basename(src).startswith(".results.json.") and src.endswith(".tmp")
    assert sorted(p.name for p in target.parent.iterdir()) == ["results.json"]


def test_the_file_and_then_its_folder_are_synced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(records.os, "fsync", lambda fd: (synced.append(stat.S_ISDIR(os.fstat(fd).st_mode)), real(fd)))
    _run("a").save(tmp_path / "results.json")
    assert synced == [False, True]  # the data, then the directory entry that names it


@pytest.mark.parametrize("fail_at", ["fsync", "replace"])
def test_a_failed_write_keeps_the_previous_run_and_leaves_no_temporary_file(tmp_path, monkeypatch, fail_at):
    target = tmp_path / "results.json"
    _run("first").save(target)

    def boom(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(records.os, fail_at, boom)
    with pytest.raises(OSError, match="No space left on device"):
        _run("second").save(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
    monkeypatch.undo()
    assert RunResults.load(target).meta == {"tag": "first"}


def test_a_folder_that_cannot_be_synced_does_not_fail_the_save(tmp_path, monkeypatch):
    real_open = os.open

    def no_dirs(path, flags, *a):
        if os.path.isdir(path):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *a)

    monkeypatch.setattr(records.os, "open", no_dirs)
    _run("a").save(tmp_path / "results.json")
    assert RunResults.load(tmp_path / "results.json").meta == {"tag": "a"}


def test_to_dict_copies_leaves_that_are_not_json_and_shares_none_of_the_mutable_ones():
    arr = np.arange(3.0)
    r = Record("e", "v", {"a": [1, {"b": 2}]}, 8, None, {"median": 1.0, "samples": [1.0]}, None, None, None, None,
               True, extra={"array": arr, "pair": (1, [2])})
    d = r.to_dict()
    arr[0] = 99.0
    r.extra["pair"][1].append(3)
    r.params["a"][1]["b"] = 5
    r.time_s["samples"].append(2.0)
    assert d["extra"]["array"].tolist() == [0.0, 1.0, 2.0] and d["extra"]["pair"] == (1, [2])
    assert d["params"] == {"a": [1, {"b": 2}]} and d["time_s"] == {"median": 1.0, "samples": [1.0]}
    assert d["extra"]["array"] is not arr


def test_numpy_values_are_written_as_numbers_and_lists(tmp_path):
    run = _run("np")
    run.meta.update(count=np.int64(3), rate=np.float32(0.5), samples=np.arange(3.0))
    run.save(tmp_path / "results.json")
    assert RunResults.load(tmp_path / "results.json").meta == {"tag": "np", "count": 3, "rate": 0.5,
                                                               "samples": [0.0, 1.0, 2.0]}


def test_a_name_ending_in_xz_is_written_at_xz_preset_9_and_any_other_as_plain_json(tmp_path):
    import json
    import lzma

    run = _run("xz")
    run.save(tmp_path / "results.json.xz")
    run.save(tmp_path / "results.XZ.json")
    plain = (tmp_path / "results.XZ.json").read_bytes()
    assert json.loads(plain)["meta"] == {"tag": "xz"}
    # preset 9: the smallest committed runs (docs/developing.md, "Large files")
    assert (tmp_path / "results.json.xz").read_bytes() == lzma.compress(plain, preset=9)


def test_a_failed_clean_up_does_not_hide_the_error_that_stopped_the_write(tmp_path, monkeypatch):
    def full(*args):
        raise OSError(28, "No space left on device")

    def gone(path):
        raise FileNotFoundError(2, "No such file or directory", path)

    real_unlink = os.unlink
    monkeypatch.setattr(records.os, "fsync", full)
    monkeypatch.setattr(records.os, "unlink", gone)
    with pytest.raises(OSError, match="No space left on device"):
        _run("a").save(tmp_path / "results.json")
    for p in tmp_path.iterdir():  # the temporary file the failed clean-up left
        real_unlink(p)
