#!/usr/bin/env bash
# Nsight Compute profiles of the best `wgmma` variants, on the GPU machine:
#   source bench/device_env.sh >/dev/null; bash bench/wgmma/profile_wgmma.sh
# Builds the artifacts with bench/wgmma/wgmma_bench.sh (into $DIR, default build-prof; skipped when
# they are there), then per profile judges one variant on one shape with `cudal2 eval --artifact`
# (unconfined, so ncu reaches the runner process; one timed rep) and profiles the kernel's second
# call only (--launch-skip 1 --launch-count 1 on wgmma_gemm_kernel), a verification call. Profiles
# committed before the stand-alone harness was retired came from it (wgmma_time.cu --no-time). Collects tensor-pipe utilisation, DRAM and L2
# throughput, achieved occupancy and the warp stall reasons; per profile $OUT/prof-TAG.ncu-rep,
# -raw.csv (every metric), -details.txt, and one row of $OUT/profile_summary.csv, printed last.
# ncu locks the clocks to base and flushes the caches before each pass (its defaults): the
# percentages are of the peak at that clock, durations are longer than the timed ones.
#
# PROFILES: "tag|shape|spec|knobs[|ncu options];..." (spec as in wgmma_bench.sh: layout accum
# tile_m tile_n stages cluster_m cluster_n [pp], or swapab layout accum tile_m tile_n stages; knobs
# raster,swizzle,splits; ncu options e.g. "--clock-control none --cache-control none" to profile at
# the clocks and with the caches a timed run has).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-out}
dir=${DIR:-build-prof}
mkdir -p "$out"
PROFILES=${PROFILES:-"large|8192,8192,8192|tn f32 128 256 4 1 1|2,8,1;large-c2x1|8192,8192,8192|tn f32 128 192 4 2 1|2,8,1;skinny|4096,128,4096|nn f32 64 64 8 1 1|1,8,1;decode|64,4096,4096|nn f32 64 64 8 1 1|0,1,2"}
IFS=';' read -ra profs <<<"$PROFILES"

ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || {
  echo "profile_wgmma: ncu not found" >&2
  exit 1
}
"$ncu" --version | tail -1

# The artifacts, one per distinct spec.
specs=()
declare -A seen=()
for p in "${profs[@]}"; do
  IFS='|' read -r _ _ spec _ <<<"$p"
  [ -n "${seen[$spec]:-}" ] || specs+=("$spec")
  seen[$spec]=1
done
name_of() {  # the artifact wgmma_bench.sh builds for a spec
  if [[ $1 == swapab\ * ]]; then
    read -r _ lay acc bm bn st <<<"$1"
    echo "$dir/wgmma_swapab_${lay}_${acc}_${bm}x${bn}_s${st}.so"
    return
  fi
  read -r lay acc bm bn st cm cn pp <<<"$1"
  echo "$dir/wgmma_${lay}_${acc}_${bm}x${bn}_c${cm}x${cn}_s${st}${pp:+_pp}.so"
}
need_build=0
for s in "${specs[@]}"; do [ -f "$(name_of "$s")" ] || need_build=1; done
if [ $need_build = 1 ]; then
  WGMMA_SPECS=$(
    IFS=';'
    echo "${specs[*]}"
  ) bash "$here/bench/wgmma/wgmma_bench.sh" build "$dir" >"$out/profile-build.txt" 2>&1 || {
    tail -5 "$out/profile-build.txt"
    exit 1
  }
fi

# Metrics asked for by name, where this ncu knows them (an unknown name stops ncu): the tensor
# pipe (gmma is wgmma's pipe on sm_90; hmma the mma.sync one), FLOPs, DRAM, L2, occupancy.
"$ncu" --query-metrics >"$out/ncu-metrics.txt" 2>&1 || true
want=(
  sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__inst_executed_pipe_tensor_op_gmma.sum
  sm__ops_path_tensor_src_fp16_dst_fp32.sum
  sm__ops_path_tensor_src_fp16_dst_fp16.sum
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  dram__bytes.sum.per_second
  lts__throughput.avg.pct_of_peak_sustained_elapsed
  lts__t_sector_hit_rate.pct
  sm__warps_active.avg.pct_of_peak_sustained_active
  sm__throughput.avg.pct_of_peak_sustained_elapsed
  gpu__time_duration.sum
)
metrics=()
for m in "${want[@]}"; do grep -q "^${m%%.*} " "$out/ncu-metrics.txt" && metrics+=("$m"); done
echo "metrics: ${metrics[*]:-none by name, only the sections}"
mflag=()
[ ${#metrics[@]} -eq 0 ] || mflag=(--metrics "$(
  IFS=,
  echo "${metrics[*]}"
)")

echo "tag,shape,variant,duration_us,tensor_gmma_pct,dram_pct,l2_pct,occupancy_pct,top_stalls" >"$out/profile_summary.csv"
for p in "${profs[@]}"; do
  IFS='|' read -r tag shape spec knobs flags <<<"$p"
  so=$(name_of "$spec")
  IFS=, read -r r w k <<<"$knobs"
  rasters=(heuristic along_m along_n)
  [ "${k:-1}" = 0 ] && k=auto
  art="$so@$(cat "${so%.so}.spec") | raster=${rasters[$r]} swizzle=$w splits=${k:-1}"
  echo "== $tag: $shape $spec @$knobs ${flags:-}"
  # shellcheck disable=SC2086  # flags: extra ncu options, word-split on purpose
  timeout "${NCU_TIMEOUT:-50}" "$ncu" --kernel-name regex:'wgmma_gemm_kernel|swapab_kernel' --launch-skip 1 --launch-count 1 ${flags:-} \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis "${mflag[@]}" \
    --target-processes all -f -o "$out/prof-$tag" "${CUDAL2_CLI:-$here/build/cudal2}" eval --artifact "$art" \
    --shape "$shape" --timers graph --reps 1 --baselines "" --no-confine --db "$out/profile.db" \
    >"$out/prof-$tag.log" 2>&1 || echo "   ncu or the evaluation failed (see $out/prof-$tag.log)"
  grep -E " ok | wrong-result|unsupported|==ERROR==|==WARNING==" "$out/prof-$tag.log" | head -3
  [ -f "$out/prof-$tag.ncu-rep" ] || continue
  "$ncu" --import "$out/prof-$tag.ncu-rep" --csv --page raw >"$out/prof-$tag-raw.csv" 2>/dev/null
  "$ncu" --import "$out/prof-$tag.ncu-rep" --page details >"$out/prof-$tag-details.txt" 2>/dev/null
  python3 - "$out/prof-$tag-raw.csv" "$tag" "$shape" "$spec @$knobs" >>"$out/profile_summary.csv" <<'PY'
import csv, re, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
hdr = rows[0] if rows else []
data = [r for r in rows[1:] if r[0].strip().isdigit()]  # the kernel; a units row may come first
units = next((r for r in rows[1:] if not r[0].strip().isdigit()), [])
val = data[0] if data else []
def num(name):
    if name not in hdr or not val: return None
    try: return float(val[hdr.index(name)].replace(",", ""))
    except (ValueError, IndexError): return None
def fmt(x): return "" if x is None else "%.1f" % x
dur = num("gpu__time_duration.sum")
unit = units[hdr.index("gpu__time_duration.sum")] if dur is not None and units else ""
if dur is not None: dur = dur / 1000 if unit in ("nsecond", "ns") else dur * 1000 if unit in ("msecond", "ms") else dur
# Stall reasons: the family of issue_stalled_<reason> metrics with the most members.
fam = {}
for i, h in enumerate(hdr):
    m = re.match(r"^(smsp__\w*?issue_stalled_)(\w+?)((_per_\w+)?\.\w+)$", h)
    if m and "not_issued" not in h:
        try: fam.setdefault(m.group(1) + "*" + m.group(3), []).append((float(val[i].replace(",", "")), m.group(2)))
        except (ValueError, IndexError): pass
# Tensor pipe: wgmma's (gmma) where collected, else the busiest tensor pipe metric there is.
tensor = num("sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active")
if tensor is None:
    cands = [num(h) for h in hdr if "pipe_tensor" in h and h.endswith("pct_of_peak_sustained_active")]
    cands = [c for c in cands if c is not None]
    tensor = max(cands) if cands else None
top = ""
if fam:
    best = max(fam.values(), key=len)
    top = " ".join("%s=%.2f" % (r, v) for v, r in sorted(best, reverse=True)[:5])
print(",".join([sys.argv[2], sys.argv[3].replace(",", "x"), sys.argv[4].replace(",", "/"), fmt(dur),
                fmt(tensor),
                fmt(num("dram__throughput.avg.pct_of_peak_sustained_elapsed")),
                fmt(num("lts__throughput.avg.pct_of_peak_sustained_elapsed")),
                fmt(num("sm__warps_active.avg.pct_of_peak_sustained_active")), top]))
PY
done
column -s, -t <"$out/profile_summary.csv" 2>/dev/null || cat "$out/profile_summary.csv"
