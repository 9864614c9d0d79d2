#!/usr/bin/env bash
# One device-tool call of the wgmma grid campaign: `cudal2 tune` of the wgmma specs listed in
# bench/spaces/wgmma_grid.txt on the paper grid's medium and large shapes, beside cuBLASLt's
# heuristic and auto-tuning in every job, into .jit/wg/wg.db. Shard by shard until MINUTES have
# passed; resumable (carry .jit/wg/wg.db to the next call: finished spec/shape pairs are skipped).
# The store comes back as gzipped CSV ($OUT/store.tgz).
#   [SHAPES=FILE] [SPACE=FILE] [FAMILIES=wgmma,wgmma_swapab] bash bench/wgmma/tune_wgmma_grid_call.sh MINUTES [SHARDS]
#   e.g. bash bench/wgmma/tune_wgmma_grid_call.sh 8 8
# Here, afterwards: tar xzf $FILES/store.tgz -C /tmp && python3 python/cudal2/store_csv.py import /tmp/store wg.db
set -uo pipefail
source "$(dirname "$0")/../device_env.sh" >/dev/null
B=${BUILD:-build}
export CUDAL2_CLI=$PWD/$B/cudal2
db=.jit/wg/wg.db
mkdir -p .jit/wg
shapes=${SHAPES:-bench/shapes/grid_medium_large.txt}
space=${SPACE:-bench/spaces/wgmma_grid.txt}
shards=${2:-8}
t0=$(date +%s)
deadline=$((t0 + ${1%.*} * 60))
for i in $(seq 0 $((shards - 1))); do
  left=$((deadline - $(date +%s)))
  [ "$left" -le 30 ] && { echo "stopped before shard $i/$shards: time is up"; break; }
  "$B/cudal2" tune --shapes "$shapes" --shard "$i/$shards" --families "${FAMILIES:-wgmma}" --space "@$space" \
    --timers graph --mode offline --reps 10 --verify-budget 3e7 --batch 8 --timeout 60 \
    --budget-minutes "$(python3 -c "print($left/60)")" \
    --baselines cublaslt-heuristic-nn,cublaslt-heuristic-tn,cublaslt-autotune-nn,cublaslt-autotune-tn \
    --db "$db" >> "$OUT/tune-wgmma.log" 2>&1
  echo "shard $i/$shards rc=$? at $(($(date +%s) - t0))s"
done
grep -E "candidate\(s\) left|throughput|compile time" "$OUT/tune-wgmma.log" | tail -4
python3 "$(dirname "$0")/../../python/cudal2/store_csv.py" export "$db" "$OUT/store" >/dev/null &&
  tar czf "$OUT/store.tgz" -C "$OUT" store && rm -rf "$OUT/store"
ls -la "$OUT"
