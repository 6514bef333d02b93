#!/usr/bin/env bash
# One call on a GPU machine: environment, kernel report, GPU tests, compute-sanitizer, benchmark.
# Usage: tools/gpu_check.sh [STAGE ...]   stages: env kernels tests sanitize bench quick extra:<cmd>
# Logs go to $OUT (or ./gpu-check-out). Run from the repository root; uses PYTHONPATH=src.
set -u -o pipefail
OUT=${OUT:-gpu-check-out}
mkdir -p "$OUT"
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 CUPY_TF32=0
export GPUMEMLAB_CACHE=${GPUMEMLAB_CACHE:-/tmp/gpumemlab-cache}
export GPUMEMLAB_REQUIRE_GPU=1  # tests/sanitize: no GPU found is a failure here, not a skip
PY=${PY:-python3}
status=0
stage() { echo; echo "===== $1 ($(date +%T))"; }
run_logged() { local name=$1; shift; "$@" 2>&1 | tee "$OUT/$name.log"; local rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || { echo "!!! $name exited $rc"; status=1; }; }
stages=("$@"); [ ${#stages[@]} -gt 0 ] || stages=(env kernels tests sanitize bench)
for s in "${stages[@]}"; do
  case "$s" in
    env) stage env
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu --format=csv
      $PY -c "import cupy, cuda.core, numpy, sys; print(sys.version.split()[0], 'cupy', cupy.__version__, 'cuda.core', cuda.core.__version__, 'numpy', numpy.__version__)" ;;
    kernels) stage kernels; run_logged kernels $PY -m gpumemlab kernels ;;
    tests) stage tests; run_logged tests $PY -m pytest -q --maxfail=20 -p no:cacheprovider tests ${TESTS_K:+-k "$TESTS_K"} ;;
    sanitize) stage sanitize
      for tool in memcheck racecheck synccheck; do
        run_logged "sanitize-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 \
          $PY -m pytest -q -x -p no:cacheprovider ${SANITIZE_TESTS:-tests/gpu} -k "${SANITIZE_K:-not experiment and not ceilings and not timer}"
      done ;;
    bench) stage bench; run_logged bench $PY -m gpumemlab bench --out "$OUT/report" ${BENCH_ARGS:-} ;;
    quick) stage quick; run_logged quick $PY -m gpumemlab bench --quick --out "$OUT/quick" ${BENCH_ARGS:-} ;;
    extra:*) stage "$s"; n_extra=$(( ${n_extra:-0} + 1 )); run_logged "extra$n_extra" bash -c "${s#extra:}" ;;
    *) echo "unknown stage $s"; status=1 ;;
  esac
done
# the device tool brings back at most 8 files: pack each report folder into one archive
for d in "$OUT"/report "$OUT"/quick; do [ -d "$d" ] && tar -C "$OUT" -czf "$d.tgz" "$(basename "$d")" && rm -rf "$d"; done
exit $status
