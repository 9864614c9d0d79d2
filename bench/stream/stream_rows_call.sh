#!/usr/bin/env bash
# GPU machine, one device call: the stream_rows candidates (bench/stream/stream_rows_sources.py)
# beside the runtime's stream kernel and cuBLASLt auto-tuning NN/TN, through the judge, on
# bench/shapes/stream_explore_rows.txt: offline (graph and chain timers, back to back) and server
# mode. Writes $OUT/rows-TAG.tgz (the CSVs and logs: the device tool returns at most 8 files).
#   bash bench/stream/stream_rows_call.sh TAG [SHAPES]
# Other free-form candidates the same way: GEN="bench/stream/stream_load_sources.py --mid" (a
# generator that takes OUTDIR last and prints the --source arguments); LAYOUT=nn for NN candidates.
set -uo pipefail
cd "$(dirname "$0")/../.."
tag=$1 shapes=${2:-bench/shapes/stream_explore_rows.txt}
export BUILD=${BUILD:-.dev/build}
source bench/device_env.sh >/dev/null
B=$BUILD
mkdir -p .jit "$OUT/rows-$tag"
# shellcheck disable=SC2086
args=$(python3 ${GEN:-bench/stream/stream_rows_sources.py} ".jit/rows-$tag")
common=(--layout "${LAYOUT:-tn}" --shapes "$shapes" --reps "${REPS:-10}" --verify-budget 3e7 --timeout 60
  --baselines cublaslt-autotune-nn,cublaslt-autotune-tn)
# shellcheck disable=SC2086
"$B/cudal2" eval $args "${common[@]}" --timers graph,chain --mode offline --back-to-back \
  --db ".jit/rows-$tag.db" --csv "$OUT/rows-$tag/offline.csv" >"$OUT/rows-$tag/offline-eval.log" 2>&1
echo "offline rc=$?"
# shellcheck disable=SC2086
"$B/cudal2" eval $args "${common[@]}" --timers graph --mode server \
  --db ".jit/rows-$tag.db" --csv "$OUT/rows-$tag/server.csv" >"$OUT/rows-$tag/server-eval.log" 2>&1
echo "server rc=$?"
grep -E "ok|fail|wrong|refused" "$OUT/rows-$tag/offline-eval.log" | sort | uniq -c | sort -rn | head -20
tar czf "$OUT/rows-$tag.tgz" -C "$OUT" "rows-$tag" && rm -rf "${OUT:?}/rows-$tag"
