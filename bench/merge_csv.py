#!/usr/bin/env python3
"""The CSVs of one sharded run (`cudal2 bench --shard I/N`, one file a shard) as one file: the first
file's '#' lines (the run's header: GPU, read limit, options) and column header, then every file's
rows in the order given. Files whose column headers differ are refused by name (shards of different
builds or options do not belong in one run).

    python3 bench/merge_csv.py OUT.csv[.gz] SHARD.csv[.gz] ...
"""
import gzip
import sys


def _open(path, mode):
    return gzip.open(path, mode) if path.endswith(".gz") else open(path, mode)


def merge(out_path, paths):
    if not paths:
        raise ValueError("no CSV to merge")
    header = None
    rows = 0
    with _open(out_path, "wt") as out:
        for i, path in enumerate(paths):
            with _open(path, "rt") as f:
                lines = f.readlines()
            comments = [x for x in lines if x.startswith("#")]
            body = [x for x in lines if not x.startswith("#")]
            if not body:
                raise ValueError(f"{path}: no column header")
            if i == 0:
                header = body[0]
                out.writelines(comments)
                out.write(header)
            elif body[0] != header:
                raise ValueError(f"{path}: its columns differ from {paths[0]}'s")
            out.writelines(body[1:])
            rows += len(body) - 1
    return rows


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        n = merge(argv[1], argv[2:])
    except (OSError, ValueError) as e:
        print(f"merge_csv: {e}", file=sys.stderr)
        return 1
    print(f"merge_csv: {n} row(s) from {len(argv) - 2} file(s) in {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
