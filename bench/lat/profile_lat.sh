#!/usr/bin/env bash
# Nsight Compute profiles of small problems, ours against cuBLASLt's own kernel, on the GPU
# machine:  source bench/device_env.sh >/dev/null; bash bench/lat/profile_lat.sh
# PROFILES: "tag|M,N,K|what;..." where what is a spec (`cudal2 eval` runs it unconfined, so ncu can
# follow the runner, after a few warm-up calls) or @METHOD, a baseline that `cudal2 bench` runs
# without verification (so the only GEMM kernels launched are that method's). One launch is
# profiled after KERNEL_SKIP (default 5) matching ones: speed of light, memory workload, warp
# stall reasons, occupancy, launch statistics; our kernels by name (KERNEL_REGEX, default lat's and lat_staged's;
# METHOD_REGEX for an @METHOD's, default cuBLASLt's and our GEMM kernels). Writes $OUT/prof-TAG.txt and prints the key lines.
# ncu locks clocks to base and flushes caches before each pass (its defaults): read the cycle
# split and percentages of peak, not durations, against the graph timer's microseconds.
set -uo pipefail
out=${OUT:-out}
cli=${CUDAL2_CLI:-build/cudal2}
PROFILES=${PROFILES:-"lat-64cube|64,64,64|lat tn f32 tile=16x16x64 warps=1x1 kwarps=4 | splits=1;lt-64cube|64,64,64|@cublaslt-heuristic-tn;lat-64x64x1024|64,64,1024|lat tn f32 tile=16x16x64 warps=1x1 kwarps=8 | splits=1;lat-256x256x4096|256,256,4096|lat tn f32 tile=16x16x64 warps=1x1 kwarps=8 | splits=1;lt-256x256x4096|256,256,4096|@cublaslt-heuristic-tn;lat-64x64x16384|64,64,16384|lat tn f32 tile=32x32x64 warps=1x1 kwarps=8 | splits=16;lt-64x64x16384|64,64,16384|@cublaslt-heuristic-tn;lt-decode|16,4096,4096|@cublaslt-heuristic-tn"}
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "profile_lat: ncu not found" >&2; exit 1; }
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy
          --section LaunchStats --section SchedulerStats)
IFS=';' read -ra profs <<<"$PROFILES"
for p in "${profs[@]}"; do
  IFS='|' read -r tag shape what knobs <<<"$p"
  [ -n "$knobs" ] && what="$what|$knobs"
  if [[ $what == @* ]]; then
    # cuBLASLt's kernels: any kernel but our verification helpers (no verification: --no-verify).
    # shellcheck disable=SC2086  # NCU_EXTRA is a list of options
    "$ncu" ${NCU_EXTRA:-} --kernel-name regex:"${METHOD_REGEX:-gemm|sm90|cutlass|xmma|splitKreduce}" --launch-skip "${KERNEL_SKIP:-5}" \
      --launch-count 1 "${sections[@]}" "$cli" bench --shape "$shape" --methods "${what#@}" --timers eager --reps 3 \
      --mode offline --no-verify --quiet >"$out/prof-$tag.txt" 2>&1
  else
    # shellcheck disable=SC2086
    "$ncu" ${NCU_EXTRA:-} --target-processes all --kernel-name regex:"${KERNEL_REGEX:-lat_gemm_kernel|lat_staged_kernel}" --launch-skip "${KERNEL_SKIP:-5}" \
      --launch-count 1 "${sections[@]}" "$cli" eval --spec "$what" --shape "$shape" --timers eager --reps 3 --mode offline \
      --baselines cublaslt-heuristic-tn --no-confine >"$out/prof-$tag.txt" 2>&1
  fi
  echo "== $tag $shape $what"
  grep -E "^  [a-zA-Z_].*\(|Duration|Elapsed Cycles|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit|L2 Hit|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Cluster Size|Stall|One or More|No Eligible|Warp Cycles Per Issued" \
    "$out/prof-$tag.txt" | head -30
done
