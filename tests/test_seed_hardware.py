"""The seeds' hardware next to this run's device: every seed figure is the seed's own words, every mapped experiment
cites that seed, and the report's "Seed hardware" line reads this run's sizes from results.json."""

from __future__ import annotations

import dataclasses
import html
import re

import pytest

from committed_runs import H100, committed_run
from gpumemlab.experiments import registry
from gpumemlab.experiments._declare import outside, seed
from gpumemlab.experiments._hardware import HARDWARE, MEASURED_ON, SIZES, Figure
from gpumemlab.report import html as html_report
from gpumemlab.report.markdown import render

LINE = "- Seed hardware: "


@pytest.fixture(scope="module")
def doc(committed) -> dict:
    return committed.to_dict()


@pytest.fixture(scope="module")
def committed():
    return committed_run(H100)


def _all_figures():
    yield from (f for hw in HARDWARE for f in hw.figures)
    yield from (f for m in MEASURED_ON.values() for f in m.problem)


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", text.replace(",", "").replace("*", ""))


def test_every_seed_figure_and_gpu_name_is_the_seeds_own_words(seed_text):
    assert set(seed_text) == {"000", "001", "002", "003", "004"}
    for hw in HARDWARE:
        assert hw.quote in seed_text[hw.named.seed], hw.gpu
    seed_figures = [f for f in _all_figures() if f.source.seed]
    assert len(seed_figures) >= 10
    for f in seed_figures:
        assert f.quote in seed_text[f.source.seed], f"{f.text!r}: quote not in seed {f.source.seed}"
        quoted = _numbers(f.quote)
        assert _numbers(f.text) and all(n in quoted for n in _numbers(f.text)), f"{f.text!r} is not in {f.quote!r}"


def test_outside_facts_are_kept_apart_from_seed_text():
    outside_figures = [f for f in _all_figures() if not f.source.seed]
    assert {f.text for f in outside_figures} >= {"80", "6 MB", "1,555 GB/s", "108"}
    assert all(not f.quote and not f.source.cite.startswith("seed ") for f in outside_figures)
    with pytest.raises(ValueError, match="needs the seed's words"):
        Figure("l2", "6 MB", seed("003", "9.2.2"))  # a seed figure with no quote could be invented
    with pytest.raises(ValueError, match="an outside fact none"):
        Figure("l2", "6 MB", outside("a datasheet"), "6 MB")
    with pytest.raises(ValueError, match="unknown kind"):
        Figure("l3", "6 MB", outside("a datasheet"))


def test_every_mapped_experiment_exists_and_cites_its_hardwares_seed():
    reg = registry()
    assert set(MEASURED_ON) <= set(reg)
    for name, measured in MEASURED_ON.items():
        cited = {c.source.seed for c in reg[name].claims if c.from_seed}
        needed = {measured.hardware.named.seed} | {f.source.seed for f in measured.figures if f.source.seed}
        assert needed <= cited, f"{name} cites seeds {cited}, its hardware comes from {needed}"
    # the seeds that name no GPU behind their numbers map nowhere
    assert {m.hardware.named.seed for m in MEASURED_ON.values()} == {"001", "003"}


def test_every_size_reads_a_value_from_the_committed_run(committed):
    used = set()
    for name, measured in MEASURED_ON.items():
        recs = [r for r in committed.results if r.experiment == name]
        for f in measured.figures:
            assert SIZES[f.kind].read(committed.device, committed.ceilings, recs), (name, f.kind)
            used.add(f.kind)
    assert used == set(SIZES)  # no size is declared without a figure of its kind


def _section(md: str, name: str) -> list[str]:
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"## {name}:"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def _hardware_line(md: str, name: str) -> str:
    found = [line for line in _section(md, name) if line.startswith(LINE)]
    assert len(found) == 1, (name, found)
    return found[0]


def test_report_prints_the_seeds_v100_next_to_this_runs_sizes_from_the_json(committed, doc):
    dev, ceil = doc["device"], doc["ceilings"]
    line = _hardware_line(render(committed), "offset_copy")
    assert line.startswith(LINE + "NVIDIA Tesla V100 (DRAM peak 898 GB/s: seed 003, Best Practices 9.1; "
                           "device copy ~790 GB/s: seed 003, Best Practices 9.2.1.3, offsetCopy; SMs 80, L2 6 MB: "
                           "outside, NVIDIA, 'NVIDIA Tesla V100 GPU Architecture' whitepaper (2017))")
    ours = (f"DRAM peak {round(ceil['dram_theoretical_gbps']['value']):,} GB/s, "
            f"device copy {round(ceil['copy_gbps']['value']):,} GB/s, "
            f"SMs {dev['sm_count']}, L2 {dev['l2_bytes'] // 2**20} MiB")
    assert line.endswith(f" - this run: {dev['name']} ({ours})")
    page = html_report.render(committed)
    assert f"<li>{html.escape(line[2:])}</li>" in page


def test_report_reads_the_problem_sizes_from_the_experiments_records(committed, doc):
    line = _hardware_line(render(committed), "l2_persist")
    regions = sorted({r["params"]["region_mib"] for r in doc["results"] if r["experiment"] == "l2_persist"})
    set_aside = doc["device"]["persisting_l2_max_bytes"] / 2**20
    assert len(regions) > 1
    assert "L2 set-aside 30 MB, persisting region 10-60 MB: seed 003, Best Practices 9.2.2.2" in line
    assert f"L2 set-aside {set_aside:g} MiB" in line.split(" - this run: ")[1]
    assert f"persisting region {regions[0]:g}-{regions[-1]:g} MiB)" in line
    n = sorted({r["params"]["n"] for r in doc["results"] if r["experiment"] == "coalescing_patterns"})
    sizes = f"{n[0]:,}" if len(n) == 1 else f"{n[0]:,}-{n[-1]:,}"  # the seed's 3M floats and one far above L2
    assert _hardware_line(render(committed), "coalescing_patterns").endswith(f"problem {sizes} floats)")


def test_the_line_follows_the_json_not_the_code(committed):
    """Other sizes in results.json give other numbers; a ceiling an older run lacks is left out, not invented."""
    ceilings = {k: v for k, v in committed.ceilings.items() if k != "pcie_theoretical_gbps"}
    ceilings["dram_theoretical_gbps"] = dict(ceilings["dram_theoretical_gbps"], value=1234.4)
    res = dataclasses.replace(committed, device=dict(committed.device, name="Other GPU", sm_count=7,
                                                     l2_bytes=96 * 2**20), ceilings=ceilings)
    md = render(res)
    assert _hardware_line(md, "stride_copy").split(" - this run: ")[1].startswith(
        "Other GPU (DRAM peak 1,234 GB/s, device copy ")
    assert "SMs 7, L2 96 MiB)" in _hardware_line(md, "stride_copy")
    transfer = _hardware_line(md, "transfer_bandwidth")
    assert "host link peak 4 GB/s on Gen1, 8 GB/s on Gen2: outside, PCI-SIG" in transfer
    assert "host link peak" not in transfer.split(" - this run: ")[1]


def test_an_experiment_without_a_mapping_gets_no_line(committed):
    md = render(committed)
    ran = list(dict.fromkeys(r.experiment for r in committed.results))
    unmapped = [n for n in ran if n not in MEASURED_ON]
    assert {"reduce", "matmul", "matmul_sizes", "squares_sum"} <= set(unmapped)
    for name in unmapped:
        assert not any(line.startswith(LINE) for line in _section(md, name)), name
    assert md.count(LINE) == sum(n in MEASURED_ON for n in ran) == len(MEASURED_ON)
    assert html_report.render(committed).count("<li>Seed hardware: ") == len(MEASURED_ON)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def test_text_a_seed_claim_quotes_is_in_that_seed(seed_text):
    """A seed claim may paraphrase, but what it puts in double quotes must be the seed's own words."""
    from gpumemlab.experiments import registry

    quoted = []
    for name, exp in registry().items():
        for c in exp.claims:
            if c.from_seed:
                for q in re.findall(r'"([^"]+)"', c.text):
                    quoted.append((name, c.source.seed, q))
    assert {"l2_persist", "matmul_shapes"} <= {n for n, _, _ in quoted}  # the rule has cases to hold
    for name, number, q in quoted:
        assert _collapse(q) in _collapse(seed_text[number]), f"{name}: {q!r} is not in seed {number}"


def test_the_l2_recipe_quoted_is_the_seed_figure_10():
    """l2_persist's claim quotes the tuned window of 9.2.2.2 (num_bytes 20 MB, hitRatio 20 MB / region) and the
    30 MB set-aside, which the experiment runs as written."""
    from gpumemlab.experiments import registry

    exp = registry()["l2_persist"]
    text = " ".join(c.text for c in exp.claims)
    assert "num_bytes = 20 * 1024 * 1024; // 20 MB" in text and "30 MB set-aside" in text
    assert (exp.params["seed_set_aside_mib"], exp.params["seed_window_mib"]) == (30, 20)
    assert min(exp.params["regions_mib"]) == 10 and max(exp.params["regions_mib"]) == 60  # the seed's 10-60 MB
