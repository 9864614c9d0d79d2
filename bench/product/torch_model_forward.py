#!/usr/bin/env python3
"""A small model's forward pass end to end: nn.Linear (torch.matmul's cuBLAS path) against the same
model after ``cudal2.patch`` (every nn.Linear through cudal2.mm), eagerly and replayed as a CUDA
graph, at several batch sizes.

    python3 bench/product/torch_model_forward.py [--config examples/models/llama-3-8b.json] [--blocks 4]
                                         [--batches 1,16,512] [--reps 20] [--csv out.csv] [--decode CACHE] [--nn]

The model: --blocks transformer MLP blocks of the config (x + down(silu(gate(x)) * up(x)), the
Llama/Mistral/Qwen feed-forward, nn.Linear without bias), fp16 on the GPU, under
torch.inference_mode. With --decode CACHE, each block is a decoder layer's decode step instead:
attention (q, k, v, o projections of the config's heads, grouped-query attention of each of the
batch's sequences, one new token each, over a key/value cache of CACHE positions) then the MLP,
both residual. With --nn every weight is stored in x out (row-major K x N, the NN layout of GPT-2's
Conv1D or a JAX port: `x @ W`), torch.matmul against cudal2.mm on the same tensors instead of
nn.Linear against cudal2.patch. Both variants share the weights and the input; each sample times one
forward pass between CUDA events, the two variants interleaved; medians over --reps. Output:
ratio t(nn.Linear) / t(cudal2) per batch and mode (> 1: cudal2 faster) and the largest relative
difference of the outputs (must stay below 1e-2). With the C++ op, the same patched model is also
timed through cudal2.Linear's Python forward (``py`` columns: what the layer cost before it called
torch.ops.cudal2.linear), in the same interleaved rounds.

Why these times are not the product's evaluator's (`cudal2 bench`, which has torch.matmul as its
method `torch-matmul` for the kernel-level comparison): what is measured here is a model's
forward pass with the operator inside it, Python's calls through torch.ops into the library
with PyTorch's allocator, streams and tensors, and nothing but a PyTorch process can time that. The rules are the
evaluator's: CUDA events on the device, warm-up, the two sides interleaved in the same process on
the same inputs, medians of many samples, every result checked first.
"""
import argparse
import copy
import csv
import json
import math
import os
import statistics
import sys

import torch

try:
    import cudal2
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import cudal2  # noqa: E402


def linear_tn(fan_in, fan_out):
    return torch.nn.Linear(fan_in, fan_out, bias=False)


class LinearNN(torch.nn.Module):
    """x @ W with W stored fan_in x fan_out (row-major: the NN layout), nn.Linear's initialization;
    `mm` is torch.matmul, or cudal2.mm in the patched copy."""

    def __init__(self, fan_in, fan_out):
        super().__init__()
        bound = 1.0 / math.sqrt(fan_in)
        self.weight = torch.nn.Parameter(torch.empty(fan_in, fan_out).uniform_(-bound, bound))
        self.mm = torch.matmul

    def forward(self, x):
        return self.mm(x, self.weight)


class MLP(torch.nn.Module):
    def __init__(self, hidden, inter, linear=linear_tn):
        super().__init__()
        self.gate_proj = linear(hidden, inter)
        self.up_proj = linear(hidden, inter)
        self.down_proj = linear(inter, hidden)

    def forward(self, x):
        return x + self.down_proj(torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class DecodeAttention(torch.nn.Module):
    """One decode step of grouped-query self-attention: `m` sequences, one new token each, against
    a key/value cache of `cache` positions (random, fixed: the step's GEMMs and attention are what
    is timed, not the cache update)."""

    def __init__(self, hidden, heads, kv_heads, cache, max_batch, linear=linear_tn):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, hidden // heads
        self.q_proj = linear(hidden, heads * self.hd)
        self.k_proj = linear(hidden, kv_heads * self.hd)
        self.v_proj = linear(hidden, kv_heads * self.hd)
        self.o_proj = linear(heads * self.hd, hidden)
        self.register_buffer("k_cache", torch.randn(max_batch, kv_heads, cache, self.hd) * 0.5)
        self.register_buffer("v_cache", torch.randn(max_batch, kv_heads, cache, self.hd) * 0.5)

    def forward(self, x):
        m = x.shape[0]
        q = self.q_proj(x).view(m, self.heads, 1, self.hd)
        k = torch.cat([self.k_cache[:m], self.k_proj(x).view(m, self.kv_heads, 1, self.hd)], dim=2)
        v = torch.cat([self.v_cache[:m], self.v_proj(x).view(m, self.kv_heads, 1, self.hd)], dim=2)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        return x + self.o_proj(a.reshape(m, self.heads * self.hd))


def timed(fns, reps):
    """Interleaved CUDA-event timing of callables; median us each."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = [[] for _ in fns]
    for rep in range(reps):
        order = range(len(fns)) if rep % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            start.record()
            fns[i]()
            stop.record()
            stop.synchronize()
            times[i].append(start.elapsed_time(stop) * 1000.0)
    return [statistics.median(t) for t in times]


def graphed(fn):
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=os.path.join(here, "..", "..", "examples", "models", "llama-3-8b.json"))
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--batches", default="1,16,512")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--csv")
    ap.add_argument("--decode", type=int, default=0, metavar="CACHE",
                    help="decoder layers' decode steps (attention over CACHE cached positions, then the MLP)")
    ap.add_argument("--nn", action="store_true", help="weights stored in x out: torch.matmul against cudal2.mm")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_model_forward: no CUDA GPU", file=sys.stderr)
        return 1
    cfg = json.load(open(a.config))
    hidden, inter = cfg["hidden_size"], cfg["intermediate_size"]
    torch.manual_seed(0)
    batches = [int(v) for v in a.batches.split(",")]
    linear = LinearNN if a.nn else linear_tn
    if a.decode > 0:
        heads, kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
        layers = []
        for _ in range(a.blocks):
            layers += [DecodeAttention(hidden, heads, kv, a.decode, max(batches), linear), MLP(hidden, inter, linear)]
        ref = torch.nn.Sequential(*layers).cuda().half()
    else:
        ref = torch.nn.Sequential(*[MLP(hidden, inter, linear) for _ in range(a.blocks)]).cuda().half()
    for p in ref.parameters():
        p.data.mul_(0.5)  # keep activations in fp16 range over the blocks
    if a.nn:
        ours = copy.deepcopy(ref)
        for mod in ours.modules():
            if isinstance(mod, LinearNN):
                mod.mm = cudal2.mm
    else:
        ours = cudal2.patch(copy.deepcopy(ref))
    dev = torch.cuda.get_device_name()
    print(f"# {dev}, torch {torch.__version__}, cudal2 op: {getattr(cudal2, 'BACKEND', 'python')}, "
          f"{a.blocks} {'decode-step decoder layers' if a.decode else 'MLP blocks'} of {os.path.basename(a.config)}"
          f"{', weights in x out (NN): torch.matmul against cudal2.mm' if a.nn else ''} "
          f"(hidden {hidden}, intermediate {inter}{f', cache {a.decode}' if a.decode else ''})")
    rows = []
    base = "torch.matmul" if a.nn else "nn.Linear"  # the column nn_linear_us holds its times either way
    with torch.inference_mode():
        cudal2.init()
        for m in batches:
            x = torch.randn(m, hidden, device="cuda").to(torch.float16)
            yr, yo = ref(x), ours(x)
            diff = ((yo.float() - yr.float()).norm() / yr.float().norm()).item()
            if not diff < 1e-2:
                print(f"batch {m}: outputs differ by {diff:.3g}", file=sys.stderr)
                return 1
            # Shapes no table holds are tuned in the background after their first call: time the
            # plans the model runs from then on, not the tuning beside them.
            if hasattr(cudal2, "tune_wait"):
                cudal2.tune_wait()
            fast = None if a.nn else getattr(cudal2.nn, "_linear", None)

            def ours_py():
                cudal2.nn._linear = None  # cudal2.Linear's Python forward
                try:
                    return ours(x)
                finally:
                    cudal2.nn._linear = fast

            fns = [lambda: ref(x), lambda: ours(x)] + ([ours_py] if fast is not None else [])
            eager = timed(fns, a.reps)
            graph = timed([graphed(f) for f in fns], a.reps)
            for mode, ts in (("eager", eager), ("graph", graph)):
                tr, to = ts[0], ts[1]
                row = dict(batch=m, mode=mode, nn_linear_us=tr, cudal2_us=to, speedup=tr / to, rel_diff=diff)
                extra = ""
                if len(ts) > 2:
                    row.update(cudal2_py_us=ts[2], speedup_py=tr / ts[2])
                    extra = f"  (Python forward {ts[2]:10.1f} us  x{tr / ts[2]:.3f})"
                rows.append(row)
                print(f"batch {m:5d} {mode:5}  {base} {tr:10.1f} us  cudal2 {to:10.1f} us  x{tr / to:.3f}{extra}",
                      flush=True)
    for mode in ("eager", "graph"):
        sp = [r["speedup"] for r in rows if r["mode"] == mode]
        line = f"geomean {mode}: {math.exp(sum(map(math.log, sp)) / len(sp)):.3f}"
        py = [r["speedup_py"] for r in rows if r["mode"] == mode and "speedup_py" in r]
        if py:
            line += f"  (Python forward {math.exp(sum(map(math.log, py)) / len(py)):.3f})"
        print(line)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            f.write(f"# python3 bench/product/torch_model_forward.py {' '.join(sys.argv[1:])}\n# gpu={dev} torch={torch.__version__}\n")
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            for r in rows:
                w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
