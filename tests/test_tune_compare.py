"""A re-tuned matmul entry against the installed one before it is installed (gpumemlab.suite.tables), with the
timing replaced by a stand-in: which zoo shapes are compared, which installed choices are kept and why, and when
nothing may be installed."""

import contextlib
import copy
from types import SimpleNamespace

import pytest

from gpumemlab.gpu import runtime
from gpumemlab.ops.matmul import choice as C
from gpumemlab.suite import tables
from gpumemlab.tune import table

SMALL = "64x64x8_w32x32_i2_t4x4_s3_a0_b4_o2_p1"


@pytest.fixture
def entries():
    """(the installed H200 entry, a re-tuned one that chose the small tiles at 2 splits at 384^3 and 768^3)."""
    old = table.load(C.TUNED_PATH)["devices"]["NVIDIA H200"]
    new = copy.deepcopy(old)
    new.pop("converted", None)  # as a fresh re-tune: no conversion, nothing kept yet
    new.pop("kept", None)
    for shape in ("384x384x384", "768x768x768"):
        choose_small(new, shape)
    return old, new


def choose_small(entry: dict, shape: str) -> None:
    """Make ``entry`` choose the small tiles at 2 splits at ``shape``."""
    p = dict(entry["points"][0], name=f"config={SMALL},splits=2", label=SMALL, params=dict(config=SMALL, splits=2),
             shape=shape, round="final")
    entry["points"].append(p)
    entry["chosen"][shape] = {k: p[k] for k in ("name", "label", "params", "gflops", "ratio_to_baseline", "round")}


@pytest.fixture
def timed(monkeypatch):
    """The shapes timed, in order; the new choice is 1.2x slower at the shapes in ``slow``, 0.9x elsewhere."""
    calls, slow = [], set()

    def time_choices(m, n, k, choices, timer=None):
        shape = table.mnk_name(m, n, k)
        calls.append((shape, {name: tables._label(c) for name, c in choices.items()}))
        stat = lambda t: SimpleNamespace(median=t, p10=t, p90=t, n=10)  # noqa: E731
        return dict(old=stat(1e-4), new=stat(1.2e-4 if shape in slow else 0.9e-4), cuBLAS=stat(1e-4))

    monkeypatch.setattr(tables, "time_choices", time_choices)
    monkeypatch.setattr(runtime, "work_stream", contextlib.nullcontext)
    return calls, slow


def test_only_shapes_routed_differently_are_timed_and_the_table_says_so(entries, timed):
    old, new = entries
    calls, _ = timed
    records, same = tables.compare(old, new, old["device"])
    assert [c[0] for c in calls] == [r["shape"] for r in records]
    assert {"384x384x384", "768x768x768"} <= {r["shape"] for r in records}
    assert dict(calls)["384x384x384"] == dict(old="32x128x16/3", new="64x64x8/2")
    assert all(r["old_over_new"] == pytest.approx(1 / 0.9) for r in records)
    text = tables.markdown(records, same)
    assert "| square | 384x384x384 | 32x128x16/3 | 64x64x8/2 | 100.0 | 90.0 | 1.111 | 1.000 | 1.111 |" in text
    assert text.endswith(f"{same} shapes with the same choice; {len(records)} compared; geometric mean old/new "
                         "1.111, worst 1.111")
    assert tables.compare(old, old, old["device"]) == ([], same + len(records))


def test_the_installed_choice_is_kept_where_the_new_one_is_slower_and_compared_again(entries, timed):
    old, new = entries
    calls, slow = timed
    slow.add("384x384x384")
    logged = []
    res = tables.keep(old, new, old["device"], "gflops", log=logged.append)
    kept = res["entry"]
    assert kept["chosen"]["384x384x384"] == old["chosen"]["384x384x384"]
    assert kept["chosen"]["768x768x768"] == new["chosen"]["768x768x768"]
    assert kept["kept"] == {"384x384x384": "installed choice kept: the new one made 384x384x384 (old/new 0.833) "
                                           "slower in the same run"}
    assert table.problems(dict(format=1, family="matmul", about="a", metric="gflops",
                               devices={kept["device"]["name"]: kept})) == []
    assert "384x384x384" not in [r["shape"] for r in res["kept_compared"]]  # routed as installed now: not timed
    assert "768x768x768" in [r["shape"] for r in res["kept_compared"]]
    assert len(logged) == 2 and "with the installed choice kept at 384x384x384" in logged[1]


def test_nothing_is_installable_while_a_shape_stays_slower(entries, timed, monkeypatch):
    old, new = entries
    _, slow = timed
    slow.add("384x384x384")
    monkeypatch.setattr(tables, "nearest_tuned", lambda shape, chosen: "768x768x768")  # keeps the wrong choice
    logged = []
    res = tables.keep(old, new, old["device"], "gflops", log=logged.append)
    assert res["entry"] is None and logged[-1] == "not installable: still slower at 384x384x384"


def test_the_nearest_tuned_shape_is_by_log_ratio_and_ties_go_to_the_first_name():
    chosen = {"1024x1024x1024": 0, "512x512x512": 0, "2048x2048x128": 0}
    assert tables.nearest_tuned("777x1001x513", chosen) == "1024x1024x1024"  # 0.40 + 0.03 + 1.00 < 0.60 + 0.97 + 0.00
    assert tables.nearest_tuned("1024x1024x1024", chosen) == "1024x1024x1024"
    assert tables.nearest_tuned("8x8x8", {"16x8x8": 0, "4x8x8": 0}) == "16x8x8"


def test_a_compared_shape_s_record_in_full_and_the_flop_limit_inclusive(entries, monkeypatch):
    old, new = entries
    stat = lambda t: SimpleNamespace(median=t, p10=0.9 * t, p90=1.1 * t, n=10)  # noqa: E731
    monkeypatch.setattr(tables, "time_choices", lambda m, n, k, choices, timer=None: dict(
        old=stat(1e-4), new=stat(0.8e-4), cuBLAS=stat(1e-4)))
    monkeypatch.setattr(runtime, "work_stream", contextlib.nullcontext)
    records, same = tables.compare(old, new, old["device"], max_flops=2 * 384 ** 3)  # 384^3 is at the limit
    # 128^3 and 256^3 of the zoo; of the held-out shapes 1000x13x1000, 129x257x4099, 197x64x197 ... under the limit
    small = [s for s in tables.compared_shapes() if not C.is_gemv(*s[1:3]) and 2 * s[1] * s[2] * s[3] <= 2 * 384 ** 3]
    assert same + len(records) == len(small) and ("square", 128, 128, 128) in small and ("thin", 1000, 13, 1000) in small
    assert [r for r in records if r["shape"] == "384x384x384"] == [dict(
        group="square", shape="384x384x384", kind="float4", old="32x128x16/3", new="64x64x8/2",
        old_config="32x128x16_w32x32_i1_t4x4_s3_a0_b4_o2_p1", new_config=SMALL,
        median_s=dict(old=1e-4, new=0.8e-4, cuBLAS=1e-4), old_over_new=1e-4 / 0.8e-4,
        stats={name: dict(median=t, p10=0.9 * t, p90=1.1 * t, n=10)
               for name, t in (("old", 1e-4), ("new", 0.8e-4), ("cuBLAS", 1e-4))})]
    # nothing slower: the entry is installed as re-tuned, after one comparison, logged in full
    logged = []
    res = tables.keep(old, new, old["device"], "gflops", log=logged.append)
    first, same_all = tables.compare(old, new, old["device"])
    assert res == dict(entry=new, compared=first, kept_compared=first)
    assert logged == [f"{old['device']['name']}: installed vs re-tuned\n\n{tables.markdown(first, same_all)}"]


def test_keep_reverts_only_below_the_slower_threshold(entries, timed):
    old, new = entries
    at = 1e-4 / 0.9e-4  # every compared shape's old/new in the stand-in
    assert tables.keep(old, new, old["device"], "gflops", log=lambda s: None, slower=at)["entry"] is new
    logged = []
    res = tables.keep(old, new, old["device"], "gflops", log=logged.append, slower=at * 1.001)
    assert res["entry"] is not new and res["kept_compared"] is not res["compared"]
    assert logged[1].startswith(f"{old['device']['name']}: installed vs re-tuned with the installed choice kept at ")


def test_the_comparison_table_in_full():
    head = ("| group | shape | old | new | old us | new us | old/new | cuBLAS/old | cuBLAS/new |\n"
            "|---|---|---|---|---|---|---|---|---|\n")
    assert tables.markdown([], 3) == head + "\n3 shapes with the same choice; 0 compared; geometric mean old/new nan, worst nan"
    r = dict(group="g", shape="1x2x3", old="a", new="b", old_over_new=0.5, median_s=dict(old=0.5, new=1.0, cuBLAS=0.25))
    assert tables.markdown([r, dict(r, old_over_new=2.0)], 1) == head + (
        "| g | 1x2x3 | a | b | 500000.0 | 1000000.0 | 0.500 | 0.500 | 0.250 |\n"
        "| g | 1x2x3 | a | b | 500000.0 | 1000000.0 | 2.000 | 0.500 | 0.250 |\n"
        "\n1 shapes with the same choice; 2 compared; geometric mean old/new 1.000, worst 0.500")


def test_the_compared_shapes_are_the_zoo_then_the_held_out_2d_products_once_each():
    from gpumemlab.experiments.matmul_shapes import HELD_OUT
    from gpumemlab.tune.matmul import ZOO

    shapes = tables.compared_shapes()
    assert shapes[:len(ZOO)] == ZOO
    rest = shapes[len(ZOO):]
    assert ("thin", 4096, 2, 4096) in rest and ("layout", 4096, 64, 4096) in rest and ("thin", 2048, 33, 8192) in rest
    assert len({s[1:] for s in shapes}) == len(shapes)  # 4096^3 of the zoo is not compared again as a layout
    assert not any((s.m, s.n, s.k) == (7, 9, 11) for s in HELD_OUT if (s.group, s.m, s.n, s.k) in rest)  # batched
    assert ("batched", 7, 9, 11) not in rest and all(g not in ("batched", "matvec") for g, *_ in rest)


def test_shapes_after_one_beyond_the_flop_limit_are_compared_too(entries, timed):
    old, new = entries
    choose_small(new, "1000x1000x1000")  # an "odd" zoo shape, after the square ones beyond the limit
    records, _ = tables.compare(old, new, old["device"])
    assert "1000x1000x1000" in [r["shape"] for r in records]


def test_the_logs_and_reasons_name_every_shape(entries, timed, monkeypatch):
    old, new = entries
    _, slow = timed
    slow.update(("384x384x384", "768x768x768"))
    logged = []
    res = tables.keep(old, new, old["device"], "gflops", log=logged.append)
    _, same_all = tables.compare(old, old, old["device"])
    assert logged[1].startswith(f"{old['device']['name']}: installed vs re-tuned with the installed choice kept at "
                                "384x384x384, 768x768x768\n\n")
    assert logged[1].endswith(f"\n{same_all} shapes with the same choice; 0 compared; geometric mean old/new nan, "
                              "worst nan")  # both kept as installed: routed alike everywhere
    monkeypatch.setattr(tables, "nearest_tuned", lambda shape, chosen: "768x768x768")
    logged = []
    res = tables.keep(old, new, old["device"], "gflops", log=logged.append)
    assert logged[-1] == "not installable: still slower at 384x384x384"
    slow.add("1000x1000x1000")
    choose_small(new, "1000x1000x1000")
    logged = []
    res = tables.keep(old, new, old["device"], "gflops", log=logged.append)
    assert res["entry"] is None  # only 768^3 is kept as installed
    assert logged[-1] == "not installable: still slower at 384x384x384, 1000x1000x1000"
    logged = []
    res = tables.keep(old, new, old["device"], "gflops", log=lambda text: (logged.append(text), slow.clear()))
    assert res["entry"]["kept"] == {"768x768x768": "installed choice kept: the new one made 384x384x384 (old/new "
                                    "0.833), 768x768x768 (old/new 0.833), 1000x1000x1000 (old/new 0.833) slower in "
                                    "the same run"}
