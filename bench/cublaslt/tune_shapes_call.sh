#!/usr/bin/env bash
# One device-tool call tuning a list of shapes in cuBLASLt's space into a fresh store, brought back
# as CSV ($OUT/store.tgz); merge it here with `cudal2 merge --db GRID.db --from REST.db` after
# `python3 python/cudal2/store_csv.py import`. For the last shapes of a grid campaign whose store is too
# large to carry (the device tool carries 64 MiB).
#   bash bench/cublaslt/tune_shapes_call.sh SHAPES.txt MINUTES
set -uo pipefail
source "$(dirname "$0")/../device_env.sh" >/dev/null
B=${BUILD:-build}
export CUDAL2_CLI=$PWD/$B/cudal2
db=.jit/grid/rest.db
mkdir -p .jit/grid
t0=$(date +%s)
"$B/cudal2" tune --shapes "$1" --families cublaslt --lt-max "${LT_MAX:-8}" --timers graph --mode offline --reps 10 \
  --verify-budget 3e7 --batch 32 --timeout 60 --budget-minutes "$2" \
  --baselines cublaslt-heuristic-nn,cublaslt-heuristic-tn,cublaslt-autotune-nn,cublaslt-autotune-tn \
  --db "$db" > "$OUT/tune-rest.log" 2>&1
echo "tune rc=$? in $(( $(date +%s) - t0 ))s"
python3 "$(dirname "$0")/../../python/cudal2/store_csv.py" export "$db" "$OUT/store" >/dev/null &&
  tar czf "$OUT/store.tgz" -C "$OUT" store && rm -rf "$OUT/store"
grep -E "budget-minutes|candidate\(s\):|measure time" "$OUT/tune-rest.log"
