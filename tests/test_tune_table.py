"""Tuned-table format 1: schema of the committed files, the one-off conversion of the two matmul tables into one
(same numbers, same choices), same-chip borrowing, install, markdown, and the engine's cache (a rerun measures
nothing twice)."""

import json
import subprocess
from pathlib import Path

import pytest

from gpumemlab.kernels import KERNEL_DIR
from gpumemlab.ops.matmul import choice as C
from gpumemlab.tune import engine, table
from gpumemlab.tune.space import Point

ROOT = Path(__file__).resolve().parents[1]
TUNED = KERNEL_DIR / "tuned"
BEFORE = json.loads((ROOT / "tests" / "data" / "matmul_routes_before.json").read_text())
MERGED_AT = "8762da5"     # the last commit with kernels/tuned/matmul_shapes.json beside matmul.json
CONVERTED_AT = "5827a86"  # the commit whose kernels/tuned/matmul.json is the two converted into one


@pytest.mark.parametrize("path", sorted(TUNED.glob("*.json")), ids=lambda p: p.name)
def test_committed_tuned_files_are_valid(path):
    data = json.loads(path.read_text())
    assert table.problems(data) == []
    assert data["family"] == path.stem and data["devices"]
    for dev, e in data["devices"].items():
        assert e["chosen"], dev
        for shape, c in e["chosen"].items():  # the chosen point is the fastest of its round at that shape
            if shape in e.get("kept", {}):  # unless a re-tune kept the installed choice there (say why)
                assert e["kept"][shape].startswith("installed choice kept: "), (dev, shape)
                continue
            pool = [p for p in e["points"] if p["shape"] == shape and p["round"] == c["round"] and p["verified"]
                    and p.get("source") == e["points"][0].get("source")]  # converted entries: of the same origin
            assert c["name"] == max(pool, key=lambda p: p[data["metric"]])["name"], (dev, shape)


def test_every_committed_table_is_one_the_library_reads():
    from gpumemlab.tune import families

    assert {p.stem for p in TUNED.glob("*.json")} <= {n for n in families.MODULES if families.get(n).installs}


@pytest.mark.parametrize("dev", sorted(BEFORE["devices"]))
def test_the_merged_table_routes_every_shape_as_the_two_tables_did(dev):
    """Every shape of the old tables, the zoo and a probe set, aligned and not: the route (kind, tiles, split-K
    factor) from the one table is the one the library took with the shape sweep's table shadowing the tuned one."""
    want = BEFORE["devices"][dev]
    device = want["device"]
    entry = C.tuned_entry(device)
    assert entry is not None and "borrowed_from" not in entry
    if "converted" not in entry:  # re-tuned since: the converted entry as committed
        entry = _git_json(CONVERTED_AT, "src/gpumemlab/kernels/tuned/matmul.json")["devices"][dev]
    assert len(want["routes"]) >= 250
    for key, (kind, config, splits) in want["routes"].items():
        shape, alignment = key.split("/")
        r = C.route(*table.parse_mnk(shape), alignment == "aligned", entry, device["sm_count"])
        got = [r.kind, r.choice.config.name if r.choice else None, r.choice.splits if r.choice else None]
        assert got == ROUTED_SINCE.get((dev, key), [kind, config, splits]), (dev, key)


# routes the wave model changed after the tables merged: a split factor predicted less than WAVE_MARGIN faster than
# the same tiles unsplit is not taken (tests/test_matmul_unaligned.py, docs/notes/tuning.md)
ROUTED_SINCE = {("NVIDIA H200", "3000x1000x20000/unaligned"): ["scalar", "64x128x8_w32x64_i2_t4x4_s3_a0_b3_o2_p1", 1]}


def test_a_gpu_of_the_same_chip_borrows_an_entry_and_another_chip_gets_none():
    devices = table.read_devices(TUNED / "matmul.json", "matmul")
    first = sorted(devices)[0]
    twin = dict(name="NVIDIA H100 SXM5 80GB", cc=devices[first]["device"]["cc"],
                sm_count=devices[first]["device"]["sm_count"])
    assert C.tuned_entry(twin)["borrowed_from"] == first
    assert C.tuned_entry(dict(twin, sm_count=114)) is None
    assert C.tuned_entry(dict(twin, cc=[8, 0])) is None
    assert table.device_entry(devices, dict(name=first)) is devices[first]


def _git_json(commit: str, path: str):
    try:
        return json.loads(subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True,
                                         text=True, check=True).stdout)
    except (OSError, subprocess.CalledProcessError, ValueError):
        pytest.skip("git history with the two matmul tables is not available")


def test_the_merged_table_carries_every_measured_number_of_the_two():
    old_shapes = _git_json(MERGED_AT, "src/gpumemlab/kernels/tuned/matmul_shapes.json")
    old_tuned = _git_json(MERGED_AT, "src/gpumemlab/kernels/tuned/matmul.json")
    new = _git_json(CONVERTED_AT, "src/gpumemlab/kernels/tuned/matmul.json")["devices"]
    for dev, z in old_shapes["devices"].items():
        e = new[dev]
        winners = {p["shape"]: p for p in e["points"] if p.get("source") == "matmul_shapes.json"}
        assert set(winners) == set(z["winners"]) == set(e["chosen"])
        for shape, w in z["winners"].items():
            p = winners[shape]
            assert (p["params"], p["median_s"]) == (dict(config=w["config"], splits=w["splits"]), w["median_s"])
            base = [b for b in e["baseline"]["points"] if b["shape"] == shape]
            assert [b["median_s"] for b in base] == [w["cublas_median_s"]]
        assert [dict(p, source="matmul.json") for p in old_tuned["devices"][dev]["points"]] == \
            [p for p in e["points"] if p.get("source") == "matmul.json"]


def _entry(name="GPU X", points=None, chosen=None):
    pts = points if points is not None else [
        dict(name="x=1", label="one", params=dict(x=1), derived=dict(occ=2), shape="s", round="screen",
             median_s=2.0, p10_s=1.9, p90_s=2.1, samples_n=10, gbps=5.0, ratio_to_baseline=0.5, verified=True),
        dict(name="x=2", label="two", params=dict(x=2), derived=dict(occ=1), shape="s", round="screen",
             median_s=None, p10_s=None, p90_s=None, samples_n=None, gbps=None, ratio_to_baseline=None,
             verified=False, error="VerificationError: wrong")]
    return dict(device=dict(name=name), date="d", command="c", space=dict(params=dict(x=[1, 2])),
                baseline=dict(name="base", points=[dict(shape="s", round="screen", median_s=1.0, gbps=10.0)]),
                points=pts, chosen=chosen if chosen is not None else
                {"s": dict(name="x=1", label="one", params=dict(x=1), gbps=5.0, ratio_to_baseline=0.5, round="screen")})


def test_keep_choices_keeps_the_installed_point_and_names_why():
    old_point = dict(_entry()["points"][0], name="x=2", label="two", params=dict(x=2), gbps=4.0, source="before")
    installed = _entry(points=[old_point], chosen={"s": dict(name="x=2", label="two", params=dict(x=2), gbps=4.0,
                                                                 ratio_to_baseline=0.4, round="screen")})
    new = _entry()  # chose x=1 at s; its x=2 point failed verification, so the installed record is copied in
    kept = table.keep_choices(new, installed, ["s"], "zoo 1x2x3 0.9x", "gbps")
    assert kept["chosen"]["s"] == dict(name="x=2", label="two", params=dict(x=2), gbps=4.0, ratio_to_baseline=0.5,
                                       round="screen")
    assert kept["points"][-1] == old_point and kept["kept"] == {"s": "installed choice kept: zoo 1x2x3 0.9x"}
    assert table.problems(_file(kept)) == [] and new["chosen"]["s"]["name"] == "x=1"  # the input is not changed
    # the re-tuned entry measured the installed point itself (the final round holds it): that record is chosen
    final = dict(new["points"][0], name="x=2", label="two", params=dict(x=2), round="final", gbps=4.5,
                 ratio_to_baseline=0.45)
    kept = table.keep_choices(_entry(points=new["points"] + [final]), installed, ["s"], "why", "gbps")
    assert kept["chosen"]["s"] == dict(name="x=2", label="two", params=dict(x=2), gbps=4.5, ratio_to_baseline=0.45,
                                       round="final")
    assert len(kept["points"]) == 3
    gone = table.keep_choices(new, _entry(chosen={}), ["s"], "why", "gbps")
    assert gone["chosen"] == {} and gone["kept"] == {"s": "nothing chosen: why"}


def _file(*entries):
    return dict(format=1, family="fam", about="a", metric="gbps", devices={e["device"]["name"]: e for e in entries})


def test_problems_names_what_is_wrong():
    assert table.problems(_file(_entry())) == []
    assert table.problems(dict(format=0)) == ["missing 'family'", "missing 'about'", "missing 'metric'",
                                               "missing 'devices'"]
    bad = _entry(chosen={"s": dict(name="x=2")})
    assert table.problems(_file(bad)) == ["devices['GPU X'].chosen['s']: 'x=2' is not a verified point at that shape"]
    nan = _entry()
    nan["points"][0]["gbps"] = None
    assert "verified without a positive gbps" in table.problems(_file(nan))[0]
    wrong = _file(_entry())
    wrong["devices"]["GPU X"]["device"]["name"] = "GPU Y"
    assert table.problems(wrong)[0] == "devices['GPU X']: device.name 'GPU Y' differs from its key"


def test_install_keeps_the_other_devices_and_refuses_another_family(tmp_path):
    path = tmp_path / "fam.json"
    table.install(path, "fam", "a", "gbps", _entry("GPU B"))
    table.install(path, "fam", "a", "gbps", _entry("GPU A"))
    table.install(path, "fam", "a", "gbps", _entry("GPU B", chosen={}))
    data = table.load(path)
    assert list(data["devices"]) == ["GPU A", "GPU B"] and data["devices"]["GPU B"]["chosen"] == {}
    with pytest.raises(Exception, match="holds family 'fam', not 'other'"):
        table.install(path, "other", "a", "gbps", _entry())


def test_load_refuses_with_one_line(tmp_path):
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(Exception, match=r"x.json is not JSON"):
        table.load(tmp_path / "x.json")
    (tmp_path / "y.json").write_text(json.dumps(dict(format=1)))
    with pytest.raises(Exception, match=r"y.json is not a tuned table: missing 'family' \(and 3 more\)"):
        table.load(tmp_path / "y.json")
    assert table.read_devices(tmp_path / "missing.json", "matmul") == {}


def test_markdown_of_a_small_file():
    lines = table.markdown(_file(_entry())).splitlines()
    assert lines[0] == "GPU X (d, c); GB/s, % of base in the same round:"
    assert lines[2:7] == ["| point | occ | s |", "|---|---|---|", "| base |  | 10 |", "| one | 2 | 5 (50.0%) |",
                          "| two | 1 | failed |"]
    assert lines[-1] == "- s: one (x=1), 5 GB/s = 50.0% of the baseline (screen round)"


# ---------------------------------------------------------------- the cache

def _points(*names):
    return [Point(dict(x=n), {}, f"x={n}") for n in names]


def test_cache_resume_measures_only_the_missing_points(tmp_path):
    path = tmp_path / "c.json"
    measured = []

    def measure(p):
        measured.append(p.name)
        return dict(name=p.name, median_s=len(measured))

    store = engine.Cache(path, "fam", "GPU X", "h1")
    first = engine.screen(store, "s", _points(1, 2), measure)
    assert measured == ["x=1", "x=2"]
    again = engine.screen(engine.Cache(path, "fam", "GPU X", "h1"), "s", _points(1, 2, 3), measure)
    assert measured == ["x=1", "x=2", "x=3"] and again[:2] == first  # cached records come back unchanged
    engine.screen(engine.Cache(path, "fam", "GPU X", "h2"), "s", _points(1), measure)  # other sources
    engine.screen(engine.Cache(path, "fam", "GPU Y", "h1"), "s", _points(1), measure)  # other device
    engine.screen(engine.Cache(path, "fam", "GPU X", "h1"), "t", _points(1), measure)  # other shape
    assert measured == ["x=1", "x=2", "x=3", "x=1", "x=1", "x=1"]
    with pytest.raises(Exception, match="belongs to family 'fam', not 'other'"):
        engine.Cache(path, "other", "GPU X", "h1")


def test_finalists_are_the_fastest_verified_plus_the_librarys_point():
    from gpumemlab.tune import reduce as R

    pts = [Point(dict(unroll=u), {}, f"u={u}") for u in (1, 2, 3, 4)]
    recs = [dict(name="u=1", params=dict(unroll=1), verified=True, gbps=5.0),
            dict(name="u=2", params=dict(unroll=2), verified=False, gbps=None),
            dict(name="u=3", params=dict(unroll=3), verified=True, gbps=9.0),
            dict(name="u=4", params=dict(unroll=4), verified=True, gbps=7.0)]
    fam = R.REDUCE.__class__(**{**R.REDUCE.__dict__, "reference": dict(unroll=1)})
    assert [p.name for p in engine.finalists(fam, pts, recs, 2)] == ["u=3", "u=4", "u=1"]
    assert [p.name for p in engine.finalists(fam, pts, recs, 3)] == ["u=3", "u=4", "u=1"]
    plain = R.REDUCE.__class__(**{**R.REDUCE.__dict__, "reference": None})
    assert [p.name for p in engine.finalists(plain, pts, recs, 1)] == ["u=3"]
    # a reference per shape (matmul: the installed choice there) joins the final round the same way
    per_shape = R.REDUCE.__class__(**{**R.REDUCE.__dict__, "reference": lambda shape, device: (
        dict(unroll=4) if shape == "s" else None)})
    assert engine.reference(per_shape, "s", {}) == dict(unroll=4) and engine.reference(per_shape, "t", {}) is None
    assert [p.name for p in engine.finalists(per_shape, pts, recs, 1, dict(unroll=4))] == ["u=3", "u=4"]
    assert [p.name for p in engine.finalists(per_shape, pts, recs, 1)] == ["u=3"]


def test_the_matmul_final_round_keeps_the_installed_choice_of_each_shape():
    from gpumemlab.tune import matmul as M

    devices = table.read_devices(TUNED / "matmul.json", "matmul")
    dev = sorted(devices)[0]
    device = dict(name=dev)
    for shape, c in devices[dev]["chosen"].items():
        assert engine.reference(M.FAMILY, shape, device) == c["params"]
    assert engine.reference(M.FAMILY, "3x5x7", device) is None
    assert engine.reference(M.FAMILY, "1024x1024x1024", dict(name="another chip", cc=[1, 0], sm_count=1)) is None


def test_the_engine_flow_with_a_fake_device_and_timer(tmp_path, monkeypatch):
    """tune() end to end with the GPU parts replaced: checks, screen, final round, chosen point, file, resume."""
    import dataclasses

    from gpumemlab.bench.stats import summarize
    from gpumemlab.errors import VerificationError
    from gpumemlab.gpu import runtime
    from gpumemlab.tune import families as F
    from gpumemlab.tune import reduce as R
    from gpumemlab.tune.space import Space

    speed = {1: 2.0, 2: 4.0, 3: 3.0, 4: 1.0}  # x=2 fastest, x=4 fails at the shape, x=3 fails its odd-case check
    fam = dataclasses.replace(
        R.REDUCE, name="fake", space=Space(params=dict(x=(1, 2, 3, 4)), derive=dict(y="x * n")),
        shapes=("2^10",), context=lambda s, d: dict(n=R._count(s)), problem=lambda s: F.Problem(s, {}, None, 0.0),
        runner=lambda prob, p: F.Runner(("run", p.params["x"]), None, None),
        baseline_runner=lambda prob: F.Runner(("run", 0), None, None), label=lambda p: f"x{p['x']}",
        recorded=("y",), reference=dict(x=1), top=1, cold_l2=False, sources=("reduce.cu",))
    calls = []

    def fake_time(fn, **kw):
        calls.append(fn)
        return type("T", (), dict(stats=summarize([1e-3 / (speed[fn[1]] if fn[1] else 2.5)] * 10)))

    def fake_interleaved(fns, **kw):
        calls.append(tuple(fns))
        return {n: summarize([1e-3 / (speed[f[1]] if f[1] else 2.5)] * 20) for n, f in fns.items()}

    def fake_checked(r, problem, what):
        if r.run[1] == 4:
            raise VerificationError(f"{what}: wrong")

    monkeypatch.setattr(runtime, "ensure_device", lambda: None)
    monkeypatch.setattr(runtime, "device_info", lambda: dict(name="GPU F", cc=[9, 0], sm_count=1, l2_bytes=1,
                                                             nvrtc_version=[13, 0], driver_version=1))
    monkeypatch.setattr(runtime, "free_memory_bytes", lambda: 1 << 40)
    monkeypatch.setattr(runtime, "work_stream", lambda: __import__("contextlib").nullcontext())
    monkeypatch.setattr("gpumemlab.bench.timer.time_gpu", fake_time)
    monkeypatch.setattr("gpumemlab.bench.timer.time_interleaved", fake_interleaved)
    monkeypatch.setattr(engine, "run_checked", fake_checked)
    monkeypatch.setattr(engine, "_free_pool", lambda: None)
    checked = []
    monkeypatch.setattr(engine, "check_isolated", lambda name, keys, log: checked.extend(keys) or
                        {k: ("bad" if k == "x=3" else None) for k in keys})

    cache = tmp_path / "c.json"
    e = engine.tune(fam, cache=cache, command="t", log=lambda m: None)
    assert checked == ["x=1", "x=2", "x=3", "x=4"]
    scr = {p["name"]: p for p in e["points"] if p["round"] == "screen"}
    assert [n for n, p in scr.items() if p["verified"]] == ["x=1", "x=2"]
    assert scr["x=3"]["error"] == "odd-case check: bad" and scr["x=4"]["error"].startswith("VerificationError")
    assert scr["x=2"]["gbps"] == pytest.approx(4096 / (1e-3 / 4) / 1e9) and scr["x=2"]["derived"] == dict(y=2048)
    assert scr["x=2"]["ratio_to_baseline"] == pytest.approx(4 / 2.5)
    assert [p["name"] for p in e["points"] if p["round"] == "final"] == ["x=2", "x=1"]  # top 1 + the library's
    assert e["chosen"]["2^10"]["name"] == "x=2" and e["chosen"]["2^10"]["round"] == "final"
    assert [b["round"] for b in e["baseline"]["points"]] == ["screen", "final"]
    path = engine.write(fam, e, tmp_path)
    assert table.load(path)["devices"]["GPU F"]["chosen"] == e["chosen"]
    n_calls = len(calls)
    again = engine.tune(fam, cache=cache, command="t", log=lambda m: None)
    assert checked == ["x=1", "x=2", "x=3", "x=4"]  # checks came from the cache
    assert len(calls) == n_calls + 2  # only the baseline's two screen timings: every point came from the cache
    assert again["points"] == e["points"] and again["chosen"] == e["chosen"]
