#!/usr/bin/env bash
# Device-tool step: joint variations of cuBLASLt's configuration space on a few shapes
# (bench/h200/lt_joint_space.py), through the judge beside auto-tuning (NN and TN) and the shipped
# runtime, over a carried build:
#   bash bench/h200/lt_joint_call.sh SHAPES TAG
# SHAPES: lines `M,N,K LAYOUT` ('#' comments). Per shape, what `cudal2 lt-space --max 0` names for
# it, in three steps, each one `cudal2 eval --spec-list` of every shape (bench/lat/lat_call.sh
# confirm: graph and chain timers, $REPS samples, 10; $MINUTES each, 3):
#   tiles   every tile with cluster 1x1 and the custom options $CUSTOMS (0,1,2,3);
#   shapes  the $TOP_TILES (8) fastest tiles with every cluster shape and custom option;
#   knobs   the 5 fastest of those with every split count, stages id and swizzle.
# Writes $OUT/TAG.tgz: lt-space's listings, each step's list, eval CSV, log and store.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../device_env.sh" >/dev/null
B=${BUILD:-build}
shapes=$1 tag=$2
export TIMERS=graph,chain REPS=${REPS:-10}
export BASELINES=${BASELINES:-cublaslt-autotune-nn,cublaslt-autotune-tn,runtime-nn,runtime-tn}
work=$OUT/$tag
mkdir -p "$work"
step() {  # NAME: evaluates $work/NAME.txt
  echo "$1: $(wc -l <"$work/$1.txt") spec(s)"
  [ -s "$work/$1.txt" ] || return 0
  OUT=$work bash "$here/../lat/lat_call.sh" confirm "$work/$1.txt" "${MINUTES:-3}" "$1"
}
spaces=()
while read -r shape layout _; do
  case "$shape" in '' | '#'*) continue ;; esac
  sp="$work/space-${shape//,/x}-$layout.txt"
  "$B/cudal2" lt-space --shape "$shape" --layout "$layout" --max 0 --details >"$sp" 2>>"$work/space.log" ||
    { echo "lt-space $shape $layout failed"; continue; }
  spaces+=("$shape|$sp")
done <"$shapes"
for s in "${spaces[@]}"; do
  python3 "$here/lt_joint_space.py" product "${s#*|}" "${s%%|*}" --clusters 1x1 --customs "${CUSTOMS:-0,1,2,3}"
done >"$work/tiles.txt"
step tiles
for s in "${spaces[@]}"; do
  python3 "$here/lt_joint_space.py" product "${s#*|}" "${s%%|*}" --tiles-from "$work/tiles.csv.gz" --top "${TOP_TILES:-8}"
done >"$work/shapes.txt"
step shapes
for s in "${spaces[@]}"; do
  python3 "$here/lt_joint_space.py" refine "${s#*|}" "${s%%|*}" "$work/shapes.csv.gz" --top 5
done >"$work/knobs.txt"
step knobs
gzip -f "$work"/*.log "$work"/*.txt
tar czf "$OUT/$tag.tgz" -C "$OUT" "$tag" && rm -rf "$work"
