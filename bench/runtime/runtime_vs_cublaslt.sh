#!/usr/bin/env bash
# libcudal2_runtime against cuBLASLt, measured by the evaluator in one process on the same inputs:
# `cudal2 bench` with the runtime-nn/tn methods (the library loaded from $CUDAL2_RUNTIME_LIB, built
# with the table under test) beside cuBLASLt auto-tuning and heuristic, NN and TN, offline and
# server mode (cold L2, random gaps), graph, eager and host timers, every output verified.
#   bash bench/runtime/runtime_vs_cublaslt.sh NAME SHAPE-OPTIONS...
#   e.g. bash bench/runtime/runtime_vs_cublaslt.sh offgrid --shapes bench/shapes/llm_offgrid.txt
#        bash bench/runtime/runtime_vs_cublaslt.sh grid-0of20 --grid paper --shard 0/20
# Writes $OUT/runtime-NAME.csv (tidy rows) and .log; summarize with bench/runtime/summarize_runtime.py.
# $CUDAL2_RUNTIME_LIB_B and _C, when set, add methods runtime-b-* and runtime-c-*: other builds of
# the library (other tables) in the same process (summarize_runtime.py --runtime runtime-b).
# $MODE (both), $REPS (20) and $TIMERS (graph,eager,host) narrow the run; $BASELINES (auto-tuning and
# the heuristic, NN and TN) names the cuBLASLt methods beside the runtime. Ratios are taken against
# auto-tuning (--reference); the CSV's paired_ratio column pairs each round's samples
# (docs/measuring.md). $CUDAL2_RUNTIME_LIB_B set to a copy of $CUDAL2_RUNTIME_LIB's file under
# another path (a second instance; the same path would load the same one) is an A/A run: what
# the noise alone does to the ratios.
set -uo pipefail
source "$(dirname "$0")/../device_env.sh" >/dev/null
name=$1
shift
B=${BUILD:-build}
: "${CUDAL2_RUNTIME_LIB:=$PWD/$B/src/runtime/libcudal2_runtime.so.0}"
export CUDAL2_RUNTIME_LIB
methods=runtime-nn,runtime-tn
[ -n "${CUDAL2_RUNTIME_LIB_B:-}" ] && methods+=,runtime-b-nn,runtime-b-tn
[ -n "${CUDAL2_RUNTIME_LIB_C:-}" ] && methods+=,runtime-c-nn,runtime-c-tn
t0=$(date +%s)
"$B/cudal2" bench "$@" --methods "$methods,${BASELINES:-cublaslt-autotune-nn,cublaslt-autotune-tn,cublaslt-heuristic-nn,cublaslt-heuristic-tn}" \
  --reference cublaslt-autotune-nn,cublaslt-autotune-tn --mode "${MODE:-both}" --reps "${REPS:-20}" --timers "${TIMERS:-graph,eager,host}" --qps "${QPS:-1000}" --verify-budget 3e7 \
  --csv "$OUT/runtime-$name.csv" --quiet > "$OUT/runtime-$name.log" 2>&1
echo "runtime bench $name rc=$? in $(( $(date +%s) - t0 ))s"
