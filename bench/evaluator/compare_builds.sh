#!/usr/bin/env bash
# Two builds of cudal2 on one GPU in one call (device tool): does a change meant to keep behaviour
# (a restructuring) keep the results? Same machine, one call:
#  1. the same seeded sample tune with each build (random search over the tiny, lat and wgmma
#     families' core space on the sample grid, every output verified; each build with a cold
#     compile cache and a store of its own): same specs proposed, same verdicts, times within noise;
#  2. both builds' libcudal2_runtime in ONE `cudal2 bench` process (runtime-* = NEW, runtime-b-* =
#     BASE) against cuBLASLt auto-tuning, on the sample grid and on every 8th shape whose table
#     entry runs one of our compiled kernels (wgmma, lat): the kernels the table ships, old and new.
# Writes into $OUT: tune-{BASE,NEW}.{log,csv}, runtime.{csv,log}, summary.txt. The whole sample
# grid takes each tune about 8 minutes on the H100 (40 candidates, auto-tuning in every job):
# TUNE_SHAPES=FILE tunes those shapes instead, BUDGET=N proposes N specs, TUNE=0 skips the tunes,
# RUNTIME=0 skips step 2 (a change that leaves libcudal2_runtime alone), TUNE_ARGS adds options to
# both tunes.
#   bash bench/evaluator/compare_builds.sh BASE_BUILD NEW_BUILD
set -uo pipefail
source "$(dirname "$0")/../device_env.sh" >/dev/null
BASE=$1 NEW=$2
here=$(cd "$(dirname "$0")" && pwd)
where=(--grid sample)
[ -n "${TUNE_SHAPES:-}" ] && where=(--shapes "$TUNE_SHAPES")
tune=(tune "${where[@]}" --families tiny,lat,wgmma --space core --search random --seed 7 --budget "${BUDGET:-40}"
      --timers graph --reps 10 --baselines cublaslt-autotune-nn,cublaslt-autotune-tn --batch 8)
# shellcheck disable=SC2206  # TUNE_ARGS: more options for both tunes (e.g. --round 2: several rounds)
[ -n "${TUNE_ARGS:-}" ] && tune+=(${TUNE_ARGS})
for side in $([ "${TUNE:-1}" = 0 ] || echo BASE NEW); do
  bin=$BASE; [ $side = NEW ] && bin=$NEW
  export CUDAL2_CACHE="$PWD/.jit/cache-compare-$side"; rm -rf "$CUDAL2_CACHE"
  t0=$(date +%s)
  CUDAL2_CLI="$PWD/$bin/cudal2" "$bin/cudal2" "${tune[@]}" --db "/tmp/compare-$side.db" --csv "$OUT/tune-$side.csv" \
    > "$OUT/tune-$side.log" 2>&1
  echo "tune $side rc=$? in $(( $(date +%s) - t0 ))s: $(grep -E 'candidate\(s\):' "$OUT/tune-$side.log" | tail -1)"
  rm -f "/tmp/compare-$side.db"*
done
export CUDAL2_CACHE="$PWD/.jit/cache"
if [ "${RUNTIME:-1}" = 0 ]; then
  python3 "$here/compare_builds.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi
shapes=/tmp/compare-shapes.txt
python3 - "$shapes" <<'PY'
import json, sys
t = json.load(open("tables/h100-f32.json"))
ks = t["kernels"]
ours = sorted({(e["m"], e["n"], e["k"]) for e in t["entries"]
               if "run" in e and ks[e["run"]["kernel"]].split()[0] in ("wgmma", "wgmma_swapab", "lat")})
with open(sys.argv[1], "w") as f:
    f.write("# every 8th table shape on one of our kernels\n")
    f.writelines(f"{m},{n},{k}\n" for m, n, k in ours[::8])
PY
rt=(--methods runtime-nn,runtime-tn,runtime-b-nn,runtime-b-tn,cublaslt-autotune-nn,cublaslt-autotune-tn
    --reference cublaslt-autotune-nn,cublaslt-autotune-tn --mode offline --timers graph --reps 15 --verify-budget 3e7)
CUDAL2_RUNTIME_LIB="$PWD/$NEW/src/runtime/libcudal2_runtime.so.0" \
CUDAL2_RUNTIME_LIB_B="$PWD/$BASE/src/runtime/libcudal2_runtime.so.0" \
  "$NEW/cudal2" bench --grid sample --shapes "$shapes" "${rt[@]}" --csv "$OUT/runtime.csv" > "$OUT/runtime.log" 2>&1
echo "runtime bench rc=$?"
python3 "$here/compare_builds.py" "$OUT" | tee "$OUT/summary.txt"
