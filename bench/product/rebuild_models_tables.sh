#!/usr/bin/env bash
# Rebuild the models' tables the runtime ships from their committed confirmation stores (no GPU):
# each shape's entry chosen from its confirmation job alone (`cudal2 export --confirmed`), as
# bench/product/models_confirm_call.sh measured it (H100: the chained run; the back-to-back run
# beside it is kept for its comparison, bench/results/h100/models/README.md).
#   bash bench/product/rebuild_models_tables.sh [OUTDIR]   (default tables/)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/tables}
B=${BUILD:-$root/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build() {  # store folder, table name
  python3 "$root/python/cudal2/store_csv.py" import "$1" "$tmp/$2.db" >/dev/null
  "$B/cudal2" export --db "$tmp/$2.db" --confirmed "$tmp/$2.db" --out "$out/$2" >/dev/null
  echo "wrote $out/$2"
}
build "$root/bench/results/h100/models/confirm-store-chained" h100-models-f32.json
build "$root/bench/results/h200/models/confirm-store" h200-models-f32.json
