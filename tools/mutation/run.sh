#!/usr/bin/env bash
# Mutation testing with mutmut 3 of one or more packages of src/gpumemlab/ (default: the analyzer, model/, whose
# CLI lives in cli/analyzer.py, with tests/model as the suite). Installs mutmut into a throw-away venv, runs it
# on a copy of the sources (so no config file is needed at the repository root) and prints the score.
#
#   tools/mutation/run.sh [OUTFILE]     # default OUTFILE: docs/notes/mutation-<packages>.txt
#   PACKAGES="report suite bench" TESTS="tests/test_report.py ..." tools/mutation/run.sh
#
# Environment: PACKAGES (space-separated packages of src/gpumemlab/ to mutate, default "model"), TESTS
# (space-separated pytest paths, the narrowest selection that reaches them; default "tests/model/"),
# PYTHON (default python3), MAX_CHILDREN (default: CPU count), ONLY (space-separated files to
# mutate, e.g. "src/gpumemlab/model/expr.py"; default: all of PACKAGES), MUTMUT_VENV (a venv that already has
# mutmut and the test dependencies: skips the install), HYPOTHESIS_SCALE
# (default 0.1: the property tests run a tenth of their examples for each mutant), KEEP=1 keeps
# the work directory (to inspect survivors with `mutmut show NAME` there).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
packages=${PACKAGES:-model}
tests=${TESTS:-tests/model/}
out=${1:-$repo/docs/notes/mutation-${packages// /-}.txt}
python=${PYTHON:-python3}
work=$(mktemp -d)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT

venv=${MUTMUT_VENV:-$work/venv}
if [[ -z ${MUTMUT_VENV:-} ]]; then
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q "mutmut>=3.3,<4" "numpy<2.6" pytest hypothesis rich matplotlib
fi

mkdir -p "$work/proj/src"
cp -r "$repo/src/gpumemlab" "$work/proj/src/"
cp -r "$repo/tests" "$work/proj/"  # the conftests, fixtures and data files of the selection
cp -r "$repo/docs" "$repo/README.md" "$repo/pyproject.toml" "$work/proj/"  # committed runs, pytest's markers
find "$work/proj" -name __pycache__ -prune -exec rm -rf {} +
cp "$repo/tools/mutation/setup.cfg" "$work/proj/setup.cfg"
# the packages to mutate and the test selection replace the defaults (model/, tests/model/) of setup.cfg
sed -i "s|^source_paths = .*|source_paths =\n$(printf '    src/gpumemlab/%s/\\n' $packages)|" "$work/proj/setup.cfg"
sed -i "s|^pytest_add_cli_args_test_selection = .*|pytest_add_cli_args_test_selection =\n$(printf '    %s\\n' $tests)|" \
    "$work/proj/setup.cfg"
if [[ -n ${ONLY:-} ]]; then  # mutmut's only_mutate: a bounded run (each line a glob of files)
    sed -i "/^\[equivalent\]/i only_mutate =\n$(printf '    %s\\n' $ONLY)" "$work/proj/setup.cfg"
fi

cd "$work/proj"
# PYTHONPATH=src: child processes of the tests (the purity check) import the copy mutmut runs in
export HYPOTHESIS_SCALE=${HYPOTHESIS_SCALE:-0.1} GPUMEMLAB_MUTATION=1 PYTHONPATH=src
start=$(date +%s)
"$venv/bin/mutmut" run --max-children "${MAX_CHILDREN:-$(nproc)}" > "$work/run.log" 2>&1 || true
"$venv/bin/mutmut" results --all true > "$work/results.txt" 2>&1 || true
cp "$work/results.txt" "${out%.txt}-all.txt" 2>/dev/null || true
tail -c 2000 "$work/run.log" | tr '\r' '\n' | grep -v '^\s*$' | tail -5 > "$work/tail.txt"

# the score (tools/mutation/score.py: killed / (checked - listed equivalents), every mutant not killed listed)
{
    echo "mutmut 3 over ${ONLY:-$(printf 'src/gpumemlab/%s/ ' $packages)}, tests $tests, $(date -u +%Y-%m-%d), $(( $(date +%s) - start )) s"
    echo "mutmut's own last progress line:"
    cat "$work/tail.txt"
    "$venv/bin/python" "$repo/tools/mutation/score.py" "$repo/tools/mutation/setup.cfg" "$work/results.txt"
} > "$out"
cat "$out"
[[ ${KEEP:-0} == 1 ]] && echo "work directory kept: $work/proj"
exit 0
