#!/usr/bin/env bash
# Device-tool steps of the lat family's campaign (src/kernels/lat_gemm.cuh), over a carried build:
#   bash bench/lat/lat_call.sh tests              GPU tests of the family (odd shapes, PDL chains)
#   bash bench/lat/lat_call.sh tune SHAPES SPACE MINUTES [TAG]
#       `cudal2 tune` of the specs listed in SPACE on SHAPES through the judge, beside cuBLASLt's
#       auto-tuning (NN and TN) in every job, into .jit/lat/TAG.db (resumable: carry it back);
#       the store comes back as gzipped CSV ($OUT/TAG-store.tgz).
#   bash bench/lat/lat_call.sh confirm LIST MINUTES [TAG]
#       `cudal2 eval --spec-list LIST`: each shape's candidates side by side in one job with
#       auto-tuning as the baseline (the table's entry and our runners-up), into .jit/lat/TAG.db.
#       TIMERS (default graph) and BASELINES (default cuBLASLt heuristic and auto-tuning, NN and
#       TN; add runtime-nn,runtime-tn for the shipped table's kernel beside them) are passed on, and
#       EVAL_ARGS (e.g. --back-to-back) is added to the command line.
# Here, afterwards: tar xzf FILES/TAG-store.tgz -C /tmp && python3 python/cudal2/store_csv.py import /tmp/TAG-store TAG.db
set -uo pipefail
source "$(dirname "$0")/../device_env.sh" >/dev/null
B=${BUILD:-build}
export CUDAL2_CLI=$PWD/$B/cudal2
mkdir -p .jit/lat
baselines=cublaslt-heuristic-nn,cublaslt-heuristic-tn,cublaslt-autotune-nn,cublaslt-autotune-tn
ship_store() {  # TAG DB
  python3 "$(dirname "$0")/../../python/cudal2/store_csv.py" export "$2" "$OUT/$1-store" >/dev/null &&
    tar czf "$OUT/$1-store.tgz" -C "$OUT" "$1-store" && rm -rf "$OUT/$1-store"
}
case "${1:-}" in
  tests)
    "$B/tests/cudal2_gpu_tests" --gtest_filter='LatGpu.*' 2>&1 | tee "$OUT/gpu_tests_lat.log" | grep -E "^\[|wrong|FAIL|links" ;;
  tune)
    tag=${5:-lat}
    db=.jit/lat/$tag.db
    "$B/cudal2" tune --shapes "$2" --families lat --space "@$3" --timers graph --mode offline --reps 10 \
      --verify-budget 3e7 --batch 16 --timeout 30 --budget-minutes "$4" --baselines "$baselines" --db "$db" \
      --csv "$OUT/$tag.csv" >"$OUT/$tag-tune.log" 2>&1
    echo "tune rc=$?"
    grep -E "candidate\(s\) left|throughput|compile time" "$OUT/$tag-tune.log" | tail -4
    gzip -f "$OUT/$tag.csv"
    ship_store "$tag" "$db" ;;
  confirm)
    tag=${4:-confirm}
    db=.jit/lat/$tag.db
    "$B/cudal2" eval --spec-list "$2" --timers "${TIMERS:-graph}" --mode offline --reps "${REPS:-20}" \
      --verify-budget 3e7 --timeout 30 --budget-minutes "$3" --baselines "${BASELINES:-$baselines}" --db "$db" \
      --csv "$OUT/$tag.csv" ${EVAL_ARGS:-} \
      >"$OUT/$tag-eval.log" 2>&1
    echo "eval rc=$?"
    tail -3 "$OUT/$tag-eval.log"
    gzip -f "$OUT/$tag.csv"
    ship_store "$tag" "$db" ;;
  *) echo "usage: bench/lat/lat_call.sh tests | tune SHAPES SPACE MINUTES [TAG] | confirm LIST MINUTES [TAG]" >&2; exit 2 ;;
esac
