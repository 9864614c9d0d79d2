#!/usr/bin/env bash
# The device runs behind bench/results/h200/small-skinny/ (our own small/skinny kernel families).
# Run by the device tool over carried build/cudal2, build/tests/cudal2_gpu_tests and CUTLASS's
# headers, like bench/h200/sm90_core_search.sh:   bash bench/h200/small_skinny_campaign.sh STEP...
# STEP: tests      the GPU tests of the mma and tiny families
#       search     tune tiny on small shapes and mma on small and skinny shapes (graph timer),
#                  store .jit/tune4.db seeded from the CSV export bench/results/h200/small-skinny/tune4/
#                  (python/cudal2/store_csv.py); comes back as $OUT/tune4/, the same export
#       portfolio  each search shape's fastest mma and tiny spec, plus the fastest sm90_cutlass
#                  spec of each small/skinny sample shape from the sm90 search store (h200/sm90-core-search/tune): .jit/portfolio.txt
#       campaignI  (I = 0..SHARDS-1) every small-or-skinny shape of the paper's grid: the portfolio
#                  against cuBLAS and cuBLASLt auto-tuning (NN and TN), all timers, offline and server;
#                  resumes from bench/results/h200/small-skinny/campaign<I>.csv
set -uo pipefail
source "$(dirname "$0")/../device_env.sh"
R=bench/results/h200/small-skinny
DB=.jit/tune4.db
[ -f "$DB" ] || { [ -d "$R/tune4" ] && python3 python/cudal2/store_csv.py import "$R/tune4" "$DB"; }
search=(--timers graph --reps 8 --baselines cublas-nn,cublas-tn --verify-budget 6.7e7 --batch 24 --db "$DB")
for step in "$@"; do
  t0=$(date +%s)
  case "$step" in
    tests)
      ./build/tests/cudal2_gpu_tests --gtest_filter="${GTEST_FILTER:-Mma*:Tiny*}" > "$OUT/gpu_tests4.log" 2>&1
      echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED" "$OUT/gpu_tests4.log" | tail -8 ;;
    search)
      ./build/cudal2 tune --families tiny --shapes bench/shapes/own_families_small.txt "${search[@]}" \
        --budget-minutes "${MINUTES:-3}" > "$OUT/search-tiny.log" 2>&1
      echo "tiny rc=$?"; grep -E "left to evaluate|candidate\(s\):|compile time" "$OUT/search-tiny.log"
      ./build/cudal2 tune --families mma --shapes bench/shapes/own_families_small.txt --shapes bench/shapes/own_families_skinny.txt \
        "${search[@]}" --budget-minutes "${MINUTES:-3}" > "$OUT/search-mma.log" 2>&1
      echo "mma rc=$?"; grep -E "left to evaluate|candidate\(s\):|compile time" "$OUT/search-mma.log"
      python3 python/cudal2/store_csv.py export "$DB" "$OUT/tune4" ;;
    portfolio)
      { python3 bench/cublaslt/portfolio.py "$DB" --top "${TOP:-1}" --families mma,tiny
        python3 bench/cublaslt/portfolio.py bench/results/h200/sm90-core-search/tune --top 1 --families sm90_cutlass \
          --shapes <(grep -hv '^#' bench/shapes/own_families_small.txt bench/shapes/own_families_skinny.txt); } > .jit/portfolio.txt
      cp .jit/portfolio.txt "$OUT/portfolio.txt"; wc -l < .jit/portfolio.txt ;;
    campaign*)
      i=${step#campaign}; csv="$OUT/campaign$i.csv"
      [ -f "$R/campaign$i.csv" ] && cp "$R/campaign$i.csv" "$csv"
      [ -f .jit/portfolio.txt ] || cp "$R/portfolio.txt" .jit/portfolio.txt
      args=(); while IFS= read -r s; do [ -n "$s" ] && args+=(--spec "$s"); done < .jit/portfolio.txt
      timeout "${STEP_TIMEOUT:-500}" ./build/cudal2 eval "${args[@]}" --grid paper --class small,skinny \
        --shard "$i/${SHARDS:-2}" --mode both --qps 1000 --reps 7 --verify-budget 3.4e7 --batch 64 --timeout 60 \
        --db .jit/campaign.db --csv "$csv" > "$OUT/campaign$i.log" 2>&1
      echo "campaign$i rc=$? rows=$(grep -vc '^#' "$csv")" ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
  echo "[$step took $(( $(date +%s) - t0 ))s]"
done
