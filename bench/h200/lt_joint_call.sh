#!/usr/bin/env bash
# Device-tool step: joint variations of cuBLASLt's configuration space on a few shapes
# (bench/h200/lt_joint_space.py), through the judge beside auto-tuning (NN and TN) and the shipped
# runtime, over a carried build:
#   bash bench/h200/lt_joint_call.sh SHAPES TAG [PRODUCT_MAX] [REFINE_MAX]
# SHAPES: lines `M,N,K LAYOUT` ('#' comments). Per shape: `cudal2 lt-space --max 0` (what cuBLASLt
# names for it), the product of tiles, clusters and custom options (at most PRODUCT_MAX, 200), then
# the fastest 5 of them with every split count, stages id and swizzle (at most REFINE_MAX, 120).
# Each step is one `cudal2 eval --spec-list` of every shape (bench/lat/lat_call.sh confirm: graph
# and chain timers, $REPS samples, 10), $MINUTES each (4). Writes $OUT/TAG-space.tgz (lt-space's
# listings), $OUT/TAG-{product,refine}.{txt,csv.gz}, the eval logs and stores.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../device_env.sh" >/dev/null
B=${BUILD:-build}
shapes=$1 tag=$2 pmax=${3:-200} rmax=${4:-120}
export TIMERS=graph,chain REPS=${REPS:-10}
export BASELINES=${BASELINES:-cublaslt-autotune-nn,cublaslt-autotune-tn,runtime-nn,runtime-tn}
spaces=()
: >"$OUT/$tag-product.txt"
: >"$OUT/$tag-refine.txt"
while read -r shape layout _; do
  case "$shape" in '' | '#'*) continue ;; esac
  sp="$tag-space-${shape//,/x}-$layout.txt"
  "$B/cudal2" lt-space --shape "$shape" --layout "$layout" --max 0 --details >"$OUT/$sp" 2>>"$OUT/$tag-space.log" ||
    { echo "lt-space $shape $layout failed"; continue; }
  spaces+=("$sp")
  python3 "$here/lt_joint_space.py" product "$OUT/$sp" "$shape" --max "$pmax" >>"$OUT/$tag-product.txt"
done <"$shapes"
wc -l <"$OUT/$tag-product.txt" | sed 's/^/product specs: /'
bash "$here/../lat/lat_call.sh" confirm "$OUT/$tag-product.txt" "${MINUTES:-4}" "$tag-product"
for sp in "${spaces[@]}"; do
  shape=$(echo "$sp" | sed -E 's/.*-space-([0-9]+)x([0-9]+)x([0-9]+)-.*/\1,\2,\3/')
  python3 "$here/lt_joint_space.py" refine "$OUT/$sp" "$shape" "$OUT/$tag-product.csv.gz" --top 5 --max "$rmax" \
    >>"$OUT/$tag-refine.txt"
done
wc -l <"$OUT/$tag-refine.txt" | sed 's/^/refine specs: /'
[ -s "$OUT/$tag-refine.txt" ] && bash "$here/../lat/lat_call.sh" confirm "$OUT/$tag-refine.txt" "${MINUTES:-4}" "$tag-refine"
tar czf "$OUT/$tag-space.tgz" -C "$OUT" "${spaces[@]}" "$tag-space.log" && (cd "$OUT" && rm -f "${spaces[@]}" "$tag-space.log")
for f in "$OUT/$tag"-*-eval.log; do gzip -f "$f"; done
