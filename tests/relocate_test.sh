#!/usr/bin/env bash
# Relocatable: `cmake --install` gives a tree that runs from anywhere and holds no build-machine path.
#   relocate_test.sh BUILD_DIR SOURCE_DIR UNIT_TESTS
# Installs BUILD_DIR into a temporary prefix, moves the prefix, runs `bin/cudal2 --help` from /,
# checks that `strings` of bin/cudal2 and lib/libcudal2_runtime.so hold neither SOURCE_DIR nor
# BUILD_DIR, and JIT-compiles a tiny spec with the moved tree's headers (Relocate.InstalledTreeCompilesTiny).
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) unit=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset CUDAL2_DATA_DIR CUDAL2_KERNELS_DIR CUTLASS_DIR CUDAL2_PROMPT CUDAL2_REPORT_SCRIPT
cmake --install "$build" --prefix "$tmp/first" >"$tmp/install.log"
mv "$tmp/first" "$tmp/moved"
X=$tmp/moved
for f in bin/cudal2 share/cudal2/kernels/cudal2_kernel_abi.h share/cudal2/prompts/kernel.md share/cudal2/report.py \
  share/cudal2/analysis.py include/cudal2/cudal2.h; do
  [ -e "$X/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
(cd / && "$X/bin/cudal2" --help) >"$tmp/help.txt" || { echo "FAIL: installed cudal2 --help"; cat "$tmp/help.txt"; exit 1; }
grep -q "tune" "$tmp/help.txt" || { echo "FAIL: --help says no tune"; exit 1; }
for f in "$X/bin/cudal2" "$X"/lib/libcudal2_runtime.so*; do
  [ -L "$f" ] && continue
  for p in "$src" "$build"; do
    if strings -a "$f" | grep -qF "$p"; then
      echo "FAIL: $f holds the build machine's path $p:"
      strings -a "$f" | grep -F "$p" | head -5
      exit 1
    fi
  done
done
echo "installed tree at $X: bin/cudal2 runs, no $src or $build in its binaries"
CUDAL2_TEST_PREFIX=$X CUDAL2_CACHE=$tmp/cache "$unit" --gtest_filter='Relocate.InstalledTreeCompilesTiny' \
  >"$tmp/jit.log" 2>&1 || { cat "$tmp/jit.log"; echo "FAIL: JIT through the installed tree"; exit 1; }
grep -q "\[  PASSED  \] 1 test" "$tmp/jit.log" || { cat "$tmp/jit.log"; echo "FAIL: the JIT test did not run"; exit 1; }
echo "a tiny spec JIT-compiled with the moved tree's headers"
