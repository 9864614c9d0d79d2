#!/usr/bin/env bash
# The whole paper grid on the GPU machine, one `cudal2 bench` process a shard, the shards spread over
# the visible GPUs (GPU g runs shards g*S/G .. (g+1)*S/G - 1 in turn), every runtime slot set in the
# environment beside cuBLASLt auto-tuning NN and TN: the runs of bench/results/h200/reconfirm/ and
# server-grid/. No shard starts after STOP_AFTER seconds (the device tool's calls end at 10 minutes;
# the shards run are kept). Writes $OUT/TAG.csv.gz (the shards under one header,
# bench/merge_csv.py) and $OUT/TAG-logs.tgz.
#   bash bench/runtime/grid_shards.sh TAG [SHARDS]      (SHARDS: 20)
# $CUDAL2_RUNTIME_LIB (the carried build's library), _B, _C: the slots (runtime-, runtime-b-, runtime-c-*);
# $METHODS (the slots set, then auto-tuning NN/TN), $MODE (offline), $TIMERS (graph,chain; server:
# graph), $REPS (10), $QPS (1000), $STOP_AFTER (420), $GPUS (every GPU nvidia-smi lists).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../device_env.sh" >/dev/null
tag=$1 shards=${2:-20}
B=${BUILD:-build}
: "${CUDAL2_RUNTIME_LIB:=$PWD/$B/src/runtime/libcudal2_runtime.so.0}"
export CUDAL2_RUNTIME_LIB
methods=${METHODS:-}
if [ -z "$methods" ]; then
  methods=runtime-nn,runtime-tn
  [ -n "${CUDAL2_RUNTIME_LIB_B:-}" ] && methods+=,runtime-b-nn,runtime-b-tn
  [ -n "${CUDAL2_RUNTIME_LIB_C:-}" ] && methods+=,runtime-c-nn,runtime-c-tn
  methods+=,cublaslt-autotune-nn,cublaslt-autotune-tn
fi
mode=${MODE:-offline}
timers=${TIMERS:-graph,chain}
[ "$mode" = server ] && timers=${TIMERS:-graph}
gpus=${GPUS:-$(nvidia-smi -L | wc -l)}
[ "$gpus" -ge 1 ] 2>/dev/null || { echo "grid_shards: no GPU"; exit 3; }
work=$OUT/$tag.shards
mkdir -p "$work"
t0=$(date +%s)
run_gpu() {  # gpu
  local g=$1 i
  for ((i = g * shards / gpus; i < (g + 1) * shards / gpus; ++i)); do
    if [ $(( $(date +%s) - t0 )) -gt "${STOP_AFTER:-420}" ]; then echo "grid_shards: shard $i not started"; break; fi
    CUDA_VISIBLE_DEVICES=$g "$B/cudal2" bench --grid paper --shard "$i/$shards" --methods "$methods" \
      --reference cublaslt-autotune-nn,cublaslt-autotune-tn --mode "$mode" --reps "${REPS:-10}" --timers "$timers" \
      --qps "${QPS:-1000}" --verify-budget 3e7 --csv "$work/$i.csv" --quiet > "$work/$i.log" 2>&1
    echo "grid_shards: shard $i/$shards on GPU $g rc=$? ($(( $(date +%s) - t0 ))s)"
  done
}
for ((g = 0; g < gpus; ++g)); do run_gpu $g & done
wait
done_csv=()
for ((i = 0; i < shards; ++i)); do [ -s "$work/$i.csv" ] && done_csv+=("$work/$i.csv"); done
python3 "$here/../merge_csv.py" "$OUT/$tag.csv.gz" "${done_csv[@]}"
tar czf "$OUT/$tag-logs.tgz" -C "$work" $(cd "$work" && ls ./*.log) && rm -rf "$work"
