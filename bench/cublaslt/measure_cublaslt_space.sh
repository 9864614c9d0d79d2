#!/usr/bin/env bash
# The cublaslt-family measurement on the GPU (device tool), over a carried build/: does searching
# cuBLASLt's configuration space around each shape beat cuBLASLt auto-tuning? Every spec of the
# family's neighbourhood (`cudal2 lt-space`: the heuristic's suggestions plus up to $LT_MAX
# one-attribute variations per layout) is verified and timed through the judge against auto-tuning
# in the same jobs (`cudal2 tune --families cublaslt`), then each shape's $FINAL_TOP fastest are
# measured again side by side with both auto-tuning picks (--final-top). Results:
# bench/results/h100/cublaslt-space/ (its tables came from the retired stand-alone harness
# lt_space_time.cpp, whose phases these two steps replace).
source "$(dirname "$0")/../device_env.sh"
B=${BUILD:-build}
DB=${DB:-$OUT/cublaslt-space.db}
T0=$(date +%s)
step() { echo "=== $1 ($(($(date +%s) - T0)) s)"; }
shapes=(16,4096,4096 64,4096,4096 64,14336,4096 128,4096,14336 4096,64,4096 1024,1024,1024 2048,2048,512
  256,8192,2048 4096,4096,4096 8192,8192,8192)
args=()
for s in "${shapes[@]}"; do args+=(--shape "$s"); done
step "screen every spec, then the fastest again with auto-tuning"
timeout "${MEASURE_S:-540}" "$B/cudal2" tune "${args[@]}" --families cublaslt --lt-max "${LT_MAX:-40}" \
  --mode offline --timers graph --reps 10 --baselines cublaslt-autotune-nn,cublaslt-autotune-tn \
  --final-top "${FINAL_TOP:-3}" --final-mode offline --final-reps 30 --final-csv "$OUT/final.csv" \
  --final-baselines cublaslt-autotune-nn,cublaslt-autotune-tn --db "$DB" >"$OUT/tune.log" 2>&1
echo "tune rc=$?"
tail -14 "$OUT/tune.log"
python3 "$(dirname "$0")/../../python/cudal2/store_csv.py" export "$DB" "$OUT/store" >/dev/null
step "done"
