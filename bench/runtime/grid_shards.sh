#!/usr/bin/env bash
# The whole paper grid on the GPU machine, one process a shard (bench/runtime/runtime_vs_cublaslt.sh:
# every runtime slot set in the environment beside cuBLASLt), the shards spread over the visible GPUs
# (GPU g runs shards g*S/G .. (g+1)*S/G - 1 in turn): the runs of bench/results/h200/reconfirm/ and
# server-grid/. No shard starts after STOP_AFTER seconds (the device tool's calls end at 10 minutes;
# the shards run are kept). Writes $OUT/TAG.csv.gz (the shards under one header,
# bench/merge_csv.py) and $OUT/TAG-logs.tgz.
#   bash bench/runtime/grid_shards.sh TAG [SHARDS]      (SHARDS: 20)
# $CUDAL2_RUNTIME_LIB (the carried build's library), _B, _C: the slots; $BASELINES (auto-tuning NN
# and TN), $MODE (offline), $TIMERS (graph,chain; server: graph), $REPS (10), $QPS (1000),
# $STOP_AFTER (420), $GPUS (every GPU nvidia-smi lists), $FIRST (0: the shards before it are not
# run, so that a second call goes on where the first one stopped; the merge keeps whichever ran).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../device_env.sh" >/dev/null
tag=$1 shards=${2:-20}
export MODE=${MODE:-offline} REPS=${REPS:-10} QPS=${QPS:-1000}
export BASELINES=${BASELINES:-cublaslt-autotune-nn,cublaslt-autotune-tn}
[ "$MODE" = server ] && export TIMERS=${TIMERS:-graph}
export TIMERS=${TIMERS:-graph,chain}
gpus=${GPUS:-$(nvidia-smi -L | wc -l)}
[ "$gpus" -ge 1 ] 2>/dev/null || { echo "grid_shards: no GPU"; exit 3; }
t0=$(date +%s)
run_gpu() {  # gpu
  local g=$1 i
  local first=${FIRST:-0}
  for ((i = first + g * (shards - first) / gpus; i < first + (g + 1) * (shards - first) / gpus; ++i)); do
    if [ $(( $(date +%s) - t0 )) -gt "${STOP_AFTER:-420}" ]; then echo "grid_shards: shard $i not started"; break; fi
    CUDA_VISIBLE_DEVICES=$g bash "$here/runtime_vs_cublaslt.sh" "$tag-$i" --grid paper --shard "$i/$shards"
  done
}
for ((g = 0; g < gpus; ++g)); do run_gpu $g & done
wait
done_csv=() logs=()
for ((i = 0; i < shards; ++i)); do
  [ -s "$OUT/runtime-$tag-$i.csv" ] && done_csv+=("$OUT/runtime-$tag-$i.csv")
  [ -f "$OUT/runtime-$tag-$i.log" ] && logs+=("runtime-$tag-$i.log")
done
python3 "$here/../merge_csv.py" "$OUT/$tag.csv.gz" "${done_csv[@]}" &&
  tar czf "$OUT/$tag-logs.tgz" -C "$OUT" "${logs[@]}" && rm -f "${done_csv[@]}" "${logs[@]/#/$OUT/}"
