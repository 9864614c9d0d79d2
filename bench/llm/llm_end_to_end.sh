#!/usr/bin/env bash
# The LLM proposer and `cudal2 serve` end to end on the GPU (device tool), over a carried build directory (carry all of it: build/lib
# holds cpp-httplib): NOT RUN YET.
#   1. `cudal2 tune --search llm` against the scripted OpenAI-compatible server
#      (bench/llm/llm_scripted_server.py: the naive kernel, a compile error and its repair, then our
#      mma family written as free-form sources at growing tile sizes), one proposal per round, on
#      two shapes; the best time per shape after each turn (it should fall over the run);
#   2. the trajectories export;
#   3. `cudal2 serve` answering a client (the naive kernel, a wrong token, a malformed body).
#   bash bench/llm/llm_end_to_end.sh BUILD_DIR      (logs, stores and tables under $OUT)
set -uo pipefail
source "$(dirname "$0")/../device_env.sh"
B=${1:-build}
PORT=18080; SPORT=18081
python3 bench/llm/llm_scripted_server.py --port $PORT --log "$OUT/llm_requests.jsonl" 2> "$OUT/llm_server.log" &
LLM_PID=$!
sleep 1
t0=$(date +%s)
for shape in 1024,1024,1024 256,4096,1024; do
  "$B/cudal2" tune --search llm --llm-url "http://127.0.0.1:$PORT/v1" --llm-model scripted --llm-repairs 2 \
    --shape "$shape" --budget 10 --round 1 --timers graph --reps 10 --baselines cublas-nn,cublaslt-autotune-nn \
    --db "$OUT/llm.db" >> "$OUT/tune.log" 2>&1
  echo "tune $shape rc=$? after $(( $(date +%s) - t0 ))s"
done
kill "$LLM_PID" 2>/dev/null
"$B/cudal2" export --db "$OUT/llm.db" --trajectories "$OUT/trajectories.jsonl" --include-unscored
python3 - "$OUT/llm.db" "$(cd "$(dirname "$0")/.." && pwd)" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])  # bench/: _analysis
from _analysis import llm_turns
turns = llm_turns(sys.argv[1])
print("%-16s %4s %-7s %-16s %10s %10s %8s" % ("shape", "turn", "kind", "status", "time_us", "best_us", "reward"))
for shape in sorted({t[:3] for t in turns}):
    best = None
    for kind, status, t, r in [t[3:] for t in turns if t[:3] == shape]:
        if t is not None and (best is None or t < best):
            best = t
        print("%-16s %4s %-7s %-16s %10s %10s %8s" % ("x".join(map(str, shape)), "", kind, status,
              "-" if t is None else "%.2f" % t, "-" if best is None else "%.2f" % best,
              "-" if r is None else "%.3f" % r))
PY
export CUDAL2_SERVE_TOKEN="e2e-$RANDOM$RANDOM"
"$B/cudal2" serve --port $SPORT --db "$OUT/serve.db" > "$OUT/serve.log" 2>&1 &
SERVE_PID=$!
sleep 2
python3 - "$SPORT" "$CUDAL2_SERVE_TOKEN" <<'PY' | tee "$OUT/serve_client.log"
import json, sys, urllib.request, urllib.error
port, token = sys.argv[1], sys.argv[2]
src = open("tests/gpu/candidates/naive.cu").read()
def post(body, tok):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/evaluate", data=body.encode(),
                                 headers={"Authorization": f"Bearer {tok}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")
print("health", urllib.request.urlopen(f"http://127.0.0.1:{port}/health").read().decode())
print("naive", *post(json.dumps({"source": src, "layout": "nn", "shapes": [[256, 256, 256], [1000, 1000, 1000]]}), token))
print("wrong token", post(json.dumps({"source": src, "shapes": [[64, 64, 64]]}), "nope")[0])
print("malformed", post("{", token)[0])
PY
kill -INT "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null
echo "done in $(( $(date +%s) - t0 ))s"
