#!/usr/bin/env bash
# One shard of the paper's 1000-shape grid tuned on the GPU machine (device tool) with the
# cublaslt family (cuBLASLt's configuration space around each shape's heuristic, measured in the
# judge beside the baselines), resumable: the store keeps what was measured, a rerun with the same
# store skips it.
#   bash bench/cublaslt/tune_grid.sh SHARD MINUTES DB [extra tune options...]
#   e.g. bash bench/cublaslt/tune_grid.sh 0/2 8.5 $OUT/grid-0of2.db
# The baselines of every job include cuBLASLt's heuristic (the runtime's fallback: export keeps a
# spec only where it beats it) and cuBLASLt auto-tuning (the target); $BASELINES replaces them
# (a search that is timed leaves auto-tuning out and compares its table afterwards).
set -uo pipefail
source "$(dirname "$0")/../device_env.sh" >/dev/null
shard=$1 minutes=$2 db=$3
shift 3
B=${BUILD:-build}
t0=$(date +%s)
"$B/cudal2" tune --grid paper --shard "$shard" --families cublaslt --lt-max "${LT_MAX:-12}" --timers graph \
  --mode offline --reps 10 --verify-budget 3e7 --batch 32 --timeout 60 --budget-minutes "$minutes" \
  --baselines "${BASELINES:-cublaslt-heuristic-nn,cublaslt-heuristic-tn,cublaslt-autotune-nn,cublaslt-autotune-tn}" \
  --db "$db" "$@" > "${db%.db}.log" 2>&1
echo "tune $shard rc=$? in $(( $(date +%s) - t0 ))s"
grep -E "candidate\(s\)|compile time|budget-minutes" "${db%.db}.log" | tail -5
