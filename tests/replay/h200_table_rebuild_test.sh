#!/usr/bin/env bash
# tables/h200-f32.json is what bench/h200/rebuild_h200_table.sh makes from the committed stores (the
# rl round, the transfer confirmations and their chain-filter logs): fails when the table was edited
# by hand, a store or log changed without re-exporting, or the export's choice changed.
#   bash tests/replay/h200_table_rebuild_test.sh REPO CLI_DIR
set -euo pipefail
root=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
BUILD=$2 bash "$root/bench/h200/rebuild_h200_table.sh" "$out" >/dev/null
if ! cmp -s "$out" "$root/tables/h200-f32.json"; then
  echo "tables/h200-f32.json differs from bench/h200/rebuild_h200_table.sh's rebuild of its stores" >&2
  exit 1
fi
echo "tables/h200-f32.json: the committed stores rebuild it byte for byte"
