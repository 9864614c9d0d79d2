#!/usr/bin/env bash
# Rebuilds the H100 runtime table (tables/h100-f32.json) from the committed result stores, byte for
# byte as shipped, so that one more confirmation store can be added and the table re-exported.
#
#   bash bench/runtime/rebuild_h100_table.sh OUT.json [--confirmed EXTRA.db ...]
#
# What it does (no GPU; CPU and disk only, about a minute):
#   1. imports the committed CSV stores (python/cudal2/store_csv.py import) into $WORK:
#        grid.db     bench/results/h100/grid-cublaslt/store   (the cuBLASLt-space grid campaign)
#        wg.db       bench/results/h100/wgmma-grid/store      (wgmma / wgmma_swapab grid)
#        store1.db   bench/results/h100/confirm/store1        (confirmation round 1)
#        store2.db   bench/results/h100/confirm/store2        (confirmation round 2)
#        confirm{1,2,3}.db  bench/results/h100/lat/confirm{1,2,3}-store  (lat confirmation rounds)
#   2. removes from the three lat stores the lat measurements of the 108 (shape, layout) entries
#      that lost under the chain timer, as listed in bench/results/h100/lat/chain_filter.log
#      (bench/lat/lat_chain_filter.py --drop-list), and checks the counts (204, 120, 0);
#   3. imports the lat_staged confirmation (bench/results/h100/lat-staged/staged4-store) into
#      staged4.db and removes the lat_staged measurements of the entries the runtime run took back
#      (bench/results/h100/lat-staged/runtime_filter.txt: 16 measurements);
#   4. cudal2 export --db grid.db --db wg.db --confirmed store1.db --confirmed store2.db
#        --confirmed confirm1.db --confirmed confirm2.db --confirmed confirm3.db --confirmed staged4.db
#        [--confirmed EXTRA ...] --out OUT.json
#      Extra --confirmed stores go after the eight, in the order given (newest last); an EXTRA that is
#      a store_csv folder (has schema.sql) is imported into $WORK first, a .db file is used as is.
#   5. without extra stores, compares OUT.json with tables/h100-f32.json (cmp) and fails on a difference.
#
# Environment: WORK (working folder for the imported stores; default: a fresh mktemp -d, removed at the
# end unless KEEP=1), CUDAL2_CLI (default build/cudal2), PYTHON (default python3).
# Run from anywhere; paths are resolved against the repository root.
set -euo pipefail

usage() { sed -n '2,5p' "$0" >&2; exit 2; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[[ $# -ge 1 && "$1" != -* ]] || usage
OUT="$1"; shift
[[ "$OUT" = /* ]] || OUT="$PWD/$OUT"
EXTRA=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --confirmed) [[ $# -ge 2 ]] || usage; p="$2"; [[ "$p" = /* ]] || p="$PWD/$p"; EXTRA+=("$p"); shift 2 ;;
    *) usage ;;
  esac
done

CLI="${CUDAL2_CLI:-build/cudal2}"
[[ "$CLI" = /* ]] || CLI="$ROOT/$CLI"
[[ -x "$CLI" ]] || { echo "rebuild_h100_table: no CLI at $CLI (set CUDAL2_CLI)" >&2; exit 1; }
PY="${PYTHON:-python3}"
if [[ -n "${WORK:-}" ]]; then
  mkdir -p "$WORK"; WORK="$(cd "$WORK" && pwd)"
else
  WORK="$(mktemp -d)"
  [[ "${KEEP:-0}" = 1 ]] || trap 'rm -rf "$WORK"' EXIT
fi
R="$ROOT/bench/results/h100"
cd "$ROOT"

import_store() {  # import DIR DB: a fresh copy every time (store_csv refuses to overwrite)
  rm -f "$2" "$2-wal" "$2-shm"
  "$PY" python/cudal2/store_csv.py import "$1" "$2"
}

echo "rebuild_h100_table: importing the stores into $WORK"
import_store "$R/grid-cublaslt/store" "$WORK/grid.db"
import_store "$R/wgmma-grid/store" "$WORK/wg.db"
import_store "$R/confirm/store1" "$WORK/store1.db"
import_store "$R/confirm/store2" "$WORK/store2.db"
for i in 1 2 3; do import_store "$R/lat/confirm$i-store" "$WORK/confirm$i.db"; done

echo "rebuild_h100_table: removing the lat entries that lost under the chain timer"
"$PY" bench/lat/lat_chain_filter.py --drop-list "$R/lat/chain_filter.log" \
  --store "$WORK/confirm1.db" --store "$WORK/confirm2.db" --store "$WORK/confirm3.db" | tee "$WORK/chain_filter.log"
removed="$(grep -Eo '[0-9]+ lat measurement' "$WORK/chain_filter.log" | cut -d' ' -f1 | paste -sd' ')"
if [[ "$removed" != "204 120 0" ]]; then
  echo "rebuild_h100_table: removed $removed lat measurements, chain_filter.log says 204 120 0" >&2
  exit 1
fi

echo "rebuild_h100_table: the lat_staged confirmation, less the entries the runtime run took back"
import_store "$R/lat-staged/staged4-store" "$WORK/staged4.db"
"$PY" bench/lat/lat_chain_filter.py --family lat_staged --drop-list "$R/lat-staged/runtime_filter.txt" \
  --store "$WORK/staged4.db" | tee "$WORK/staged_filter.log"
removed="$(grep -Eo '[0-9]+ lat_staged measurement' "$WORK/staged_filter.log" | cut -d' ' -f1)"
if [[ "$removed" != "16" ]]; then
  echo "rebuild_h100_table: removed $removed lat_staged measurements, expected 16" >&2
  exit 1
fi

CONFIRMED=(--confirmed "$WORK/store1.db" --confirmed "$WORK/store2.db"
           --confirmed "$WORK/confirm1.db" --confirmed "$WORK/confirm2.db" --confirmed "$WORK/confirm3.db"
           --confirmed "$WORK/staged4.db")
n=0
for e in "${EXTRA[@]+"${EXTRA[@]}"}"; do
  if [[ -d "$e" && -f "$e/schema.sql" ]]; then
    n=$((n + 1)); import_store "$e" "$WORK/extra$n.db"; e="$WORK/extra$n.db"
  fi
  [[ -f "$e" ]] || { echo "rebuild_h100_table: no store $e" >&2; exit 1; }
  CONFIRMED+=(--confirmed "$e")
done

mkdir -p "$(dirname "$OUT")"
echo "rebuild_h100_table: exporting"
"$CLI" export --db "$WORK/grid.db" --db "$WORK/wg.db" "${CONFIRMED[@]}" --out "$OUT"

if [[ ${#EXTRA[@]} -eq 0 ]]; then
  if cmp "$OUT" tables/h100-f32.json; then
    echo "rebuild_h100_table: $OUT is byte-identical to tables/h100-f32.json"
  else
    echo "rebuild_h100_table: $OUT differs from tables/h100-f32.json" >&2
    exit 1
  fi
fi
