""".githooks/pre-commit, the check of large files, on a tiny repository made here (run as git runs a hook)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / ".githooks" / "pre-commit"


@pytest.fixture
def repo(tmp_path):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)

    def check(*args):
        p = subprocess.run([sys.executable, str(SCRIPT), *args], cwd=tmp_path, capture_output=True, text=True,
                           env=env)
        return p.returncode, p.stderr

    def stage(name, data: bytes):
        (tmp_path / name).write_bytes(data)
        subprocess.run(["git", "add", name], cwd=tmp_path, check=True, env=env)

    return check, stage


def test_small_and_compressible_changes_pass(repo):
    check, stage = repo
    assert check() == (0, "")  # nothing staged
    stage("notes.md", b"a line\n" * 10)
    stage("results.json", b'{"median": 0.000240768}\n' * 100_000)  # 2.4 MB of text, a few KiB compressed
    assert check() == (0, "")


def test_over_the_limit_names_the_files_largest_first_and_exits_1(repo):
    check, stage = repo
    stage("small.png", os.urandom(100 * 1024))
    stage("plot.png", os.urandom(300 * 1024))  # random bytes: compressed size is about the size
    code, err = check("--limit-kb", "256")
    lines = err.splitlines()
    assert code == 1 and len(lines) == 3
    assert lines[0].startswith("pre-commit: the staged changes add 400 KiB compressed, over the 256 KiB")
    assert lines[1].split() == ["300", "KiB", "plot.png"] and lines[2].split() == ["100", "KiB", "small.png"]
    assert check("--limit-kb", "512") == (0, "")


def test_outside_a_repository_is_one_line_and_exit_2(tmp_path):
    p = subprocess.run([sys.executable, str(SCRIPT)], cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, GIT_CEILING_DIRECTORIES=str(tmp_path.parent)))
    assert p.returncode == 2 and p.stderr.startswith("pre-commit: git failed: fatal: not a git repository")
    assert len(p.stderr.splitlines()) == 1
