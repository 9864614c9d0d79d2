#!/usr/bin/env python3
"""README.md names the tables the default build carries: the same tables as the build's default list
(CUDAL2_RUNTIME_TABLES's default in src/runtime/CMakeLists.txt).

  python3 tests/docs/default_tables_test.py [--root REPO]

The build's list: the `foreach(_t ...)` that fills `_cudal2_default_tables`, each name made into
tables/<name>.json. README's list: every `tables/....json` in the sentence that says "the default
build holds" (up to its first ';' or '.' outside parentheses). Order is not compared (README is
prose); both lists are. Prints what differs and exits 1 when they do.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CMAKE = "src/runtime/CMakeLists.txt"
README = "README.md"
PHRASE = "the default build holds"
TABLE_RE = re.compile(r"tables/[\w.-]+\.json")


def build_tables(root):
    """The default list from src/runtime/CMakeLists.txt, as repository paths."""
    text = open(os.path.join(root, CMAKE), encoding="utf-8").read()
    text = "\n".join(line.split("#", 1)[0] for line in text.split("\n"))  # drop comments
    m = re.search(r"foreach\s*\(\s*(\w+)\s+([^)]*)\)\s*list\s*\(\s*APPEND\s+_cudal2_default_tables\s+"
                  r"\"\$\{PROJECT_SOURCE_DIR\}/([^\"]*)\"\s*\)", text)
    if not m:
        raise SystemExit(f"{CMAKE}: no foreach(...) list(APPEND _cudal2_default_tables ...) found; "
                         "update this test with the file")
    var, names, pattern = m.group(1), m.group(2).split(), m.group(3)
    return [pattern.replace("${%s}" % var, n) for n in names]


def sentence_after(text, start):
    """The text from start to the first ';' or sentence-ending '.' outside parentheses and backquotes."""
    depth, code = 0, False
    for i in range(start, len(text)):
        c = text[i]
        if c == "`":
            code = not code
        elif code:
            continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and (c == ";" or (c == "." and (i + 1 == len(text) or text[i + 1].isspace()))):
            return text[start:i]
        elif depth == 0 and text.startswith("\n\n", i):
            return text[start:i]
    return text[start:]


def readme_tables(root):
    text = open(os.path.join(root, README), encoding="utf-8").read()
    starts = [m.start() for m in re.finditer(re.escape(PHRASE), text)]
    if len(starts) != 1:
        raise SystemExit(f"{README}: expected one sentence with '{PHRASE}', found {len(starts)}")
    return TABLE_RE.findall(sentence_after(text, starts[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)))
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    build, readme = build_tables(root), readme_tables(root)
    findings = []
    if not build:
        findings.append(f"{CMAKE}: the default table list is empty")
    for t in build:
        if t not in readme:
            findings.append(f"{README}: the default build carries {t}, which '{PHRASE}' does not name")
    for t in readme:
        if t not in build:
            findings.append(f"{README}: '{PHRASE}' names {t}, which the default build ({CMAKE}) does not carry")
    for t in sorted(set(readme)):
        if readme.count(t) > 1:
            findings.append(f"{README}: '{PHRASE}' names {t} {readme.count(t)} times")
    for f in findings:
        print(f)
    print(f"default_tables: build {len(build)} table(s), README {len(readme)}; {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
