#!/usr/bin/env python3
"""What the committed campaigns rely on without a GPU, against the built CLI (standard-library
Python; a few seconds):

  store    a store committed as CSV (python/cudal2/store_csv.py) comes back as a store cudal2 opens
           (`cudal2 show`), and exporting that again gives the same files;
  replay   `cudal2 tune --replay STORE` measures nothing: every row it records is the recorded
           median of that spec on that problem (python/cudal2/replay_judge.py's rule, computed here
           from the store independently), every recorded spec is tried, a spec never recorded is
           unsupported, and refusals (no store, a timer or mode replay cannot answer) are one error line;
  confirm  the export confirmation workflow (bench/runtime/README.md): bench/runtime/confirm_candidates.py
           picks the shapes where the runtime measured behind auto-tuning, `cudal2 eval --spec-list
           --replay` measures their lists side by side, and `cudal2 export --confirmed` takes those
           shapes' entries from that job alone.

  python3 tests/replay/replay_test.py --cli build/cudal2
Input: tests/reliability/replay-store/ (24 cuBLASLt specs measured on the H100, six 64x64xK shapes).
"""
import argparse
import csv
import filecmp
import gzip
import json
import lzma
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FIXTURE = os.path.join(REPO, "tests", "reliability", "replay-store")
STORE_CSV = os.path.join(REPO, "python", "cudal2", "store_csv.py")
CONFIRM = os.path.join(REPO, "bench", "runtime", "confirm_candidates.py")
SHAPES = [(64, 64, 64), (64, 64, 128), (64, 64, 256), (64, 64, 512), (64, 64, 1024), (64, 64, 2048)]
BASELINES = "cublaslt-autotune-nn,cublaslt-autotune-tn,cublaslt-heuristic-nn,cublaslt-heuristic-tn"

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)
    return r.returncode, r.stdout, r.stderr


def shape_args(shapes):
    out = []
    for m, n, k in shapes:
        out += ["--shape", f"{m},{n},{k}"]
    return out


def recorded(db):
    """(text, layout, m, n, k) -> the median a replay answers: of the spec's ok offline graph rows,
    the lower middle by median (python/cudal2/replay_judge.py's rule)."""
    c = sqlite3.connect(db)
    rows = {}
    for text, layout, m, n, k, med in c.execute(
            "SELECT s.text, me.layout, me.m, me.n, me.k, me.median_us FROM measurements me JOIN specs s "
            "ON s.hash = me.spec_hash WHERE me.mode = 'offline' AND me.timer = 'graph' AND me.status = 'ok'"):
        rows.setdefault((text, layout, m, n, k), []).append(med)
    c.close()
    return {key: sorted(v)[(len(v) - 1) // 2] for key, v in rows.items()}


def measured(db):
    """(text, layout, m, n, k) -> [(status, median)] of every row a run recorded."""
    c = sqlite3.connect(db)
    out = {}
    for text, layout, m, n, k, status, med in c.execute(
            "SELECT s.text, me.layout, me.m, me.n, me.k, me.status, me.median_us FROM measurements me "
            "JOIN specs s ON s.hash = me.spec_hash"):
        out.setdefault((text, layout, m, n, k), []).append((status, med))
    c.close()
    return out


def store_section(work):
    db = os.path.join(work, "replay.db")
    rc, _, err = run([sys.executable, STORE_CSV, "import", FIXTURE, db])
    check(rc == 0 and os.path.isfile(db), f"store_csv import of the committed store ({err.strip()[-200:]})")
    again = os.path.join(work, "again")
    rc, _, err = run([sys.executable, STORE_CSV, "export", db, again])
    check(rc == 0, f"store_csv export of the imported store ({err.strip()[-200:]})")
    names = sorted(f for f in os.listdir(FIXTURE))
    check(sorted(os.listdir(again)) == names, f"export writes the same files ({sorted(os.listdir(again))})")
    same, diff, missing = filecmp.cmpfiles(FIXTURE, again, names, shallow=False)
    check(not diff and not missing, f"export -> import -> export is byte-identical (differ: {diff + missing})")
    # A table recompressed to .csv.xz by hand (the committed stores' largest) imports as the same rows.
    xz_dir = os.path.join(work, "xz")
    shutil.copytree(FIXTURE, xz_dir)
    gz = [f for f in os.listdir(xz_dir) if f.endswith(".csv.gz")]
    for f in gz:
        with gzip.open(os.path.join(xz_dir, f), "rb") as src, lzma.open(os.path.join(xz_dir, f[:-3] + ".xz"), "wb") as dst:
            dst.write(src.read())
        os.remove(os.path.join(xz_dir, f))
    xz_db = os.path.join(work, "xz.db")
    rc, _, err = run([sys.executable, STORE_CSV, "import", xz_dir, xz_db])
    check(gz and rc == 0 and measured(xz_db) == measured(db),
          f"a store with its tables as .csv.xz ({len(gz)}) imports the same rows ({err.strip()[-200:]})")
    return db


def replay_section(cli, work, replay_db):
    out_db = os.path.join(work, "tuned.db")
    base = [cli, "tune", "--replay", replay_db, "--families", "cublaslt", "--baselines", BASELINES,
            "--batch", "8", "--db", out_db] + shape_args(SHAPES)
    rc, out, err = run(base)
    check(rc == 0, f"tune --replay exits 0 (rc {rc}: {err.strip()[-300:]})")
    want, got = recorded(replay_db), measured(out_db)
    ok_rows = {key: rows for key, rows in got.items() if any(s == "ok" for s, _ in rows)}
    check(set(ok_rows) == set(want),
          f"every recorded (spec, problem) is tried and nothing else is ok ({len(ok_rows)} of {len(want)})")
    wrong = [key for key, rows in ok_rows.items()
             if key in want and any(s == "ok" and abs(med - want[key]) > 1e-9 * want[key] for s, med in rows)]
    check(not wrong, f"every replayed row is the recorded median ({len(wrong)} differ, e.g. {wrong[:1]})")
    others = {s for key, rows in got.items() if key not in want for s, _ in rows}
    check(others <= {"unsupported"}, f"a spec never recorded on a problem is unsupported ({sorted(others)})")

    rc, _, _ = run(base)  # the same command again resumes: nothing is measured twice
    c = sqlite3.connect(out_db)
    dup = c.execute("SELECT count(*) FROM (SELECT 1 FROM measurements GROUP BY spec_hash, gpu, dtype, layout, "
                    "m, n, k, mode, timer HAVING count(*) > 1)").fetchone()[0]
    c.close()
    check(rc == 0 and dup == 0, f"a second tune --replay resumes (rc {rc}, {dup} rows measured twice)")

    for args, what in [(["--replay", os.path.join(work, "missing.db")], "a missing store"),
                       (["--replay", replay_db, "--timers", "eager"], "a timer replay cannot answer"),
                       (["--replay", replay_db, "--mode", "server"], "a mode replay cannot answer")]:
        rc, _, err = run([cli, "tune", "--families", "cublaslt", "--db", os.path.join(work, "refused.db")] +
                         args + shape_args(SHAPES[:1]))
        lines = [x for x in err.splitlines() if x.strip()]
        check(rc == 2 and len(lines) == 1 and "error:" in lines[0],
              f"tune --replay refuses {what} in one error line (rc {rc}: {err.strip()[-200:]})")
    return out_db


def table_of(cli, work, name, *args):
    path = os.path.join(work, name)
    rc, _, err = run([cli, "export", "--out", path] + list(args))
    check(rc == 0, f"export {' '.join(args)} exits 0 ({err.strip()[-300:]})")
    with open(path) as f:
        return {(e["m"], e["n"], e["k"], e["layout"]): e for e in json.load(f)["entries"]}


def confirm_section(cli, work, replay_db, tuned_db):
    table_path = os.path.join(work, "table.json")
    before = table_of(cli, work, "table.json", "--db", tuned_db)
    fastest = {}
    for (text, layout, m, n, k), med in recorded(replay_db).items():
        if (m, n, k, layout) not in fastest or med < fastest[(m, n, k, layout)][1]:
            fastest[(m, n, k, layout)] = (text, med)
    # One shape where the runtime measured behind auto-tuning, one where it was ahead.
    behind, ahead = SHAPES[2], SHAPES[4]
    runtime_csv = os.path.join(work, "runtime.csv")
    with open(runtime_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["m", "n", "k", "method", "mode", "timer", "status", "median_us"])
        for (m, n, k), rt in [(behind, 1.10), (ahead, 0.95)]:
            for method, us in [("cublaslt-autotune-nn", 5.0), ("cublaslt-autotune-tn", 5.2),
                               ("runtime-nn", 5.0 * rt), ("runtime-tn", 5.2 * rt)]:
                w.writerow([m, n, k, method, "offline", "graph", "ok", us])
    top = 2
    rc, listing, err = run([sys.executable, CONFIRM, "--runtime-csv", runtime_csv, "--below", "0.995",
                            "--table", table_path, "--store", FIXTURE, "--top", str(top)])
    check(rc == 0, f"confirm_candidates exits 0 ({err.strip()[-300:]})")
    lines = [x.split(" ", 1) for x in listing.splitlines() if x.strip()]
    shapes = {tuple(int(v) for v in s.split(",")) for s, _ in lines}
    check(shapes == {behind}, f"only the shape behind auto-tuning is listed ({sorted(shapes)})")
    for layout in ("nn", "tn"):
        specs = [t for _, t in lines if t.split()[1] == layout]
        entry = before[behind + (layout,)]["spec"]
        check(specs[:1] == [entry] and len(specs) <= top + 1,
              f"{layout}: the table's entry first, then at most {top} runners-up ({len(specs)} specs)")
    spec_list = os.path.join(work, "confirm.txt")
    with open(spec_list, "w") as f:
        f.write(listing)
    confirm_db = os.path.join(work, "confirm.db")
    rc, _, err = run([cli, "eval", "--replay", replay_db, "--spec-list", spec_list, "--baselines", BASELINES,
                      "--batch", "200", "--db", confirm_db])
    check(rc == 0, f"eval --spec-list --replay exits 0 ({err.strip()[-300:]})")
    after = table_of(cli, work, "confirmed.json", "--db", tuned_db, "--confirmed", confirm_db)
    for layout in ("nn", "tn"):
        listed = {t for _, t in lines if t.split()[1] == layout}
        check(after[behind + (layout,)]["spec"] in listed,
              f"{layout}: the confirmed shape's entry comes from the confirmation job alone")
        check(after[behind + (layout,)]["spec"] == min(((t, m) for (t, lay, *s), m in recorded(replay_db).items()
                                                        if lay == layout and tuple(s) == behind and t in listed),
                                                       key=lambda x: x[1])[0],
              f"{layout}: it is the fastest of the confirmed specs")
        check(after[ahead + (layout,)]["spec"] == before[ahead + (layout,)]["spec"],
              f"{layout}: a shape not confirmed keeps the search's entry")
        check(before[ahead + (layout,)]["spec"] == fastest[ahead + (layout,)][0],
              f"{layout}: the search's entry is the fastest recorded spec (replayed medians)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    with tempfile.TemporaryDirectory(prefix="cudal2-replay-") as work:
        replay_db = store_section(work)
        rc, out, err = run([cli, "show", "--db", replay_db, "--gpu", "NVIDIA H100 80GB HBM3"])
        check(rc == 0 and "64" in out,
              f"cudal2 show opens the imported store (rc {rc}: {err.strip()[-200:]})")
        tuned_db = replay_section(cli, work, replay_db)
        confirm_section(cli, work, replay_db, tuned_db)
    print(f"replay_test: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
