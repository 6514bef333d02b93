#!/usr/bin/env bash
# Issue 5 on a GPU machine: the sum configuration search vs cupy.sum, GPU tests, compute-sanitizer (memcheck,
# racecheck, synccheck) on small odd sizes of every reduce/transpose kernel, and a short benchmark vs CuPy /
# PyTorch / cudaMemcpy.
# Usage (repo root): OUT=/some/dir bash tools/reduce_transpose_gpu.sh [tune|tests|sanitize|bench ...]
# Each step has its own time limit (TUNE_LIMIT, TESTS_LIMIT, BENCH_LIMIT, SANITIZE_LIMIT) and log under $OUT; a
# failing step does not stop the others. BENCH_EXPS: the experiments of the bench step (default: all five).
set -u
OUT=${OUT:-./.devout}
mkdir -p "$OUT"
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
STEPS=${*:-tests bench sanitize}
status=0

step() {  # name, time limit (s), command...
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    echo "== $name: rc=$rc ($((SECONDS - t0)) s)"
    tail -n "${TAIL:-25}" "$OUT/$name.log"
    [ "$rc" -eq 0 ] || status=1
}

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>&1 | head -2
$PY -c "import cupy, cuda.core; print('cupy', cupy.__version__, 'cuda.core', cuda.core.__version__)"

for s in $STEPS; do
    case $s in
    tune)
        TAIL=400 step tune "${TUNE_LIMIT:-120}" $PY tools/reduce_transpose_tune.py "$OUT" ;;
    tests)
        step tests "${TESTS_LIMIT:-150}" $PY -m pytest -q -p no:cacheprovider --durations=8 ${PYTEST_K:+-k "$PYTEST_K"} \
            ${TEST_FILES:-tests/gpu/test_reduce_transpose.py} ;;
    bench)
        TAIL=400 step bench "${BENCH_LIMIT:-150}" $PY tools/reduce_transpose_bench.py "$OUT" ${BENCH_EXPS:-} ;;
    sanitize)  # the three tools at once (correctness only, nothing is timed); SANITIZE_SERIAL=1: one after another
        for tool in memcheck racecheck synccheck; do
            if [ -n "${SANITIZE_SERIAL:-}" ]; then
                step "sanitize_$tool" "${SANITIZE_LIMIT:-90}" compute-sanitizer --tool "$tool" --error-exitcode 3 \
                    $PY tools/reduce_transpose_sanitize.py
            else
                ( TAIL=6 step "sanitize_$tool" "${SANITIZE_LIMIT:-90}" compute-sanitizer --tool "$tool" \
                    --error-exitcode 3 $PY tools/reduce_transpose_sanitize.py; exit $status ) > "$OUT/sanitize_$tool.summary" &
            fi
        done
        for job in $(jobs -p); do wait "$job" || status=1; done
        cat "$OUT"/sanitize_*.summary 2>/dev/null ;;
    esac
done
exit $status
