#!/usr/bin/env bash
# The runs behind bench/results/h100/ for the foundation issue, on the device tool's H100 over a
# carried build/. Usage: bash bench/baselines/baseline_grid.sh STEP... with STEP in tests, sample, sample-f16,
# grid0..grid3. Each step writes $OUT/<step>.csv and $OUT/<step>.log (table + progress) and resumes
# from bench/results/h100/<step>.csv when that is committed, so a step cut off by the device's
# 10-minute command limit is finished by committing what came back and running it again.
set -uo pipefail
source "$(dirname "$0")/../device_prep.sh"
OUT=${OUT:-out}; mkdir -p "$OUT"
grid_methods=cublas-nn,cublas-tn,cublaslt-autotune-nn,cublaslt-autotune-tn
for step in "$@"; do
  [ -f "bench/results/h100/$step.csv" ] && cp "bench/results/h100/$step.csv" "$OUT/$step.csv"
  csv=(--csv "$OUT/$step.csv" --resume)
  case "$step" in
    tests) ./build/tests/cudal2_gpu_tests > "$OUT/gpu_tests.log" 2>&1; echo "gpu tests rc=$?"; tail -3 "$OUT/gpu_tests.log"; continue ;;
    sample) args=(--grid sample --mode both --reps 30) ;;
    sample-f16) args=(--grid sample --fp16-accum --reps 10 --methods "$grid_methods,cublaslt-heuristic-nn,cublaslt-heuristic-tn") ;;
    grid[0-3]) args=(--grid paper --shard "${step#grid}/4" --reps 10 --verify-budget 1.3e8 --methods "$grid_methods") ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
  timeout "${STEP_TIMEOUT:-560}" ./build/cudal2 bench "${args[@]}" "${csv[@]}" > "$OUT/$step.log" 2>&1
  echo "$step: rc=$? $(grep -E '^\[' "$OUT/$step.log" | tail -1)"
done
