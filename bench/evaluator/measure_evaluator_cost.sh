#!/usr/bin/env bash
# What the hardened evaluator costs (device tool): the same tuning run with the old in-process
# evaluator (BASE build, commit 809c6eb) and with the judge and confined runners (NEW build), each
# with a cold compile cache of its own; then cuBLASLt auto-tuning timed through the judge (beside
# an untrusted candidate) and by `cudal2 bench`, same shapes, same machine, one after the other.
#   bash bench/evaluator/measure_evaluator_cost.sh BASE_BUILD NEW_BUILD
set -uo pipefail
source "$(dirname "$0")/../device_env.sh"
BASE=$1 NEW=$2
tune=(tune --families tiny --space core --grid sample --timers graph --reps 8 --baselines cublas-nn,cublas-tn
      --budget "${BUDGET:-16}" --batch 4)
for b in ${SIDES:-BASE NEW}; do
  bin=$BASE; [ $b = NEW ] && bin=$NEW
  export CUDAL2_CACHE="$PWD/.jit/cache-cost-$b"; rm -rf "$CUDAL2_CACHE"
  t0=$(date +%s.%N)
  "$bin/cudal2" "${tune[@]}" --db "$OUT/tune-$b.db" > "$OUT/tune-$b.log" 2>&1
  rc=$?; t1=$(date +%s.%N)
  grep -A1 -E "timing-mismatch|inconsistent-time|implausible-time" "$OUT/tune-$b.log" | head -6 | cut -c1-240
  rm -f "$OUT/tune-$b.db"
  echo "$b rc=$rc wall=$(awk "BEGIN{print $t1 - $t0}") s; $(grep -E 'candidate\(s\):' "$OUT/tune-$b.log"); $(grep -E 'compile time' "$OUT/tune-$b.log")"
done
export CUDAL2_CACHE="$PWD/.jit/cache"
lt=cublaslt-autotune-nn,cublaslt-autotune-tn
# bench before and after the judged job: their disagreement is the noise floor of two processes.
"$NEW/cudal2" bench --grid sample --methods $lt --reps 20 --csv "$OUT/bench.csv" > "$OUT/bench.log" 2>&1
echo "bench rc=$?"
"$NEW/cudal2" eval --spec "tiny tn f32 tile=16x16x32 warps=1x1 kwarps=4 | splits=1" --grid sample \
  --reps 20 --baselines $lt --csv "$OUT/judge.csv" --db "$OUT/judge.db" > "$OUT/judge.log" 2>&1; echo "judge eval rc=$?"
"$NEW/cudal2" bench --grid sample --methods $lt --reps 20 --csv "$OUT/bench-after.csv" > "$OUT/bench-after.log" 2>&1
echo "bench-after rc=$?"
python3 bench/evaluator/compare_baseline_timings.py "$OUT/judge.csv" "$OUT/bench.csv" "$OUT/bench-after.csv" \
  | tee "$OUT/baseline_agreement.txt"
