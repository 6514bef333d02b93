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

# Score = killed / (total - the equivalent mutants listed in setup.cfg). "timeout" counts as killed (the mutant
# hangs); "no tests" (no test reaches the function) counts as not killed.
"$venv/bin/python" - "$work/results.txt" "$work/tail.txt" "$(( $(date +%s) - start ))" \
    "$repo/tools/mutation/setup.cfg" "${ONLY:-}" "$packages" "$tests" > "$out" <<'PY'
import collections, configparser, re, sys, time
results, tail, seconds = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
cfg = configparser.ConfigParser(delimiters=("=",), interpolation=None)
cfg.optionxform = str  # mutant names are case-sensitive
cfg.read(sys.argv[4], encoding="utf-8")
equivalent = dict(cfg["equivalent"]) if cfg.has_section("equivalent") else {}
status = collections.Counter()
survivors, excluded, killed_listed = [], [], []
for line in results.splitlines():
    m = re.match(r"\s*(\S+): (\w[\w ]*)$", line)
    if m:
        name, state = m.groups()
        if name in equivalent and state == "survived":
            excluded.append(name)
            continue
        if name in equivalent:
            killed_listed.append(f"{name}: {state}")
        status[state] += 1
        if state not in ("killed", "timeout"):
            survivors.append(line.strip())
total = sum(status.values())
killed = status["killed"] + status["timeout"]
packages = " ".join(f"src/gpumemlab/{p}/" for p in sys.argv[6].split())
print(f"mutmut 3 over {sys.argv[5] or packages}, tests {sys.argv[7]}, {time.strftime('%Y-%m-%d', time.gmtime())}")
print("mutmut's own last progress line:")
print(tail.strip())
print(f"per status: {dict(status)}   (equivalent, left out: {len(excluded)}, listed in setup.cfg [equivalent])")
for entry in killed_listed:
    print(f"  listed as equivalent but not a survivor: {entry}")
print(f"killed {killed} / not killed {total - killed} / total {total}  ->  mutation score "
      f"{100.0 * killed / max(total, 1):.1f}%   ({seconds} s)")
by_function = collections.Counter(re.sub(r"__mutmut_\d+:.*", "", s) for s in survivors)
print("not killed, per function:")
for fn, n in sorted(by_function.items()):
    print(f"  {n:4d}  {fn}")
PY
cat "$out"
[[ ${KEEP:-0} == 1 ]] && echo "work directory kept: $work/proj"
exit 0
