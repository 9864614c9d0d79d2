#!/usr/bin/env bash
# Device-tool steps of the stream family's campaign (src/kernels/stream_gemm.cuh,
# src/runtime/stream_rule.hpp), over a carried build. Every number is the product's own evaluator.
#   bash bench/stream/stream_call.sh runtime SHAPES TAG [MODE]
#       `cudal2 bench` of the runtime (runtime-nn, runtime-tn) beside cuBLASLt auto-tuning (NN, TN)
#       on SHAPES, offline (graph and chain timers) or server (MODE=server: graph timer, L2 flushed,
#       idle gaps), 10 samples: $OUT/TAG.csv.gz and the console table in $OUT/TAG.log. SETTLE=1:
#       every offline sample starts from the L2 the method's own calls leave (cudal2 bench --settle,
#       docs/measuring.md: how the bandwidth summaries are measured since bandwidth/keep/).
#   bash bench/stream/stream_call.sh explore LIST MINUTES TAG
#       `cudal2 eval --spec-list LIST` (stream candidates beside auto-tuning, through the judge):
#       bench/lat/lat_call.sh confirm with the graph and chain timers.
#   bash bench/stream/stream_call.sh profile
#       Nsight Compute on three decode shapes of the stream class, the runtime's stream kernel
#       against cuBLASLt's heuristic kernel (DRAM throughput, occupancy, stalls): $OUT/profiles.tgz.
#   bash bench/stream/stream_call.sh decode TAG
#       A Llama-3-8B decode step (4 decoder layers: attention projections, attention over a
#       512-position cache, MLP) at batch 1 and 8, nn.Linear against cudal2.patch, eager and CUDA
#       graph (bench/product/torch_model_forward.py --decode 512), the Python package built here
#       against this machine's PyTorch: $OUT/TAG.csv and $OUT/TAG.txt. DECODE_ARGS=--nn: the
#       weights stored in x out, torch.matmul against cudal2.mm (the NN layout).
#   bash bench/stream/stream_call.sh ceiling SHAPES TAG
#       `cudal2 read-ceiling`: the read kernel over each shape's weight bytes, back to back and
#       cold (the per-shape ceiling): $OUT/TAG.csv and $OUT/TAG.txt.
#   bash bench/stream/stream_call.sh tests
#       The runtime's stream GPU tests (RuntimeGpu.Stream*: odd shapes, PDL chains): $OUT/gpu_tests_stream.log.
set -uo pipefail
here=$(dirname "$0")
source "$here/../device_env.sh" >/dev/null
B=${BUILD:-build}
export CUDAL2_CLI=$PWD/$B/cudal2
case "${1:-}" in
  runtime)
    mode=${4:-offline}
    timers=graph,chain
    [ "$mode" = server ] && timers=graph
    "$B/cudal2" bench --shapes "$2" --methods "${METHODS:-runtime-nn,runtime-tn,cublaslt-autotune-nn,cublaslt-autotune-tn}" \
      --mode "$mode" --timers "$timers" --reps "${REPS:-10}" ${SETTLE:+--settle} --csv "$OUT/$3.csv" >"$OUT/$3.log" 2>&1
    echo "bench $3 rc=$?"
    grep -E "^cudal2 bench:|^== " "$OUT/$3.log" | head -3
    gzip -f "$OUT/$3.csv" ;;
  explore)
    TIMERS=${TIMERS:-graph,chain} BASELINES=${BASELINES:-cublaslt-autotune-nn,cublaslt-autotune-tn} REPS=${REPS:-10} \
      bash "$here/../lat/lat_call.sh" confirm "$2" "$3" "$4" ;;
  profile)
    KERNEL_REGEX=stream_gemm_kernel PROFILES=${PROFILES:-"st-1x14336x4096|1,14336,4096|@runtime-tn;lt-1x14336x4096|1,14336,4096|@cublaslt-heuristic-tn;st-8x4096x14336|8,4096,14336|@runtime-tn;lt-8x4096x14336|8,4096,14336|@cublaslt-heuristic-tn;st-4x20480x7168|4,20480,7168|@runtime-tn;lt-4x20480x7168|4,20480,7168|@cublaslt-heuristic-tn"} \
      bash "$here/../lat/profile_lat.sh"
    tar czf "$OUT/profiles.tgz" -C "$OUT" $(cd "$OUT" && ls prof-*.txt) && rm -f "$OUT"/prof-*.txt ;;
  decode)
    LIB=$PWD/$B/src/runtime/libcudal2_runtime.so.0
    rm -rf .jit/wheel .jit/site
    CUDAL2_RUNTIME_LIB="$LIB" python3 -m pip wheel -q --no-deps --no-build-isolation -w .jit/wheel ./python >"$OUT/$2-build.log" 2>&1 &&
      python3 -m pip install -q --no-deps --target .jit/site .jit/wheel/cudal2-*.whl >>"$OUT/$2-build.log" 2>&1 ||
      { echo "python package build failed"; tail -20 "$OUT/$2-build.log"; exit 1; }
    PYTHONPATH=$PWD/.jit/site${PYTHONPATH:+:$PYTHONPATH} python3 bench/product/torch_model_forward.py --decode 512 \
      --batches 1,8 --blocks 4 --reps "${REPS:-30}" ${DECODE_ARGS:-} --csv "$OUT/$2.csv" >"$OUT/$2.txt" 2>&1
    echo "decode rc=$?"
    rm -f "$OUT/$2-build.log"
    cat "$OUT/$2.txt" ;;
  ceiling)
    # The per-shape read ceiling (cudal2 read-ceiling): the read kernel over each shape's weight bytes.
    "$B/cudal2" read-ceiling --shapes "$2" --reps "${REPS:-9}" --csv "$OUT/$3.csv" | tee "$OUT/$3.txt" ;;
  tests)
    LD_LIBRARY_PATH=$PWD/$B/src/runtime:$LD_LIBRARY_PATH "$B/tests/cudal2_gpu_tests" --gtest_filter='RuntimeGpu.Stream*' 2>&1 |
      tee "$OUT/gpu_tests_stream.log" |
      grep -E "^\[|wrong|FAIL|links" ;;
  *) echo "usage: bench/stream/stream_call.sh runtime SHAPES TAG [MODE] | explore LIST MINUTES TAG | profile | decode TAG | ceiling SHAPES TAG | tests" >&2; exit 2 ;;
esac
