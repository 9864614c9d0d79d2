#!/usr/bin/env bash
# The cublaslt-family measurement on the GPU (device tool), over carried build-lt/{cudal2,lt_space_time}:
# 40 specs per layout per shape (the first 20 reported separately), every spec with the workspace
# cuBLASLt asks for, and a cudal2 eval smoke test. Results: bench/results/h100/cublaslt-space/.
source bench/device_env.sh
export CUDAL2_CLI=$PWD/build-lt/cudal2
B=build-lt
T0=$(date +%s)
step() { echo "=== $1 ($(( $(date +%s) - T0 )) s)"; }
step "measurement"
timeout ${MEASURE_S:-290} $B/lt_space_time --max 40 --prefix 20 --ws-floor-mib 32 --reps 30 --csv $OUT/lt_time2.csv \
  16,4096,4096 64,4096,4096 64,14336,4096 128,4096,14336 4096,64,4096 1024,1024,1024 2048,2048,512 \
  256,8192,2048 4096,4096,4096 8192,8192,8192 > $OUT/lt_time2.log 2>&1; echo "measure rc=$?"
grep -E "FAILED|refused|compile failed" $OUT/lt_time2.log | head -5
grep "A/B" $OUT/lt_time2.log | cut -c1-330
tail -14 $OUT/lt_time2.log
step "cudal2 eval smoke test 1024^3"
mapfile -t S < <($B/cudal2 lt-space --shape 1024,1024,1024 --max 4 2>/dev/null)
args=(); for s in "${S[@]}"; do args+=(--spec "$s"); done
timeout ${EVAL_S:-50} $B/cudal2 eval "${args[@]}" --shape 1024,1024,1024 --timers graph --reps 10 --db $OUT/eval2.db \
  --baselines cublaslt-autotune-nn,cublaslt-autotune-tn > $OUT/eval2.log 2>&1; echo "eval rc=$?"
tail -10 $OUT/eval2.log | cut -c1-250
step "done"
