"""The command line on a machine with or without a GPU: help, list, kernels, report, bad values."""

import json

import pytest

from gpumemlab.cli import main
from gpumemlab.gpu.runtime import has_device


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse exits on its own errors and --help
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_help_lists_the_commands(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for cmd in ("bench", "run", "list", "device", "kernels", "report", "analyze", "occupancy", "intensity"):
        assert cmd in out


def test_list_names_every_experiment_with_its_seed(capsys):
    from gpumemlab.experiments import registry

    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    listed = json.loads(out)
    assert set(listed) == set(registry())
    for name in ("offset_copy", "stride_copy", "coalescing_patterns", "aos_soa", "squares_sum", "vector_copy"):
        assert listed[name]["seed"] and listed[name]["seed_claim"]


@pytest.fixture
def copy_families(monkeypatch):
    """`gpumemlab kernels` over the copy and coalescing families only: .ci/run runs it over every family for every
    supported arch (the suite's longest compile), this checks what the command reports."""
    import gpumemlab.kernels as kernels
    from gpumemlab.kernels import coalescing, copy

    specs = list(dict.fromkeys(copy.KERNELS + coalescing.KERNELS))
    monkeypatch.setattr(kernels, "all_specs", lambda: specs)
    return specs


@pytest.mark.parametrize("arch", ["sm_90"])
def test_kernels_compile_without_spills(capsys, copy_families, arch):
    code, out, err = run(capsys, "kernels", "--arch", arch, "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert {"kernel", "registers", "shared_bytes", "spill_store_bytes", "spill_load_bytes", "local_bytes"} <= set(rows[0])
    names = {r["kernel"] for r in rows}
    assert {"offset_copy", "stride_copy", "copy_vec<float4, 4>", "increment<4>", "aos_shared<256>"} <= names
    shared = next(r for r in rows if r["kernel"] == "aos_shared<256>")
    assert shared["shared_bytes"] == 3 * 256 * 4  # float s[3 * BLOCK]
    assert len(rows) == len(copy_families)
    for r in rows:
        if not r["spills_expected"]:
            assert r["spill_store_bytes"] == 0 and r["spill_load_bytes"] == 0, r["kernel"]


@pytest.mark.parametrize("spill, frame, words", [
    (8, 16, "offset_copy"), (0, 16, "offset_copy (16 B stack frame)"), (None, 0, "offset_copy (spills unknown"),
])
def test_kernels_fails_on_an_unintended_spill_or_stack_frame(capsys, monkeypatch, copy_families, spill, frame, words):
    import gpumemlab.gpu.compile as C

    real = C.compile_specs

    def with_one_bad(specs, arch, **kw):
        out = real(specs, arch, **kw)
        spec = next(s for s in specs if s.label == "offset_copy")
        mod, u = out[spec]
        out[spec] = (mod, C.ResourceUsage(**dict(u.to_dict(), spill_store_bytes=spill, spill_load_bytes=spill,
                                                   local_bytes=frame)))
        return out
    monkeypatch.setattr(C, "compile_specs", with_one_bad)
    code, _, err = run(capsys, "kernels", "--arch", "sm_90")
    assert code == 1
    assert err.strip().splitlines()[-1].startswith(
        f"gpumemlab kernels: unexpected register spills, stack frames or missing reports for sm_90: {words}")


def test_bad_arch_is_one_line_exit_2(capsys):
    code, _, err = run(capsys, "kernels", "--arch", "sm_x")
    assert code == 2
    assert err.strip() == "gpumemlab kernels: bad arch 'sm_x': expected e.g. sm_90, 9.0 or 90"


@pytest.mark.skipif(has_device(), reason="checks the no-GPU message")
@pytest.mark.parametrize("argv", [["bench"], ["run", "offset_copy"], ["device"]])
def test_no_gpu_is_one_line_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gpumemlab {argv[0]}: no CUDA device: ")


def test_unknown_experiment_and_bad_params(capsys):
    code, _, err = run(capsys, "run", "nope")
    assert code == 2 and "unknown experiment 'nope'" in err
    code, _, err = run(capsys, "run", "offset_copy", "--param", "offsets=a,b")
    assert code == 2 and "bad value 'a' for offsets: expected int" in err
    code, _, err = run(capsys, "run", "offset_copy", "--param", "bogus=1")
    assert code == 2 and "offset_copy has no parameter 'bogus'" in err
    code, _, err = run(capsys, "run", "offset_copy", "--param", "novalue")
    assert code == 2 and "expected KEY=VALUE" in err


def test_params_are_converted_to_declared_types():
    from gpumemlab.experiments import get, parse_params

    p = parse_params(get("stride_copy"), ["strides=1,4,0x10", "l2_factor=2.5"])
    assert p["strides"] == [1, 4, 16] and p["l2_factor"] == 2.5


def test_report_of_missing_or_bad_file(capsys, tmp_path):
    code, _, err = run(capsys, "report", str(tmp_path / "none.json"))
    assert code == 2 and "no such file" in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}')
    code, _, err = run(capsys, "report", str(bad))
    assert code == 2 and "not a gpumemlab results.json" in err


def test_recorded_command_names_no_machine_directories(tmp_path, monkeypatch):
    from gpumemlab.suite import command_line

    monkeypatch.chdir(tmp_path)
    inside, outside = tmp_path / "runs" / "report", "/elsewhere/out/report/"
    assert command_line(["bench", "--out", str(inside)]) == "gpumemlab bench --out runs/report"
    assert command_line(["bench", "--out", outside, "--quick"]) == "gpumemlab bench --out report --quick"
    assert command_line(["bench", "--out", "/elsewhere/runX/"]) == "gpumemlab bench --out runX"  # only "/" stripped
    assert command_line(["run", "vector_copy", "--out", "rel/dir"]) == "gpumemlab run vector_copy --out rel/dir"


def test_list_shows_each_experiments_parameters_and_defaults(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "offset_copy" in out and "[seed 003, Best Practices 9.2.1.3, offsetCopy figure]" in out
    assert "parameters: offsets = 0,1,2,3,...,32 (33 values)  (list of int); l2_factor = 8.0  (float)" in out
    assert "[seed seed" not in out


def test_run_help_documents_an_experiments_parameters(capsys):
    assert main(["run", "stride_copy", "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: gpumemlab run" in out and "stride_copy: Strided access" in out
    assert "  strides = 1,2,3,4,...,32 (32 values)  (list of int)" in out and "  l2_factor = 4.0  (float)" in out
    assert main(["run", "--help"]) == 0 and "override with -p" not in capsys.readouterr().out


@pytest.mark.parametrize("argv,words", [(["run"], "which experiment?"), (["run", "nope", "--help"], "unknown experiment 'nope'")])
def test_run_without_a_known_experiment_is_one_line(capsys, argv, words):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert words in err and len(err.strip().splitlines()) == 1 and "usage" not in out


def test_no_progress_bar_when_quiet_or_not_a_terminal(monkeypatch):
    from rich.console import Console

    from gpumemlab.cli import suite

    assert suite._console() is None  # pytest captures stderr: not a terminal
    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    assert isinstance(suite._console(), Console) and suite._console(quiet=True) is None
