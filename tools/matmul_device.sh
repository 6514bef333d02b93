#!/usr/bin/env bash
# One device call for the matmul family: tune, GPU tests, the three experiments, sanitizers.
# Usage (repo root, on the GPU machine): OUT=/some/dir bash tools/matmul_device.sh [steps...]
# steps: tune tests bench sanitize profile (default: the first four, in that order); logs and results go to $OUT.
# profile: ncu (clocks left alone) on cuBLAS and the configs named by PROFILE_CONFIGS at 4096^3.
# tune also installs its table into src/gpumemlab/kernels/tuned/ (this copy), so the later steps use it.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=src PYTHONUNBUFFERED=1 GPUMEMLAB_CACHE=${GPUMEMLAB_CACHE:-/tmp/gpumemlab-cache}
OUT=${OUT:-/tmp/gpumemlab-out}
mkdir -p "$OUT"
steps=("${@:-tune tests bench sanitize}")
start=$(date +%s)
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv
# SM clock and power every 0.5 s while the steps run (FP32 SGEMM can run at less than the boost clock)
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 500 > "$OUT/clocks.csv" 2>&1 &
smi_pid=$!
python3 -c "import cupy, cuda.core; print('cupy', cupy.__version__, 'CUPY_TF32', __import__('os').environ.get('CUPY_TF32'))"
for step in ${steps[@]}; do
    echo "===== $step (t=$(( $(date +%s) - start )) s)"
    case $step in
        tune) timeout ${T_TUNE:-120} python3 tools/matmul_tune.py --out "$OUT" \
                  && python3 tools/matmul_tune.py --install "$OUT/matmul_tuned.json" ;;
        tests) timeout ${T_TESTS:-90} python3 -m pytest -q --maxfail=15 --tb=line -p no:cacheprovider tests/gpu/test_matmul.py 2>&1 | tail -30 ;;
        bench) timeout ${T_BENCH:-130} python3 tools/matmul_tune.py --bench "$OUT/bench" 2>&1 | tail -80 ;;
        sanitize) timeout ${T_SAN:-120} bash tools/sanitize_matmul.sh ${SAN_TOOLS:-memcheck racecheck} ;;
        profile) # stall reasons per kernel, then per-instruction samples (source page) of the first config and cuBLAS
                 cfgs=${PROFILE_CONFIGS:-128x128x16_w64x64_i4_t4x4_s2_a1_b2_d1}
                 timeout ${T_PROF:-150} ncu --clock-control none --kernel-name regex:'register_blocked|gemm' \
                     --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section LaunchStats \
                     --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
                     python3 tools/matmul_tune.py --profile $cfgs > "$OUT/ncu.txt" 2>&1
                 grep -v "^==PROF==" "$OUT/ncu.txt" | grep -E "Context|Duration|Issue Slots Busy|Issued Ipc Active|No Eligible|Eligible Warps Per|Warp Cycles Per Issued|Stall |inst_executed|issue_active|Registers Per|Block Size|Grid Size"
                 timeout ${T_PROF:-150} ncu --clock-control none --kernel-name regex:'register_blocked|gemm' --launch-count 2 \
                     --section WarpStateStats --section SourceCounters -o "$OUT/src" -f \
                     python3 tools/matmul_tune.py --profile ${cfgs%% *} > /dev/null 2>&1
                 ncu -i "$OUT/src.ncu-rep" --page source --csv --print-source sass > "$OUT/src_sass.csv" 2> "$OUT/src_err.txt"
                 ls -la "$OUT"; head -c 600 "$OUT/src_err.txt"; head -3 "$OUT/src_sass.csv" | cut -c1-600 ;;
    esac
    echo "===== $step done rc=$? (t=$(( $(date +%s) - start )) s)"
done
kill "$smi_pid" 2>/dev/null
} 2>&1 | tee "$OUT/device.log"
