"""tools/gpu_check.sh's bench stages without a GPU: a stand-in python writes the run's results.json, and the stage
must bring it back as $OUT/NAME.results.json (also when a time limit stops the run) next to the packed report."""

import os
import shutil
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# "python -m gpumemlab bench ... --out DIR": results.json at once (the run's first experiment), a plot, then
# FAKE_SLEEP seconds and the final results.json
FAKE = """#!/usr/bin/env bash
while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
mkdir -p "$out"; echo '{"done": 1}' > "$out/results.json"; touch "$out/plot.png"
sleep "${FAKE_SLEEP:-0}"; echo '{"done": 2}' > "$out/results.json"
"""


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("tar") is None, reason="needs bash and tar")
def test_bench_stages_bring_back_results_json_also_when_a_limit_stops_them(tmp_path):
    fake = tmp_path / "python"
    fake.write_text(FAKE)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out, runs = tmp_path / "out", tmp_path / "runs"
    env = dict(os.environ, OUT=str(out), RUNS=str(runs), PY=str(fake), FAKE_SLEEP="2")
    done = subprocess.run(["bash", "tools/gpu_check.sh", "bench:x,y", "limit:1", "bench-skip:z"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "!!! rest-z exited 124" in done.stdout  # the limited stage failed, visibly
    assert (out / "bench-x-y.results.json").read_text().strip() == '{"done": 2}'  # the full run, finished
    assert (out / "rest-z.results.json").read_text().strip() == '{"done": 1}'     # what the stopped run had
    with tarfile.open(out / "bench-x-y.tgz") as tgz:
        assert sorted(tgz.getnames()) == ["bench-x-y", "bench-x-y/plot.png", "bench-x-y/results.json"]
    assert sorted(p.name for p in out.iterdir()) == ["bench-x-y.log", "bench-x-y.results.json", "bench-x-y.tgz",
                                                     "rest-z.log", "rest-z.results.json", "rest-z.tgz"]
