#!/usr/bin/env python3
"""Fingerprints of clang-tidy's input, one per host source: what scripts/check_tidy.sh compares with
the committed list of tidy-clean sources (.ci/tidy-fingerprints) to run clang-tidy only where the
input changed.

  python3 scripts/tidy_fingerprint.py --build BUILD_DIR [--salt TEXT] [--jobs N] FILE...

Prints "<sha256> <path relative to the checkout>" for each FILE (absolute, as in the build's
compile_commands.json), sorted by path. A fingerprint is the SHA-256 of everything clang-tidy's
verdict on the file depends on:
  - the salt (check_tidy.sh passes its clang-tidy arguments and `clang-tidy --version`), the
    version of the clang++ beside clang-tidy, and the text of every .clang-tidy from the file's
    folder up to the checkout;
  - for each of the file's compile commands (a source built by two targets has two): the command's
    arguments without the output file, and clang++'s preprocessed output of the file with those
    arguments (-E -dD -CC: line markers, #define directives and comments kept, so a NOLINT, a macro
    definition, a moved line or a changed __FILE__ changes it);
  - the raw text of every file the preprocessor entered (the main file and every header, system
    ones included), so even code in a skipped #if block counts.
The checkout's and the build directory's absolute paths are replaced by placeholders everywhere
(arguments, line markers, __FILE__ expansions), so a fingerprint does not depend on where the clone
sits or on the build directory's name. Exits 1 when a file has no compile command or clang++ fails
on it.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

FORMAT = b"cudal2-tidy-fingerprint v1\n"
LINE_MARKER = re.compile(rb'^# \d+ "((?:[^"\\]|\\.)*)"', re.M)


def clangxx():
    """The clang++ of clang-tidy's own LLVM (clang-tidy's package depends on it): same front end."""
    tidy = shutil.which("clang-tidy")
    if tidy:
        cand = os.path.join(os.path.dirname(os.path.realpath(tidy)), "clang++")
        if os.access(cand, os.X_OK):
            return cand
    cand = shutil.which("clang++")
    if not cand:
        sys.exit("tidy_fingerprint: no clang++ beside clang-tidy nor on PATH")
    return cand


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--salt", default="")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()

    root_logical = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    build_logical = os.path.abspath(a.build)
    # Longest first, so the build directory (usually inside the checkout) becomes @BUILD@.
    subs = []
    for path, tag in ((build_logical, b"@BUILD@"), (os.path.realpath(build_logical), b"@BUILD@"),
                      (root_logical, b"@ROOT@"), (os.path.realpath(root_logical), b"@ROOT@")):
        subs.append((path.encode(), tag))
    subs = sorted(set(subs), key=lambda s: -len(s[0]))

    def norm(data):
        for path, tag in subs:
            data = data.replace(path, tag)
        return data

    with open(os.path.join(a.build, "compile_commands.json")) as f:
        db = json.load(f)
    commands = {}
    for e in db:
        path = os.path.normpath(os.path.join(e["directory"], e["file"]))
        commands.setdefault(path, []).append(e)
        rp = os.path.realpath(path)
        if rp != path:
            commands.setdefault(rp, []).append(e)

    cxx = clangxx()
    version = subprocess.run([cxx, "--version"], capture_output=True, check=True).stdout.splitlines()[0]
    root_real = os.path.realpath(root_logical)

    def tidy_configs(path):
        """.clang-tidy files from the file's folder up to the checkout (clang-tidy reads the nearest)."""
        out = b""
        d = os.path.dirname(os.path.realpath(path))
        while True:
            cfg = os.path.join(d, ".clang-tidy")
            if os.path.isfile(cfg):
                with open(cfg, "rb") as f:
                    out += norm(cfg.encode()) + b"\n" + f.read() + b"\n"
            if d == root_real or d == os.path.dirname(d):
                break
            d = os.path.dirname(d)
        return out

    def fingerprint(path):
        entries = commands.get(path) or commands.get(os.path.realpath(path))
        if not entries:
            raise RuntimeError(f"{path}: not in {a.build}/compile_commands.json")
        h = hashlib.sha256(FORMAT)
        h.update(a.salt.encode() + b"\n" + version + b"\n" + tidy_configs(path))
        parts = []
        for e in entries:
            args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
            src = os.path.normpath(os.path.join(e["directory"], e["file"]))
            flags, skip = [], False
            for arg in args[1:]:
                if skip:
                    skip = False
                    continue
                if arg == "-o":
                    skip = True
                    continue
                if arg == "-c" or arg.startswith("-o") or arg == e["file"] or \
                        os.path.normpath(os.path.join(e["directory"], arg)) == src:
                    continue
                flags.append(arg)
            res = subprocess.run([cxx, *flags, "-E", "-dD", "-CC", "-w", src], cwd=e["directory"],
                                 capture_output=True)
            if res.returncode != 0:
                raise RuntimeError(f"{path}: clang++ -E failed:\n{res.stderr.decode(errors='replace')}")
            part = hashlib.sha256()
            part.update(norm("\0".join(flags).encode()) + b"\n")
            part.update(norm(res.stdout))
            # The raw text of every file entered (line markers name them), ordered by normalized name.
            entered = sorted({m.group(1) for m in LINE_MARKER.finditer(res.stdout)} - {b"<built-in>",
                                                                                     b"<command line>"},
                             key=lambda n: (norm(n), n))
            for name in entered:
                fname = os.path.join(e["directory"], name.decode().replace('\\"', '"').replace("\\\\", "\\"))
                part.update(b"\0" + norm(name) + b"\0")
                try:
                    with open(fname, "rb") as f:
                        part.update(hashlib.sha256(f.read()).digest())
                except OSError:
                    part.update(b"<unreadable>")
            parts.append(part.hexdigest())
        for p in sorted(parts):
            h.update(p.encode() + b"\n")
        return h.hexdigest()

    files = [os.path.normpath(os.path.abspath(p)) for p in a.files]
    rels = {}
    for p in files:
        rp = os.path.realpath(p)
        rels[p] = os.path.relpath(rp, root_real)
    failed = False
    out = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futs = {pool.submit(fingerprint, p): p for p in files}
        for fut in concurrent.futures.as_completed(futs):
            p = futs[fut]
            try:
                out.append((rels[p], fut.result()))
            except Exception as ex:  # noqa: BLE001 - report every file, then fail
                print(f"tidy_fingerprint: {ex}", file=sys.stderr)
                failed = True
    for rel, digest in sorted(out):
        print(f"{digest} {rel}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
