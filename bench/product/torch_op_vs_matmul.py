#!/usr/bin/env python3
"""cudal2.mm (torch.ops.cudal2.mm) vs torch.matmul, on the sample grid and on off-grid LLM shapes.

    python3 bench/product/torch_op_vs_matmul.py [--reps 15] [--csv out.csv] [--only-llm] [--layouts nn,tn]
                                        [--shapes bench/shapes/models_offgrid.txt]

For each shape and layout (nn: b row-major K x N; tn: b = w.t() of a contiguous N x K weight, the
nn.Linear case), both functions are timed two ways, interleaved per repetition:
  graph  R back-to-back calls captured in one CUDA graph, replayed between CUDA events;
  eager  R back-to-back calls from Python between CUDA events (includes each call's host cost);
  host   the host wall time of those R eager calls (perf_counter, no synchronization inside): what a
         call costs the Python thread, the figure the op must not lose on.
R is chosen per shape so one sample takes about 1 ms of GPU time (1 for the largest shapes); every
sample is divided by R; warm-up before timing; the table shows medians over --reps samples and the
speedup t(torch.matmul) / t(cudal2.mm) (> 1: cudal2 faster), geomeans per group and timer at the end.
Each result is first checked against torch.matmul (relative Frobenius difference < 1e-3).

Why these times are not the product's evaluator's (`cudal2 bench`, which has torch.matmul as its
method `torch-matmul` for the kernel-level comparison): what is measured here is the PyTorch
operator itself, Python's call through torch.ops into the library with PyTorch's allocator,
streams and tensors, and nothing but a PyTorch process can time that. The rules are the
evaluator's: CUDA events on the device, warm-up, the two sides interleaved in the same process on
the same inputs, medians of many samples, every result checked first.
"""
import argparse
import csv
import statistics
import sys
import os

import torch

try:  # the installed package (pip install ./python) first; else the source tree's
    import cudal2
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import cudal2  # noqa: E402
from cudal2.analysis import gmean as geomean  # noqa: E402

SAMPLE = [(64, 64, 64), (128, 128, 128), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024),
          (64, 64, 16384), (256, 256, 8192), (64, 4096, 4096), (4096, 64, 4096), (128, 16384, 1024),
          (16384, 256, 12288), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
          (16384, 4096, 512), (16384, 16384, 16384)]
# Off the grid: linear layers of common LLMs (N x K weight, M tokens): Llama-3-8B (qkv 6144x4096,
# o 4096x4096, gate+up 28672x4096, down 4096x14336), Llama-3-70B/TP8 slices, Mistral-7B, Qwen2-7B,
# at decode (M = 1..32) and prefill (M = 100..4000) token counts.
LLM = [(1, 6144, 4096), (1, 28672, 4096), (1, 4096, 14336), (8, 4096, 4096), (16, 6144, 4096),
       (32, 28672, 4096), (32, 4096, 14336), (100, 1280, 8192), (128, 8192, 1024), (200, 7168, 8192),
       (384, 4096, 4096), (500, 3584, 3584), (512, 18944, 3584), (777, 3584, 18944), (1000, 4608, 3584),
       (1536, 4096, 4096), (2000, 6144, 4096), (3000, 28672, 4096), (4000, 4096, 14336), (4096, 1024, 8192)]


def host_us(fn_pair, calls, reps):
    """Interleaved host wall time of two callables (each making `calls` calls), per call, median."""
    import time

    times = [[], []]
    for rep in range(reps):
        for i in ((0, 1) if rep % 2 == 0 else (1, 0)):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn_pair[i]()
            times[i].append((time.perf_counter() - t0) * 1e6 / calls)
    torch.cuda.synchronize()
    return [statistics.median(t) for t in times]


def read_shapes(path):
    out = []
    for line in open(path):
        line = line.split("#")[0].strip()
        if line:
            out.append(tuple(int(v) for v in line.split(",")))
    return out


def median_us(fn_pair, calls, reps, graph):
    """Interleaved timing of two callables (each making `calls` calls); per-call medians in us."""
    times = [[], []]
    if graph:
        graphs = []
        for fn in fn_pair:
            fn()  # warm-up outside capture
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                fn()
            graphs.append(g)
        runners = [g.replay for g in graphs]
    else:
        runners = list(fn_pair)
    for r in runners:  # warm-up
        r()
        r()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for rep in range(reps):
        order = (0, 1) if rep % 2 == 0 else (1, 0)
        for i in order:
            start.record()
            runners[i]()
            stop.record()
            stop.synchronize()
            times[i].append(start.elapsed_time(stop) * 1000.0 / calls)
    return [statistics.median(t) for t in times]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--csv")
    ap.add_argument("--layouts", default="nn,tn")
    ap.add_argument("--only-llm", action="store_true")
    ap.add_argument("--shapes", help="more M,N,K shapes (layout TN, group 'models'), e.g. bench/shapes/models_offgrid.txt")
    ap.add_argument("--max-flops", type=float, default=float("inf"), help="skip shapes with 2MNK above this")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_op_vs_matmul: no CUDA GPU", file=sys.stderr)
        return 1
    dev = torch.cuda.get_device_name()
    print(f"# {dev}, torch {torch.__version__}, cudal2 op: {getattr(cudal2, 'BACKEND', 'python')}, reps {args.reps}",
          flush=True)
    cudal2.init()
    layouts = args.layouts.split(",")
    todo = [] if args.only_llm else [("sample", s, l) for s in SAMPLE for l in layouts]
    todo += [("llm", s, "tn") for s in LLM]  # LLM weights are N x K: x @ w.t()
    if args.shapes:
        todo += [("models", s, "tn") for s in read_shapes(args.shapes)]
    rows = []
    hdr = f"{'group':6} {'shape':>18} {'lay':3} {'path':16} {'graph mm':>10} {'graph cudal2':>12} {'x':>6}" \
          f" {'eager mm':>10} {'eager cudal2':>12} {'x':>6} {'host mm':>8} {'host cudal2':>11} {'x':>6}"
    print(hdr)
    for group, (m, n, k), layout in todo:
        if 2.0 * m * n * k > args.max_flops:
            continue
        g = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
        a = torch.randn(m, k, device="cuda", generator=g).to(torch.float16)
        b = (torch.randn(n, k, device="cuda", generator=g).to(torch.float16).t() if layout == "tn" else
             torch.randn(k, n, device="cuda", generator=g).to(torch.float16))
        c_ref, c = torch.matmul(a, b), cudal2.mm(a, b)
        diff = ((c.float() - c_ref.float()).norm() / c_ref.float().norm().clamp_min(1e-30)).item()
        if not diff < 1e-3:
            print(f"{group} {m}x{n}x{k} {layout}: cudal2.mm differs from torch.matmul: {diff:.3g}", file=sys.stderr)
            return 1
        path = cudal2.query(m, n, k, layout)["path"]
        # calls per sample: about 1 ms of GPU time
        t0 = median_us((lambda: torch.matmul(a, b), lambda: torch.matmul(a, b)), 1, 3, graph=False)[0]
        calls = max(1, min(200, int(1000.0 / max(t0, 1.0))))
        reps = args.reps if t0 * calls * args.reps < 2e6 else max(3, int(2e6 / (t0 * calls)))

        def loop(f):
            def run():
                for _ in range(calls):
                    f(a, b)
            return run

        fns = (loop(torch.matmul), loop(cudal2.mm))
        gm, gc = median_us(fns, calls, reps, graph=True)
        em, ec = median_us(fns, calls, reps, graph=False)
        hm, hc = host_us(fns, calls, reps)
        row = dict(group=group, m=m, n=n, k=k, layout=layout, path=path, calls=calls, reps=reps,
                   graph_matmul_us=gm, graph_cudal2_us=gc, graph_speedup=gm / gc,
                   eager_matmul_us=em, eager_cudal2_us=ec, eager_speedup=em / ec,
                   host_matmul_us=hm, host_cudal2_us=hc, host_speedup=hm / hc, rel_diff=diff)
        rows.append(row)
        print(f"{group:6} {f'{m}x{n}x{k}':>18} {layout:3} {path:16} {gm:10.2f} {gc:12.2f} {gm / gc:6.3f}"
              f" {em:10.2f} {ec:12.2f} {em / ec:6.3f} {hm:8.2f} {hc:11.2f} {hm / hc:6.3f}", flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            f.write(f"# python3 bench/product/torch_op_vs_matmul.py {' '.join(sys.argv[1:])}\n# gpu={dev} torch={torch.__version__}\n")
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            for r in rows:
                w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})
    print("\ngeomean speedup t(torch.matmul) / t(cudal2.mm)   (> 1: cudal2.mm faster)")
    print(f"{'group':22} {'shapes':>6} {'graph':>7} {'eager':>7} {'host':>7} {'host worst':>10}")
    groups = [("sample nn", lambda r: r["group"] == "sample" and r["layout"] == "nn"),
              ("sample tn", lambda r: r["group"] == "sample" and r["layout"] == "tn"),
              ("llm (tn)", lambda r: r["group"] == "llm"), ("models (tn)", lambda r: r["group"] == "models"),
              ("all", lambda r: True)]
    for name, sel in groups:
        rs = [r for r in rows if sel(r)]
        if rs:
            print(f"{name:22} {len(rs):6d} {geomean([r['graph_speedup'] for r in rs]):7.3f}"
                  f" {geomean([r['eager_speedup'] for r in rs]):7.3f} {geomean([r['host_speedup'] for r in rs]):7.3f}"
                  f" {min(r['host_speedup'] for r in rs):10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
