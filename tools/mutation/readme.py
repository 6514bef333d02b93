"""The README's mutation-testing paragraph, made from the scores the notes state (score.py's lines), so that no
number in it is typed by hand.

    python tools/mutation/readme.py           # rewrite the paragraph in README.md
    python tools/mutation/readme.py --check   # exit 1 when README.md's paragraph differs from the notes"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START = "Mutation testing (`tools/mutation/run.sh`"
WIDTH = 119


def scores(note: str) -> dict:
    """The first score block of a note written by score.py: its totals, packages, left-out and unchecked counts."""
    total = re.search(r"^killed (\d+) / not killed (\d+) / total (\d+)  ->  mutation score ([\d.]+)%$", note, re.M)
    after = note[total.end():]
    packages = re.findall(r"^  gpumemlab\.(\w+): killed (\d+) / total (\d+)  ->  ([\d.]+)%$",
                          after[:after.find("not killed, per function")], re.M)
    equivalent = re.search(r"\(equivalent, left out: (\d+),", note)
    gpu = re.search(r"^needs a GPU or NVML, left out \(setup.cfg \[needs-gpu\]\): (\d+) mutants of (\d+) functions",
                    note, re.M)
    unchecked = re.search(r"^not checked \(the run stopped early\), left out: (\d+): (.*)$", note, re.M)
    return dict(killed=int(total[1]), total=int(total[3]), score=total[4], packages=packages,
                equivalent=int(equivalent[1]), gpu=gpu and (int(gpu[1]), int(gpu[2])),
                unchecked=unchecked and (int(unchecked[1]), unchecked[2]))


def paragraph(model: dict, host: dict) -> str:
    text = (f"{START}, mutmut 3; every mutant not killed is listed in "
            "[docs/notes/mutation-model.txt](docs/notes/mutation-model.txt) and "
            "[docs/notes/mutation-host.txt](docs/notes/mutation-host.txt), equivalent ones in `tools/mutation/setup.cfg` "
            "with the reason), measured on a shared 2-core machine: "
            f"`model/` with `tests/model`, {model['score']}% of the {model['total']} mutants that are not equivalent "
            f"({model['equivalent']} equivalent ones listed; full runs, bounded re-runs and re-checks of the survivors "
            "with newer tests, as the note says); `report/` + `suite/` + `bench/` (the host-side logic")
    if host["gpu"]:
        text += (f"; the {host['gpu'][0]} mutants of the {host['gpu'][1]} functions that only a GPU or NVML can run "
                 "are left out and named in the note, as are equivalent ones")
    per = ", ".join(f"`{name}/` {pct}%" for name, _, _, pct in host["packages"])
    text += (f"): {host['score']}% of the {host['total']} mutants checked ({host['killed']} killed; {per})")
    if host["unchecked"]:
        text += (f"; {host['unchecked'][0]} mutants no run reached ({host['unchecked'][1]}) are not checked, and the "
                 "score says nothing about them")
    return textwrap.fill(text + ".", WIDTH, break_on_hyphens=False, break_long_words=False)


def rewrite(readme: str, new: str) -> str:
    start = readme.index(START)
    end = readme.index("\n\n", start)
    return readme[:start] + new + readme[end:]


def main(argv: list[str]) -> int:
    notes = ROOT / "docs" / "notes"
    new = paragraph(scores((notes / "mutation-model.txt").read_text()), scores((notes / "mutation-host.txt").read_text()))
    path = ROOT / "README.md"
    readme = path.read_text()
    updated = rewrite(readme, new)
    if "--check" in argv:
        if updated != readme:
            print("README.md: the mutation-testing paragraph differs from the notes (run tools/mutation/readme.py)",
                  file=sys.stderr)
            return 1
        return 0
    path.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
