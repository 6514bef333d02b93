"""`gpumemlab tune`: --table prints the committed numbers; without a GPU, one line and exit 2."""

import json

import pytest

from gpumemlab.kernels import KERNEL_DIR

TUNED = KERNEL_DIR / "tuned" / "matmul.json"


def _no_gpu():
    from gpumemlab.gpu.runtime import has_device

    return not has_device()


def test_table_prints_every_screened_number_of_the_committed_file(run_cli):
    code, out, err = run_cli("tune", "matmul", "--table", str(TUNED))
    assert code == 0 and err == ""
    data = json.loads(TUNED.read_text())
    lines = out.splitlines()
    for dev, e in data["devices"].items():
        start = lines.index(next(ln for ln in lines if ln.startswith(f"{dev} (")))
        source = e["points"][0].get("source")  # a converted entry: the first source's grid comes first
        first = 2 if source is None else 4
        assert source is None or lines[start + 2] == f"from {source}:"
        block = lines[start + first - 2:]
        points = [p for p in e["points"] if p.get("source") == source and p["round"] == "screen"]
        shapes = list(dict.fromkeys(p["shape"] for p in points))
        assert block[2] == "| point | blocks_per_sm | " + " | ".join(shapes) + " |"
        base = {b["shape"]: b["gflops"] for b in e["baseline"]["points"] if b.get("source") == source
                and b["round"] == "screen"}
        assert block[4] == f"| {e['baseline']['name']} |  | " + " | ".join(f"{base[s] / 1e3:.1f}" for s in shapes) + " |"
        best = {}
        for p in points:  # a cell shows the best split-K factor of its configuration
            if p["gflops"] > best.get((p["label"], p["shape"]), {}).get("gflops", 0):
                best[(p["label"], p["shape"])] = p
        for p in best.values():
            row = next(ln for ln in block if ln.startswith(f"| {p['label']} |"))
            cells = row.strip("|").split(" | ")
            cell = cells[2 + shapes.index(p["shape"])].strip()
            split = f", splits={p['params']['splits']}" if p["params"]["splits"] != 1 else ""
            # the share of the baseline timed with the point (a point screened in an earlier run and read from the
            # tune cache keeps its own; the baseline row is this run's)
            assert cell == f"{p['gflops'] / 1e3:.1f} ({100 * p['ratio_to_baseline']:.1f}%{split})", (dev, p)
            assert cells[1].strip() == str(p["derived"]["blocks_per_sm"])


@pytest.mark.parametrize("argv, message", [
    (("tune", "reduce", "--table", str(TUNED)), "is a matmul table, not reduce"),
    (("tune", "matmul", "--table", "no/such.json"), "cannot read no/such.json"),
    (("tune", "matmul", "--shapes", "4x4"), "matmul shape '4x4': expected MxNxK"),
    (("tune", "matmul", "--top", "-1"), "--top -1: expected 0 or more"),
    (("tune", "conv"), "invalid choice: 'conv'"),
    (("tune", "reduce", "--compare"), "--compare: only matmul is compared with its installed table, not reduce"),
])
def test_bad_input_is_one_line_and_exit_2(run_cli, argv, message):
    code, out, err = run_cli(*argv)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.skipif(not _no_gpu(), reason="this machine has a GPU")
@pytest.mark.parametrize("family", ["matmul", "reduce"])
def test_tune_without_a_gpu_is_one_line_and_exit_2(run_cli, family, tmp_path):
    code, out, err = run_cli("tune", family, "--out", str(tmp_path))
    assert code == 2 and out == ""
    assert err.startswith("gpumemlab tune: no CUDA device") and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
