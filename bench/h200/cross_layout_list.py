#!/usr/bin/env python3
"""A confirmation list (bench/h200/transfer_call.sh LIST=...) for the entries of one layout that run
behind the other layout in a whole-grid runtime run: per shape the layout's table entry, cuBLASLt
configurations given on the command line (--tiles x --customs, cluster 1x1, one split; --extra
specs), and with --other-layout the other layout's configurations (its table entry and auto-tuning's
pick in the run) run in this layout, each with custom options 0-3 and with its own cluster and 1x1.
The confirmation adds cuBLASLt's own suggestions on the GPU (LAYOUTS=nn). Wrote the lists of
bench/results/h200/transfer/store15 and store16 (bench/results/h200/floor/README.md):

  list15: --slots runtime --ratio 0.95 --timers graph --min-m-over-n 4 --lead 4096,64,4096 --order size
          --tiles 315,316,15,314,318,26,17,12 --customs 1,3
          --extra "cublaslt nn f32 algo=66 tile=318 stages=35 reduction=0 swizzle=0 custom=1 inner=0 cluster=1x4 | splits=1"
  list16: --slots runtime,runtime-c --ratio 0.97 --timers graph,chain --exclude-shapes list15's shapes --other-layout --skip-compiled
          --tiles 315,316,15,13,314 --customs 1,3

  python3 bench/h200/cross_layout_list.py --run RUN.csv.xz --table tables/h200-f32.json [options] > LIST

A shape is listed where this layout's runtime time over the other layout's best (the runtime's and
auto-tuning's, every slot of the run) is below --ratio under every timer of --timers. --skip-compiled
leaves out shapes whose entry is a compiled kernel: a confirmation job without that kernel among its
candidates would replace it, and with it the job compiles on the GPU.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/: _analysis
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/h200/: lt_joint_space
from _analysis import load, read_shapes  # noqa: E402
from lt_joint_space import parse_spec, spec_text  # noqa: E402


def lt_variants(spec, layout):
    """A cuBLASLt configuration of either layout run in `layout`: as it is, then custom 0-3 with its own
    cluster and with 1x1 (nothing for a compiled kernel's spec)."""
    p = parse_spec(spec)
    if not p:
        return []
    _, accum, kv, splits = p
    out = [spec_text(layout, accum, kv, splits)]
    for custom in range(4):
        c = dict(kv, custom=str(custom))
        out += [spec_text(layout, accum, c, splits), spec_text(layout, accum, dict(c, cluster="1x1"), splits)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="a whole-grid `cudal2 bench` run of the runtime (.csv, .gz, .xz)")
    ap.add_argument("--table", required=True, help="the exported table whose entries are listed")
    ap.add_argument("--layout", default="nn", choices=("nn", "tn"), help="the layout whose entries are confirmed")
    ap.add_argument("--ratio", type=float, default=0.97, help="listed below this (other layout / this layout)")
    ap.add_argument("--timers", default="graph,chain", help="below --ratio under every one of these")
    ap.add_argument("--slots", default="", help="the run's runtime slots whose other layout counts (runtime,runtime-c; "
                    "default: every one)")
    ap.add_argument("--min-m-over-n", type=float, default=0, help="only shapes with M >= this x N")
    ap.add_argument("--exclude-shapes", action="append", default=[], help="a shape list to leave out (repeatable)")
    ap.add_argument("--skip-compiled", action="store_true", help="leave out shapes whose entry is a compiled kernel")
    ap.add_argument("--other-layout", action="store_true", help="the other layout's configurations run in this one")
    ap.add_argument("--tiles", default="", help="cuBLASLt tile ids (algo 66, cluster 1x1) for every shape")
    ap.add_argument("--customs", default="1,3", help="the custom options of --tiles")
    ap.add_argument("--extra", action="append", default=[], help="one more spec for every shape (repeatable)")
    ap.add_argument("--order", choices=("ratio", "size"), default="ratio",
                    help="furthest behind first, or largest M*N*K first")
    ap.add_argument("--lead", default="", help="M,N,K listed first")
    ap.add_argument("--comment", action="append", default=[], help="a header line (repeatable)")
    a = ap.parse_args()
    lay, other = a.layout, "tn" if a.layout == "nn" else "nn"
    timers = [t for t in a.timers.split(",") if t]
    with open(a.table) as f:
        table = json.load(f)
    ent = {(e["layout"], e["m"], e["n"], e["k"]): e["spec"] for e in table["entries"]}
    excl = {s for path in a.exclude_shapes for s in read_shapes(path)}
    us, details = {}, {}
    for r in load(a.run):
        if r["mode"] != "offline" or r["status"] != "ok" or not r["median_us"]:
            continue
        key = (int(r["m"]), int(r["n"]), int(r["k"]))
        us[key + (r["method"], r["timer"])] = float(r["median_us"])
        if r["method"] == "cublaslt-autotune-" + other and r["timer"] == "graph":
            details[key] = json.loads(r["details"] or "{}").get("config", "")
    slots = [x for x in a.slots.split(",") if x] or sorted(
        {k[3][: -len(other) - 1] for k in us if k[3].endswith("-" + other) and k[3].startswith("runtime")})
    picked = []
    for key in sorted({k[:3] for k in us}):
        m, n, k = key
        if key in excl or m < a.min_m_over_n * n or (lay, m, n, k) not in ent:
            continue
        if a.skip_compiled and not ent[(lay, m, n, k)].startswith("cublaslt"):
            continue
        ratios = []
        for t in timers:
            mine = us.get(key + (f"runtime-{lay}", t))
            theirs = [us[key + (x, t)] for x in [f"{s}-{other}" for s in slots] + ["cublaslt-autotune-" + other]
                      if key + (x, t) in us]
            if mine and theirs:
                ratios.append(min(theirs) / mine)
        if len(ratios) == len(timers) and max(ratios) < a.ratio:
            picked.append((min(ratios), key))
    picked.sort()
    if a.order == "size":  # stable: equal sizes stay furthest behind first
        picked.sort(key=lambda x: -x[1][0] * x[1][1] * x[1][2])
    if a.lead:
        lead = tuple(int(x) for x in a.lead.split(","))
        picked.sort(key=lambda x: x[1] != lead)  # stable: the rest keep their order
    tiles = [t for t in a.tiles.split(",") if t]
    customs = [c for c in a.customs.split(",") if c]
    for c in a.comment:
        print("# " + c)
    pairs = 0
    for _, (m, n, k) in picked:
        specs = [ent[(lay, m, n, k)]]
        if a.other_layout:
            for s in (ent.get((other, m, n, k), ""), details.get((m, n, k), "")):
                specs += lt_variants(s, lay)
        specs += [f"cublaslt {lay} f32 algo=66 tile={t} stages=35 reduction=0 swizzle=0 custom={c} inner=0 cluster=1x1 "
                  "| splits=1" for t in tiles for c in customs]
        specs += a.extra
        seen = set()
        for s in specs:
            if s and s not in seen:
                seen.add(s)
                print(f"{m},{n},{k} {s}")
                pairs += 1
    print(f"cross_layout_list: {len(picked)} shape(s), {pairs} (shape, spec) pair(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
