"""Mutation score from `mutmut results --all true` listings.

    python tools/mutation/score.py SETUP_CFG RESULTS [RESULTS ...]

Listings of one source are merged mutant by mutant (a bounded re-run, ONLY=..., of some files with newer tests over
a full run, or recheck.py's output): a mutant any listing killed counts as killed, otherwise the last checked state
counts. Score = killed / (checked - the equivalent survivors listed in SETUP_CFG's [equivalent] - the mutants of
the functions listed in its [needs-gpu], which only a GPU or NVML can run: tests/gpu covers them, and they are
counted and named apart); "timeout" counts as killed (the mutant hangs), "no tests" (no test reaches the function)
as not killed, "not checked" (a run stopped early) is left out of the score and counted apart. Every mutant not
killed is listed."""

from __future__ import annotations

import collections
import configparser
import re
import sys


def states(paths: list[str]) -> dict[str, str]:
    """Each mutant's state over the listings: killed (or timeout) if any listing killed it (the tests only grew between
    them); otherwise the last listing's state, where "not checked" never replaces a checked state."""
    out: dict[str, str] = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"\s*(\S+): (\w[\w ]*)$", line.rstrip("\n"))
                if not m:
                    continue
                name, state = m.groups()
                if out.get(name) in ("killed", "timeout") or (state == "not checked" and name in out):
                    continue
                out[name] = state
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    cfg = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    cfg.optionxform = str  # mutant names are case-sensitive
    cfg.read(argv[0], encoding="utf-8")
    equivalent = dict(cfg["equivalent"]) if cfg.has_section("equivalent") else {}
    needs_gpu = dict(cfg["needs-gpu"]) if cfg.has_section("needs-gpu") else {}
    gpu_only: collections.Counter = collections.Counter()
    status: collections.Counter = collections.Counter()
    excluded, killed_listed, not_killed = [], [], []
    per_package: dict = collections.defaultdict(lambda: [0, 0])  # package -> [not killed, killed]
    unchecked_in: collections.Counter = collections.Counter()  # module -> mutants a stopped run did not reach
    for name, state in states(argv[1:]).items():
        function = name.rsplit("__mutmut_", 1)[0]
        if function in needs_gpu:
            gpu_only[function] += 1
            continue
        if name in equivalent and state == "survived":
            excluded.append(name)
            continue
        if name in equivalent:
            killed_listed.append(f"{name}: {state}")
        status[state] += 1
        package = ".".join(name.split(".")[:2])
        if state != "not checked":
            per_package[package][state in ("killed", "timeout")] += 1
        if state == "not checked":
            unchecked_in[re.sub(r"\.x[_ǁ].*", "", name)] += 1
        if state not in ("killed", "timeout", "not checked"):
            not_killed.append(f"{name}: {state}")
    unchecked = status.pop("not checked", 0)
    total = sum(status.values())
    killed = status["killed"] + status["timeout"]
    print(f"per status: {dict(status)}   (equivalent, left out: {len(excluded)}, listed in setup.cfg [equivalent])")
    if gpu_only:
        print(f"needs a GPU or NVML, left out (setup.cfg [needs-gpu]): {sum(gpu_only.values())} mutants of "
              f"{len(gpu_only)} functions")
        for function, n in sorted(gpu_only.items()):
            print(f"  {n:4d}  {function}: {needs_gpu[function]}")
    if unchecked:
        print(f"not checked (the run stopped early), left out: {unchecked}: "
              + ", ".join(f"{module} {n}" for module, n in sorted(unchecked_in.items())))
    for entry in killed_listed:
        print(f"  listed as equivalent but not a survivor: {entry}")
    print(f"killed {killed} / not killed {total - killed} / total {total}  ->  mutation score "
          f"{100.0 * killed / max(total, 1):.1f}%")
    for package, (missed, hit) in sorted(per_package.items()):
        print(f"  {package}: killed {hit} / total {hit + missed}  ->  {100.0 * hit / max(hit + missed, 1):.1f}%")
    by_function = collections.Counter(re.sub(r"__mutmut_\d+:.*", "", s) for s in not_killed)
    print("not killed, per function:")
    for fn, n in sorted(by_function.items()):
        print(f"  {n:4d}  {fn}")
    print("not killed, each:")
    for entry in sorted(not_killed):
        print(f"  {entry}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
