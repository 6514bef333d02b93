"""The developer tools' pure parts (no GPU, no disassembler)."""

from pathlib import Path

import pytest
from tool_modules import load_tool

ROOT = Path(__file__).resolve().parents[1]


load = load_tool


def test_sass_loop_finds_the_loop_and_each_loads_first_use():
    s = load("sass_loop")
    ins = [(0x00, "MOV R1, R2"),
           (0x10, "LDS.128 R8, [R3]"),          # R8..R11: first read 3 instructions later
           (0x20, "FFMA R20, R4, R5, R20"),
           (0x30, "@P0 LDS R12, [R3+0x10]"),    # R12: read after the wrap (by the FFMA at 0x20)
           (0x40, "FFMA R21, R11, R5, R21"),
           (0x50, "@P1 BRA 0x10"),
           (0x60, "EXIT")]
    body = s.main_loop(ins)
    assert [a for a, _ in body] == [0x10, 0x20, 0x30, 0x40, 0x50]
    cover = s.load_cover(body)
    assert [(a, d) for a, _, d, _ in cover] == [(0x10, 3), (0x30, None)]
    ins[2] = (0x20, "FFMA R20, R12, R5, R20")
    assert [d for _, _, d, _ in s.load_cover(s.main_loop(ins))] == [3, 4]
    assert s.opcode("@!UP0 UIADD3 UR4, UR4, 0x1, URZ") == "UIADD3"


def test_sass_loop_counts_global_loads_in_flight_at_each_first_use():
    s = load("sass_loop")
    ins = [(0x00, "LDG.E.128 R4, desc[UR6][R2.64]"),      # B0: R4..R7
           (0x10, "LDG.E.128 R8, desc[UR6][R2.64+0x10]"),  # B1
           (0x20, "@P0 LDG.E.CONSTANT R12, desc[UR6][R14.64]"),
           (0x30, "FFMA R20, R4, R12, R20"),              # first use of B0: B0 and B1 in flight
           (0x40, "LDG.E.EF.128 R4, desc[UR6][R16.64]"),   # B2
           (0x50, "FFMA R21, R11, R12, R21"),             # first use of B1
           (0x60, "FFMA R22, R7, R12, R22"),              # first use of B2
           (0x70, "BRA 0x0"),
           (0x80, "EXIT")]
    body = s.main_loop(ins, containing=r"LDG.*\.128")
    assert len(body) == 8 and s.main_loop(ins, containing="LDS") == []
    assert [(a, d, f) for a, _, d, f in s.load_cover(body, "LDG")] == [(0x00, 3, 2), (0x10, 4, 2), (0x20, 1, 1),
                                                                       (0x40, 2, 1)]
    assert [s.load_width(q) for q in (".E.128", ".E.64", ".E.CONSTANT", ".U16")] == [128, 64, 32, 32]


def test_gemv_cols_keeps_gemv_depth_rows_of_b_in_flight():
    """ptxas once issued each 128-bit row of B only after the FMAs of the previous one (one read in flight per
    warp: 8 x 8192 x 8192 ran at 0.74x of cuBLAS); the loads must all be out before the first is used."""
    import re

    pytest.importorskip("cuda.core")
    from gpumemlab.gpu.compile import compile_group, source_text

    s = load("sass_loop")
    nvdisasm = s.find_nvdisasm()
    if nvdisasm is None:
        pytest.skip("no nvdisasm (the test extra installs nvidia-cuda-nvdisasm)")
    depth = int(re.search(r"constexpr int GEMV_DEPTH = (\d+);", source_text("matmul.cu")).group(1))
    names = [f"gemv_cols<4, {split}, {rows}>" for split in ("false", "true") for rows in (1, 2, 4, 8)]
    for arch, kernels in (("sm_90", names), ("sm_80", names[-1:]), ("sm_120", names[-1:])):
        mod = compile_group("matmul.cu", kernels, arch)
        for name in kernels:
            code = s.disassemble(mod.cubin, nvdisasm, mod.symbol_mapping[name])
            flights = [f for _, t, _, f in s.load_cover(s.main_loop(code, containing=r"LDG.*\.128"), "LDG")
                       if ".128" in t]
            assert flights and max(flights) >= depth, (arch, name, flights)


def test_readme_rows_keep_seed_claims_and_outside_references_apart():
    from gpumemlab.bench.records import RunResults

    tool = load("update_readme")
    claims = [dict(text="Staged copies overlap.", source="seed 003, 9.1.2", seed="003"),
              dict(text="~30x on a G80.", source="M. Harris, 'Optimizing Parallel Reduction in CUDA'", seed=None)]
    res = RunResults(meta={}, device={}, ceilings={}, results=[], errors=[],
                     experiments={"x": dict(claims=claims, findings=["measured 2x"]),
                                  "y": dict(claims=claims[:1], skipped="needs CC 8.0", findings=[])})
    rows = list(tool.rows(res))
    assert rows[0] == ("`x`", "seed 003, 9.1.2", "Staged copies overlap. (outside: M. Harris, 'Optimizing Parallel "
                       "Reduction in CUDA') ~30x on a G80.", "measured 2x", 0)
    assert rows[1][3] == "not run on this GPU: needs CC 8.0"


def test_readme_coverage_section_is_the_registry_s():
    """The README's "What the suite covers" is generated: after adding or changing an experiment's claims, run
    `python tools/update_readme.py` - this fails until the README says exactly what the registry declares."""
    from gpumemlab.experiments import registry

    tool = load("update_readme")
    text = (Path(tool.ROOT) / "README.md").read_text()
    begin, end = tool.COVERAGE
    section = text[text.index(begin) + len(begin):text.index(end)].strip()
    assert section == tool.coverage(list(registry().values()))


def test_coverage_lists_seed_sections_per_seed_and_outside_works_apart():
    from gpumemlab.experiments import Claim, Experiment, outside, seed

    tool = load("update_readme")
    a = Experiment("a", "A", (Claim("x", seed("003", "9.2.1.3")), Claim("y", outside("M. Harris, 'Reduction'"))),
                   cases=lambda s, p: [])
    b = Experiment("b", "B", (Claim("z", seed("003", "9.2.1.3")),), cases=lambda s, p: [])
    lines = tool.coverage([a, b]).splitlines()
    assert "the 2 experiments of `gpumemlab bench`" in lines[0]
    assert lines[4:9] == ["| 000 | (none) | - |", "| 001 | (none) | - |", "| 002 | (none) | - |",
                          "| 003 | 9.2.1.3 | `a`, `b` |", "| 004 | (none) | - |"]
    assert lines[-1] == "Outside works cited next to the seeds (kept apart from seed claims): M. Harris, 'Reduction' (`a`)."


def _run(command, experiments, device="GPU A", merged=(), gbps=50.0):
    from gpumemlab.bench.records import Record, RunResults

    recs = [Record(e, "v", {}, 1000, None, dict(median=1e-6), gbps, None, None, "copy_gbps", True) for e in experiments]
    return RunResults(meta=dict(command=command, date=f"date of {command}", merged_runs=list(merged)),
                      device=dict(name=device), ceilings=dict(copy_gbps=dict(value=100.0, unit="GB/s")),
                      results=recs, experiments={e: dict(title=e) for e in experiments})


def test_merge_runs_takes_each_experiment_from_the_first_run_that_has_it_and_keeps_provenance():
    from gpumemlab.report.format import merged_lines

    tool = load("merge_runs")
    base = _run("cmd-a", ["x1", "x2"])
    other = _run("cmd-b", ["x2", "x3", "x4"], merged=[dict(experiments=["x4"], command="cmd-c", date="d-c")],
                 gbps=150.0)
    out = tool.merge([base, other])
    assert [(r.experiment, r.gbps) for r in out.results] == [("x1", 50.0), ("x2", 50.0), ("x3", 150.0), ("x4", 150.0)]
    assert [(m["experiments"], m["command"]) for m in out.meta["merged_runs"]] == [(["x4"], "cmd-c"), (["x3"], "cmd-b")]
    assert out.meta["command"] == "cmd-a" and out.meta["complete"] is False  # the registry's experiments are missing
    assert out.ceilings["copy_gbps"]["value"] == 150.0 and out.ceilings["copy_gbps"]["measured_as"] == 100.0
    assert [r.pct_of_ceiling for r in out.results] == [pytest.approx(100 / 3)] * 2 + [100.0] * 2
    assert merged_lines(out.meta) == ["x4: from `cmd-c` (d-c)", "x3: from `cmd-b` (date of cmd-b)"]
    assert merged_lines(dict(merged_runs=[dict(experiments=["a", "b"], command="c<d")]), code=lambda c: f"[{c}]",
                        escape=str.upper) == ["A, B: FROM [c<d] (DATE NOT RECORDED)"]
    assert merged_lines({}) == []
    with pytest.raises(SystemExit, match="different GPUs"):
        tool.merge([base, _run("cmd-d", ["x5"], device="GPU B")])


def test_merge_runs_takes_a_ceiling_the_base_lacks_from_the_run_that_measured_it():
    """A base that ran only matmul_shapes has no host-link ceilings; the merged run keeps the older run's."""
    tool = load("merge_runs")
    base = _run("cmd-a", ["x1"])
    older = _run("cmd-b", ["x1", "x2"])
    older.ceilings["h2d_best_gbps"] = dict(value=55.0, unit="GB/s")
    older.ceilings["copy_gbps"] = dict(value=90.0, unit="GB/s")
    out = tool.merge([base, older])
    assert out.ceilings["h2d_best_gbps"]["value"] == 55.0
    assert out.ceilings["copy_gbps"]["value"] == 100.0  # the base's own stays
    assert "h2d_best_gbps" not in base.ceilings  # the inputs are not changed
    idle = _run("cmd-c", ["x1"])  # its only experiment comes from the base: it contributes nothing, not even ceilings
    idle.ceilings["h2d_best_gbps"] = dict(value=55.0, unit="GB/s")
    assert tool.merge([base, idle]).ceilings.keys() == {"copy_gbps"}
    # a ceiling only an earlier merge recorded (in its merged_runs entry) comes back too
    folded = _run("cmd-d", ["x2"], merged=[dict(experiments=["x2"], command="cmd-e", date="d-e",
                                                 ceilings=dict(d2h_best_gbps=dict(value=54.0, unit="GB/s")))])
    assert tool.merge([base, folded]).ceilings["d2h_best_gbps"]["value"] == 54.0


def test_merge_runs_keeps_what_a_run_skipped_on_purpose_and_the_readme_says_why():
    tool = load("merge_runs")
    base = _run("cmd-a", ["x1"])
    base.experiments["p2p"] = dict(title="p2p", skipped="needs two GPUs: this machine has 1")
    out = tool.merge([_run("cmd-b", ["x2"]), base])
    assert out.experiments["p2p"]["skipped"] == "needs two GPUs: this machine has 1"
    readme = load("update_readme").table(out, "docs/results/x/results.json")
    assert "Skipped by this run: `p2p` (needs two GPUs: this machine has 1)." in readme
    assert "`p2p`" not in readme.split("Not in this run")[-1]


def test_reports_name_the_merged_runs():
    from gpumemlab.report import html, markdown

    res = load("merge_runs").merge([_run("cmd-a", ["x1"]), _run("cmd <b>", ["x2"])])
    line = "Merged from another run of this GPU model: x2: from "
    assert f"- {line}`cmd <b>` (date of cmd <b>)" in markdown.render(res).splitlines()
    assert f"<li>{line}<code>cmd &lt;b&gt;</code> (date of cmd &lt;b&gt;)</li>" in html.render(res)
    readme = load("update_readme").table(res, "docs/results/x/results.json")
    assert "Records of x2: from `cmd <b>` (date of cmd <b>)." in readme
    from gpumemlab.experiments import registry

    # x1 and x2 are no experiments of the suite: every registered one is named as not in this run
    assert readme.endswith("Not in this run (added to the suite after it): "
                           + ", ".join(f"`{n}`" for n in registry()) + ".")


def test_profile_p2p_summarizes_the_committed_ncu_output(capsys):
    """The p2p note's table comes from the raw ncu text next to it; the parser reads every profiled launch."""
    tool = load("profile_p2p")
    raw = ROOT / "docs" / "notes" / "p2p-ncu-h200x2" / "ncu.txt"
    launches = tool.parse_ncu(raw.read_text())
    assert len(launches) == 2 * len(tool.CASES) and all(set(tool.NVLINK_METRICS) <= set(m) for m in launches)
    assert launches[1]["nvlrx__bytes_data_user.sum"] == pytest.approx(268.44e6)  # a pull of 256 MiB: every byte once over NVLink
    assert tool.summarize(str(raw)) == 0
    table = capsys.readouterr().out
    assert table in (ROOT / "docs" / "notes" / "p2p-sm-copy.md").read_text()
    assert len(table.splitlines()) == 2 + len(tool.CASES)
