#!/usr/bin/env bash
# Rebuild tables/h200-f32.json from its committed store (no GPU): the whole-grid rl search on the
# H200 (bench/results/h200/rl-grid/store), less the 7 (shape, layout) entries the runtime measured
# at least 3% slower than cuBLASLt's heuristic under both timers (drop list in
# bench/results/h200/runtime-grid/: those shapes go to the heuristic), then the transfer
# confirmations (bench/results/h200/transfer/store*, bench/h200/transfer_call.sh): the shapes they
# measured take their entry from those jobs alone (`cudal2 export --confirmed`), less the compiled
# picks a store's chain-filter log drops and the entries its chain-revert logs send back to the job
# before (bench/lat/lat_chain_filter.py).
#   bash bench/h200/rebuild_h200_table.sh [OUT]   (default tables/h200-f32.json)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/tables/h200-f32.json}
B=${BUILD:-$root/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$root/python/cudal2/store_csv.py" import "$root/bench/results/h200/rl-grid/store" "$tmp/grid.db" >/dev/null
python3 "$root/bench/lat/lat_chain_filter.py" --drop-list "$root/bench/results/h200/runtime-grid/drop_list.txt" \
  --family cublaslt --store "$tmp/grid.db" >/dev/null
confirmed=()
# in call order (store2 before store10): the last store named wins a shape both measured
for d in $(printf '%s\n' "$root"/bench/results/h200/transfer/store*/ | sort -V); do
  [ -d "$d" ] || continue
  n=$(basename "$d")
  python3 "$root/python/cudal2/store_csv.py" import "$d" "$tmp/$n.db" >/dev/null
  # A confirmation whose compiled picks lost under the chain timer in a runtime run afterwards: its
  # STORE-chain-filter-FAMILY[-RUN].log lists them (one log per run that found some); they take the
  # job's best cuBLASLt candidate.
  # STORE-chain-revert-FAMILY.log: the store's picks that ran slower chained than the entries they
  # replaced; the store's measurements of those entries go, so they keep the entry from before it.
  # stores-chain-revert-FAMILY-RUN.log: reverted in every store up to store16 (back to the rl round's
  # entry). Those runs measured the rl round's heuristic entries as the runtime then ran them, tuned
  # in the background after their first call; the runtime now runs such an entry's heuristic as it
  # is, so a later confirmation (beside auto-tuning in its own job) decides those shapes again.
  logs=("$root"/bench/results/h200/transfer/{"$n"-chain-filter-,"$n"-chain-revert-}*.log)
  [ "${n#store}" -le 16 ] && logs+=("$root"/bench/results/h200/transfer/stores-chain-revert-*.log)
  for f in "${logs[@]}"; do
    [ -f "$f" ] || continue
    fam=${f##*-chain-filter-}
    revert=()
    case "$f" in *-chain-revert-*) fam=${f##*-chain-revert-} revert=(--revert) ;; esac
    fam=${fam%.log}
    python3 "$root/bench/lat/lat_chain_filter.py" --family "${fam%%-*}" "${revert[@]}" --drop-list "$f" \
      --store "$tmp/$n.db" >/dev/null
  done
  confirmed+=(--confirmed "$tmp/$n.db")
done
"$B/cudal2" export --db "$tmp/grid.db" "${confirmed[@]}" --out "$out" >/dev/null
echo "wrote $out"
