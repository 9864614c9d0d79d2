#!/usr/bin/env bash
# The one way to build: Release build of libcudal2, the cudal2 CLI, the tests and (where PyTorch
# is found) the torch.matmul plugin, into build/. Extra arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null 2>&1; then export PATH="/usr/local/cuda/bin:$PATH"; fi
gen=(); command -v ninja >/dev/null 2>&1 && [ ! -f build/CMakeCache.txt ] && gen=(-G Ninja)
cmake -S . -B build "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$(nproc)"
