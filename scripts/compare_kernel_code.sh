#!/usr/bin/env bash
# Proof that a refactoring of the kernel headers left the machine code alone: compiles every
# compiled kernel of the committed tables (tables/*.json) and the
# representative specs of scripts/compare_kernel_code_specs.json twice, with the kernel headers and
# the codegen of a BEFORE revision and with this checkout's, and compares their SASS and resource
# usage per kernel. Function names are compared through their kernel name and its last template
# argument only (the configuration type's own name and the anonymous namespace's file hash differ
# by construction); nothing else is normalized. Compile-only: no GPU needed.
#
# Usage: scripts/compare_kernel_code.sh BEFORE_REV BEFORE_RTGEN [AFTER_RTGEN]
#   BEFORE_REV    git revision whose src/kernels and include/ the "before" side compiles
#   BEFORE_RTGEN  a cudal2_rtgen built from that revision's codegen (build/src/runtime/cudal2_rtgen
#                 of a build of BEFORE_REV)
#   AFTER_RTGEN   this checkout's generator (default build/src/runtime/cudal2_rtgen)
# Environment: CUOBJDUMP (the disassembler), JOBS (parallel nvcc, default 2), CUDAL2_COMPARE_DIR
# (work folder, kept; the BEFORE side's compiled files there are reused when it is run again for
# the same revision).
# Exit status 0 when every kernel is identical, 1 when some differ.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 2 ]; then
  sed -n '10,18p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
before_rev="$1" before_rtgen="$2" after_rtgen="${3:-$root/build/src/runtime/cudal2_rtgen}"
if ! command -v nvcc >/dev/null 2>&1; then export PATH="/usr/local/cuda/bin:$PATH"; fi
# cuobjdump: CUOBJDUMP, else the one on PATH or beside nvcc, else the copy Triton's wheel carries
# in the project venv (a toolkit without cuobjdump).
cuobjdump="${CUOBJDUMP:-$(command -v cuobjdump || ls "$root"/.venv/lib/python3*/site-packages/triton/backends/nvidia/bin/cuobjdump 2>/dev/null | head -1 || true)}"
if [ -z "$cuobjdump" ]; then
  echo "compare_kernel_code: no cuobjdump (set CUOBJDUMP)" >&2
  exit 2
fi
export CUOBJDUMP="$cuobjdump"
jobs="${JOBS:-2}"
work="${CUDAL2_COMPARE_DIR:-$(mktemp -d -t cudal2-compare.XXXXXX)}"
rev="$(git -C "$root" rev-parse --short=12 "$before_rev")"
tables=("$root"/tables/*.json "$root/scripts/compare_kernel_code_specs.json")
echo "compare_kernel_code: before $rev ($before_rtgen), after $root ($after_rtgen); work folder $work"

# The same device flags as the JIT (src/jit/compiler.cpp) and libcudal2_runtime; host-only flags
# do not reach the SASS, so -cubin (device code alone) is enough.
flags=(-std=c++17 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -cubin)

# One side: SIDE_DIR TREE RTGEN -> SIDE_DIR/gen/*.cu and, per kernel, .sass and .res.
build_side() {
  local dir="$1" tree="$2" rtgen="$3"
  mkdir -p "$dir/gen" "$dir/out"
  "$rtgen" "$dir/gen" "${tables[@]}" >/dev/null
  local includes="-I$tree/include -I$tree/src -I$tree/src/kernels"
  find "$dir/gen" -name '*.cu' -printf '%f\n' | sort | while read -r f; do
    local k="${f%.cu}"
    # Reused only where the generated source is the one compiled before (BEFORE side, same revision).
    if [ -s "$dir/out/$k.sass" ] && cmp -s "$dir/gen/$f" "$dir/out/$k.cu"; then continue; fi
    echo "$k"
  done | xargs -r -P "$jobs" -I{} sh -c \
    'nice -n 15 nvcc '"${flags[*]}"' '"$includes"' -o "$0/out/{}.cubin" "$0/gen/{}.cu" &&
     "$CUOBJDUMP" -sass "$0/out/{}.cubin" > "$0/out/{}.sass.raw" &&
     "$CUOBJDUMP" -res-usage "$0/out/{}.cubin" > "$0/out/{}.res.raw" &&
     cp "$0/gen/{}.cu" "$0/out/{}.cu" && mv "$0/out/{}.sass.raw" "$0/out/{}.sass" &&
     mv "$0/out/{}.res.raw" "$0/out/{}.res"' "$dir"
}

# SASS (or resource usage) with each function under its kernel name and last template argument
# (wgmma_gemm_kernel<..., true> -> "wgmma_gemm_kernel<true>"), functions in name order.
normalize() {
  python3 - "$1" <<'EOF'
import re, subprocess, sys
text = open(sys.argv[1]).read()
names = sorted(set(re.findall(r"_Z[0-9A-Za-z_]+", text)))
demangled = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
short = {}
for mangled, full in zip(names, demangled):
    head = full.replace("(anonymous namespace)::", "").split("(")[0]
    base = re.sub(r"<.*", "", head).split("::")[-1]
    last = re.search(r",\s*(true|false)>$", head)
    short[mangled] = base + ("<" + last.group(1) + ">" if last else "")
sections, current = {}, None
for line in text.splitlines():
    if line.strip().startswith("Fatbin") or line.startswith("arch =") or line.startswith("code version"):
        continue
    m = re.search(r"Function\s*:?\s*(_Z[0-9A-Za-z_]+)", line)
    if m:
        current = short[m.group(1)]
    line = re.sub(r"_Z[0-9A-Za-z_]+", lambda x: short.get(x.group(0), x.group(0)), line)
    sections.setdefault(current, []).append(line)
for name in sorted(sections, key=lambda n: (n is not None, str(n))):
    print("\n".join(sections[name]))
EOF
}

git -C "$root" archive "$rev" src/kernels include | { mkdir -p "$work/tree-$rev" && tar -x -C "$work/tree-$rev"; }
build_side "$work/before-$rev" "$work/tree-$rev" "$before_rtgen"
rm -rf "$work/after"
build_side "$work/after" "$root" "$after_rtgen"

total=0 same=0 differ=()
for sass in "$work/after/out/"*.sass; do
  k="$(basename "$sass" .sass)"
  spec="$(sed -n 's|^// Generated by cudal2 from: ||p' "$work/after/gen/$k.cu")"
  total=$((total + 1))
  ok=1
  for ext in sass res; do
    normalize "$work/before-$rev/out/$k.$ext" >"$work/before-$rev/out/$k.$ext.norm"
    normalize "$work/after/out/$k.$ext" >"$work/after/out/$k.$ext.norm"
    cmp -s "$work/before-$rev/out/$k.$ext.norm" "$work/after/out/$k.$ext.norm" || ok=0
  done
  fns="$(grep -c 'Function :' "$work/after/out/$k.sass.norm" || true)"
  if [ "$ok" = 1 ]; then
    same=$((same + 1))
    echo "identical  $k ($fns functions): $spec"
  else
    differ+=("$k")
    echo "DIFFERS    $k ($fns functions): $spec  (diff $work/{before-$rev,after}/out/$k.sass.norm)"
  fi
done
echo "compare_kernel_code: $same of $total kernels identical (SASS and resource usage)"
[ "${#differ[@]}" -eq 0 ]
