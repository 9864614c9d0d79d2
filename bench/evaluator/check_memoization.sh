#!/usr/bin/env bash
# Reuse of earlier results, old protocol against chained batches, on the GPU (device tool), over a
# carried build (builds nothing):
#   1. every adversarial candidate of tests/gpu/adversarial/ (old and new, memo_skip.cu for
#      k = 2..10), the honest twin and the naive control through `cudal2 eval`, chained (the
#      default): a verdict per candidate;
#   2. the reuse class (memo*.cu, the twin, the control) with `--back-to-back`, the old protocol:
#      what got through before (OLD_ALL=1: the whole suite, about 1.5 minutes more);
#   3. the cost: honest kernels (the twin, the naive control, four generated specs) and the
#      baselines timed by both protocols one after the other, and the wall time of each (tuning
#      throughput); the chain timer of every baseline and the runtime by `cudal2 bench`.
# Verdict tables, CSVs and logs go to OUT_DIR (default $OUT, else out/).
#   bash bench/evaluator/check_memoization.sh BUILD_DIR [OUT_DIR]
set -uo pipefail
B=$(cd "${1:-build}" && pwd) || exit 2
OUT=${2:-${OUT:-out}}
mkdir -p "$OUT/src" && OUT=$(cd "$OUT" && pwd)
export OUT
cd "$(dirname "$0")/../.."
source bench/device_env.sh
T0=$(date +%s)
phase() { echo "== $1 ($(( $(date +%s) - T0 )) s)"; }

# Candidates as files (the skip variants written out with their k), in the order eval prints them.
srcs=()
for f in tests/gpu/adversarial/*.cu; do
  if [ "$(basename "$f")" = memo_skip.cu ]; then
    for k in 2 3 4 5 6 7 8 9 10; do
      { echo "#define ADV_SKIP_K $k"; cat "$f"; } > "$OUT/src/memo_skip_k$k.cu"; srcs+=("$OUT/src/memo_skip_k$k.cu")
    done
  else
    srcs+=("$f")
  fi
done
srcs+=(tests/gpu/candidates/tiled.cu tests/gpu/candidates/naive.cu)
memo=()
for f in "${srcs[@]}"; do
  case $(basename "$f") in memo*|tiled.cu|naive.cu) memo+=("$f") ;; *) [ "${OLD_ALL:-0}" = 1 ] && memo+=("$f") ;; esac
done
args() { for f in "$@"; do printf -- '--source\n%s\n' "$f"; done; }
SHAPES=(--shape 256,256,256 --shape 200,136,520)

# Verdicts: eval prints one "HASH STATUS source ..." line per candidate, in input order.
verdicts() {  # LOG FILES...
  local log=$1; shift
  paste <(for f in "$@"; do basename "$f"; done) <(grep -E "^[0-9a-f]{16} " "$log" | awk '{print $1, $2}')
}

phase "1. chained (new): the whole adversarial suite"
mapfile -t a < <(args "${srcs[@]}")
"$B/cudal2" eval "${a[@]}" "${SHAPES[@]}" --reps 5 --timers graph,eager,host,chain --baselines cublas-nn \
  --batch 8 --timeout 10 --db "$OUT/new.db" --csv "$OUT/new.csv" > "$OUT/new.log" 2>&1
echo "eval rc=$?"
verdicts "$OUT/new.log" "${srcs[@]}" > "$OUT/new_verdicts.txt"

phase "2. back-to-back (old): the reuse class$([ "${OLD_ALL:-0}" = 1 ] && echo ' and the rest of the suite')"
mapfile -t a < <(args "${memo[@]}")
"$B/cudal2" eval "${a[@]}" "${SHAPES[@]}" --reps 5 --timers graph,eager,host --baselines cublas-nn \
  --batch 8 --timeout 10 --back-to-back --db "$OUT/old.db" --csv "$OUT/old.csv" > "$OUT/old.log" 2>&1
echo "eval rc=$?"
verdicts "$OUT/old.log" "${memo[@]}" > "$OUT/old_verdicts.txt"

phase "3. cost: honest kernels and baselines, both protocols"
specs=("wgmma nn f32 tile=128x128x64 cluster=1x1 stages=6 | raster=along_n swizzle=8"
       "wgmma nn f32 tile=64x128x64 cluster=1x1 stages=8 | splits=4"
       "mma nn f32 tile=64x64x32 warps=2x2 stages=3 | splits=4"
       "mma nn f32 tile=128x128x32 warps=2x4 stages=4 | splits=2")
honest=(tests/gpu/candidates/tiled.cu tests/gpu/candidates/naive.cu)
COST_SHAPES=(--shape 1024,1024,1024 --shape 200,136,520 --shape 4096,64,4096 --shape 256,256,256)
cost() {  # SIDE [--back-to-back]
  local side=$1; shift
  local s0; s0=$(date +%s.%N)
  for i in 0 1; do  # generated specs, then free-form sources (one eval each; the same jobs both sides)
    if [ $i = 0 ]; then mapfile -t a < <(for s in "${specs[@]}"; do printf -- '--spec\n%s\n' "$s"; done)
    else mapfile -t a < <(args "${honest[@]}"); fi
    "$B/cudal2" eval "${a[@]}" "${COST_SHAPES[@]}" --reps 10 --timers graph,eager,chain \
      --baselines cublas-nn,cublaslt-autotune-nn --batch 8 --timeout 30 "$@" --db "$OUT/cost-$side.db" \
      --csv "$OUT/cost-$side.csv" >> "$OUT/cost-$side.log" 2>&1
    echo "cost $side eval $i rc=$?"
  done
  echo "$side $(awk "BEGIN{print $(date +%s.%N) - $s0}")" >> "$OUT/cost_wall.txt"
}
rm -f "$OUT/cost_wall.txt" "$OUT"/cost-*.log
# Compile once first, so neither side pays for it.
mapfile -t a < <(for s in "${specs[@]}"; do printf -- '--spec\n%s\n' "$s"; done)
"$B/cudal2" eval "${a[@]}" --shape 256,256,256 --reps 1 --timers graph --baselines cublas-nn \
  --db "$OUT/warm.db" > "$OUT/warm.log" 2>&1
cost old --back-to-back
cost new
cost old2 --back-to-back  # again: what separates the sides beyond run-to-run noise

phase "4. the chain timer of every baseline and the runtime (cudal2 bench)"
"$B/cudal2" bench --shape 1024,1024,1024 --shape 200,136,520 --shape 4096,64,4096 --shape 64,64,64 \
  --methods cublas-nn,cublas-tn,cublaslt-heuristic-nn,cublaslt-autotune-nn,cublaslt-autotune-tn,torch-matmul,runtime-nn,runtime-tn \
  --timers graph,eager,chain --reps 15 --csv "$OUT/bench_chain.csv" > "$OUT/bench_chain.log" 2>&1
echo "bench rc=$?"

phase "summary"
python3 bench/evaluator/summarize_memoization.py "$OUT" | tee "$OUT/summary.txt"
phase "done"
