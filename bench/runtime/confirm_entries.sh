#!/usr/bin/env bash
# Confirmation on the GPU machine: per shape, the table's entry and the search's runners-up
# (LIST, from bench/runtime/confirm_candidates.py) timed side by side in one job with the configurations
# cuBLASLt's auto-tuning picks from (the heuristic's suggestions, `cudal2 lt-space`) and with
# auto-tuning itself as a baseline, many rounds, graph timer (and chained: $TIMERS), offline (and
# cold: $MODE). `cudal2 export --confirmed STORE` then chooses those shapes' entries from this job
# alone (docs/runtime.md).
#   bash bench/runtime/confirm_entries.sh LIST STORE.db [MINUTES]
# $REPS (40) samples per candidate; MINUTES (8): no new shape after that. Log: $OUT/confirm.log.
# $TIMERS (graph): graph,chain times every candidate chained too; $MODE (offline): both times it
# cold too (server mode); `cudal2 export` then ranks those shapes by every way they were timed
# (docs/runtime.md).
# $LAYOUTS ("nn tn"): the layouts whose suggestions are added (a model's layers: "tn"; set and
# empty: none, LIST alone, for a short job on a large shape); $BASELINES
# (auto-tuning and heuristic of both layouts): those timed beside them; $EVAL_ARGS: more
# `cudal2 eval` options (e.g. --back-to-back: trusted configurations only, timed as the graph
# timer of `cudal2 bench`). A LIST line may be a shape alone: that shape is confirmed among the
# heuristic's suggestions only.
set -uo pipefail
source "$(dirname "$0")/../device_env.sh" >/dev/null
list=$1 db=$2 minutes=${3:-8}
B=${BUILD:-build}
full="$OUT/confirm-list.txt"
grep -v '^#' "$list" | awk 'NF' > "$full"
t0=$(date +%s)
# the heuristic's suggestions: one lt-space process per layout asks cuBLASLt on the GPU for every shape
cut -d' ' -f1 "$full" | awk '!seen[$0]++' > "$OUT/confirm-shapes.txt"
for l in ${LAYOUTS-nn tn}; do
  "$B/cudal2" lt-space --shapes "$OUT/confirm-shapes.txt" --layout "$l" --max 1 --details 2>/dev/null |
    grep '# heuristic #' | cut -f1 >> "$full"
done
# shapes keep LIST's order (furthest behind first), each pair once; shape-only lines have done their part
awk 'NF > 1 && !seen[$0]++' "$full" > "$full.tmp" && mv "$full.tmp" "$full"
echo "confirm: $(wc -l < "$full") (shape, spec) pairs on $(cut -d' ' -f1 "$full" | sort -u | wc -l) shapes ($(( $(date +%s) - t0 ))s to list)"
"$B/cudal2" eval --spec-list "$full" --db "$db" --mode "${MODE:-offline}" --timers "${TIMERS:-graph}" --reps "${REPS:-40}" --batch 200 \
  --budget-minutes "$minutes" ${EVAL_ARGS:-} \
  --baselines "${BASELINES:-cublaslt-autotune-nn,cublaslt-autotune-tn,cublaslt-heuristic-nn,cublaslt-heuristic-tn}" \
  > "$OUT/confirm.log" 2>&1
echo "confirm rc=$? in $(( $(date +%s) - t0 ))s"
