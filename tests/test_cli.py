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


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_kernels_compile_without_spills(capsys, arch):
    code, out, err = run(capsys, "kernels", "--arch", arch, "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert {"kernel", "registers", "shared_bytes", "spill_store_bytes", "spill_load_bytes", "local_bytes"} <= set(rows[0])
    names = {r["kernel"] for r in rows}
    assert {"offset_copy", "stride_copy", "copy_vec<float4, 4>", "increment<4>", "aos_shared<256>"} <= names
    shared = next(r for r in rows if r["kernel"] == "aos_shared<256>")
    assert shared["shared_bytes"] == 3 * 256 * 4  # float s[3 * BLOCK]
    for r in rows:
        if not r["spills_expected"]:
            assert r["spill_store_bytes"] == 0 and r["spill_load_bytes"] == 0, r["kernel"]


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
    assert command_line(["run", "vector_copy", "--out", "rel/dir"]) == "gpumemlab run vector_copy --out rel/dir"
