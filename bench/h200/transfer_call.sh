#!/usr/bin/env bash
# The H200's table seeded from the H100's (GPU machine, one device call): for every paper shape,
# furthest behind auto-tuning first (the H200 runtime-grid run), one confirmation job times side by
# side the H200 table's entry, the H100 table's entry (compiled kernels included: they compile on
# this machine), the H100 cuBLASLt-space grid campaign's 2 best runners-up per layout and cuBLASLt's
# heuristic suggestions (auto-tuning's own candidates), with auto-tuning and the heuristic as
# baselines (bench/runtime/confirm_entries.sh: graph timer, offline). Shapes measured by an earlier
# call's committed store (bench/results/h200/transfer/store*) are left out, so calls resume.
#   bash bench/h200/transfer_call.sh CALL MINUTES      (writes $OUT/transferCALL.tgz: storeCALL/, the lists, the log)
# (one archive: the device tool brings back at most 8 files from $OUT)
# $REPS (20): samples per candidate. $LIST: a spec list made here beforehand
# (bench/runtime/confirm_candidates.py) instead of the transfer list: a re-confirmation of chosen
# shapes, whose store then replaces their earlier confirmation in the export (the newest job wins).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
call=$1 minutes=$2
export BUILD=${BUILD:-.dev/build}
source bench/device_env.sh >/dev/null
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200" >&2; exit 3; }
excl=()
for d in bench/results/h200/transfer/store*/; do [ -d "$d" ] && excl+=(--exclude-store "$d"); done
if [ -n "${LIST:-}" ]; then
  cp "$LIST" "$OUT/list$call.txt"
else
  python3 bench/runtime/confirm_candidates.py \
    --runtime-csv bench/results/h200/runtime-grid/runtime-h200-grid.csv.xz --below 9 --build runtime \
    --table tables/h200-f32.json --table tables/h100-f32.json --compiled \
    --store bench/results/h100/grid-cublaslt/store --top 2 "${excl[@]}" > "$OUT/list$call.txt"
fi
REPS=${REPS:-20} bash bench/runtime/confirm_entries.sh "$OUT/list$call.txt" "$OUT/xfer$call.db" "$minutes"
mv "$OUT/confirm.log" "$OUT/confirm$call.log"
python3 python/cudal2/store_csv.py export "$OUT/xfer$call.db" "$OUT/store$call" &&
  tar czf "$OUT/transfer$call.tgz" -C "$OUT" "store$call" "list$call.txt" confirm-list.txt "confirm$call.log" &&
  rm -rf "$OUT/store$call" "$OUT/list$call.txt" "$OUT/confirm-list.txt" "$OUT/confirm-shapes.txt"
grep 'shapes measured' "$OUT/confirm$call.log" | tail -1
