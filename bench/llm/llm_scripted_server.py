#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server for the LLM end-to-end run (standard
library only, loopback only). Each request gets the next reply of the script: free-form kernels
with the kernel C ABI -- the naive kernel, one that does not compile (so the repair turn runs),
then our mma family's kernel at growing tile sizes written out as standalone sources (the
family's header, its configuration type and the ABI export) -- each in a ```cuda block; after the
script, replies with no code. Each shape gets the whole script.

    python3 bench/llm/llm_scripted_server.py --port 18080 [--log requests.jsonl]
"""
import argparse
import json
import pathlib
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = pathlib.Path(__file__).resolve().parents[2]

MMA = """// Our mma family as a free-form kernel: tile {bm}x{bn}x{bk}, warps {wm}x{wn}, {stages} stages.
#include "mma_gemm.cuh"
using cudal2_kernel = cudal2_mma::Gemm<cudal2_mma::Config<{tn}, false, {bm}, {bn}, {bk}, {wm}, {wn}, {stages}>>;
CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "mma {layout} f32 tile={bm}x{bn}x{bk} warps={wm}x{wn} stages={stages} (llm script)")
"""
# Valid mma configurations (enumerate_specs("mma", ...)), roughly slow to fast on large shapes.
CONFIGS = [(16, 16, 32, 1, 1, 4), (32, 32, 32, 1, 1, 4), (64, 64, 32, 2, 2, 4),
           (64, 128, 32, 2, 4, 4), (128, 64, 64, 4, 2, 3), (128, 128, 32, 2, 4, 4), (128, 128, 64, 2, 4, 3)]


def script(layout):
    naive = (ROOT / "tests/gpu/candidates/naive.cu").read_text()
    replies = ["A correct first version: one thread per output element.\n\n```cuda\n" + naive + "```\n"]
    broken = naive.replace("float acc = 0.f;", "float acc = zero_value;")
    replies.append("A register-blocked version.\n\n```cuda\n" + broken + "```\n")
    replies.append("Fixed the undeclared accumulator.\n\n```cuda\n" + naive + "\n// fixed\n```\n")
    for bm, bn, bk, wm, wn, st in CONFIGS:
        src = MMA.format(bm=bm, bn=bn, bk=bk, wm=wm, wn=wn, stages=st, layout=layout,
                         tn="true" if layout == "tn" else "false")
        replies.append(f"Tensor-core tiles of {bm}x{bn}x{bk}, cp.async with {st} stages.\n\n```cuda\n{src}```\n")
    return replies


class State:
    def __init__(self, replies, log):
        self.replies, self.i, self.lock, self.log = replies, {}, threading.Lock(), log


def make_handler(state):
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            if not self.path.endswith("/chat/completions"):
                self.send_error(404)
                return
            n = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(n) or b"{}")
            # One script per shape (the prompt names it), so every shape of a run sees the whole
            # sequence; requests without a shape share one.
            m = re.search(r"Shape: (\S+)", json.dumps(body))
            shape = m.group(1) if m else ""
            with state.lock:
                i = state.i.get(shape, 0)
                state.i[shape] = i + 1
                content = state.replies[i] if i < len(state.replies) else "I have no further ideas."
                if state.log:
                    with open(state.log, "a") as f:
                        f.write(json.dumps({"i": i, "request": body}) + "\n")
            out = json.dumps({"id": f"chatcmpl-{i}", "object": "chat.completion", "model": body.get("model", ""),
                              "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                           "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": len(json.dumps(body)) // 4,
                                        "completion_tokens": len(content) // 4}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
    return H


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18080)
    ap.add_argument("--layout", default="nn")
    ap.add_argument("--log", default="")
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(State(script(a.layout), a.log)))
    print(f"scripted LLM on http://127.0.0.1:{a.port}/v1", file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
