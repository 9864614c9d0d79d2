#!/usr/bin/env bash
# Source on the GPU machine (the device tool) before running carried binaries. The binaries were
# built on the development machine at /work/main and hold that path (our kernel headers, CUTLASS's
# headers in .venv, test sources): point it at this checkout. The JIT cache and tuning databases
# live in .jit/ (git-ignored), which survives between calls while the machine stays warm.
set -u
if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
export CUDAL2_CACHE="$PWD/.jit/cache" CUDAL2_CLI="$PWD/build/cudal2"
mkdir -p .jit "${OUT:=out}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader || true
