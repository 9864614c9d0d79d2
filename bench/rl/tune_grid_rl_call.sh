#!/usr/bin/env bash
# One device-tool call of the whole-grid rl run (target: the grid in <= 1 GPU-hour): all 1000
# paper shapes, cuBLASLt's configuration space (--lt-max 8, the space the exhaustive campaign of
# bench/results/h100/grid-cublaslt searched), `--search rl` with one proposal per problem and round
# (--round 0 --per-problem 1: every problem gets one more evaluation per round, and the policy
# learns from all 2000 problems between rounds). Only cuBLASLt's heuristic is timed beside the
# candidates (export needs it); auto-tuning is compared afterwards (runtime_vs_cublaslt.sh), so it
# is not part of the search's time. Resumable: the store and the policy file stay in .jit/rl/
# (carry it to the next call), the run stops starting rounds after MINUTES.
#   bash bench/rl/tune_grid_rl_call.sh MINUTES CALL [tune options]   e.g. bash bench/rl/tune_grid_rl_call.sh 8.5 1
# (on a CPU, against recorded measurements: ... 1 1 --judge python/cudal2/replay_judge.py --no-gpu-check
#  with CUDAL2_REPLAY_DB set; python/cudal2/replay_judge.py)
# Here, afterwards: tar xzf $FILES/rl.tgz -C /tmp && python3 python/cudal2/store_csv.py import /tmp/store
#   .jit/rl/grid-rl.db && gunzip -c /tmp/policy.json.gz > .jit/rl/policy.json
set -uo pipefail
source "$(dirname "$0")/../device_env.sh" >/dev/null
B=${BUILD:-build}
mkdir -p .jit/rl
BASELINES=cublaslt-heuristic-nn,cublaslt-heuristic-tn BUILD=$B LT_MAX=8 bash "$(dirname "$0")/../cublaslt/tune_grid.sh" 0/1 "$1" \
  .jit/rl/grid-rl.db --search rl --policy-file .jit/rl/policy.json --round 0 --per-problem 1 ${ROUNDS:+--rounds $ROUNDS} "${@:3}"
cp .jit/rl/grid-rl.log "$OUT/tune-rl-call$2.log"
python3 "$(dirname "$0")/../../python/cudal2/store_csv.py" export .jit/rl/grid-rl.db "$OUT/store" >/dev/null &&
  gzip -c .jit/rl/policy.json > "$OUT/policy.json.gz" &&
  tar czf "$OUT/rl.tgz" -C "$OUT" store policy.json.gz && rm -rf "$OUT/store" "$OUT/policy.json.gz"
ls -la "$OUT"
