#!/usr/bin/env bash
# Rebuild tables/h200-f32.json from its committed store (no GPU): the whole-grid rl search on the
# H200 (bench/results/h200/rl-grid/store), less the 7 (shape, layout) entries the runtime measured
# at least 3% slower than cuBLASLt's heuristic under both timers (drop list in
# bench/results/h200/runtime-grid/: those shapes go to the heuristic), then the transfer
# confirmations (bench/results/h200/transfer/store*, bench/h200/transfer_call.sh): the shapes they
# measured take their entry from those jobs alone (`cudal2 export --confirmed`), less the compiled
# picks a store's chain-filter log drops (bench/lat/lat_chain_filter.py).
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
for d in "$root"/bench/results/h200/transfer/store*/; do
  [ -d "$d" ] || continue
  n=$(basename "$d")
  python3 "$root/python/cudal2/store_csv.py" import "$d" "$tmp/$n.db" >/dev/null
  # A confirmation whose compiled picks lost under the chain timer in the runtime's fresh run
  # afterwards: its STORE-chain-filter-FAMILY.log lists them; they take the job's best cuBLASLt candidate.
  for f in "$root"/bench/results/h200/transfer/"$n"-chain-filter-*.log; do
    [ -f "$f" ] || continue
    fam=${f##*-chain-filter-}
    python3 "$root/bench/lat/lat_chain_filter.py" --family "${fam%.log}" --drop-list "$f" --store "$tmp/$n.db" >/dev/null
  done
  confirmed+=(--confirmed "$tmp/$n.db")
done
"$B/cudal2" export --db "$tmp/grid.db" "${confirmed[@]}" --out "$out" >/dev/null
echo "wrote $out"
