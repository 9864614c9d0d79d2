#!/usr/bin/env bash
# One device-tool call of the grid campaign: tune shard SHARD of the paper grid into the carried
# store .jit/grid/grid.db (resumable), then bring the store back as CSV (the device tool returns
# files of at most 16 MiB: a SQLite store outgrows that, its gzipped CSV does not).
#   bash bench/cublaslt/tune_grid_call.sh SHARD MINUTES     e.g. bash bench/cublaslt/tune_grid_call.sh 0/3 8.5
# Here, afterwards: rm -f .jit/grid/grid.db && tar xzf $FILES/store.tgz -C /tmp &&
#   python3 python/cudal2/store_csv.py import /tmp/store .jit/grid/grid.db
set -uo pipefail
source "$(dirname "$0")/../device_env.sh" >/dev/null
B=${BUILD:-build}
export CUDAL2_CLI=$PWD/$B/cudal2
mkdir -p .jit/grid
BUILD=$B LT_MAX=${LT_MAX:-8} bash "$(dirname "$0")/tune_grid.sh" "$1" "$2" .jit/grid/grid.db
cp .jit/grid/grid.log "$OUT/tune-${1/\//of}.log"
python3 "$(dirname "$0")/../../python/cudal2/store_csv.py" export .jit/grid/grid.db "$OUT/store" >/dev/null &&
  tar czf "$OUT/store.tgz" -C "$OUT" store && rm -rf "$OUT/store"
ls -la "$OUT"
