#!/usr/bin/env bash
# One call on a GPU machine: environment, kernel report, GPU tests, compute-sanitizer, tuning, benchmark.
# Usage: tools/gpu_check.sh [STAGE ...]   (default: env kernels tests sanitize bench)
#   env kernels tests bench quick      as named (tests: TESTS picks paths, TESTS_K filters, TESTS_ARGS adds;
#                                      bench/quick: BENCH_ARGS)
#   tests-rest:LOG                     the tests that have no outcome in LOG ($OUT/tests.log of a call cut off by its
#                                      time limit), as tests-rest.log
#   bench:EXP,EXP...                   gpumemlab bench --only EXP... as bench-EXP-EXP (e.g. bench:reduce,transpose)
#   bench-skip:EXP,EXP...              gpumemlab bench --skip EXP... as rest-EXP-EXP (the rest of a split run)
#   tune:FAMILY                        gpumemlab tune FAMILY --install (a family the library reads, e.g. matmul): this
#                                      device's result and cache in $OUT/tune, the package's table with it merged in
#                                      as $OUT/tuned-FAMILY.json; TUNE_ARGS
#   sanitize                           memcheck, racecheck, synccheck over tools/sanitize_kernels.py (every reduce, on-chip,
#                                      transpose, launch and matmul kernel on odd sizes; SANITIZE_GROUPS, SAN_RB_ONLY=1)
#   sanitize:tests                     the same tools over the GPU tests (SANITIZE_TESTS, SANITIZE_K)
#   profile                            ncu on cuBLAS and PROFILE_CONFIGS (register_blocked names) at 4096^3
#   clocks                             log SM clock, power and temperature every 0.5 s to $OUT/clocks.csv until the end
#   extra:<cmd>                        any command
#   limit:SECONDS                      the stages after it each stop after SECONDS (timeout; 0: no limit)
# Logs go to $OUT (or ./gpu-check-out). Run from the repository root; uses PYTHONPATH=src.
# A bench run NAME writes its report under $RUNS (not $OUT: a report is dozens of files) and comes back as
# $OUT/NAME.tgz; every few seconds its results.json is copied to $OUT/NAME.results.json, so a run cut off by a time
# limit still returns every experiment it finished (merge runs with `gpumemlab merge`).
set -u -o pipefail
OUT=${OUT:-gpu-check-out}
RUNS=${RUNS:-/tmp/gpu-check-runs}
mkdir -p "$OUT" "$RUNS"
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 CUPY_TF32=0
export GPUMEMLAB_CACHE=${GPUMEMLAB_CACHE:-/tmp/gpumemlab-cache}
export GPUMEMLAB_REQUIRE_GPU=1  # tests/sanitize: no GPU found is a failure here, not a skip
PY=${PY:-python3}
status=0
stage() { echo; echo "===== $1 ($(date +%T))"; }
limit=0
run_logged() { local name=$1; shift; [ "$limit" = 0 ] || set -- timeout "$limit" "$@"; "$@" 2>&1 | tee "$OUT/$name.log"; local rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || { echo "!!! $name exited $rc"; status=1; }; }
snapshot() { [ -f "$RUNS/$1/results.json" ] && cp "$RUNS/$1/results.json" "$OUT/.$1.tmp" && mv "$OUT/.$1.tmp" "$OUT/$1.results.json"; }
bench_run() {  # NAME BENCH-ARGS...: gpumemlab bench --out $RUNS/NAME, its results.json mirrored into $OUT meanwhile
  local name=$1; shift
  rm -rf "$RUNS/$name" "$OUT/$name.results.json"  # nothing from an earlier call on a warm machine passes for this run
  ( while :; do sleep 5 & wait $!; snapshot "$name"; done ) > /dev/null 2>&1 & local mirror=$!  # a TERM ends it at once
  run_logged "$name" $PY -m gpumemlab bench "$@" --out "$RUNS/$name" ${BENCH_ARGS:-}
  kill "$mirror" 2>/dev/null; wait "$mirror" 2>/dev/null; snapshot "$name"
  [ -d "$RUNS/$name" ] && tar -C "$RUNS" -czf "$OUT/$name.tgz" "$name"
}
stages=("$@"); [ ${#stages[@]} -gt 0 ] || stages=(env kernels tests sanitize bench)
for s in "${stages[@]}"; do
  case "$s" in
    env) stage env
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu --format=csv
      $PY -c "import cupy, cuda.core, numpy, sys; print(sys.version.split()[0], 'cupy', cupy.__version__, 'cuda.core', cuda.core.__version__, 'numpy', numpy.__version__)" ;;
    kernels) stage kernels; run_logged kernels $PY -m gpumemlab kernels ;;
    tests|tests-rest:*) stage "$s"; rest=${s#tests-rest:}; [ "$s" = tests ] && rest=
      run_logged "${s%%:*}" $PY -m pytest -v --maxfail=20 -p no:cacheprovider ${TESTS:-tests} ${rest:+--rest-after "$rest"} \
        ${TESTS_ARGS:-} ${TESTS_K:+-k "$TESTS_K"} ;;
    limit:*) limit=${s#limit:} ;;
    sanitize) stage sanitize
      for tool in memcheck racecheck synccheck; do
        run_logged "sanitize-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 \
          --report-api-errors no $PY tools/sanitize_kernels.py ${SANITIZE_GROUPS:-}
      done ;;
    sanitize:tests) stage "$s"
      for tool in memcheck racecheck synccheck; do
        run_logged "sanitize-tests-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 \
          --report-api-errors no $PY -m pytest -q -x -p no:cacheprovider ${SANITIZE_TESTS:-tests/gpu} -k "${SANITIZE_K:-not experiment and not ceilings and not timer}"
      done ;;
    tune:*) stage "$s"; fam=${s#tune:}
      run_logged "tune-$fam" $PY -m gpumemlab tune "$fam" --out "$OUT/tune" --install ${TUNE_ARGS:-}
      # the package's table with this device's entry merged in: copy it over src/gpumemlab/kernels/tuned/ to keep it
      cp "src/gpumemlab/kernels/tuned/$fam.json" "$OUT/tuned-$fam.json" ;;
    bench:*) stage "$s"; exps=${s#bench:}
      bench_run "bench-${exps//,/-}" --only ${exps//,/ } ;;
    bench-skip:*) stage "$s"; exps=${s#bench-skip:}
      bench_run "rest-${exps//,/-}" --skip ${exps//,/ } ;;
    profile) stage profile  # stall reasons per kernel, then per-instruction samples of the first config
      cfgs=${PROFILE_CONFIGS:-$($PY -c "from gpumemlab.kernels.matmul import DEFAULT; print(DEFAULT.name)")}
      run_logged profile ncu --clock-control none --kernel-name regex:'register_blocked|gemm' \
        --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section LaunchStats \
        --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
        $PY tools/profile_matmul.py $cfgs
      run_logged profile-source ncu --clock-control none --kernel-name regex:'register_blocked|gemm' --launch-count 2 \
        --section WarpStateStats --section SourceCounters -o "$OUT/src" -f $PY tools/profile_matmul.py ${cfgs%% *}
      ncu -i "$OUT/src.ncu-rep" --page source --csv --print-source sass > "$OUT/src_sass.csv" 2> "$OUT/src_err.txt" ;;
    clocks) stage clocks
      nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 500 > "$OUT/clocks.csv" 2>&1 &
      clocks_pid=$! ;;
    bench) stage bench; bench_run report ;;
    quick) stage quick; bench_run quick --quick ;;
    extra:*) stage "$s"; n_extra=$(( ${n_extra:-0} + 1 )); run_logged "extra$n_extra" bash -c "${s#extra:}" ;;
    *) echo "unknown stage $s"; status=1 ;;
  esac
done
[ -n "${clocks_pid:-}" ] && kill "$clocks_pid" 2>/dev/null
exit $status
