#!/usr/bin/env python3
"""`cudal2 report`: an HTML page with the paper's figures, from `cudal2 bench`/`eval` CSVs and stores.

    cudal2 report --csv 'bench/results/h100/grid*.csv.xz' --csv bench/results/h100/sample.csv --out docs/report
    python3 python/cudal2/report.py --db tune.db --out report/

Each --csv argument is one data set (a section of the page): a file (.csv, .csv.gz or .csv.xz), a glob or a
comma-separated list, whose rows are concatenated (e.g. the shards of one grid run). Each --db is a results store
(SQLite): per shape, the fastest ok measurement becomes method `cudal2-<layout>` and the baselines
timed in the same job (its baseline_json) come with it. Rows: tidy long format of
src/judge/bench_csv.cpp (m, n, k, class, accum, method, layout, mode, timer, median_us, roofline_pct,
status, ...); only `status == ok` rows of the chosen --timer (default graph) and --accum are used.

The subject (whose speedups the figures show) is --section-subject for that data set, else
--subject, else `cudal2` (the fastest of all non-baseline methods per shape) when the data has
any, else `cublaslt-autotune`; `runtime` is libcudal2_runtime (best of runtime-nn/tn). A method family
measured in both layouts also gets a best-of-both entry (`cublas` = min(cublas-nn, cublas-tn)): a
fair baseline takes the better layout. Speedup = baseline time / subject time (> 1: subject faster),
per shape, mode and timer, both from the same data set (one run).

Figures per data set: sorted per-shape speedup curves over each baseline (per mode); geomean
speedup by shape class; offline vs server; heatmaps over (M, N) for each K (grids with at least
3 distinct M and N values at that K); roofline % by class. Output: DIR/index.html + PNGs.
Exit 2 with one `cudal2 report: error:` line for missing or empty inputs; rows that cannot be
parsed (a truncated file) are skipped with a warning on the page and on stderr.

Needs matplotlib only (no torch): it runs with the project's .venv.
"""
import argparse
import csv
import gzip
import html
import io
import json
import lzma
import math
import os
import sys
from collections import defaultdict

if __package__:
    from . import analysis
else:  # run as a file (python3 python/cudal2/report.py): this folder is on sys.path
    import analysis

BASELINES = ["cublas-nn", "cublas-tn", "cublaslt-heuristic-nn", "cublaslt-heuristic-tn", "cublaslt-autotune-nn",
             "cublaslt-autotune-tn", "torch-matmul"]
CLASSES = analysis.CLASSES
MAX_CSV_CHARS = 1 << 30  # one --csv file, decompressed
PEAK_FLOPS, PEAK_BYTES = 800e12, 3.0e12  # H100 SXM dense fp16 roofline (src/core/roofline)


class ReportError(Exception):
    pass


shape_class = analysis.shape_class  # the rule of src/core/roofline.cpp, for rows without a class
geomean = analysis.gmean  # of the positive finite values
family = analysis.family  # cublas-nn -> cublas; None without a layout suffix


def roofline_pct(m, n, k, us):
    t = max(2.0 * m * n * k / PEAK_FLOPS, 2.0 * (m * k + k * n + m * n) / PEAK_BYTES)
    return 100.0 * t / (us * 1e-6)


# ---------------------------------------------------------------------------------------------- input


class DataSet:
    def __init__(self, name):
        self.name = name
        self.rows = []  # dicts: m n k class method layout mode timer us roof accum
        self.meta = []  # the '#' lines of the CSVs / store summary
        self.warnings = []
        self.files = []


def expand(arg):
    try:
        return analysis.expand(arg)
    except ValueError as e:
        raise ReportError(str(e))


def read_csvs(arg):
    ds = DataSet(arg)
    for path in expand(arg):
        # A device or FIFO never ends (`--csv /dev/zero` hung): regular files only, and bounded.
        if not os.path.isfile(path):
            raise ReportError(f"cannot read {path}: " + ("not a regular file" if os.path.exists(path)
                                                         else "no such file"))
        try:
            # Committed runs are gzipped (.csv.gz) or, above 100 KB, xz-compressed (.csv.xz).
            opener = gzip.open if path.endswith(".gz") else lzma.open if path.endswith(".xz") else open
            with opener(path, "rt", newline="") as f:
                text = f.read(MAX_CSV_CHARS + 1)
        except (OSError, EOFError, UnicodeDecodeError, lzma.LZMAError) as e:
            raise ReportError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}")
        if len(text) > MAX_CSV_CHARS:
            raise ReportError(f"--csv '{path}' is larger than {MAX_CSV_CHARS >> 20} MiB")
        ds.files.append(path)
        lines = text.splitlines()
        for l in lines:
            if l.startswith("#") and l not in ds.meta:
                ds.meta.append(l)
        body = [l for l in lines if l.strip() and not l.startswith("#")]
        if text and not text.endswith("\n") and body and len(body) > 1 and body[-1] == lines[-1]:
            body.pop()  # the writer ends every row with a newline: the last one was cut off
            ds.warnings.append(f"{path}: the last row is incomplete (truncated file?) and was skipped")
        if not body:
            ds.warnings.append(f"{path}: no rows (empty file)")
            continue
        reader = csv.DictReader(io.StringIO("\n".join(body)))
        need = {"m", "n", "k", "method", "mode", "timer", "median_us", "status"}
        missing = need - set(reader.fieldnames or [])
        if missing:
            raise ReportError(f"{path}: not a cudal2 bench/eval CSV (missing columns: {', '.join(sorted(missing))})")
        bad = 0
        for r in reader:
            if None in r or any(v is None for v in r.values()):  # too few or too many fields
                bad += 1
                continue
            try:
                if r.get("status") != "ok":
                    continue
                m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
                us = float(r["median_us"])
                if not (us > 0 and math.isfinite(us)):
                    raise ValueError
                roof = r.get("roofline_pct")
                roof = float(roof) if roof not in (None, "") else roofline_pct(m, n, k, us)
                method = r["method"]
                layout = r.get("layout") or (method[-2:] if method[-3:] in ("-nn", "-tn") else "")
                ds.rows.append(dict(m=m, n=n, k=k, cls=r.get("class") or shape_class(m, n, k), method=method,
                                    layout=layout, mode=r["mode"], timer=r["timer"], us=us, roof=roof,
                                    accum=r.get("accum") or "f32"))
            except (TypeError, ValueError, KeyError):
                bad += 1
        if bad:
            ds.warnings.append(f"{path}: {bad} row(s) could not be parsed and were skipped")
    return ds


def read_store(path):
    if not os.path.isfile(path):
        raise ReportError(f"no such store: {path}")
    ds = DataSet(path)
    ds.files.append(path)
    try:
        rows = analysis.store_measurements(path)
    except analysis.StoreError as e:
        raise ReportError(str(e)) from e
    best = analysis.best_store_measurements(rows)
    gpus = sorted({k[0] for k in best})
    ds.meta.append(f"# store {path}: {len(rows)} ok measurements, GPU(s): {', '.join(gpus) or 'none'}")
    if len(gpus) > 1:
        ds.warnings.append(f"{path}: several GPUs ({', '.join(gpus)}); each shape uses its fastest row")
    for (gpu, dtype, layout, m, n, k, mode, timer), (us, bj) in sorted(best.items()):
        base = dict(m=m, n=n, k=k, cls=shape_class(m, n, k), layout=layout, mode=mode, timer=timer, accum=dtype)
        ds.rows.append(dict(base, method=f"cudal2-{layout}", us=us, roof=roofline_pct(m, n, k, us)))
        try:
            bl = json.loads(bj or "{}")
        except ValueError:
            bl = {}
        for method, modes in bl.items():
            t = (((modes or {}).get(mode) or {}).get(timer) or {}).get("median")
            if t and t > 0:
                lay = method[-2:] if method[-3:] in ("-nn", "-tn") else layout
                ds.rows.append(dict(base, method=method, layout=lay, us=t, roof=roofline_pct(m, n, k, t)))
    return ds


# ---------------------------------------------------------------------------------------------- model


def build_table(ds, timer, accum):
    """{(mode, (m,n,k)): {method: us}} with best-of-layout families added; classes per shape."""
    t = defaultdict(dict)
    cls = {}
    for r in ds.rows:
        if r["timer"] != timer or r["accum"] != accum:
            continue
        key = (r["mode"], (r["m"], r["n"], r["k"]))
        cls[key[1]] = r["cls"]
        d = t[key]
        d[r["method"]] = min(d.get(r["method"], float("inf")), r["us"])
    for d in t.values():
        analysis.add_best_of_layouts(d)
    return t, cls


def choose_subject(methods, wanted):
    if wanted:
        if wanted not in methods and wanted != "cudal2":
            raise ReportError(f"--subject {wanted}: no such method in the data (have: {', '.join(sorted(methods))})")
        return wanted
    ours = [m for m in methods if m not in BASELINES and family(m) is None and m not in {family(b) for b in BASELINES}]
    ours += [m for m in methods if family(m) and family(m) not in {family(b) for b in BASELINES}]
    if ours:
        return "cudal2"
    for cand in ("cublaslt-autotune", "cublaslt-autotune-nn", "cublaslt-heuristic", "cublas"):
        if cand in methods:
            return cand
    return sorted(methods)[0]


def subject_time(d, subject):
    if subject != "cudal2":
        return d.get(subject)
    base_fams = {family(b) for b in BASELINES}
    mine = [us for m, us in d.items() if m not in BASELINES and m not in base_fams]
    return min(mine) if mine else None


def components(subject):
    """Methods that make up the subject (never shown as its baselines)."""
    if subject == "cudal2":
        return None
    return {subject, subject + "-nn", subject + "-tn", family(subject) or subject}


def baselines_of(table, subject):
    base_fams = {family(b) for b in BASELINES}
    seen = set()
    for d in table.values():
        seen.update(d)
    comp = components(subject)
    out = []
    for m in sorted(seen):
        if subject == "cudal2":
            ok = m in BASELINES or m in base_fams
        else:
            ok = (m in BASELINES or m in base_fams) and m not in comp
        if ok:
            out.append(m)
    # best-of-layout families first, then single layouts, torch last
    return sorted(out, key=lambda m: (m == "torch-matmul", family(m) is not None, m))


def speedups(table, subject, baseline, mode):
    out = []
    for (md, shape), d in table.items():
        if md != mode or baseline not in d:
            continue
        s = subject_time(d, subject)
        if s:
            out.append((shape, d[baseline] / s))
    return out


# ---------------------------------------------------------------------------------------------- figures


def plt_module():
    try:
        import matplotlib
    except ImportError:
        raise ReportError("matplotlib is not installed for this Python (bash scripts/bootstrap.sh installs it "
                          "into .venv; or set CUDAL2_PYTHON)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 80, "savefig.dpi": 80, "font.size": 9, "axes.grid": True,
                         "grid.alpha": 0.3})
    return plt


class Page:
    def __init__(self, out):
        self.out = out
        self.parts = []
        self.figures = 0

    def add(self, s):
        self.parts.append(s)

    def figure(self, plt, fig, name, caption):
        path = os.path.join(self.out, name)
        fig.savefig(path, bbox_inches="tight")
        plt.close(fig)
        self.figures += 1
        self.add(f'<figure><img src="{html.escape(name)}" alt="{html.escape(caption)}">'
                 f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def plain_log_axis(ax):
    """Log y axis labelled 0.9, 1, 1.2 ... instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    lo, hi = ax.get_ylim()
    subs = [1.0, 2.0, 5.0] if hi / lo > 4 else [1.0, 1.1, 1.2, 1.3, 1.5, 1.7, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 9.5]
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def fmt_x(x):
    return "–" if not math.isfinite(x) else f"{x:.3f}"


def section(page, plt, ds, idx, args):
    table, cls = build_table(ds, args.timer, args.accum)
    esc = html.escape
    page.add(f"<section><h2>{idx + 1}. {esc(args.titles[idx] if idx < len(args.titles) else ds.name)}</h2>")
    page.add("<p class=src>Data: " + ", ".join(f"<code>{esc(f)}</code>" for f in ds.files) + "</p>")
    if ds.meta:
        page.add("<pre class=meta>" + esc("\n".join(ds.meta[:8])) + "</pre>")
    for w in ds.warnings:
        page.add(f"<p class=warn>warning: {esc(w)}</p>")
    if not table:
        msg = (f"no ok measurements with timer '{args.timer}' and accumulator '{args.accum}'"
               + (" (the rows have other timers/accumulators)" if ds.rows else ""))
        page.add(f"<p class=warn>{esc(msg)}</p></section>")
        return msg
    methods = set()
    for d in table.values():
        methods.update(d)
    subject = choose_subject(methods, args.subjects[idx] if idx < len(args.subjects) else args.subject)
    bases = baselines_of(table, subject)
    modes = [m for m in ("offline", "server") if any(k[0] == m for k in table)]
    shapes = sorted({k[1] for k in table})
    tag = f"s{idx + 1}"
    page.add(f"<p><b>{len(shapes)}</b> shapes; modes: {', '.join(modes)}; timer: {esc(args.timer)}; "
             f"accumulator: {esc(args.accum)}. Subject: <b>{esc(subject)}</b>"
             + (" (best of NN/TN)" if subject + "-nn" in methods else "")
             + f"; baselines: {esc(', '.join(bases)) or 'none'}. Speedup = baseline time / subject time"
             " per shape (&gt; 1: the subject is faster).</p>")
    if not bases:
        page.add("<p class=warn>No baseline to compare the subject with in this data set: only the "
                 "roofline figure is drawn.</p>")

    # summary table: geomean speedup per baseline x class x mode
    if bases:
        head = "".join(f"<th>{c}</th>" for c in CLASSES + ["all"])
        page.add(f"<table><tr><th>mode</th><th>baseline</th><th>shapes</th>{head}<th>min</th><th>max</th></tr>")
        for mode in modes:
            for b in bases:
                sp = speedups(table, subject, b, mode)
                if not sp:
                    continue
                cells = "".join(
                    f"<td>{fmt_x(geomean([x for s, x in sp if cls[s] == c]))}</td>" for c in CLASSES)
                xs = [x for _, x in sp]
                page.add(f"<tr><td>{mode}</td><td>{esc(b)}</td><td>{len(sp)}</td>{cells}"
                         f"<td><b>{fmt_x(geomean(xs))}</b></td><td>{min(xs):.2f}</td><td>{max(xs):.2f}</td></tr>")
        page.add("</table>")

    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    bcolor = {b: colors[i % len(colors)] for i, b in enumerate(bases)}

    # 1. sorted per-shape speedup curves, one panel per mode
    if bases:
        fig, axes = plt.subplots(1, len(modes), figsize=(6.2 * len(modes), 3.8), squeeze=False)
        for ax, mode in zip(axes[0], modes):
            for b in bases:
                xs = sorted(x for _, x in speedups(table, subject, b, mode))
                if not xs:
                    continue
                pos = [100.0 * (i + 0.5) / len(xs) for i in range(len(xs))]
                ax.plot(pos, xs, marker="o" if len(xs) <= 40 else None, ms=3, lw=1.4, color=bcolor[b],
                        label=f"{b} (geomean {geomean(xs):.3f})")
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_yscale("log")
            plain_log_axis(ax)
            ax.set_xlabel("shapes, sorted by speedup (percentile)")
            ax.set_ylabel(f"speedup of {subject}")
            ax.set_title(f"{mode}: per-shape speedup over each baseline")
            ax.legend(fontsize=7, loc="upper left")
        page.figure(plt, fig, f"{tag}_speedup_sorted.png",
                    f"Per-shape speedup of {subject} over each baseline, sorted ({', '.join(modes)}; "
                    f"{args.timer} timer; log scale, 1 = parity)")

    # 2. by shape class
    if bases:
        fig, axes = plt.subplots(1, len(modes), figsize=(6.2 * len(modes), 3.4), squeeze=False)
        groups = CLASSES + ["all"]
        width = 0.8 / max(1, len(bases))
        for ax, mode in zip(axes[0], modes):
            for i, b in enumerate(bases):
                sp = speedups(table, subject, b, mode)
                vals = [geomean([x for s, x in sp if g == "all" or cls[s] == g]) for g in groups]
                xs = [j + (i - (len(bases) - 1) / 2) * width for j in range(len(groups))]
                ax.bar(xs, [v if math.isfinite(v) else 0 for v in vals], width, color=bcolor[b], label=b)
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_xticks(range(len(groups)))
            ax.set_xticklabels([f"{g}\n({sum(1 for s in shapes if g == 'all' or cls[s] == g)})" for g in groups])
            lo = min([p.get_height() for p in ax.patches if p.get_height() > 0] + [1.0])
            hi = max([p.get_height() for p in ax.patches] + [1.0])
            ax.set_ylim(min(0.9, lo * 0.97), max(1.1, hi * 1.03))
            ax.set_ylabel("geomean speedup")
            ax.set_title(f"{mode}: by shape class (shapes)")
            ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.2))
        page.figure(plt, fig, f"{tag}_by_class.png", f"Geomean speedup of {subject} by shape class ({', '.join(modes)})")

    # 3. offline vs server
    if bases and len(modes) == 2:
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        width = 0.38
        for j, mode in enumerate(modes):
            vals = [geomean([x for _, x in speedups(table, subject, b, mode)]) for b in bases]
            ax.bar([i + (j - 0.5) * width for i in range(len(bases))], vals, width,
                   label=f"{mode}" + (" (back-to-back, warm L2)" if mode == "offline" else " (cold L2, idle gaps)"),
                   color=["#4c72b0", "#dd8452"][j])
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(range(len(bases)))
        ax.set_xticklabels(bases, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel(f"geomean speedup of {subject}")
        ax.set_title("offline vs server mode")
        hi = max([p.get_height() for p in ax.patches] + [1.0])
        lo = min([p.get_height() for p in ax.patches] + [1.0])
        ax.set_ylim(min(0.9, lo * 0.97), max(1.1, hi * 1.03))
        ax.legend(fontsize=8)
        page.figure(plt, fig, f"{tag}_offline_vs_server.png",
                    f"Geomean speedup of {subject} over each baseline, offline vs server mode")
    elif bases and modes:
        page.add(f"<p class=note>Offline vs server: only {modes[0]} mode was measured in this data set.</p>")

    # 4. heatmaps over (M, N) per K, against the best baseline per shape
    mode0 = modes[0] if modes else None
    ref_set = [b for b in bases if family(b) is None] or bases  # best-of-layout entries where there are
    grid = defaultdict(dict)
    for (md, (m, n, k)), d in table.items():
        if md != mode0:
            continue
        s = subject_time(d, subject)
        ref = [d[b] for b in ref_set if b in d]
        if s and ref:
            grid[k][(m, n)] = min(ref) / s
    ks = [k for k in sorted(grid) if len({mn[0] for mn in grid[k]}) >= 3 and len({mn[1] for mn in grid[k]}) >= 3]
    if ks:
        import numpy as np
        from matplotlib.colors import LogNorm

        cols = min(5, len(ks))
        rows = (len(ks) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(2.9 * cols + 0.8, 2.9 * rows), squeeze=False,
                                 constrained_layout=True)
        allv = [v for k in ks for v in grid[k].values()]
        span = max(1.02, max(max(allv), 1 / min(allv)))
        norm = LogNorm(vmin=1 / span, vmax=span)
        im = None
        for i, k in enumerate(ks):
            ax = axes[i // cols][i % cols]
            ms = sorted({mn[0] for mn in grid[k]})
            ns = sorted({mn[1] for mn in grid[k]})
            z = np.full((len(ms), len(ns)), np.nan)
            for (m, n), v in grid[k].items():
                z[ms.index(m), ns.index(n)] = v
            im = ax.imshow(z, origin="lower", cmap="RdBu", norm=norm, aspect="auto")
            ax.set_xticks(range(len(ns)))
            ax.set_xticklabels([str(n) for n in ns], rotation=90, fontsize=6)
            ax.set_yticks(range(len(ms)))
            ax.set_yticklabels([str(m) for m in ms], fontsize=6)
            ax.set_title(f"K = {k}", fontsize=9)
            ax.grid(False)
            if i % cols == 0:
                ax.set_ylabel("M")
            if i // cols == rows - 1:
                ax.set_xlabel("N")
        for j in range(len(ks), rows * cols):
            axes[j // cols][j % cols].axis("off")
        from matplotlib.ticker import FixedLocator, FuncFormatter

        ticks = sorted({round(t, 3) for t in (1 / span, 1 / math.sqrt(span), 1.0, math.sqrt(span), span)})
        cb = fig.colorbar(im, ax=axes, shrink=0.8, label=f"speedup of {subject} over best baseline")
        cb.ax.yaxis.set_major_locator(FixedLocator(ticks))
        cb.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.2f}"))
        cb.ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        page.figure(plt, fig, f"{tag}_heatmaps.png",
                    f"Speedup of {subject} over the fastest of {', '.join(ref_set)} per shape, over (M, N) for each K "
                    f"({mode0} mode; blue: {subject} faster, red: slower)")

    # 5. roofline % per class
    roof = defaultdict(list)
    for r in ds.rows:
        if r["timer"] == args.timer and r["accum"] == args.accum and r["mode"] == (mode0 or "offline"):
            roof[(r["method"], r["cls"])].append(r["roof"])
    rmethods = sorted({m for m, _ in roof})
    if rmethods:
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        groups = CLASSES + ["all"]
        width = 0.8 / len(rmethods)
        for i, meth in enumerate(rmethods):
            vals = [geomean(roof[(meth, g)]) if g != "all" else
                    geomean([v for c in CLASSES for v in roof[(meth, c)]]) for g in groups]
            ax.bar([j + (i - (len(rmethods) - 1) / 2) * width for j in range(len(groups))],
                   [v if math.isfinite(v) else 0 for v in vals], width, label=meth, color=colors[i % len(colors)])
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups)
        ax.set_ylim(0, 100)
        ax.set_ylabel("% of roofline (geomean)")
        ax.set_title(f"distance from the roofline ({mode0 or 'offline'}, {args.timer} timer)")
        ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.1))
        page.figure(plt, fig, f"{tag}_roofline.png",
                    "Achieved fraction of the roofline, max(2MNK / peak FLOP/s, bytes / peak bandwidth), "
                    "geomean by class, per method")
    page.add("</section>")
    return None


CSS = """body{font-family:sans-serif;max-width:1300px;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85em;color:#555}
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f3f3f3}pre.meta{font-size:.75em;background:#f7f7f7;padding:.4em;overflow-x:auto}
.warn{color:#a40}.src,.note{font-size:.85em;color:#555}"""


def main(argv=None):
    # allow_abbrev=False: `--d` for --db and `--ou` for --out passed argparse but not the CLI's checks
    # of the stores and the output (src/cli/cmd_report.cpp looks for the options by their full names).
    ap = argparse.ArgumentParser(prog="cudal2 report", description="HTML report with figures from cudal2 CSVs/stores",
                                 allow_abbrev=False)
    ap.add_argument("--csv", action="append", default=[], help="CSV data set: a file, glob or comma list (repeatable)")
    ap.add_argument("--db", action="append", default=[], help="results store (repeatable)")
    ap.add_argument("--out", required=True, help="output directory (index.html and PNGs)")
    ap.add_argument("--title", default="cudal2 report")
    ap.add_argument("--section-title", dest="titles", action="append", default=[],
                    help="title of each data set's section, in order (repeatable)")
    ap.add_argument("--subject", help="method whose speedups are shown (default: cudal2, else cublaslt-autotune)")
    ap.add_argument("--section-subject", dest="subjects", action="append", default=[],
                    help="the subject of each data set's section, in order (repeatable; default --subject)")
    ap.add_argument("--timer", default="graph", choices=["graph", "eager", "host"])
    ap.add_argument("--accum", default="f32", choices=["f32", "f16"])
    args = ap.parse_args(argv)
    try:
        if not args.csv and not args.db:
            raise ReportError("nothing to report: give --csv FILE and/or --db STORE")
        sets = [read_csvs(a) for a in args.csv] + [read_store(d) for d in args.db]
        for ds in sets:
            for w in ds.warnings:
                print(f"cudal2 report: warning: {w}", file=sys.stderr)
        if not any(ds.rows for ds in sets):
            raise ReportError("no ok measurements in " + ", ".join(f for ds in sets for f in ds.files)
                              + " (empty or failed runs?): nothing to plot")
        plt = plt_module()
        os.makedirs(args.out, exist_ok=True)
        page = Page(args.out)
        problems = []
        for i, ds in enumerate(sets):
            p = section(page, plt, ds, i, args)
            if p:
                problems.append(f"{ds.name}: {p}")
    except ReportError as e:
        print(f"cudal2 report: error: {e}", file=sys.stderr)
        return 2
    if page.figures == 0:
        print("cudal2 report: error: no figure could be drawn: " + "; ".join(problems), file=sys.stderr)
        return 2
    doc = (f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{html.escape(args.title)}</title>"
           f"<style>{CSS}</style></head><body><h1>{html.escape(args.title)}</h1>"
           f"<p class=note>Generated by <code>cudal2 report</code> (python/cudal2/report.py) from "
           f"{sum(len(ds.files) for ds in sets)} input file(s). Ratios compare methods of one run only.</p>"
           + "\n".join(page.parts) + "</body></html>\n")
    with open(os.path.join(args.out, "index.html"), "w") as f:
        f.write(doc)
    print(f"cudal2 report: wrote {os.path.join(args.out, 'index.html')} ({page.figures} figures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
