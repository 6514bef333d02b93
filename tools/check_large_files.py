#!/usr/bin/env python3
"""Pre-commit check: the staged changes may add at most LIMIT of compressed data to the repository.

    python3 tools/check_large_files.py [--limit-kb 1024]      # exit 1, one line per file, when over

Each staged file that is added or modified is counted at its zlib-compressed size (what git stores before deltas),
so a JSON file counts for much less than its size and a PNG for about its size. Install as a hook:
docs/developing.md, "Large files".
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import zlib


def git(*args: str) -> bytes:
    return subprocess.run(["git", *args], check=True, capture_output=True).stdout


def staged_sizes() -> list[tuple[str, int]]:
    """(path, compressed bytes) of every staged file that adds content, largest first."""
    git("rev-parse", "--git-dir")  # outside a repository, git diff would fall back to --no-index
    names = git("diff", "--cached", "--name-only", "--diff-filter=AMCR", "-z").split(b"\0")
    sizes = [(n.decode(), len(zlib.compress(git("cat-file", "blob", f":{n.decode()}")))) for n in names if n]
    return sorted(sizes, key=lambda s: -s[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit-kb", type=int, default=1024, help="most compressed KiB one commit may add (1024)")
    args = ap.parse_args(argv)
    try:
        sizes = staged_sizes()
    except subprocess.CalledProcessError as exc:
        print(f"check_large_files: git failed: {exc.stderr.decode().strip().splitlines()[0]}", file=sys.stderr)
        return 2
    total = sum(s for _, s in sizes)
    if total <= args.limit_kb * 1024:
        return 0
    print(f"check_large_files: the staged changes add {total / 1024:.0f} KiB compressed, over the "
          f"{args.limit_kb} KiB a commit may add (docs/developing.md, 'Large files'):", file=sys.stderr)
    for name, size in sizes[:10]:
        print(f"  {size / 1024:8.0f} KiB  {name}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
