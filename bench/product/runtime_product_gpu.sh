#!/usr/bin/env bash
# The product as a user meets it, measured on the GPU machine in about 5 minutes (H100):
#   bash bench/product/runtime_product_gpu.sh OUT_DIR
# Needs a build of this checkout ($BUILD, default build/: cudal2, libcudal2_runtime) made on or for
# that machine, and PyTorch in python3 ($CUDAL2_PYTHON overrides). Writes into OUT_DIR:
#   sample.csv/.txt        the README's command, `cudal2 bench --grid sample` with the default methods
#                          (cuBLAS, cuBLASLt, torch.matmul, the runtime); "unsupported" rows counted
#   torch_op.csv/.txt      cudal2.mm vs torch.matmul: graph, eager and host time per call, sample grid
#                          NN/TN, 20 LLM shapes, the 91 models_offgrid shapes (bench/product/torch_op_vs_matmul.py)
#   model_forward.csv/.txt 4 Llama-3-8B MLP blocks at batch 1, 16, 512: nn.Linear vs cudal2.patch,
#                          eager and CUDA graph (bench/product/torch_model_forward.py)
#   bucket_rule.csv/.txt   the runtime's M bucket rule: up (default), nearest, off against auto-tuning
#                          on bench/shapes/bucket_rule.txt (grid (N, K), M between grid M)
#   offgrid.csv/.txt       the off-grid target: the runtime as built, and with CUDAL2_TUNE_UNSEEN=1,
#                          against auto-tuning on bench/shapes/models_offgrid.txt (three models)
#   summary.txt            the headline numbers of all of the above
# The torch.matmul plugin and the Python package are built here against this machine's PyTorch
# (in .jit/, git-ignored): a plugin built elsewhere links another libtorch.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: runtime_product_gpu.sh OUT_DIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export OUT
source bench/device_env.sh >/dev/null
B=${BUILD:-build}
PY=${CUDAL2_PYTHON:-python3}
LIB=$PWD/$B/src/runtime/libcudal2_runtime.so.0
step() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/summary.txt"; }
T0=$(date +%s)
: > "$OUT/summary.txt"
[ -x "$B/cudal2" ] && [ -f "$LIB" ] || { echo "no $B/cudal2 or $LIB: build first (bash scripts/build.sh)"; exit 1; }
"$B/cudal2" --help >/dev/null || exit 1
step "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); torch $("$PY" -c 'import torch; print(torch.__version__)')"

# 1. The torch.matmul plugin against this PyTorch, and the Python package (C++ op) the same way.
cmake -S plugins/torch -B .jit/build-torch -DCUDAL2_PYTHON="$(command -v "$PY")" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build .jit/build-torch -j "$(nproc)" >/dev/null || { echo "torch plugin build failed"; exit 1; }
export CUDAL2_TORCH_PLUGIN=$PWD/.jit/build-torch/libcudal2_torch.so
rm -rf .jit/wheel .jit/site
CUDAL2_RUNTIME_LIB="$LIB" "$PY" -m pip wheel -q --no-deps --no-build-isolation -w .jit/wheel ./python >/dev/null &&
  "$PY" -m pip install -q --no-deps --target .jit/site .jit/wheel/cudal2-*.whl || { echo "python package build failed"; exit 1; }
export PYTHONPATH=$PWD/.jit/site${PYTHONPATH:+:$PYTHONPATH}
step "plugin and package built; cudal2 op backend: $("$PY" -c 'import cudal2; print(cudal2.BACKEND)')"

# 2. The README's main command: cudal2 beside cuBLAS, cuBLASLt and torch.matmul.
"$B/cudal2" bench --grid sample --reps 10 --verify-budget 3e7 --csv "$OUT/sample.csv" --quiet > "$OUT/sample.txt" 2>&1
step "sample grid: rc=$?, unsupported rows: $(grep -c unsupported "$OUT/sample.txt")"
grep -A8 "by shape class" "$OUT/sample.txt" | head -12 >> "$OUT/summary.txt"

# 3. The PyTorch op against torch.matmul, per call, and a model's forward pass.
"$PY" bench/product/torch_op_vs_matmul.py --reps 7 --csv "$OUT/torch_op.csv" --shapes bench/shapes/models_offgrid.txt \
  > "$OUT/torch_op.txt" 2>&1
step "torch op: rc=$?"
grep -A7 "^geomean speedup" "$OUT/torch_op.txt" >> "$OUT/summary.txt"
"$PY" bench/product/torch_model_forward.py --csv "$OUT/model_forward.csv" > "$OUT/model_forward.txt" 2>&1
step "model forward: rc=$?"
grep -E "^batch|^geomean" "$OUT/model_forward.txt" >> "$OUT/summary.txt"

# 4. The M bucket rule, one library under three rules in one process.
rt_bench() {  # NAME SHAPES METHODS: offline graph timer against auto-tuning TN
  "$B/cudal2" bench --shapes "$2" --methods "$3",cublaslt-autotune-tn,cublaslt-heuristic-tn \
    --reference cublaslt-autotune-tn --mode offline --timers graph --reps 15 --verify-budget 3e7 \
    --csv "$OUT/$1.csv" --quiet > "$OUT/$1.log" 2>&1
}
CUDAL2_RUNTIME_LIB=$LIB CUDAL2_RUNTIME_LIB_B=$LIB CUDAL2_RUNTIME_LIB_C=$LIB \
  CUDAL2_RUNTIME_ENV="CUDAL2_M_BUCKETS=up" CUDAL2_RUNTIME_ENV_B="CUDAL2_M_BUCKETS=off" \
  CUDAL2_RUNTIME_ENV_C="CUDAL2_M_BUCKETS=nearest" rt_bench bucket_rule bench/shapes/bucket_rule.txt \
  runtime-tn,runtime-b-tn,runtime-c-tn
step "bucket rule: rc=$?"
"$PY" bench/runtime/summarize_rules.py "$OUT/bucket_rule.csv" --label runtime=up --label runtime-b=off \
  --label runtime-c=nearest > "$OUT/bucket_rule.txt" 2>&1
cat "$OUT/bucket_rule.txt" >> "$OUT/summary.txt"

# 5. The off-grid target: three models' shapes, the runtime as built and with first-call tuning.
CUDAL2_RUNTIME_LIB=$LIB CUDAL2_RUNTIME_LIB_B=$LIB CUDAL2_RUNTIME_ENV_B="CUDAL2_TUNE_UNSEEN=1" \
  rt_bench offgrid bench/shapes/models_offgrid.txt runtime-tn,runtime-b-tn
step "off-grid: rc=$?"
"$PY" bench/runtime/summarize_rules.py "$OUT/offgrid.csv" --label runtime=as-built --label runtime-b=tune-unseen \
  > "$OUT/offgrid.txt" 2>&1
cat "$OUT/offgrid.txt" >> "$OUT/summary.txt"
step "done"
