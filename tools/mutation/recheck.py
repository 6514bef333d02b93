"""Run test files against named mutants of a kept mutmut work directory (run.sh KEEP=1), in one process, and print
each in `mutmut results` form: a bounded re-check of survivors with tests written after the run.

    python tools/mutation/recheck.py WORKDIR/proj TESTFILE... -- MUTANT_NAME...

A mutant is killed when the tests fail with it active (pytest exit code 1); any other outcome counts as survived.
The output can be given to score.py after the run's own listing (later listings replace earlier states)."""

from __future__ import annotations

import contextlib
import io
import os
import sys


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") < 2:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    cut = argv.index("--")
    proj, tests, names = argv[0], argv[1:cut], argv[cut + 1:]
    mutants = os.path.join(proj, "mutants")
    sys.path.insert(0, os.path.join(mutants, "src"))  # the mutated package, each function behind mutmut's switch
    os.chdir(mutants)
    os.environ["GPUMEMLAB_MUTATION"] = "1"  # as run.sh: the tests' allowances for mutmut's deeper stacks
    import pytest

    def run(mutant: str) -> int:
        os.environ["MUTANT_UNDER_TEST"] = mutant
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return pytest.main([*tests, "-q", "-x", "-p", "no:cacheprovider", "-W", "ignore"])

    if run("none") != 0:  # a test that fails with no mutant active would "kill" every mutant
        print(f"the tests fail with no mutant active: run them in {mutants} first", file=sys.stderr)
        return 1
    for name in names:
        print(f"    {name}: {'killed' if run(name) == 1 else 'survived'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
