"""The generated tables of README.md and docs/results/README.md (gpumemlab.report.readme)."""

from pathlib import Path

from gpumemlab.report import readme

ROOT = Path(__file__).resolve().parents[1]


def test_readme_rows_keep_seed_claims_and_outside_references_apart():
    from gpumemlab.bench.records import RunResults

    claims = [dict(text="Staged copies overlap.", source="seed 003, 9.1.2", seed="003"),
              dict(text="~30x on a G80.", source="M. Harris, 'Optimizing Parallel Reduction in CUDA'", seed=None)]
    res = RunResults(meta={}, device={}, ceilings={}, results=[], errors=[],
                     experiments={"x": dict(claims=claims, findings=["measured 2x"]),
                                  "y": dict(claims=claims[:1], skipped="needs CC 8.0", findings=[])})
    rows = list(readme.rows(res))
    assert rows[0] == ("`x`", "seed 003, 9.1.2", "Staged copies overlap. (outside: M. Harris, 'Optimizing Parallel "
                       "Reduction in CUDA') ~30x on a G80.", "measured 2x", 0)
    assert rows[1][3] == "not run on this GPU: needs CC 8.0"


def _section(path: Path, markers) -> str:
    text = path.read_text()
    return text[text.index(markers[0]) + len(markers[0]):text.index(markers[1])].strip()


def test_coverage_section_is_the_registry_s():
    """docs/results/README.md's "What the suite covers" is generated: after adding or changing an experiment's claims,
    run `python -m gpumemlab.report.readme` - this fails until it says exactly what the registry declares."""
    from gpumemlab.experiments import registry

    text = (ROOT / readme.RESULTS_README).read_text()
    begin, end = readme.COVERAGE
    section = text[text.index(begin) + len(begin):text.index(end)].strip()
    assert section == readme.coverage(list(registry().values()))


def test_coverage_lists_seed_sections_per_seed_and_outside_works_apart():
    from gpumemlab.experiments import Claim, Experiment, outside, seed

    a = Experiment("a", "A", (Claim("x", seed("003", "9.2.1.3")), Claim("y", outside("M. Harris, 'Reduction'"))),
                   cases=lambda s, p: [])
    b = Experiment("b", "B", (Claim("z", seed("003", "9.2.1.3")),), cases=lambda s, p: [])
    lines = readme.coverage([a, b]).splitlines()
    assert "the 2 experiments of `gpumemlab bench`" in lines[0]
    assert lines[4:9] == ["| 000 | (none) | - |", "| 001 | (none) | - |", "| 002 | (none) | - |",
                          "| 003 | 9.2.1.3 | `a`, `b` |", "| 004 | (none) | - |"]
    assert lines[-1] == "Outside works cited next to the seeds (kept apart from seed claims): M. Harris, 'Reduction' (`a`)."


SOURCE = "docs/results/nvidia-h200/results.json.xz"  # the run README.md's headlines come from


def test_readme_headlines_and_the_full_table_are_the_committed_run_s():
    """README.md's headline table and docs/results/README.md's full table are generated from SOURCE: after committing
    a new run, `python -m gpumemlab.report.readme SOURCE` - this fails until both say what the run says."""
    from committed_runs import H200, committed_run, path

    res = committed_run(H200)
    assert path(H200) == ROOT / SOURCE
    assert _section(ROOT / readme.README, readme.HEADLINES) == readme.headlines(res, SOURCE)
    assert _section(ROOT / readme.RESULTS_README, readme.RESULTS) == readme.table(res, SOURCE)


def test_every_headline_links_to_its_experiment_s_section_of_the_report():
    import re

    report = (ROOT / SOURCE).parent / "report.md"
    anchors = {readme.anchor(h[3:]) for h in report.read_text().splitlines() if h.startswith("## ")}
    links = re.findall(r"\]\((docs/results/nvidia-h200/report\.md)#([^)]+)\)", _section(ROOT / readme.README,
                                                                                       readme.HEADLINES))
    assert len(links) >= 30 and {a for _, a in links} <= anchors


def test_headline_is_the_first_finding_with_a_number_cut_at_a_clause():
    assert readme.headline(["no number here", "best 3,845 GB/s (91% of the copy ceiling)"]) == \
        "best 3,845 GB/s (91% of the copy ceiling)"
    assert readme.headline(["no number"]) == "no number" and readme.headline([]) == "-"
    long = "H2D pageable: 8.8 GB/s at 1 GiB; " + "D2H pinned: 55.4 GB/s at 1 GiB, " * 6
    cut = readme.headline([long])
    assert cut.endswith(" ...") and len(cut) <= readme.HEADLINE_CHARS + 4 and long.startswith(cut[:-4])
    assert cut[:-4].endswith("at 1 GiB")  # at a clause boundary, never inside a number
    assert readme.anchor("vector_copy: Vector copies (float, float2, float4) vs cudaMemcpy D2D") == \
        "vector_copy-vector-copies-float-float2-float4-vs-cudamemcpy-d2d"


def test_outside_the_repository_root_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert readme.main([]) == 2
    assert capsys.readouterr().err == "gpumemlab.report.readme: README.md: not found (run from the repository root)\n"
    assert readme.main(["a", "b"]) == 2


def test_the_mutation_paragraph_states_the_notes_scores():
    import importlib.util

    path = ROOT / "tools" / "mutation" / "readme.py"
    spec = importlib.util.spec_from_file_location("mutation_readme", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main(["--check"]) == 0, "run tools/mutation/readme.py after a note's score changes"
