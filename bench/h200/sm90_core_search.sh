#!/usr/bin/env bash
# The device runs behind bench/results/h200/sm90-core-search/ (kernel space, sandboxed evaluator, tuner).
# Run by the device tool over carried build/cudal2, build/tests/cudal2_gpu_tests and CUTLASS's
# headers (.venv/.../cutlass_library/source/{include,tools/util/include}):
#   bash bench/h200/sm90_core_search.sh STEP...
# STEP: tests       the GPU test suite
#       tune        exhaustive search of the sm90_cutlass core space on the sample grid (graph timer),
#                   resumable: the store is .jit/tune.db, seeded from the CSV export bench/results/h200/sm90-core-search/tune/
#                   (python/cudal2/store_csv.py); comes back as $OUT/tune/, the same export
#       killresume  kill -9 a tuning run (60 mma candidates, 2 shapes) mid-way, rerun the same command,
#                   count what the store holds: (rows, specs) must grow by exactly what was left
#       final       each sample shape's 3 fastest specs per layout vs the baselines, every timer, both modes
# Everything it writes comes back under $OUT.
set -uo pipefail
source "$(dirname "$0")/../device_env.sh"
R=bench/results/h200/sm90-core-search
DB=.jit/tune.db
[ -f "$DB" ] || { [ -d "$R/tune" ] && python3 python/cudal2/store_csv.py import "$R/tune" "$DB"; }
space=(--grid sample --space core --families "${FAMILIES:-sm90_cutlass}")
search=(--timers graph --reps 10 --baselines cublas-nn,cublas-tn --verify-budget 6.7e7)
count() { python3 -c "import sys; sys.path.insert(0, 'bench'); from _analysis import measurement_counts; print(measurement_counts(sys.argv[1]))" "$1"; }
for step in "$@"; do
  t0=$(date +%s)
  case "$step" in
    tests)
      ./build/tests/cudal2_gpu_tests ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} > "$OUT/gpu_tests.log" 2>&1
      echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED" "$OUT/gpu_tests.log" | tail -8 ;;
    tune)
      ./build/cudal2 tune "${space[@]}" "${search[@]}" --db "$DB" --batch 16 --budget-minutes "${MINUTES:-6}" > "$OUT/tune.log" 2>&1
      echo "tune rc=$?"; grep -E "left to evaluate|candidate\(s\):|compile time" "$OUT/tune.log"; python3 python/cudal2/store_csv.py export "$DB" "$OUT/tune" ;;
    killresume)
      kr=(tune --shape 1024,1024,1024 --shape 64,4096,4096 --families mma --budget 60 "${search[@]}" --batch 4 --db .jit/kr.db)
      rm -f .jit/kr.db*
      ./build/cudal2 "${kr[@]}" > "$OUT/kr1.log" 2>&1 & pid=$!
      sleep "${KILL_AFTER:-100}"; kill -9 $pid; wait $pid 2>/dev/null
      echo "killed after ${KILL_AFTER:-100}s: (rows, specs) = $(count .jit/kr.db)"
      ./build/cudal2 "${kr[@]}" > "$OUT/kr2.log" 2>&1
      echo "rerun rc=$?: $(grep 'left to evaluate' "$OUT/kr2.log"); (rows, specs) = $(count .jit/kr.db)"
      ./build/cudal2 "${kr[@]}" > "$OUT/kr3.log" 2>&1
      echo "third run: $(grep 'left to evaluate' "$OUT/kr3.log")" ;;
    final)
      ./build/cudal2 tune "${space[@]}" "${search[@]}" --db "$DB" --skip-search --final-top 3 --final-reps 30 \
        --final-csv "$OUT/final.csv" > "$OUT/final.log" 2>&1
      echo "final rc=$?"; tail -3 "$OUT/final.log"; python3 python/cudal2/store_csv.py export "$DB" "$OUT/tune" ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
  echo "[$step took $(( $(date +%s) - t0 ))s]"
done
