#!/usr/bin/env python3
"""The reliability suite: cudal2 under bad input, damaged stores, a full disk, concurrent tuners and
an unfriendly HTTP client (tests/reliability/README.md). Standard library only; CPU only; every
loop bounded in count and time; all traffic on 127.0.0.1.

  python3 tests/reliability/reliability.py --cli build/cudal2 [--only SECTION,...] [--keep DIR]

Prints one table row per section (tried, failed, figures) and every failure below it; exits 1 when
anything failed.
"""
import argparse
import hashlib
import http.client
import json
import os
import random
import resource
import shutil
import signal
import socket
import sqlite3
import stat
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TOKEN = "reliability-token"
SPEC = "tiny tn f32 tile=16x16x32 warps=1x1 kwarps=4 | splits=1"
PACE_S = 0.5  # tuners section: a replayed judge job's stand-in GPU time
HOLD_S = 2  # tuners section: how long the stand-in holder of claimed work lives
SHAPES = ["64,64,64", "64,64,128", "64,64,256", "64,64,512", "64,64,1024", "64,64,2048"]


class Section:
    def __init__(self, name):
        self.name, self.tried, self.failures, self.notes, self.skipped = name, 0, [], [], None

    def check(self, ok, what):
        self.tried += 1
        if not ok:
            self.failures.append(what)
        return ok


def run(cmd, timeout=30, env=None, cwd=None, mem_mib=None, stdin=subprocess.DEVNULL):
    """(returncode or 'timeout', stdout, stderr, seconds); a negative code is a signal."""
    def limits():
        if mem_mib:
            resource.setrlimit(resource.RLIMIT_AS, (mem_mib << 20, mem_mib << 20))
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=stdin, env=env, cwd=cwd,
                         start_new_session=True, preexec_fn=limits)
    try:
        out, err = p.communicate(timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        code = "timeout"
    return code, out.decode(errors="replace"), err.decode(errors="replace"), time.monotonic() - t0


def one_error_line(err):
    lines = [l for l in err.splitlines() if l.strip()]
    return len(lines) == 1 and "error:" in lines[0]


def short(text, n=160):
    text = text.strip().replace("\n", " | ")
    return text if len(text) <= n else text[:n] + "..."


class Env:
    def __init__(self, cli, work):
        self.cli, self.work = os.path.abspath(cli), work
        # `python3` for the replay judges (#!/usr/bin/env python3) is this interpreter: a version
        # manager's shim (pyenv) took 0.2-0.5 s a judge, two judges a tuner, and the timings of
        # tuners started together measured the shim.
        os.makedirs(os.path.join(work, "bin"), exist_ok=True)
        if not os.path.lexists(os.path.join(work, "bin", "python3")):
            os.symlink(sys.executable, os.path.join(work, "bin", "python3"))
        self.env = dict(os.environ, CUDAL2_SERVE_TOKEN=TOKEN,
                        PATH=os.path.join(work, "bin") + os.pathsep + os.environ.get("PATH", ""))
        self.env.pop("CUDA_VISIBLE_DEVICES", None)
        self.replay = os.path.join(work, "replay.db")
        self.clean = None  # a finished tune's store (tuners section), used by stores and full-disk

    def path(self, *p):
        return os.path.join(self.work, *p)

    def cudal2(self, args, **kw):
        kw.setdefault("env", self.env)
        kw.setdefault("cwd", self.work)
        return run([self.cli] + args, **kw)

    def tune_args(self, db, extra=()):
        args = ["tune", "--replay", self.replay,
                "--families", "cublaslt", "--mode", "offline", "--timers", "graph", "--baselines",
                "cublaslt-autotune-nn,cublaslt-autotune-tn", "--db", db, "--batch", "8"]
        for s in SHAPES:
            args += ["--shape", s]
        return args + list(extra)

    def tune(self, db, extra=(), **kw):
        return self.cudal2(self.tune_args(db, extra), timeout=kw.pop("timeout", 120), **kw)


def measuring_processes(db):
    """How many processes stored measurements (a run id is '<time>-<pid>-<random>')."""
    c = sqlite3.connect(db)
    try:
        ids = [r[0] for r in c.execute("SELECT DISTINCT run_id FROM measurements WHERE run_id IS NOT NULL")]
    finally:
        c.close()
    return len({i.split("-")[1] for i in ids if i.count("-") >= 2})


def rows_or_zero(db):
    try:
        return rows(db)[0]
    except sqlite3.Error:
        return 0


def rows(db):
    c = sqlite3.connect(db)
    try:
        n = c.execute("SELECT count(*) FROM measurements").fetchone()[0]
        dup = c.execute("SELECT count(*) FROM (SELECT 1 FROM measurements GROUP BY spec_hash, gpu, dtype, layout, "
                        "m, n, k, mode, timer HAVING count(*) > 1)").fetchone()[0]
        return n, dup
    finally:
        c.close()


# ---------------------------------------------------------------------------------------------
# cli-fuzz: every subcommand with malformed arguments: exit 2, one error line, no signal.

def fuzz_cases(e):
    d = e.work
    binary, big_line, empty, a_dir = e.path("binary.bin"), e.path("big-line.txt"), e.path("empty.txt"), e.path("dir")
    missing = e.path("missing", "nothing.db")
    nonexistent = "/nonexistent-cudal2-reliability"
    store = e.path("fuzz-store.db")
    policy_dir = a_dir
    v = ["--spec", SPEC, "--shape", "64,64,64", "--db", e.path("fuzz-eval.db")]
    t = ["--shape", "64,64,64", "--families", "tiny", "--db", e.path("fuzz-tune.db")]
    cases = [
        # (name, args, extra) extra: {"absent": path that must not exist after, "mem": MiB, "timeout": s}
        ("no arguments", [], {}),
        ("unknown command", ["frobnicate"], {}),
        ("unknown option", ["--frobnicate"], {}),
        ("bench unknown option", ["bench", "--frobnicate"], {}),
        ("bench shape 2 numbers", ["bench", "--shape", "1,2"], {}),
        ("bench shape 4 numbers", ["bench", "--shape", "1,2,3,4"], {}),
        ("bench shape zero", ["bench", "--shape", "0,1,1"], {}),
        ("bench shape negative", ["bench", "--shape", "-1,2,3"], {}),
        ("bench shape words", ["bench", "--shape", "a,b,c"], {}),
        ("bench shape overflow", ["bench", "--shape", "99999999999999999999,1,1"], {}),
        ("bench grid unknown", ["bench", "--grid", "nope"], {}),
        ("bench mode unknown", ["bench", "--mode", "nope"], {}),
        ("bench methods unknown", ["bench", "--methods", "nope"], {}),
        ("bench methods empty", ["bench", "--methods", ""], {}),
        ("bench reps 0", ["bench", "--reps", "0"], {}),
        ("bench reps text", ["bench", "--reps", "x"], {}),
        ("bench qps nan", ["bench", "--qps", "nan"], {}),
        ("bench qps negative", ["bench", "--qps", "-5"], {}),
        ("bench verify-budget nan", ["bench", "--verify-budget", "nan"], {}),
        ("bench verify-budget negative", ["bench", "--verify-budget", "-1"], {}),
        ("bench timers unknown", ["bench", "--timers", "nope"], {}),
        ("bench timers empty", ["bench", "--timers", ""], {}),
        ("bench shard 5/4", ["bench", "--shard", "5/4"], {}),
        ("bench shard 1/0", ["bench", "--shard", "1/0"], {}),
        ("bench shard text", ["bench", "--shard", "x"], {}),
        ("bench class unknown", ["bench", "--class", "nope"], {}),
        ("bench shapes missing", ["bench", "--shapes", missing], {}),
        ("bench shapes directory", ["bench", "--shapes", a_dir], {}),
        ("bench shapes binary", ["bench", "--shapes", binary], {}),
        ("bench shapes /dev/zero", ["bench", "--shapes", "/dev/zero"], {"mem": 1024, "timeout": 30}),
        ("bench shapes 5 MB line", ["bench", "--shapes", big_line], {}),
        ("bench resume without csv", ["bench", "--resume"], {}),
        ("bench reference unknown", ["bench", "--methods", "cublas-nn", "--reference", "nope"], {}),
        ("bench seed text", ["bench", "--seed", "x"], {}),
        ("eval nothing to run", ["eval", "--shape", "64,64,64", "--db", e.path("fuzz-eval.db")], {}),
        ("eval spec garbage", ["eval", "--spec", "garbage", "--shape", "64,64,64"], {}),
        ("eval source missing", ["eval", "--source", missing, "--shape", "64,64,64"], {}),
        ("eval source directory", ["eval", "--source", a_dir, "--shape", "64,64,64"], {}),
        ("eval layout unknown", ["eval", "--source", binary, "--layout", "xx", "--shape", "64,64,64"], {}),
        ("eval reps 0", ["eval"] + v + ["--reps", "0"], {}),
        ("eval qps negative", ["eval"] + v + ["--qps", "-5"], {}),
        ("eval qps nan", ["eval"] + v + ["--qps", "nan"], {}),
        ("eval verify-budget nan", ["eval"] + v + ["--verify-budget", "nan"], {}),
        ("eval timeout negative", ["eval"] + v + ["--timeout", "-1"], {}),
        ("eval batch 0", ["eval"] + v + ["--batch", "0"], {}),
        ("eval budget-minutes nan", ["eval"] + v + ["--budget-minutes", "nan"], {}),
        ("eval baselines unknown", ["eval"] + v + ["--baselines", "nope"], {}),
        ("eval mode unknown", ["eval"] + v + ["--mode", "nope"], {}),
        ("eval spec-list missing", ["eval", "--spec-list", missing], {}),
        ("eval spec-list binary", ["eval", "--spec-list", binary], {}),
        ("eval spec-list 5 MB line", ["eval", "--spec-list", big_line], {}),
        ("tune verify-budget nan", ["tune"] + t + ["--verify-budget", "nan"], {}),
        ("tune reps 0", ["tune"] + t + ["--reps", "0"], {}),
        ("tune qps negative", ["tune"] + t + ["--qps", "-5"], {}),
        ("tune timeout negative", ["tune"] + t + ["--timeout", "-1"], {}),
        ("tune batch 0", ["tune"] + t + ["--batch", "0"], {}),
        ("tune families empty", ["tune", "--shape", "64,64,64", "--families", "", "--db", e.path("fuzz-tune.db")], {}),
        ("tune families unknown", ["tune", "--shape", "64,64,64", "--families", "nope"], {}),
        ("tune space unknown", ["tune"] + t + ["--space", "nope"], {}),
        ("tune space file missing", ["tune"] + t + ["--space", "@" + missing], {}),
        ("tune search unknown", ["tune"] + t + ["--search", "nope"], {}),
        ("tune budget negative", ["tune"] + t + ["--budget", "-1"], {}),
        ("tune budget-minutes nan", ["tune"] + t + ["--budget-minutes", "nan"], {}),
        ("tune round negative", ["tune"] + t + ["--round", "-1"], {}),
        ("tune rounds negative", ["tune"] + t + ["--rounds", "-1"], {}),
        ("tune per-problem negative", ["tune"] + t + ["--per-problem", "-1"], {}),
        ("tune final-top without csv", ["tune"] + t + ["--final-top", "3"], {}),
        ("tune final-reps 0", ["tune"] + t + ["--final-top", "1", "--final-csv", e.path("f.csv"),
                                             "--final-reps", "0"], {}),
        ("tune final-mode unknown", ["tune"] + t + ["--final-mode", "nope"], {}),
        ("tune accum unknown", ["tune"] + t + ["--accum", "f64"], {}),
        ("tune gpus text", ["tune"] + t + ["--gpus", "x"], {}),
        ("tune lt-max negative", ["tune"] + t + ["--lt-max", "-1"], {}),
        ("tune seed text", ["tune"] + t + ["--seed", "x"], {}),
        ("show missing store", ["show", "--db", missing], {"absent": os.path.dirname(missing)}),
        ("show missing file", ["show", "--db", e.path("no-such.db")], {"absent": e.path("no-such.db")}),
        ("show directory", ["show", "--db", a_dir], {}),
        ("show binary", ["show", "--db", binary], {}),
        ("show unknown gpu", ["show", "--db", store, "--gpu", "nope"], {}),
        ("export no db", ["export"], {}),
        ("export missing store", ["export", "--db", missing], {}),
        ("export binary store", ["export", "--db", binary], {}),
        ("export out directory", ["export", "--db", store, "--out", a_dir], {}),
        ("export out under missing dirs", ["export", "--db", store, "--out", nonexistent + "/dir/t.json"],
         {"absent": nonexistent}),
        ("export portfolio negative", ["export", "--db", store, "--portfolio", "-1"], {}),
        ("export families unknown", ["export", "--db", store, "--families", "nope"], {}),
        ("export margin 2", ["export", "--db", store, "--compiled-margin", "2"], {}),
        ("export gpu unknown", ["export", "--db", store, "--gpu", "nope"], {}),
        ("export trajectories directory", ["export", "--db", store, "--trajectories", a_dir], {}),
        ("merge no from", ["merge", "--db", e.path("m.db")], {}),
        ("merge from missing", ["merge", "--db", e.path("m.db"), "--from", missing], {}),
        ("merge from binary", ["merge", "--db", e.path("m.db"), "--from", binary], {}),
        ("merge into directory", ["merge", "--db", a_dir, "--from", store], {}),
        ("merge into binary", ["merge", "--db", binary, "--from", store], {}),
        ("report csv binary", ["report", "--csv", binary, "--out", e.path("r1")], {"timeout": 60}),
        ("report csv missing", ["report", "--csv", missing, "--out", e.path("r2")], {"timeout": 60}),
        ("report db missing", ["report", "--db", missing, "--out", e.path("r3")], {"timeout": 60}),
        ("report out existing file", ["report", "--db", store, "--out", binary], {"timeout": 60}),
        ("report unknown option", ["report", "--frobnicate"], {"timeout": 60}),
        ("serve port 70000", ["serve", "--port", "70000"], {"timeout": 8}),
        ("serve port -1", ["serve", "--port", "-1"], {"timeout": 8}),
        ("serve host 999.1.1.1", ["serve", "--host", "999.1.1.1", "--port", "0"], {"timeout": 8}),
        ("serve rate nan", ["serve", "--port", "0", "--rate", "nan"], {"timeout": 8}),
        ("serve rate negative", ["serve", "--port", "0", "--rate", "-1"], {"timeout": 8}),
        ("serve queue negative", ["serve", "--port", "0", "--queue", "-1"], {"timeout": 8}),
        ("serve queue 0", ["serve", "--port", "0", "--queue", "0"], {"timeout": 8}),
        ("serve max-body negative", ["serve", "--port", "0", "--max-body", "-1"], {"timeout": 8}),
        ("serve timeout negative", ["serve", "--port", "0", "--timeout", "-1"], {"timeout": 8}),
        ("serve workers 0", ["serve", "--port", "0", "--workers", "0"], {"timeout": 8}),
        ("serve port text", ["serve", "--port", "x"], {"timeout": 8}),
        ("serve max-request-line 0", ["serve", "--port", "0", "--max-request-line", "0"], {"timeout": 8}),
        ("serve max-headers under the request line", ["serve", "--port", "0", "--max-headers", "100"],
         {"timeout": 8}),
        ("serve token unset", ["serve", "--port", "0", "--token-env", "CUDAL2_NO_SUCH_VARIABLE"], {"timeout": 8}),
        ("suggest nothing", ["suggest"], {}),
        ("suggest policy missing", ["suggest", "--shape", "64,64,64", "--policy", missing], {}),
        ("suggest policy directory", ["suggest", "--shape", "64,64,64", "--policy", policy_dir], {}),
        ("suggest policy binary", ["suggest", "--shape", "64,64,64", "--policy", binary], {}),
        ("suggest shape zero", ["suggest", "--shape", "0,1,1", "--policy", binary], {}),
        ("suggest layout unknown", ["suggest", "--shape", "64,64,64", "--layout", "xx", "--policy", binary], {}),
        ("lt-space nothing", ["lt-space"], {}),
        ("lt-space shape text", ["lt-space", "--shape", "x"], {}),
        ("lt-space layout unknown", ["lt-space", "--shape", "64,64,64", "--layout", "xx"], {}),
        # Inputs without a size limit grew without bound or never ended.
        ("tune space @/dev/zero", ["tune"] + t + ["--space", "@/dev/zero"], {"mem": 1024, "timeout": 30}),
        ("report csv /dev/zero", ["report", "--csv", "/dev/zero", "--out", e.path("r4")],
         {"timeout": 30, "absent": e.path("r4")}),
        # Abbreviations of report's options went past its store check and its atomic output.
        ("report abbreviated --d", ["report", "--d", binary, "--out", e.path("r5")], {"timeout": 60,
                                                                                     "absent": e.path("r5")}),
        ("report abbreviated --ou", ["report", "--db", store, "--ou", e.path("r6")], {"timeout": 60,
                                                                                     "absent": e.path("r6")}),
        # Options silently ignored or taken for absent.
        ("tune replay with csv", ["tune", "--replay", e.replay, "--families", "cublaslt", "--shape", "64,64,64",
                                  "--db", e.path("fuzz-replay.db"), "--csv", e.path("replay.csv")],
         {"absent": e.path("replay.csv")}),
        ("export trajectories ''", ["export", "--db", store, "--trajectories", ""], {}),
        ("export out ''", ["export", "--db", store, "--out", ""], {}),
        # Long and odd arguments: echoed bounded, in cudal2's words, refused before the GPU check.
        ("bench shape 100000 characters", ["bench", "--shape", "1" * 100_000], {}),
        ("eval spec 100000 characters", ["eval", "--spec", "x" * 100_000, "--shape", "64,64,64"], {}),
        ("show db name too long", ["show", "--db", e.path("n" * 5000)], {}),
        ("export out name too long", ["export", "--db", store, "--out", e.path("n" * 5000)], {}),
        ("eval spec not UTF-8", ["eval", "--spec", "tiny tn f32 \udcff", "--shape", "64,64,64"], {}),
        ("tune replay not a store", ["tune", "--replay", binary, "--families", "cublaslt", "--shape", "64,64,64",
                                     "--db", e.path("fuzz-replay2.db")], {"absent": e.path("fuzz-replay2.db"),
                                                                         "names": binary}),
        ("eval replay not a store", ["eval", "--replay", binary, "--spec", SPEC, "--shape", "64,64,64",
                                     "--db", e.path("fuzz-replay3.db")], {"absent": e.path("fuzz-replay3.db"),
                                                                         "names": binary}),
    ]
    return cases


def section_cli_fuzz(e):
    s = Section("cli-fuzz")
    os.makedirs(e.path("dir"), exist_ok=True)
    with open(e.path("binary.bin"), "wb") as f:
        f.write(random.Random(1).randbytes(4096))
    with open(e.path("big-line.txt"), "w") as f:
        f.write("1,2," + "3" * (5 << 20) + "\n")
    open(e.path("empty.txt"), "w").close()
    if e.clean:
        shutil.copy(e.clean, e.path("fuzz-store.db"))
    signals = 0
    for name, args, extra in fuzz_cases(e):
        code, out, err, secs = e.cudal2(args, timeout=extra.get("timeout", 20), mem_mib=extra.get("mem"))
        problems = []
        if code == "timeout":
            problems.append("hung (killed)")
        elif code < 0:
            signals += 1
            problems.append(f"signal {-code}")
        elif code != 2:
            problems.append(f"exit {code}")
        if code != "timeout" and not one_error_line(err):
            problems.append(f"{len([l for l in err.splitlines() if l.strip()])} stderr line(s), not one 'error:'")
        if "Traceback" in err or "Traceback" in out:
            problems.append("Python traceback")
        if len(err) > 2048:
            problems.append(f"{len(err)} bytes on stderr")
        for raw in ("[json.exception", "filesystem error", "nothing to run on this machine"):
            if raw in err:
                problems.append(f"'{raw}' on stderr")
        if extra.get("names") and extra["names"] not in err:
            problems.append("the error does not name the file")
        if extra.get("absent") and os.path.exists(extra["absent"]):
            problems.append(f"created {extra['absent']}")
            if extra["absent"].startswith("/nonexistent-cudal2"):
                shutil.rmtree(extra["absent"], ignore_errors=True)
            elif os.path.isdir(extra["absent"]):
                shutil.rmtree(extra["absent"], ignore_errors=True)
            else:
                os.remove(extra["absent"])
        s.check(not problems, f"cudal2 {name}: {', '.join(problems)}: {short(err)}")
    s.notes.append(f"{signals} signal(s)")
    return s


# ---------------------------------------------------------------------------------------------
# tuners: clean run, resume, two tuners on one store at once, --space @FILE, kill -9 and resume.

def import_replay(e):
    if os.path.exists(e.replay):
        return
    code, out, err, _ = run([sys.executable, os.path.join(REPO, "python", "cudal2", "store_csv.py"), "import",
                             os.path.join(HERE, "replay-store"), e.replay], timeout=120)
    if code != 0:
        raise RuntimeError(f"cannot import the replay store: {err}")


def section_tuners(e):
    s = Section("tuners")
    import_replay(e)
    clean = e.path("clean.db")
    t0 = time.monotonic()
    code, out, err, secs = e.tune(clean)
    if not s.check(code == 0, f"clean tune: exit {code}: {short(err)}"):
        return s
    e.clean = clean
    want, dup = rows(clean)
    s.notes.append(f"clean run {want} rows in {secs:.1f} s")
    s.check(want > 0 and dup == 0, f"clean tune: {want} rows, {dup} duplicated keys")

    # The same command again: everything is known, nothing is measured twice.
    code, out, err, _ = e.tune(clean)
    n, dup = rows(clean)
    s.check(code == 0 and n == want, f"re-run of a finished tune: exit {code}, {n} rows (want {want}): {short(err)}")

    # Two tuners at once on one store, the same shapes: never a (spec, shape, mode, timer) twice.
    # Started together, and the second once the first has stored rows.
    for i, delay in enumerate([0.0, 0.4, 0.8]):
        shared = e.path(f"shared{i}.db")
        env = dict(e.env, CUDAL2_REPLAY_DB=e.replay)
        procs = []
        for _ in range(2):
            procs.append(subprocess.Popen([e.cli] + e.tune_args(shared), env=env, cwd=e.work,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
            time.sleep(delay)
        results = [p.communicate(timeout=240) for p in procs]
        codes = [p.returncode for p in procs]
        n, dup = rows(shared)
        s.check(codes == [0, 0] and n == want and dup == 0,
                f"two tuners on one store (second {delay} s later): exits {codes}, {n} rows (a clean run: {want}), "
                f"{dup} keys measured twice: {short(results[0][1].decode() + results[1][1].decode())}")

    # Tuners started together share one store correctly: every row once, every tuner exits 0. (That
    # they divide the work is asserted on the paced runs below: unpaced, the whole tune takes ~0.4
    # s, and on a loaded 2-core machine one tuner could measure every row before the others had
    # started, which failed a clean CI run.)
    env = dict(e.env, CUDAL2_REPLAY_DB=e.replay)
    walls = {1: secs}
    for n_tuners in (2, 4):
        shared = e.path(f"together{n_tuners}.db")
        t_start = time.monotonic()
        procs = [subprocess.Popen([e.cli] + e.tune_args(shared), env=env, cwd=e.work, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE) for _ in range(n_tuners)]
        results = [p.communicate(timeout=240) for p in procs]
        walls[n_tuners] = time.monotonic() - t_start
        codes = [p.returncode for p in procs]
        n, dup = rows(shared)
        s.check(all(c == 0 for c in codes) and n == want and dup == 0,
                f"{n_tuners} tuners started together: exits {codes}, {n} rows (want {want}), {dup} measured twice: "
                f"{short(b''.join(r[1] for r in results).decode(errors='replace'))}")
    s.notes.append("1/2/4 tuners together " + "/".join(f"{walls[k]:.1f}" for k in (1, 2, 4)) + " s")

    # With GPU time to divide (each replay judge takes PACE_S a job, as each tuner on its own GPU
    # would), 4 tuners started together finish in under half the wall time of one (claimed a shape
    # at a time, 4 tuners on 6 shapes took as long as one).
    paced = dict(env, CUDAL2_REPLAY_JOB_SECONDS=str(PACE_S))
    pwalls = {}
    for n_tuners in (1, 2, 4):
        shared = e.path(f"paced{n_tuners}.db")
        t_start = time.monotonic()
        procs = [subprocess.Popen([e.cli] + e.tune_args(shared), env=paced, cwd=e.work, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE) for _ in range(n_tuners)]
        errs = [p.communicate(timeout=240)[1] for p in procs]
        pwalls[n_tuners] = time.monotonic() - t_start
        codes = [p.returncode for p in procs]
        n, dup = rows(shared)
        s.check(all(c == 0 for c in codes) and n == want and dup == 0,
                f"{n_tuners} paced tuners: exits {codes}, {n} rows (want {want}), {dup} measured twice: "
                f"{short(b''.join(errs).decode(errors='replace'))}")
        # Divided, not one tuner doing everything (the late starters used to find every proposal
        # claimed by the first and exit): rows are stored under runs of several processes.
        if n_tuners > 1:
            workers = measuring_processes(shared)
            s.check(workers >= 2, f"{n_tuners} paced tuners started together: the rows were measured by {workers} of them")
    s.check(pwalls[4] < 0.5 * pwalls[1],
            f"4 tuners started together took {pwalls[4]:.1f} s, one {pwalls[1]:.1f} s (want under half)")
    s.notes.append(f"paced ({PACE_S} s a job) 1/2/4 tuners " + "/".join(f"{pwalls[k]:.1f}" for k in (1, 2, 4)) + " s")

    # The stand-in GPU time is checked by the CLI: one error line, exit 2 (the judge exited before
    # answering, and the tuner said only that, exit 1).
    code, out, err, _ = e.tune(e.path("bad-pace.db"), env=dict(env, CUDAL2_REPLAY_JOB_SECONDS="soon"))
    s.check(code == 2 and one_error_line(err) and "CUDAL2_REPLAY_JOB_SECONDS" in err,
            f"CUDAL2_REPLAY_JOB_SECONDS=soon: exit {code} (want 2, one error line naming it): {short(err)}")

    # Work another live tuner holds is waited for, and taken over when that tuner dies without
    # measuring it (a late starter used to exit at once, and the work stayed undone). The holder
    # is a stand-in: a process of this host whose claims on the last shape are written into the
    # store; it dies after HOLD_S seconds.
    held = e.path("held.db")
    shutil.copyfile(clean, held)
    holder = subprocess.Popen(["sleep", str(HOLD_S)])
    reaper = threading.Thread(target=holder.wait)  # reaped at once: a zombie's pid still answers kill(pid, 0)
    reaper.start()
    c = sqlite3.connect(held)
    last = [int(x) for x in SHAPES[-1].split(",")]
    keys = c.execute("SELECT DISTINCT spec_hash, dtype, layout, m, n, k, mode FROM measurements WHERE m = ? AND n = ? "
                     "AND k = ?", last).fetchall()
    c.execute("DELETE FROM measurements")
    c.execute("DELETE FROM claims")
    c.executemany("INSERT INTO claims (spec_hash, gpu, dtype, layout, m, n, k, mode, host, pid) VALUES "
                  "(?, '', ?, ?, ?, ?, ?, ?, ?, ?)", [k + (socket.gethostname(), holder.pid) for k in keys])
    c.commit()
    c.close()
    code, out, err, secs = e.tune(held)
    reaper.join()
    n, dup = rows(held)
    s.check(code == 0 and n == want and dup == 0,
            f"a tuner whose last shape ({len(keys)} keys) another live tuner held, which died after {HOLD_S} s: exit "
            f"{code} after {secs:.1f} s, {n} rows (want {want}), {dup} measured twice: {short(err[-300:])}")

    # SIGTERM to a tuner: it stops after the job in flight, finishes its run rows and exits 143;
    # the same command then resumes to exactly a clean run's rows. Paced, so that the signal comes
    # while jobs are left: unpaced, all 6 replayed jobs could end between two polls (exit 0).
    stopped = e.path("sigterm.db")
    p = subprocess.Popen([e.cli] + e.tune_args(stopped), env=paced, cwd=e.work, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        if os.path.exists(stopped) and rows_or_zero(stopped) > 0:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    try:
        code = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        code = "hung"
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    c = sqlite3.connect(stopped)
    open_runs = c.execute("SELECT count(*) FROM runs WHERE finished_at IS NULL").fetchone()[0]
    c.close()
    s.check(code == 128 + signal.SIGTERM and open_runs == 0,
            f"SIGTERM to a tuner: exit {code} (want 143), {open_runs} run row(s) left unfinished: {short(err[-300:])}")
    code, out, err, _ = e.tune(stopped)
    n, dup = rows(stopped)
    s.check(code == 0 and n == want and dup == 0, f"resume after SIGTERM: exit {code}, {n} rows (want {want})")

    # kill -9 at random moments, then resume: exactly a clean run's rows.
    rng = random.Random(7)
    killed = e.path("killed.db")
    env = dict(e.env, CUDAL2_REPLAY_DB=e.replay)
    for _ in range(2):
        p = subprocess.Popen([e.cli] + e.tune_args(killed), env=env, cwd=e.work, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(rng.uniform(0.3, 1.5))
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    code, out, err, _ = e.tune(killed)
    n, dup = rows(killed)
    s.check(code == 0 and n == want and dup == 0, f"kill -9 twice then resume: exit {code}, {n} rows (want {want})")

    # --space @FILE of cublaslt specs with --families cublaslt.
    c = sqlite3.connect(e.replay)
    texts = [r[0] for r in c.execute("SELECT text FROM specs WHERE family = 'cublaslt' ORDER BY hash LIMIT 3")]
    c.close()
    with open(e.path("lt-specs.txt"), "w") as f:
        f.write("# three recorded cuBLASLt configurations\n" + "\n".join(texts) + "\n")
    code, out, err, _ = e.tune(e.path("space-file.db"), ["--space", "@" + e.path("lt-specs.txt")])
    s.check(code == 0, f"--space @FILE of cublaslt specs: exit {code}: {short(err)}")
    s.notes.append(f"{time.monotonic() - t0:.0f} s")
    return s


# ---------------------------------------------------------------------------------------------
# stores: damaged stores are refused with exit 2 and an error naming the file.

def damage(src, dst, kind):
    shutil.copy(src, dst)
    c = sqlite3.connect(dst)
    page = c.execute("PRAGMA page_size").fetchone()[0]
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'measurements_by_problem'").fetchone()[0]
    pages = c.execute("PRAGMA page_count").fetchone()[0]
    c.close()
    rng = random.Random(kind)
    with open(dst, "r+b") as f:
        if kind == "index-page":
            f.seek((root - 1) * page + 8)
            f.write(rng.randbytes(page - 8))
        elif kind == "table-page":
            f.seek((pages // 2) * page)
            f.write(rng.randbytes(page))
        elif kind == "truncated":
            f.truncate((pages * page * 3 // 5) // page * page + 100)
        elif kind == "header":
            f.seek(0)
            f.write(rng.randbytes(100))


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def skew_index(src, dst):
    """A copy of src whose measurements index no longer matches its table: the index's declared
    columns are changed (mode -> timer) without rebuilding it, as a damaged index would be."""
    shutil.copy(src, dst)
    c = sqlite3.connect(dst)
    c.execute("PRAGMA writable_schema = ON")
    c.execute("UPDATE sqlite_master SET sql = replace(sql, 'spec_hash, mode)', 'spec_hash, timer)') "
              "WHERE name = 'measurements_by_problem'")
    c.commit()
    c.close()


def section_stores(e):
    s = Section("stores")
    if not e.clean:
        s.skipped = "no clean store (the tuners section failed)"
        return s
    base = e.path("stores-base.db")
    shutil.copy(e.clean, base)
    c = sqlite3.connect(base)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.execute("PRAGMA journal_mode = DELETE")
    c.close()
    for kind in ["index-page", "table-page", "truncated", "header"]:
        cmds = {
            "export": lambda d: ["export", "--db", d, "--out", e.path("damaged.json")],
            "tune": lambda d: e.tune_args(d),
            "merge --from": lambda d: ["merge", "--db", e.path(f"merged-{kind}.db"), "--from", d],
            "merge --db": lambda d: ["merge", "--db", d, "--from", base],
            "report": lambda d: ["report", "--db", d, "--out", e.path("damaged-report")],
            "show": lambda d: ["show", "--db", d],
        }
        for name, make in cmds.items():
            d = e.path(f"damaged-{kind}.db")
            damage(base, d, kind)
            env = dict(e.env, CUDAL2_REPLAY_DB=e.replay)
            code, out, err, _ = e.cudal2(make(d), env=env, timeout=120)
            ok = code == 2 and d in err and one_error_line(err) and "Traceback" not in err
            s.check(ok, f"{name} on a store with a damaged {kind}: exit {code}: {short(err)}")
    # An index out of step with its table: quick_check passes, integrity_check does not. Every
    # command refuses it, and tune writes nothing into it.
    skewed = e.path("skewed-index.db")
    for name, make in {"show": lambda d: ["show", "--db", d],
                       "tune --db": lambda d: e.tune_args(d),
                       "export": lambda d: ["export", "--db", d, "--out", e.path("skewed.json")]}.items():
        skew_index(base, skewed)
        before = sha256(skewed)
        code, out, err, _ = e.cudal2(make(skewed), timeout=120)
        s.check(code == 2 and skewed in err and one_error_line(err) and sha256(skewed) == before,
                f"{name} on a store whose index is out of step with its table: exit {code}, "
                f"file {'unchanged' if sha256(skewed) == before else 'written to'}: {short(err)}")
    # A damaged replay source is refused naming it; nothing is stored as the candidate's failure.
    for kind in ["header", "index-page"]:
        d = e.path(f"damaged-replay-{kind}.db")
        damage(base, d, kind)
        for name, args in {"eval --replay": ["eval", "--replay", d, "--spec", SPEC, "--shape", "64,64,64", "--db",
                                             e.path(f"replay-eval-{kind}.db")],
                           "tune --replay": ["tune", "--replay", d, "--families", "cublaslt", "--shape", "64,64,64",
                                             "--db", e.path(f"replay-tune-{kind}.db")]}.items():
            code, out, err, _ = e.cudal2(args, timeout=120)
            stored = args[-1]
            n = rows(stored)[0] if os.path.exists(stored) else 0
            s.check(code == 2 and d in err and one_error_line(err) and "Traceback" not in err + out and n == 0,
                    f"{name} from a replay store with a damaged {kind}: exit {code}, {n} row(s) stored: {short(err)}")
    # show on a store of another GPU than the default name, on a machine without a GPU.
    other = e.path("other-gpu.db")
    shutil.copy(base, other)
    c = sqlite3.connect(other)
    c.execute("UPDATE measurements SET gpu = 'NVIDIA H200'")
    c.execute("UPDATE best SET gpu = 'NVIDIA H200'")
    c.commit()
    c.close()
    code, out, err, _ = e.cudal2(["show", "--db", other])
    s.check(code == 0 and "NVIDIA H200" in out and " 0 shape(s)" not in out,
            f"show of an H200 store without a GPU: exit {code}: {short(out.splitlines()[0] if out else err)}")
    return s


# ---------------------------------------------------------------------------------------------
# readers: reading a store never writes to it (no schema upgrade, no switch to WAL, no store made
# of an empty file) and works where the store cannot be written (a read-only mount).

def file_state(path):
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        version = c.execute("PRAGMA user_version").fetchone()[0]
        journal = c.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        c.close()
    sidecars = [x for x in (path + "-wal", path + "-shm", path + "-journal") if os.path.exists(x)]
    return sha256(path), version, journal, sidecars


def section_readers(e):
    s = Section("readers")
    if not e.clean:
        s.skipped = "no clean store (the tuners section failed)"
        return s
    old = e.path("schema3.db")
    readers = {
        "show": lambda d: ["show", "--db", d],
        "export": lambda d: ["export", "--db", d, "--out", e.path("read.json")],
        "export --trajectories": lambda d: ["export", "--db", d, "--trajectories", e.path("read.jsonl")],
        "report": lambda d: ["report", "--db", d, "--out", e.path("read-report")],
        "merge --from": lambda d: ["merge", "--db", e.path("read-merged.db"), "--from", d],
    }
    # A store of schema 3 (before work claims and the chain time) in rollback-journal mode: read as
    # it is.
    shutil.copy(e.clean, old)
    c = sqlite3.connect(old)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.execute("PRAGMA journal_mode = DELETE")
    c.execute("DROP TABLE claims")
    c.execute("ALTER TABLE measurements DROP COLUMN chain_us")
    c.execute("PRAGMA user_version = 3")
    c.commit()
    c.close()
    want = file_state(old)
    for name, make in readers.items():
        code, out, err, _ = e.cudal2(make(old), timeout=120)
        now = file_state(old)
        s.check(code == 0 and now == want,
                f"{name} of a schema-3 store: exit {code}, (hash, schema, journal, side files) {now[1:]} "
                f"{'unchanged' if now == want else 'changed from ' + str(want[1:])}: {short(err)}")
    # A 0-byte file stays one: refused by the readers that need a store, nothing merged from it.
    zero = e.path("zero.db")
    for name, make in readers.items():
        open(zero, "w").close()
        code, out, err, _ = e.cudal2(make(zero), timeout=120)
        size = os.path.getsize(zero)
        want_code = 0 if name == "merge --from" else 2
        s.check(code == want_code and size == 0 and (code == 0 or zero in err),
                f"{name} of a 0-byte file: exit {code} (want {want_code}), now {size} bytes: {short(err)}")
    # A WAL-mode store on a read-only mount (SQLite cannot create its -shm file there).
    mnt = e.path("ro-mount")
    os.makedirs(mnt, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt], capture_output=True, text=True)
    if r.returncode != 0:
        s.notes.append("read-only mount skipped (cannot mount a tmpfs here)")
        return s
    try:
        ro = os.path.join(mnt, "store.db")
        shutil.copy(e.clean, ro)
        c = sqlite3.connect(ro)
        c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.close()
        for side in (ro + "-wal", ro + "-shm"):
            if os.path.exists(side):
                os.remove(side)
        subprocess.run(["mount", "-o", "remount,ro", mnt], check=True, capture_output=True)
        for name in ["show", "export", "report"]:
            code, out, err, _ = e.cudal2(readers[name](ro), timeout=120)
            s.check(code == 0, f"{name} of a WAL store on a read-only mount: exit {code}: {short(err)}")
    finally:
        subprocess.run(["umount", mnt], capture_output=True)
    return s


# ---------------------------------------------------------------------------------------------
# outputs: an output that is a device, a FIFO or a symbolic link is written through, not
# replaced by a regular file.

def section_outputs(e):
    s = Section("outputs")
    if not e.clean:
        s.skipped = "no clean store (the tuners section failed)"
        return s
    store = e.clean
    # A private null device (the real /dev/null is not risked: before the fix it was replaced).
    dev = e.path("null-device")
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError:
        dev = None
        s.notes.append("character device skipped (mknod not permitted)")
    if dev:
        for name, args in {"export --out": ["export", "--db", store, "--out", dev],
                           "export --trajectories": ["export", "--db", store, "--trajectories", dev]}.items():
            code, out, err, _ = e.cudal2(args, timeout=60)
            s.check(code == 0 and stat.S_ISCHR(os.lstat(dev).st_mode),
                    f"{name} to a character device: exit {code}, "
                    f"{'still a device' if stat.S_ISCHR(os.lstat(dev).st_mode) else 'replaced by a file'}: "
                    f"{short(err)}")
    # A FIFO with a reader gets the table; without one the command fails at once.
    fifo = e.path("out.fifo")
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    code, out, err, _ = e.cudal2(["export", "--db", store, "--out", fifo], timeout=60)
    if reader.is_alive():  # never opened for writing: unblock the reader
        with open(fifo, "wb"):
            pass
    reader.join(timeout=5)
    data = got[0] if got else b""
    s.check(code == 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode) and data.lstrip().startswith(b"{"),
            f"export --out to a FIFO with a reader: exit {code}, {len(data)} bytes read, "
            f"{'still a FIFO' if stat.S_ISFIFO(os.lstat(fifo).st_mode) else 'replaced'}: {short(err)}")
    lone = e.path("lone.fifo")
    os.mkfifo(lone)
    code, out, err, secs = e.cudal2(["export", "--db", store, "--out", lone], timeout=20)
    s.check(code not in (0, "timeout") and code > 0 and stat.S_ISFIFO(os.lstat(lone).st_mode) and
            one_error_line(err), f"export --out to a FIFO nobody reads: exit {code} after {secs:.1f} s: {short(err)}")
    # A symbolic link stays a link; the file (or directory) it names gets the output.
    target = e.path("linked-table.json")
    with open(target, "w") as f:
        f.write("OLD\n")
    link = e.path("table-link.json")
    os.symlink(os.path.basename(target), link)
    code, out, err, _ = e.cudal2(["export", "--db", store, "--out", link], timeout=60)
    content = open(target).read()
    s.check(code == 0 and os.path.islink(link) and content.lstrip().startswith("{"),
            f"export --out to a symbolic link: exit {code}, {'still a link' if os.path.islink(link) else 'replaced'}, "
            f"target {'rewritten' if content.lstrip().startswith('{') else 'unchanged'}: {short(err)}")
    dangling = e.path("dangling-link.jsonl")
    os.symlink("made-by-link.jsonl", dangling)
    code, out, err, _ = e.cudal2(["export", "--db", store, "--trajectories", dangling], timeout=60)
    s.check(code == 0 and os.path.islink(dangling) and os.path.isfile(e.path("made-by-link.jsonl")),
            f"export --trajectories to a dangling link: exit {code}, "
            f"{'still a link' if os.path.islink(dangling) else 'replaced'}: {short(err)}")
    return s


# ---------------------------------------------------------------------------------------------
# full-disk: outputs onto a full tmpfs: the old file stays, no temp file, one error line.

def section_full_disk(e):
    s = Section("full-disk")
    if not e.clean:
        s.skipped = "no clean store (the tuners section failed)"
        return s
    mnt = e.path("full")
    os.makedirs(mnt, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt], capture_output=True, text=True)
    if r.returncode != 0:
        s.skipped = f"cannot mount a tmpfs here ({short(r.stderr or r.stdout, 80)}): full-disk cases skipped"
        print(f"reliability: full-disk: skipped: {s.skipped}", file=sys.stderr)
        return s
    try:
        store = e.path("traj.db")
        shutil.copy(e.clean, store)
        c = sqlite3.connect(store)
        for i in range(20):
            c.execute("INSERT INTO llm_turns (episode, turn, kind, dtype, layout, m, n, k, prompt_json, reply, "
                      "reward, status) VALUES (?, ?, 'propose', 'f32', 'nn', 64, 64, 64, '[]', ?, 0.5, 'ok')",
                      (f"e{i}", i, "x" * 2000))
        c.commit()
        c.close()
        old = "OLD CONTENT\n"
        outputs = {"export --out": os.path.join(mnt, "table.json"),
                   "export --trajectories": os.path.join(mnt, "traj.jsonl"),
                   "report --out": os.path.join(mnt, "report")}
        with open(outputs["export --out"], "w") as f:
            f.write(old)
        with open(outputs["export --trajectories"], "w") as f:
            f.write(old)
        os.makedirs(outputs["report --out"])
        with open(os.path.join(outputs["report --out"], "index.html"), "w") as f:
            f.write(old)
        fd = os.open(os.path.join(mnt, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        before = sorted(os.listdir(mnt))
        cmds = {"export --out": ["export", "--db", e.clean, "--out", outputs["export --out"]],
                "export --trajectories": ["export", "--db", store, "--trajectories", outputs["export --trajectories"]],
                "report --out": ["report", "--db", e.clean, "--out", outputs["report --out"]]}
        for name, args in cmds.items():
            code, out, err, _ = e.cudal2(args, timeout=120)
            target = outputs[name]
            now = open(os.path.join(target, "index.html") if os.path.isdir(target) else target).read()
            left = sorted(os.listdir(mnt))
            lines = [l for l in err.splitlines() if l.strip()]
            ok = (code not in (0, "timeout") and (code > 0) and now == old and left == before and len(lines) == 1
                  and "Traceback" not in err)
            s.check(ok, f"{name} onto a full disk: exit {code}, old output {'kept' if now == old else 'changed'}, "
                        f"files now {left}: {short(err)}")
        # The rl policy saved after a round: the run fails, and no temporary file is left.
        policy = os.path.join(mnt, "policy.json")
        code, out, err, _ = e.tune(e.path("rl-full.db"), ["--search", "rl", "--rounds", "1", "--round", "8",
                                                          "--policy-file", policy])
        left = sorted(os.listdir(mnt))
        s.check(code not in (0, "timeout") and code > 0 and left == before and "policy" in err and
                "Traceback" not in err,
                f"tune --policy-file onto a full disk: exit {code}, files now {left}: {short(err[-300:])}")
    finally:
        subprocess.run(["umount", mnt], capture_output=True)
    return s


# ---------------------------------------------------------------------------------------------
# serve: SIGTERM (idle, loaded), slow clients, bad requests, no GPU.

class Serve:
    def __init__(self, e, extra=(), db=None):
        self.db = db or e.path("serve.db")
        args = [e.cli, "serve", "--port", "0", "--db", self.db] + list(extra)
        self.p = subprocess.Popen(args, env=e.env, cwd=e.work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True)
        self.port, self.log = None, ""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            line = self.p.stderr.readline().decode(errors="replace")
            if not line:
                break
            self.log += line
            if "listening on http://" in line:
                self.port = int(line.split("listening on http://")[1].split()[0].rsplit(":", 1)[1])
                break
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.p.stderr:
            self.log += line.decode(errors="replace")

    def stop(self, timeout=5.0):
        """SIGTERM; (exit code or 'hung', seconds)."""
        t0 = time.monotonic()
        self.p.send_signal(signal.SIGTERM)
        try:
            code = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()
            code = "hung"
        return code, time.monotonic() - t0


def request(port, method, path, body=None, headers=None, timeout=5.0):
    """(status or an error word, headers dict, body, seconds)."""
    t0 = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return r.status, dict(r.getheaders()), data, time.monotonic() - t0
    except (socket.timeout, TimeoutError):
        return "timeout", {}, b"", time.monotonic() - t0
    except (ConnectionError, http.client.HTTPException, OSError) as ex:
        return type(ex).__name__, {}, b"", time.monotonic() - t0
    finally:
        c.close()


def raw_status(port, head, body=b"", wait=3.0):
    """Sends head (+ body), returns (the status line's code or an error word, seconds)."""
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    try:
        s.sendall(head + body)
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        code = int(data.split()[1]) if data.startswith(b"HTTP/1.") else "closed"
    except (socket.timeout, TimeoutError):
        code = "timeout"
    except OSError as ex:
        code = type(ex).__name__
    finally:
        s.close()
    return code, time.monotonic() - t0


AUTH = {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"}
JOB = json.dumps({"source": "extern \"C\" int cudal2_kernel_abi_version() { return 1; }\n", "layout": "nn",
                  "shapes": [[64, 64, 64]]})


def slow_clients(port, n, stop):
    """n connections that hang on: trickled headers, a huge declared body, a slow small body."""
    socks = []
    for i in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
        except OSError:
            continue
        kind = i % 3
        try:
            if kind == 0:
                s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            elif kind == 1:
                s.sendall(b"POST /evaluate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode() +
                          b"\r\nContent-Length: 100000000\r\n\r\n{\"")
            else:
                s.sendall(b"POST /evaluate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode() +
                          b"\r\nContent-Length: 1000\r\n\r\n{\"")
        except OSError:
            pass
        socks.append((kind, s))

    def trickle():
        while not stop.is_set():
            for kind, s in socks:
                if kind == 0:
                    try:
                        s.send(b"X")
                    except OSError:
                        pass
            stop.wait(0.5)
        for _, s in socks:
            s.close()
    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    return t


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def flood(port, request_line, limit=32 << 20):
    """Streams an endless request line (or endless header lines) until the server answers or
    closes; (the status or an error word, bytes sent)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    sent = 0
    try:
        s.sendall(b"GET /" if request_line else b"GET /health HTTP/1.1\r\nHost: x\r\n")
        chunk = b"a" * 8192 if request_line else (b"X-Pad: " + b"p" * 1000 + b"\r\n") * 8
        s.setblocking(False)
        data = b""
        while sent < limit:
            try:
                data += s.recv(4096)
                break
            except BlockingIOError:
                pass
            try:
                sent += s.send(chunk)
            except BlockingIOError:
                time.sleep(0.001)
        s.settimeout(5)
        while b"\r\n" not in data:
            more = s.recv(4096)
            if not more:
                break
            data += more
        return (int(data.split()[1]) if data.startswith(b"HTTP/1.") else "closed"), sent
    except OSError as ex:
        return type(ex).__name__, sent
    finally:
        s.close()


def section_serve(e, sigterm_idle=20, sigterm_loaded=6, sigterm_startup=10):
    s = Section("serve")
    requests = 0
    # SIGTERM to an idle server.
    exits = []
    for i in range(sigterm_idle):
        srv = Serve(e, db=e.path(f"serve-idle.db"))
        if not s.check(srv.port is not None, f"serve did not start: {short(srv.log)}"):
            srv.stop()
            continue
        time.sleep(random.Random(i).uniform(0, 0.05))
        code, secs = srv.stop()
        exits.append(secs)
        s.check(code == 0, f"SIGTERM to an idle server ({i + 1}): {code} after {secs:.1f} s: {short(srv.log[-300:])}")
    # SIGTERM under load.
    for i in range(sigterm_loaded):
        srv = Serve(e, ["--rate", "0"], db=e.path(f"serve-loaded.db"))
        if not s.check(srv.port is not None, f"serve did not start: {short(srv.log)}"):
            srv.stop()
            continue
        stop = threading.Event()
        count = [0]

        def hammer():
            while not stop.is_set():
                request(srv.port, "GET", "/health", timeout=2)
                request(srv.port, "POST", "/evaluate", body="{bad", headers=AUTH, timeout=2)
                count[0] += 2
        threads = [threading.Thread(target=hammer, daemon=True) for _ in range(8)]
        for t in threads:
            t.start()
        time.sleep(0.4)
        code, secs = srv.stop()
        stop.set()
        for t in threads:
            t.join(timeout=5)
        requests += count[0]
        exits.append(secs)
        s.check(code == 0, f"SIGTERM to a loaded server ({i + 1}): {code} after {secs:.1f} s: {short(srv.log[-300:])}")
    s.notes.append(f"SIGTERM x{len(exits)}: exit max {max(exits) if exits else 0:.2f} s")

    # SIGTERM while the server starts up (before it listens): it stops cleanly, never killed by it.
    # From 20 ms on: the first few milliseconds (exec, mapping the libraries) precede any code of
    # the program, and cuBLASLt's initializer alone then takes over 100 ms.
    for i in range(sigterm_startup):
        p = subprocess.Popen([e.cli, "serve", "--port", "0", "--db", e.path("serve-startup.db")], env=e.env,
                             cwd=e.work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        time.sleep(random.Random(100 + i).uniform(0.02, 0.2))
        p.send_signal(signal.SIGTERM)
        try:
            code = p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            code = "hung"
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
        s.check(code == 0, f"SIGTERM during start-up ({i + 1}): exit {code}: {short(err[-300:])}")

    # Header floods: a head over its limit is answered at once (431; 400 for the request line) and
    # the server's memory stays under twice its idle size while 30 clients flood.
    srv = Serve(e, ["--rate", "0"], db=e.path("serve-flood.db"))
    if s.check(srv.port is not None, f"serve did not start: {short(srv.log)}"):
        for _ in range(5):
            request(srv.port, "GET", "/health")
        idle = rss_kib(srv.p.pid)
        peak = [idle]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], rss_kib(srv.p.pid))
                done.wait(0.02)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        answers = []
        flooders = [threading.Thread(target=lambda i=i: answers.append(flood(srv.port, i % 3 == 0)), daemon=True)
                    for i in range(30)]
        for t in flooders:
            t.start()
        for t in flooders:
            t.join(timeout=30)
        done.set()
        sampler.join(timeout=2)
        requests += len(answers)
        want = sorted([400] * 10 + [431] * 20)
        s.check(sorted(a[0] for a in answers) == want,
                f"30 header floods: statuses {sorted(a[0] for a in answers)} (want 10 x 400, 20 x 431)")
        s.check(peak[0] < 2 * idle, f"RSS under 30 header floods: {peak[0]} KiB, idle {idle} KiB (limit 2x)")
        s.notes.append(f"header floods: RSS idle {idle >> 10} MiB, peak {peak[0] >> 10} MiB, "
                       f"{max((a[1] for a in answers), default=0) >> 10} KiB sent at most")
        st, _, body, _ = request(srv.port, "GET", "/health")
        s.check(st == 200, f"/health after the header floods: {st}")
        # A reps count that wraps around 32 bits is out of range, not 1.
        st, _, body, _ = request(srv.port, "POST", "/evaluate", headers=AUTH,
                                 body=json.dumps({"source": "x", "shapes": [[64, 64, 64]], "reps": 4294967297}))
        requests += 2
        s.check(st == 400, f"reps 4294967297: {st} (want 400): {short(body.decode(errors='replace'))}")
        code, secs = srv.stop()
        s.check(code == 0, f"SIGTERM after the header floods: {code}")

    # One server: slow clients hang on while /health is timed; then bad requests from 50 clients.
    srv = Serve(e, ["--rate", "0", "--queue", "4"])
    if not s.check(srv.port is not None, f"serve did not start: {short(srv.log)}"):
        srv.stop()
        return s
    port = srv.port
    stop = threading.Event()
    slow = slow_clients(port, 30, stop)
    time.sleep(0.3)
    lat = []
    for _ in range(40):
        st, _, body, secs = request(port, "GET", "/health", timeout=3)
        requests += 1
        lat.append(secs)
        s.check(st == 200, f"/health while 30 slow clients hang on: {st} after {secs:.2f} s")
    p50, p95, worst = pct(lat, 0.5), pct(lat, 0.95), max(lat)
    s.check(p95 <= 0.100, f"/health while 30 slow clients hang on: p95 {p95 * 1000:.0f} ms (limit 100 ms)")
    s.notes.append(f"/health under slow clients p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
                   f"max {worst * 1000:.0f} ms")
    # A declared body over --max-body: 413 at once, not after the read timeout.
    code, secs = raw_status(port, b"POST /evaluate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode() +
                            b"\r\nContent-Length: 100000000\r\n\r\n", b"{\"")
    requests += 1
    s.check(code == 413 and secs < 1.0, f"Content-Length 100000000 with 2 bytes sent: {code} after {secs:.2f} s")
    stop.set()
    slow.join(timeout=5)

    # 50 concurrent clients, each a mix of good and bad requests.
    results, lock = [], threading.Lock()
    big = json.dumps({"source": "x" * 300_000, "shapes": [[64, 64, 64]]})

    def client(i):
        mine = []
        mine.append(("health", 200, request(port, "GET", "/health")))
        mine.append(("malformed JSON", 400, request(port, "POST", "/evaluate", body="{not json", headers=AUTH)))
        mine.append(("unknown field", 400, request(port, "POST", "/evaluate", body='{"nope": 1}', headers=AUTH)))
        mine.append(("no token", 401, request(port, "POST", "/evaluate", body=JOB,
                                              headers={"Content-Type": "application/json"})))
        mine.append(("wrong token", 401, request(port, "POST", "/evaluate", body=JOB,
                                                 headers={"Authorization": "Bearer nope"})))
        mine.append(("unknown path", 404, request(port, "GET", "/nope")))
        if i % 10 == 0:
            mine.append(("300 KB body", 413, request(port, "POST", "/evaluate", body=big, headers=AUTH)))
        if i % 25 == 0:
            mine.append(("valid job without a GPU", 503, request(port, "POST", "/evaluate", body=JOB, headers=AUTH,
                                                                 timeout=20)))
        with lock:
            results.extend(mine)
    threads = [threading.Thread(target=client, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    requests += len(results)
    for what, want, (st, hdrs, body, secs) in results:
        s.check(st == want, f"{what}: {st} (want {want}) after {secs:.2f} s: {short(body.decode(errors='replace'))}")
    lat = [r[2][3] for r in results if r[0] == "health"]
    s.notes.append(f"50 clients: {len(results)} requests, /health p95 {pct(lat, 0.95) * 1000:.1f} ms")
    st, _, body, _ = request(port, "GET", "/health")
    s.check(st == 200, f"/health after the load: {st}")
    code, secs = srv.stop()
    s.check(code == 0, f"SIGTERM after the load test: {code} after {secs:.1f} s")
    if os.path.exists(srv.db):
        n, _ = rows(srv.db)
        s.check(n == 0, f"serve without a GPU stored {n} measurement row(s)")

    # Rate limit: over the limit -> 429 with Retry-After.
    srv = Serve(e, ["--rate", "1"], db=e.path("serve-rate.db"))
    if s.check(srv.port is not None, f"serve --rate 1 did not start: {short(srv.log)}"):
        got = [request(srv.port, "POST", "/evaluate", body="{}", headers={"Authorization": "Bearer nope"})
               for _ in range(14)]
        requests += len(got)
        limited = [g for g in got if g[0] == 429]
        s.check(limited and all("Retry-After" in g[1] for g in limited),
                f"14 requests at --rate 1: statuses {[g[0] for g in got]}")
        code, secs = srv.stop()
        s.check(code == 0, f"SIGTERM to the rate-limited server: {code}")
    s.notes.insert(0, f"{requests} requests")
    return s


SECTIONS = {"tuners": section_tuners, "cli-fuzz": section_cli_fuzz, "stores": section_stores,
            "readers": section_readers, "outputs": section_outputs, "full-disk": section_full_disk,
            "serve": section_serve}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True, help="the cudal2 executable")
    ap.add_argument("--only", default="", help="comma-separated sections (default: all)")
    ap.add_argument("--keep", default="", help="work directory to keep (default: a temporary one, removed)")
    a = ap.parse_args()
    work = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="cudal2-reliability-")
    os.makedirs(work, exist_ok=True)
    e = Env(a.cli, work)
    only = [x for x in a.only.split(",") if x]
    results = []
    t0 = time.monotonic()
    try:
        for name, fn in SECTIONS.items():
            if only and name not in only and not (name == "tuners" and set(only) & {"stores", "full-disk",
                                                                                    "cli-fuzz", "readers",
                                                                                    "outputs"}):
                continue
            t = time.monotonic()
            try:
                sec = fn(e)
            except Exception as ex:  # a crash of the suite itself is a failure, not a lost table
                sec = Section(name)
                sec.check(False, f"the section stopped: {type(ex).__name__}: {ex}")
            sec.seconds = time.monotonic() - t
            results.append(sec)
    finally:
        if not a.keep:
            subprocess.run(["umount", os.path.join(work, "full")], capture_output=True)
            shutil.rmtree(work, ignore_errors=True)
    print(f"\n{'section':<10} {'tried':>6} {'failed':>7} {'seconds':>8}  figures")
    for sec in results:
        figures = sec.skipped and f"skipped: {sec.skipped}" or "; ".join(sec.notes)
        print(f"{sec.name:<10} {sec.tried:>6} {len(sec.failures):>7} {sec.seconds:>8.1f}  {figures}")
    tried, failed = sum(x.tried for x in results), sum(len(x.failures) for x in results)
    print(f"{'total':<10} {tried:>6} {failed:>7} {time.monotonic() - t0:>8.1f}")
    for sec in results:
        for f in sec.failures:
            print(f"FAIL [{sec.name}] {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
