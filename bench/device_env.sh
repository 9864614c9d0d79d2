#!/usr/bin/env bash
# Source on the GPU machine (the device tool) before running carried binaries. cudal2 and the
# libraries find what they read at run time relative to themselves (build/share/cudal2/: the
# kernel headers, and a relative link to CUTLASS's headers in .venv, carried with the checkout),
# so the checkout may sit anywhere. The GPU tests find their test data in gpu_data/ beside their
# executable (tests/gpu/test_paths.hpp); a build from before that held absolute paths compiled in
# at /work/main: for it, and only where nothing is there already, /work/main is linked to this
# checkout (harmless otherwise). The
# JIT cache and tuning databases live in .jit/ (git-ignored), which survives between calls while
# the machine stays warm.
set -u
# bench/carry_build.sh leaves each carried build as one archive (.dev/build.txz, .dev/NAME.txz: the
# checkout and the carry together must stay under the device tool's 64 MiB; .tgz from before still
# unpacks): unpack each once per machine, with Python's tarfile where tar has no xz.
for a in .dev/*.tgz .dev/*.txz; do
  [ -f "$a" ] && [ ! -d "${a%.*}" ] || continue
  case "$a" in
    *.txz) if command -v xz >/dev/null; then tar xJf "$a" -C .dev; else
      python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(".dev")' "$a"; fi ;;
    *) tar xzf "$a" -C .dev ;;
  esac
done
if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
# The judge the GPU tests start: the carried build's ($BUILD), not a build/ that is not there.
export CUDAL2_CACHE="$PWD/.jit/cache" CUDAL2_CLI="$PWD/${BUILD:-build}/cudal2"
mkdir -p .jit "${OUT:=out}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader || true
