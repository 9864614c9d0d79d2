#!/usr/bin/env bash
# One device-tool call: libcudal2_runtime (built with tables/h100-f32.json) against cuBLASLt
# auto-tuning on the grid's small class, the decode set and the K-heavy few-tile shapes, offline
# (graph and chain timers) and server mode, through bench/runtime/runtime_vs_cublaslt.sh; each part cut
# at its time limit (the CSV keeps every finished shape).
#   bash bench/runtime/runtime_small_call.sh [SMALL_SECONDS] [REST_SECONDS]
set -uo pipefail
cd "$(dirname "$0")/../.."
export TIMERS=${TIMERS:-graph,chain} MODE=${MODE:-both} REPS=${REPS:-10}
timeout "${1:-330}" bash bench/runtime/runtime_vs_cublaslt.sh small --grid paper --class small
timeout "${2:-150}" bash bench/runtime/runtime_vs_cublaslt.sh decode-kheavy --shapes bench/shapes/llm_decode.txt \
  --shapes bench/shapes/kheavy_few_tile.txt
for f in "$OUT"/runtime-*.csv; do gzip -f "$f"; done
tar czf "$OUT/runtime-logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log) && rm -f "$OUT"/*.log
ls -la "$OUT"
