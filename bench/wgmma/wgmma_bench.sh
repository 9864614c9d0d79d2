#!/usr/bin/env bash
# The wgmma family on the GPU machine from prebuilt artifacts: build artifacts for a list of specs
# with nvcc (here or there; extra flags and another header allowed, for A/B builds), then verify
# and time them through the judge with `cudal2 eval --artifact ART.so@SPEC` (the same verification
# and timers as every candidate: docs/verification.md, docs/measuring.md) against cuBLASLt
# auto-tuning. Logs and CSVs land in $OUT (or ./out); the store in $OUT/wgmma.db.
#   bash bench/wgmma/wgmma_bench.sh build DIR            # compile the specs below into DIR (needs nvcc)
#   bash bench/wgmma/wgmma_bench.sh verify DIR           # odd and K-heavy shapes, every artifact x knobs
#   bash bench/wgmma/wgmma_bench.sh time DIR [shapes..]  # graph timer, $REPS reps (30); SERVER=1 adds
#                                                        # server mode (cold L2, idle gaps); CSV in $OUT/time.csv
#   bash bench/wgmma/wgmma_bench.sh table FILE           # compact summary of a retired-harness `time` output
#   bash bench/wgmma/wgmma_bench.sh csv FILE             # a retired-harness `time` output as CSV
# `table` and `csv` read the text the retired stand-alone harness (wgmma_time.cu, removed)
# printed, which the committed results under bench/results/h100/wgmma*/ hold; new runs are CSV
# rows of the judge (`cudal2 eval --csv`). The generated source mirrors generate_wgmma_source
# (src/codegen/family_wgmma.cpp) and family_wgmma_swapab.cpp; `cudal2 eval --spec` compiles the
# same source itself, so this script is only needed for builds the JIT does not make.
#
# Runtime knobs (no rebuild) are written @raster,swizzle,splits: raster 0 heuristic, 1 along M,
# 2 along N; swizzle 1, 2, 4, 8; splits 1 data-parallel, 0 auto, > 1 split-K (wgmma_plan.h).
# A spec may carry its own knob sets after its fields; `time` then runs exactly those for it
# (else $TIME_KNOBS), `verify` runs $VERIFY_KNOBS plus those.
set -euo pipefail
cmd=${1:?build|verify|time|table} dir=${2:?artifact dir (table: the time output)}
shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-out}
# layout accumulator tile_m tile_n stages cluster_m cluster_n [pp] [@raster,swizzle,splits ...]
# (pp: the ping-pong mainloop, mainloop=pingpong), or for wgmma_swapab (wgmma_swapab.cuh):
# swapab layout accumulator tile_m tile_n stages [@raster,swizzle,splits ...]
SPECS=(
  "nn f32 128 256 4 1 1" "nn f32 128 256 4 2 1" "nn f32 128 256 4 1 2" "nn f32 128 192 4 2 1"
  "nn f32 128 128 6 1 1" "nn f32 128 128 6 2 1" "nn f32 64 128 8 1 1" "nn f32 64 64 8 1 1" "nn f32 64 64 8 1 2"
  "tn f32 128 256 4 1 1" "tn f32 128 256 4 2 1" "tn f32 128 192 4 2 1" "tn f32 64 128 8 1 1" "tn f32 64 64 8 1 2"
  "nn f16 128 256 4 1 1" "tn f16 128 256 4 2 1"
)
# WGMMA_SPECS="nn f32 128 256 4 1 1 @0,1,1 @1,8,1;tn f16 64 128 6 1 2" replaces the list.
[ -z "${WGMMA_SPECS:-}" ] || IFS=';' read -ra SPECS <<<"$WGMMA_SPECS"
TIME_KNOBS=${TIME_KNOBS:-"0,1,1 1,8,1 2,8,1 0,1,0 0,1,2 0,1,4 0,1,8"}
VERIFY_KNOBS=${VERIFY_KNOBS:-"0,1,1 0,1,0 0,1,2 0,1,4 0,1,8 2,8,3"}

# An artifact's knob sets for a subcommand, as `cudal2 eval --artifact` arguments
# "art.so@SPEC | raster=R swizzle=S splits=P" (the spec it was built from, DIR/NAME.spec).
variants() {  # $1 = .so, $2 = default knobs, $3 = 1: defaults plus the spec's own
  local so=$1 own="" k spec
  spec=$(cat "${so%.so}.spec")
  [ -f "${so%.so}.knobs" ] && own=$(cat "${so%.so}.knobs")
  local list=$2
  if [ -n "$own" ]; then if [ "$3" = 1 ]; then list="$2 $own"; else list=$own; fi; fi
  declare -A seen=()
  local rasters=(heuristic along_m along_n)
  for k in $list; do
    [ -n "${seen[$k]:-}" ] && continue
    seen[$k]=1
    IFS=, read -r r w p <<<"$k"
    [ "${p:-1}" = 0 ] && p=auto
    if [[ $spec == wgmma_swapab\ * ]]; then  # its only runtime knob is splits
      [ -n "${seen[s${p:-1}]:-}" ] && continue
      seen[s${p:-1}]=1
      printf '%s\n' --artifact "$so@$spec | splits=${p:-1}"
    else
      printf '%s\n' --artifact "$so@$spec | raster=${rasters[$r]} swizzle=$w splits=${p:-1}"
    fi
  done
}
CUDAL2=${CUDAL2_CLI:-$here/build/cudal2}

case $cmd in
build)
  mkdir -p "$dir"
  jobs_max=${BUILD_JOBS:-$(nproc)}
  for s in "${SPECS[@]}"; do
    tnb=false f16b=false
    if [[ $s == swapab\ * ]]; then  # wgmma_swapab: "swapab layout accumulator tile_m tile_n stages [@knobs]"
      read -r _ lay acc bm bn st knobs <<<"$s"
      [ "$lay" = tn ] && tnb=true
      [ "$acc" = f16 ] && f16b=true
      name="wgmma_swapab_${lay}_${acc}_${bm}x${bn}_s${st}${WGMMA_TAG:-}"
      text="wgmma_swapab $lay $acc tile=${bm}x${bn}x64 stages=$st"
      header=wgmma_swapab.cuh type="cudal2_wgmma_swapab::Gemm<cudal2_wgmma_swapab::Config<$tnb, $f16b, $bm, $bn, $st>>"
    else
      read -r lay acc bm bn st cm cn knobs <<<"$s"
      [ "$lay" = tn ] && tnb=true
      [ "$acc" = f16 ] && f16b=true
      pp=""
      if [[ " ${knobs:-} " == *" pp "* ]]; then pp=1 knobs=${knobs//pp/}; fi
      name="wgmma_${lay}_${acc}_${bm}x${bn}_c${cm}x${cn}_s${st}${pp:+_pp}${WGMMA_TAG:-}"
      text="wgmma $lay $acc tile=${bm}x${bn}x64 cluster=${cm}x${cn} stages=$st${pp:+ mainloop=pingpong}"
      header=wgmma_gemm.cuh type="cudal2_wgmma::Gemm<cudal2_wgmma::Config<$tnb, $f16b, $bm, $bn, $cm, $cn, $st${pp:+, true}>>"
    fi
    echo "$text" >"$dir/$name.spec"  # what `cudal2 eval --artifact` runs it as (before any A/B tag)
    text+=${WGMMA_DESC_SUFFIX:-}  # e.g. " NOPDL": tells an A/B build's rows apart in the output
    cat >"$dir/$name.cu" <<SRC
// Generated by cudal2 from: $text
#include "$header"
using cudal2_kernel = $type;
CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "$text")
SRC
    echo "${knobs:-}" | tr -d '@' | tr -s ' ' >"$dir/$name.knobs"
    # WGMMA_NVCC_FLAGS: extra defines for an experiment (e.g. -DCUDAL2_PDL=0),
    # WGMMA_TAG: a suffix that keeps those artifacts apart from the plain ones, WGMMA_INCLUDE: a
    # folder searched before src/kernels (another wgmma_gemm.cuh, e.g. an older one, for an A/B run;
    # it must take its configuration the same way, cudal2_wgmma::Gemm<Config<...>>).
    nvcc -std=c++17 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Xcompiler -fPIC \
      ${WGMMA_NVCC_FLAGS:-} -shared ${WGMMA_INCLUDE:+-I"$WGMMA_INCLUDE"} -I"$here/src/kernels" -Xptxas -v \
      "$dir/$name.cu" -o "$dir/$name.so" >"$dir/$name.log" 2>&1 ||
      echo "BUILD FAILED: $name (see $dir/$name.log)" &
    while [ "$(jobs -r | wc -l)" -ge "$jobs_max" ]; do sleep 0.2; done
  done
  wait
  grep -H "registers\|spill\|arn\|rror" "$dir"/*.log | grep -v "0 bytes spill\|Used [0-9]* registers" || true
  n=$(ls "$dir"/*.so 2>/dev/null | wc -l)
  echo "built $n of ${#SPECS[@]} artifacts in $dir"
  [ "$n" -eq "${#SPECS[@]}" ]
  ;;
verify)
  args=()
  for m in 1 7 65 1000 4097; do
    for nk in "1 8" "7 64" "8 1000" "65 4104" "1000 64" "4097 8" "4104 1000" "64 72"; do
      read -r n k <<<"$nk"
      args+=(--shape "$m,$n,$k")
    done
  done
  args+=(--shape 4096,4096,4096 --shape 128,128,8 --shape 8,8,8)
  # Epilogue stress: many tiles per CTA and a single K tile, so one tile's TMA stores are still
  # draining when the next tile's epilogue starts (the race of BN/64 odd, wgmma_gemm.cuh).
  args+=(--shape 8192,4104,64 --shape 4097,4104,16)
  # K-heavy: few tiles, long K (the split-K shapes), with odd edges.
  for s in 128,128,16384 4096,128,4096 128,4096,4096 64,4096,4096 256,256,8192 1024,1024,16384 65,136,4104 \
    1000,7,8192 7,1000,2056; do
    args+=(--shape "$s")
  done
  mkdir -p "$out/verify"
  run_one() {  # one eval per artifact: a failure names its artifact
    local art=$1 log
    log="$out/verify/$(basename "${art%.so}").log"
    mapfile -t vs < <(variants "$art" "$VERIFY_KNOBS" 1)
    if timeout "${VERIFY_TIMEOUT:-900}" "$CUDAL2" eval "${args[@]}" "${vs[@]}" --timers graph --reps 3 --baselines "" \
      --db "$out/verify/verify.db" >"$log" 2>&1 && ! grep -qE "wrong-result|out-of-bounds|illegal|crash|hang" "$log"; then
      echo "ok      $(basename "$art")"
    else
      echo "FAILED  $(basename "$art"): see $log"
      grep -E "wrong-result|out-of-bounds|illegal|crash|hang|error" "$log" | head -5
      return 1
    fi
  }
  rc=0
  for a in "$dir"/*.so; do run_one "$a" || rc=1; done
  echo "verify: $([ $rc = 0 ] && echo all ok || echo FAILURES) (logs in $out/verify)"
  exit $rc
  ;;
time)
  shapes=("$@")
  [ ${#shapes[@]} -gt 0 ] || shapes=(4096,4096,4096 8192,8192,8192 2048,2048,2048 4096,4096,1024 4096,128,4096)
  args=()
  for s in "${shapes[@]}"; do args+=(--shape "$s"); done
  arts=()
  for a in "$dir"/*.so; do mapfile -t -O "${#arts[@]}" arts < <(variants "$a" "$TIME_KNOBS" 0); done
  # SERVER=1: server mode too (cold L2, exponential idle gaps; docs/measuring.md).
  mkdir -p "$out"
  mode=offline
  [ -n "${SERVER:-}" ] && mode=both
  "$CUDAL2" eval "${args[@]}" "${arts[@]}" --timers graph --reps "${REPS:-30}" --mode "$mode" \
    --baselines cublaslt-autotune-nn,cublaslt-autotune-tn --csv "$out/time.csv" --db "$out/wgmma.db"
  ;;
table)
  # Per shape: cuBLASLt autotune, then our best data-parallel 1x1 variant, our best data-parallel
  # cluster (2x1, 1x2) variant, our best split-K one (auto or explicit) and our best ping-pong one,
  # each as microseconds and cuBLASLt's time over ours (>1: faster than cuBLASLt).
  awk '
    function short(s) {
      sub(/^wgmma /, "", s); gsub(/tile=/, "", s); gsub(/x64 cluster=/, " c", s); gsub(/ stages=/, " s", s)
      gsub(/ \| /, " ", s); gsub(/ mainloop=pingpong/, " pp", s); return s
    }
    function cell(sh, k) {
      if (!((sh, k) in best) || !(lt[sh] > 0)) return sprintf("%8s %6s %-31s", "-", "-", "")
      return sprintf("%8.2f %6.3f %-31s", best[sh, k], lt[sh] / best[sh, k], bname[sh, k])
    }
    NF >= 6 && ($(NF-4) == "ok" || $(NF-2) == "base") {
      sh = $1
      if (!(sh in seen)) { seen[sh] = 1; order[++n] = sh }
      if ($(NF-2) == "base") { lt[sh] = $(NF-1); next }
      us = $(NF-2) + 0; name = ""
      for (i = 2; i <= NF - 5; i++) name = name (i > 2 ? " " : "") $i
      k = name ~ / p(A|[0-9]+)$/ ? "split" : name ~ /pingpong/ ? "pp" : name ~ /cluster=1x1/ ? "dp" : "cluster"
      if (!((sh, k) in best) || us < best[sh, k]) { best[sh, k] = us; bname[sh, k] = short(name) }
    }
    END {
      printf "%-16s %8s | %8s %6s %-31s | %8s %6s %-31s | %8s %6s %-31s | %8s %6s %-31s\n", "shape", "lt us",
             "us", "lt/us", "data-parallel 1x1", "us", "lt/us", "data-parallel cluster", "us", "lt/us",
             "split-K (pA = auto)", "us", "lt/us", "ping-pong"
      for (i = 1; i <= n; i++) {
        sh = order[i]
        printf "%-16s %8.2f | %s | %s | %s | %s\n", sh, lt[sh] + 0, cell(sh, "dp"), cell(sh, "cluster"),
               cell(sh, "split"), cell(sh, "pp")
      }
    }' "$dir"
  ;;
csv)
  # shape,m,n,k,method,status,rel_err,us,tflops,lt_over_us (status base: cuBLASLt auto-tuning;
  # server and sbase: ours and the baseline in server mode).
  awk 'BEGIN { print "shape,m,n,k,method,status,rel_err,us,tflops,lt_over_us" }
    NF >= 6 && ($(NF-4) == "ok" || $(NF-4) == "server" || $(NF-2) == "base" || $(NF-2) == "sbase") {
      base = $(NF-2) == "base" || $(NF-2) == "sbase"; last = base ? NF - 3 : NF - 5; name = ""
      for (i = 2; i <= last; i++) name = name (i > 2 ? " " : "") $i
      split($1, d, "x")
      if (base) printf "%s,%s,%s,%s,\"%s\",%s,,%s,%s,1\n", $1, d[1], d[2], d[3], name, $(NF-2), $(NF-1), $NF
      else printf "%s,%s,%s,%s,\"%s\",%s,%s,%s,%s,%s\n", $1, d[1], d[2], d[3], name, $(NF-4), $(NF-3), $(NF-2), $(NF-1), $NF
    }' "$dir"
  ;;
*)
  echo "unknown subcommand $cmd (build, verify, time, table, csv)" >&2
  exit 2
  ;;
esac
