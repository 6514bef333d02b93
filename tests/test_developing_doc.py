"""docs/developing.md names every script in tools/ and no script that is gone (read as text: no test runs them)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_tool_is_documented_and_every_documented_tool_exists():
    text = (ROOT / "docs" / "developing.md").read_text()
    named = set(re.findall(r"`(tools/[\w./-]+)", text))
    present = {str(p.relative_to(ROOT)) for p in (ROOT / "tools").iterdir() if p.is_file()}
    present |= {"tools/mutation/run.sh"}  # the mutation tool's entry point (setup.cfg is its configuration)
    assert present - named == set(), "document these in docs/developing.md, 'Developer tools'"
    assert {n for n in named if not (ROOT / n).exists()} == set()
    assert (ROOT / ".githooks" / "pre-commit").is_file() and "`.githooks/pre-commit`" in text
