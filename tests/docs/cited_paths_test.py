#!/usr/bin/env python3
"""No dangling words: every repository path cited in a comment or a doc exists, and no comment or
doc points at a numbered work item (the tracker those numbers referred to is not part of the
repository, so nobody can look them up).

  python3 tests/docs/cited_paths_test.py [--root REPO]

Scanned: the comments (and Python docstrings) of the sources and scripts under src/, tests/,
bench/ (not bench/results/, whose file names and histories stay as committed), scripts/ and
cmake/, the top-level CMakeLists.txt, and the Markdown of docs/, README.md and the READMEs beside
the code. A cited path is a relative path under a directory of the repository (src/..., docs/...,
bench/..., tests/..., scripts/..., tables/..., cmake/..., examples/..., python/..., ...), a path
with a source or doc extension (resolved against the repository, src/, include/ and the citing
file's folder), or a Markdown link target. Placeholders ({a,b}, *, <...>, $VAR) are not checked.
Prints one line per finding (file:line: what) and exits 1 when there is any.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CODE_DIRS = ["src", "tests", "bench", "scripts", "cmake"]
SKIP_DIRS = {"bench/results", "tests/golden", "tests/reliability/replay-store", "build", ".venv", ".git"}
MD_DIRS = ["docs"]
C_EXT = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".c", ".cc"}
HASH_EXT = {".py", ".sh", ".cmake", ".txt"}  # '#' comments (.txt: shape and space lists, CMakeLists)

TOP = ["src", "docs", "bench", "tests", "scripts", "tables", "cmake", "examples", "python", "include",
       "plugins", "prompts"]
KNOWN_EXT = ("cpp", "hpp", "h", "cu", "cuh", "py", "sh", "md", "cmake", "json", "txt", "csv", "toml", "html")

# A path under a top-level directory, or a word/word.ext path with a known extension.
PATH_RE = re.compile(r"(?<![\w./@$-])((?:%s)/[\w./{}*<>$@+-]*|[\w-]+(?:/[\w.{}*<>$@+-]+)+\.(?:%s))(?![\w/])"
                     % ("|".join(TOP), "|".join(KNOWN_EXT)))
# A bare Markdown file name (DESIGN.md): resolved against the repository, docs/ and the folder.
BARE_MD_RE = re.compile(r"(?<![\w./-])([\w-]+\.md)\b")
MD_LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
# Numbered work items: "issue 9", "session 11", "task 3", "ticket 4", "milestone 2", "(#27)",
# "issue #12"; not "CUDA 13", "round 1", "stage 0", "step 1/3".
WORK_ITEM_RE = re.compile(r"\b(?:issue|session|task|ticket|milestone|sprint)s?\s+#?\d+\b|\(#\d+\)|\bitem\s+\d+\b",
                          re.IGNORECASE)


def c_comments(text):
    """(line, text) of every // and /* */ comment, string and character literals skipped."""
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            for k, part in enumerate(text[i + 2:j].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, j)
            i = j + 2
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end
            line += text.count("\n", i, end)
            i = end + len(m.group(1)) + 2
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def hash_comments(text, python):
    """(line, text) of '#' comments (a '#' at the start or after a blank, outside quotes) and, for
    Python, of the lines of triple-quoted strings (docstrings)."""
    out = []
    in_doc = None
    for no, raw in enumerate(text.split("\n"), 1):
        if python:
            if in_doc:
                out.append((no, raw))
                if in_doc in raw:
                    in_doc = None
                continue
            m = re.match(r'\s*[rbuRBU]?("""|\'\'\')', raw)
            if m:
                out.append((no, raw))
                if raw.count(m.group(1)) == 1:
                    in_doc = m.group(1)
                continue
        quote = None
        for k, ch in enumerate(raw):
            if quote:
                if ch == quote and raw[k - 1] != "\\":
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "#" and (k == 0 or raw[k - 1] in " \t"):
                out.append((no, raw[k + 1:]))
                break
    return out


def strip_md_code_urls(s):
    return re.sub(r"https?://\S+", "", s)


# Paths outside the repository that look like ours: the install and build-tree layout
# (share/cudal2/...), system and CUTLASS headers.
EXTERNAL = ("share/", "linux/", "sys/", "cutlass/", "include/cutlass/")


def exists(root, rel_to, p):
    p = p.rstrip(".,:;)'`\"")
    p = re.sub(r"(?<=\w)\.+$", "", p)
    if not p or any(ch in p for ch in "{}*<>$@") or "..." in p or p.startswith(EXTERNAL):
        return True
    if re.match(r"[A-Z][A-Z0-9_]*/", p):  # a placeholder directory: OUT_DIR/table.cpp
        return True
    p = p.split("#")[0]
    bases = [root, os.path.join(root, "src"), os.path.join(root, "include"), os.path.join(root, "docs"), rel_to]
    return any(os.path.exists(os.path.join(b, p)) for b in bases)


def scan_text(root, path, items, findings, md=False):
    rel = os.path.relpath(path, root)
    folder = os.path.dirname(path)
    for no, text in items:
        text = strip_md_code_urls(text)
        for m in WORK_ITEM_RE.finditer(text):
            findings.append(f"{rel}:{no}: numbered work item '{m.group(0)}': say what it meant instead")
        for m in PATH_RE.finditer(text):
            p = m.group(1)
            if not exists(root, folder, p):
                findings.append(f"{rel}:{no}: cites '{p.rstrip('.,:;)')}', which does not exist")
        for m in BARE_MD_RE.finditer(text):
            if text[:m.start()].rstrip().endswith(">"):  # a shell redirection: a file written
                continue
            if not exists(root, folder, m.group(1)):
                findings.append(f"{rel}:{no}: cites '{m.group(1)}', which does not exist")
        if md:
            for m in MD_LINK_RE.finditer(text):
                t = m.group(1)
                if re.match(r"[a-z]+:|#", t):
                    continue
                if not exists(root, folder, t.split("#")[0]) and not exists(root, root, t.split("#")[0]):
                    findings.append(f"{rel}:{no}: links to '{t}', which does not exist")


def walk(root, top):
    base = os.path.join(root, top)
    if os.path.isfile(base):
        yield base
        return
    for d, dirs, files in os.walk(base):
        reld = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if os.path.join(reld, x) not in SKIP_DIRS and x not in SKIP_DIRS)
        for f in sorted(files):
            yield os.path.join(d, f)


def scan(root):
    findings = []
    this = os.path.abspath(__file__)
    for top in CODE_DIRS + ["CMakeLists.txt"]:
        for path in walk(root, top):
            if os.path.abspath(path) == this:
                continue
            ext = os.path.splitext(path)[1]
            name = os.path.basename(path)
            try:
                text = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            if ext in C_EXT:
                scan_text(root, path, c_comments(text), findings)
            elif ext in HASH_EXT or name == "CMakeLists.txt":
                scan_text(root, path, hash_comments(text, ext == ".py"), findings)
            elif ext == ".md":
                scan_text(root, path, list(enumerate(text.split("\n"), 1)), findings, md=True)
    md_files = [os.path.join(root, "README.md")]
    for top in MD_DIRS:
        md_files += [p for p in walk(root, top) if p.endswith(".md")]
    for path in md_files:
        text = open(path, encoding="utf-8").read()
        scan_text(root, path, list(enumerate(text.split("\n"), 1)), findings, md=True)
    return findings


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)))
    a = ap.parse_args()
    findings = scan(os.path.abspath(a.root))
    for f in findings:
        print(f)
    print(f"cited_paths: {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
