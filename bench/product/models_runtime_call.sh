#!/usr/bin/env bash
# One device call: the runtime on the models' shapes against cuBLASLt auto-tuning and heuristic,
# TN (nn.Linear), offline, graph and chain timers, one process per set, every output verified.
#  1. the target set (bench/shapes/models_offgrid.txt: the M the models' table was tuned at): the
#     library as built;
#  2. held-out M (bench/shapes/models_heldout.txt): the same library with the bucket rule off
#     (the default: cuBLASLt's heuristic), `up` and `nearest` (CUDAL2_M_BUCKETS), three instances
#     of one file in one process.
#   bash bench/product/models_runtime_call.sh [SECONDS]
# Writes $OUT/models-{target,heldout}.{csv.gz,log}; summarize with bench/runtime/summarize_rules.py.
set -uo pipefail
source "$(dirname "$0")/../device_env.sh" >/dev/null
B=${BUILD:-build}
lib=$PWD/$B/src/runtime/libcudal2_runtime.so.0
cp "$lib" /tmp/libcudal2_runtime_b.so.0 && cp "$lib" /tmp/libcudal2_runtime_c.so.0
common=(--reference cublaslt-autotune-tn --mode offline --timers graph,chain --reps "${REPS:-15}" --verify-budget 3e7 --quiet)
t0=$(date +%s)
CUDAL2_RUNTIME_LIB=$lib timeout "${1:-500}" "$B/cudal2" bench --shapes bench/shapes/models_offgrid.txt \
  --methods runtime-tn,cublaslt-autotune-tn,cublaslt-heuristic-tn "${common[@]}" \
  --csv "$OUT/models-target.csv" > "$OUT/models-target.log" 2>&1
echo "target rc=$? at $(( $(date +%s) - t0 ))s"
left=$(( ${1:-500} - $(date +%s) + t0 ))
CUDAL2_RUNTIME_LIB=$lib CUDAL2_RUNTIME_LIB_B=/tmp/libcudal2_runtime_b.so.0 CUDAL2_RUNTIME_LIB_C=/tmp/libcudal2_runtime_c.so.0 \
  CUDAL2_RUNTIME_ENV_B="CUDAL2_M_BUCKETS=up" CUDAL2_RUNTIME_ENV_C="CUDAL2_M_BUCKETS=nearest" \
  timeout "$left" "$B/cudal2" bench --shapes bench/shapes/models_heldout.txt \
  --methods runtime-tn,runtime-b-tn,runtime-c-tn,cublaslt-autotune-tn,cublaslt-heuristic-tn "${common[@]}" \
  --csv "$OUT/models-heldout.csv" > "$OUT/models-heldout.log" 2>&1
echo "held-out rc=$? at $(( $(date +%s) - t0 ))s"
gzip -f "$OUT"/*.csv
ls -la "$OUT"
