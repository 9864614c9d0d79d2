#!/usr/bin/env bash
# Here (the build machine): pack what the GPU machine needs of build/ into .dev/build.txz
# (git-excluded, stripped): the CLI, its libraries, the kernel headers the JIT compiles candidates
# against, the prompts, the runtime library and the GPU tests with their data. Then call the device
# tool with carry [".dev"] and, there, `export BUILD=.dev/build; source bench/device_env.sh` (which
# unpacks the archive into .dev/build; bench/stream/stream_call.sh,
# bench/lat/lat_call.sh honour BUILD); the GPU tests need LD_LIBRARY_PATH=$PWD/.dev/build/src/runtime.
# A second build to carry beside it (bench/evaluator/compare_builds.sh: another revision's build in
# its own checkout) goes under another NAME: .dev/NAME.txz, unpacked the same way into .dev/NAME.
#   bash bench/carry_build.sh [BUILD_DIR [NAME]]
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-build}
name=${2:-build}
dst=.dev/$name
rm -rf "$dst" ".dev/$name.tgz" ".dev/$name.txz"
mkdir -p "$dst/share/cudal2" "$dst/src/runtime" "$dst/tests"
cp -a "$src/cudal2" "$dst/"
[ -d "$src/lib" ] && cp -a "$src/lib" "$dst/"
cp -a "$src/share/cudal2/kernels" "$src/share/cudal2/prompts" "$dst/share/cudal2/"
# The headers as they are now in the build's own checkout (changed since its last configure).
cp "$(cd "$src/.." && pwd)"/src/kernels/* "$dst/share/cudal2/kernels/"
cp -a "$src"/src/runtime/libcudal2_runtime.so* "$dst/src/runtime/"
if [ -f "$src/tests/cudal2_gpu_tests" ]; then
  cp -a "$src/tests/cudal2_gpu_tests" "$dst/tests/"
  [ -d "$src/tests/gpu_data" ] && cp -a "$src/tests/gpu_data" "$dst/tests/"
fi
find "$dst" -type f \( -name '*.so*' -o -name cudal2 -o -name cudal2_gpu_tests \) -exec strip --strip-unneeded {} + 2>/dev/null || true
# One archive, unpacked by bench/device_env.sh on the GPU machine: the checkout (58 MiB on disk)
# and the carry together must stay under the device tool's 64 MiB. xz: the stripped build (12 MB)
# packs into 2.6 MB, against 4.6 MB with gzip.
tar cJf ".dev/$name.txz" -C .dev "$name"
rm -rf "$dst"
du -sh ".dev/$name.txz"
