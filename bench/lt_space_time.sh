#!/usr/bin/env bash
# Builds bench/lt_space_time.cpp and bench/lt_space_time_kernels.cu (the cublaslt-family
# measurement) into build-lt/, without the rest of libcudal2: only the spec, codegen, JIT and
# cublaslt_space sources it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-lt}
mkdir -p "$out/lt_space_time.o"
defs=(-DFMT_HEADER_ONLY=1)
# The JIT finds the kernel headers in share/cudal2/kernels beside the program (src/core/paths.hpp):
# a relative link to src/kernels, valid wherever the checkout is carried.
mkdir -p "$out/share/cudal2"
ln -sfn "$(realpath --relative-to="$out/share/cudal2" src/kernels)" "$out/share/cudal2/kernels"
objs=()
for f in src/core/problem.cpp src/codegen/spec.cpp src/codegen/codegen.cpp src/codegen/family_cublaslt.cpp \
         src/codegen/family_wgmma.cpp src/baselines/cublaslt_space.cpp src/jit/compiler.cpp src/core/paths.cpp; do
  o="$out/lt_space_time.o/$(basename "$f" .cpp).o"
  g++ -std=c++20 -O2 "${defs[@]}" -Isrc -I/usr/local/cuda/include -c "$f" -o "$o" &
  objs+=("$o")
done
wait
nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -c bench/lt_space_time_kernels.cu \
  -o "$out/lt_space_time.o/kernels.o" &
g++ -std=c++20 -O2 "${defs[@]}" -Isrc -I/usr/local/cuda/include -c bench/lt_space_time.cpp \
  -o "$out/lt_space_time.o/main.o"
wait
g++ "$out/lt_space_time.o/main.o" "$out/lt_space_time.o/kernels.o" "${objs[@]}" -o "$out/lt_space_time" \
  -L/usr/local/cuda/lib64 -lcublasLt -lcublas -lcudart -ldl -lpthread
echo "built $out/lt_space_time"
