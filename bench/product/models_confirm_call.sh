#!/usr/bin/env bash
# One device call (H100 or H200): the off-grid target set's shapes
# (bench/shapes/models_offgrid.txt: three models' linear layers at the M a user names, TN as
# nn.Linear) tuned the way a table entry is
# confirmed: per shape, every configuration cuBLASLt's auto-tuning picks from (the heuristic's
# suggestions) and, for M <= 24, lat_staged's decode tiles, timed side by side in one job with
# auto-tuning and the heuristic as baselines (bench/runtime/confirm_entries.sh, graph timer,
# offline, $REPS samples). Then, here: `cudal2 export --db STORE --confirmed STORE` writes the
# models' table of that GPU (bench/product/rebuild_models_tables.sh).
#   bash bench/product/models_confirm_call.sh [MINUTES] [TAG]
# $EVAL_ARGS go to `cudal2 eval` (bench/runtime/confirm_entries.sh). Returns
# $OUT/models-confirm[-TAG].tgz (the store as CSV: python3 python/cudal2/store_csv.py import) and
# the log.
set -uo pipefail
here=$(dirname "$0")
source "$here/../device_env.sh" >/dev/null
shapes=${SHAPES:-bench/shapes/models_offgrid.txt}
mkdir -p .jit/models
list=.jit/models/list.txt
grep -v '^#' "$shapes" | awk 'NF' > "$list"
python3 "$here/../lat/lat_staged_candidates.py" "$shapes" --tiles decode --max-m 24 | grep -v '^#' >> "$list"
echo "list: $(wc -l < "$list") lines"
LAYOUTS=tn BASELINES=cublaslt-autotune-tn,cublaslt-heuristic-tn REPS=${REPS:-30} \
  bash "$here/../runtime/confirm_entries.sh" "$list" ".jit/models/confirm${2:+-$2}.db" "${1:-7}"
tail -5 "$OUT/confirm.log"
python3 "$here/../../python/cudal2/store_csv.py" export ".jit/models/confirm${2:+-$2}.db" "$OUT/store" >/dev/null &&
  tar czf "$OUT/models-confirm${2:+-$2}.tgz" -C "$OUT" store confirm-list.txt && rm -rf "$OUT/store" "$OUT/confirm-list.txt"
gzip -c "$OUT/confirm.log" > "$OUT/confirm${2:+-$2}.log.gz" && rm -f "$OUT/confirm.log"
ls -la "$OUT"
