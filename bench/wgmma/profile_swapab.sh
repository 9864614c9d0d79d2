#!/usr/bin/env bash
# Nsight Compute profile of wgmma_swapab specs (the current best variants), on the GPU machine:
#   source bench/device_env.sh >/dev/null; bash bench/wgmma/profile_swapab.sh
# Per profile, `cudal2 eval` runs the spec on one shape (unconfined, so ncu can follow the judge)
# and ncu profiles one launch of swapab_kernel after a few warm-up calls: speed of light, memory
# workload, warp stall reasons, occupancy. Writes $OUT/prof-TAG.txt and prints the key lines.
# ncu locks clocks to base and flushes caches before each pass (its defaults): read percentages of
# peak, not durations. PROFILES: "tag|M,N,K|spec;..."
set -uo pipefail
out=${OUT:-out}
cli=${CUDAL2_CLI:-build/cudal2}
PROFILES=${PROFILES:-"decode-l2|16,4096,4096|wgmma_swapab tn f32 tile=16x64x64 stages=8 | splits=2;decode-hbm|16,14336,4096|wgmma_swapab nn f32 tile=16x64x64 stages=8 | splits=2"}
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "profile_swapab: ncu not found" >&2; exit 1; }
IFS=';' read -ra profs <<<"$PROFILES"
for p in "${profs[@]}"; do
  IFS='|' read -r tag shape spec knobs <<<"$p"
  [ -n "$knobs" ] && spec="$spec|$knobs"
  # shellcheck disable=SC2086  # NCU_EXTRA is a list of options
  "$ncu" ${NCU_EXTRA:-} --target-processes all --kernel-name regex:swapab_kernel --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
    --section LaunchStats "$cli" eval --spec "$spec" --shape "$shape" --timers eager --reps 3 --mode offline \
    --baselines cublaslt-autotune-tn --no-confine >"$out/prof-$tag.txt" 2>&1
  echo "== $tag $shape $spec"
  grep -E "Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Grid Size|Stall|One or More|No Eligible|Warp Cycles Per Issued" "$out/prof-$tag.txt" | head -24
done
