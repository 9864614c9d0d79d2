#!/usr/bin/env bash
# One device call (H200): the runtime built with tables/h200-f32.json against the same library
# with no table (CUDAL2_TABLE=none: cuBLASLt's heuristic), cuBLASLt auto-tuning and heuristic, NN
# and TN, in one process on a shard of the paper grid (bench/runtime/runtime_vs_cublaslt.sh;
# offline, graph and chain timers). Refuses to run on any other GPU.
#   bash bench/h200/runtime_h200_call.sh SHARD SECONDS   e.g. 0/20 420
set -uo pipefail
here=$(dirname "$0")
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H200*) ;; *) echo "runtime_h200_call: needs an H200, got '$gpu'"; exit 3 ;; esac
B=${BUILD:-build}
lib=$PWD/$B/src/runtime/libcudal2_runtime.so.0
cp "$lib" /tmp/libcudal2_runtime_notable.so.0  # a second instance: another path
shard=${1:-0/20}
CUDAL2_RUNTIME_LIB=$lib CUDAL2_RUNTIME_LIB_B=/tmp/libcudal2_runtime_notable.so.0 CUDAL2_RUNTIME_ENV_B="CUDAL2_TABLE=none" \
  MODE=offline TIMERS=graph,chain REPS=${REPS:-10} \
  timeout "${2:-420}" bash "$here/../runtime/runtime_vs_cublaslt.sh" "h200-grid-${shard/\//of}" --grid paper --shard "$shard"
gzip -f "$OUT"/runtime-*.csv
ls -la "$OUT"
