#!/usr/bin/env bash
# The hardened evaluator on the GPU (device tool), over a carried build: every adversarial
# candidate in tests/gpu/adversarial/ and the honest control, through `cudal2 eval`, with a verdict
# table at the end.   bash bench/evaluator/check_evaluator.sh BUILD_DIR [extra eval options...]
set -uo pipefail
source "$(dirname "$0")/../device_env.sh"
B=${1:-build}; shift || true
srcs=(); for f in tests/gpu/adversarial/*.cu tests/gpu/candidates/naive.cu; do srcs+=(--source "$f"); done
t0=$(date +%s)
"$B/cudal2" eval "${srcs[@]}" --shape 256,256,256 --shape 96,80,64 --reps 5 --baselines cublas-nn \
  --batch 8 --db "$OUT/adversarial.db" "$@" > "$OUT/adversarial.log" 2>&1
echo "eval rc=$? in $(( $(date +%s) - t0 ))s"
grep -E "^[0-9a-f]{16} " "$OUT/adversarial.log" | awk '{print $2}' | sort | uniq -c
paste <(ls tests/gpu/adversarial/*.cu tests/gpu/candidates/naive.cu | xargs -n1 basename) \
      <(grep -E "^[0-9a-f]{16} " "$OUT/adversarial.log" | awk '{print $2}') | awk '{printf "%-24s %s\n", $1, $2}'
