#!/usr/bin/env bash
# Run on the GPU machine (the device tool) over a carried build/: builds the torch.matmul plugin
# against the machine's PyTorch (build-torch/, next to the carried build) and prints the
# environment once. Source it: it exports CUDAL2_TORCH_PLUGIN and LD_LIBRARY_PATH.
set -u
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader || true
prefix=$(python3 -c "import torch; print(torch.utils.cmake_prefix_path)" 2>/dev/null)
if [ -n "$prefix" ] && [ ! -f build-torch/libcudal2_torch.so ]; then
  t0=$(date +%s)
  if cmake -S plugins/torch -B build-torch -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
       >build-torch.log 2>&1 && cmake --build build-torch -j 16 >>build-torch.log 2>&1; then
    echo "torch plugin built in $(( $(date +%s) - t0 ))s"
  else
    echo "torch plugin build FAILED (tail of build-torch.log):"; tail -25 build-torch.log
  fi
fi
[ -f build-torch/libcudal2_torch.so ] && export CUDAL2_TORCH_PLUGIN="$PWD/build-torch/libcudal2_torch.so"
