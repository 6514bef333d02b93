"""A tiny tune run of each family on the GPU: 2 configurations, 1 small shape; a valid file, every point verified,
and a rerun on the same cache measures nothing again."""

import json

import pytest

from gpumemlab.kernels import KERNEL_DIR
from gpumemlab.kernels import matmul as KM
from gpumemlab.kernels import reduce as KR
from gpumemlab.tune import engine, families, table

pytestmark = pytest.mark.gpu

CASES = {"matmul": (["1024x512x1024"], [KM.CANDIDATES[0].name, KM.SMALL.name]),
         "reduce": (["2^22"], [KR.LIBRARY.label, KR.TUNING[0].label])}


@pytest.mark.parametrize("name", list(CASES))
def test_tiny_tune_run_writes_a_valid_file_with_every_point_verified(name, tmp_path):
    family = families.get(name)
    shapes, configs = CASES[name]
    cache = tmp_path / "cache.json"
    entry = engine.tune(family, shapes, configs, cache=cache, top=1, command="test")
    path = engine.write(family, entry, tmp_path)
    data = table.load(path)  # raises on a schema problem
    assert data["family"] == name and list(data["devices"]) == [entry["device"]["name"]]
    assert entry["checks"] and all(v is None for v in entry["checks"].values()), entry["checks"]
    labels = {p["label"] for p in entry["points"]}
    assert labels == set(configs)
    assert entry["points"] and all(p["verified"] and p[family.metric] > 0 and p["samples_n"] >= family.screen_timer.min_samples
                                   for p in entry["points"])
    assert {p["round"] for p in entry["points"]} == {"screen", "final"}
    assert list(entry["chosen"]) == shapes
    final = [p for p in entry["points"] if p["round"] == "final"]
    assert entry["chosen"][shapes[0]]["name"] == max(final, key=lambda p: p[family.metric])["name"]
    for p in entry["points"]:  # the metric is the work over the median, the ratio the baseline's time over it
        assert p[family.metric] == pytest.approx(family.work(p["shape"]) / p["median_s"] / 1e9, rel=1e-12)
        base = next(b for b in entry["baseline"]["points"] if b["round"] == p["round"])
        if p["round"] == "final":
            assert p["ratio_to_baseline"] == pytest.approx(base["median_s"] / p["median_s"], rel=1e-12)
    again = engine.tune(family, shapes, configs, cache=cache, top=1, command="test")
    screened = lambda e: [p for p in e["points"] if p["round"] == "screen"]  # noqa: E731
    assert screened(again) == screened(entry)  # from the cache, not measured again
    assert json.loads(cache.read_text())["family"] == name


def test_cli_tune_reduce_writes_out_dir_only(run_cli, tmp_path):
    tuned = KERNEL_DIR / "tuned"
    before = {p.name: p.read_bytes() for p in tuned.iterdir()}
    code, out, err = run_cli("tune", "reduce", "--shapes", "2^20", "--configs", KR.LIBRARY.label, "--top", "0",
                             "--out", str(tmp_path))
    assert code == 0, err
    data = table.load(tmp_path / "reduce.json")
    (dev, e), = data["devices"].items()
    assert e["command"] == f"gpumemlab tune reduce --shapes 2^20 --configs {KR.LIBRARY.label} --top 0"
    assert f"| {KR.LIBRARY.label} |" in out and (tmp_path / "reduce.cache.json").exists()
    assert {p.name: p.read_bytes() for p in tuned.iterdir()} == before  # no --install: the package is untouched
