#!/usr/bin/env python3
"""A cudal2 results store (SQLite) as plain files, and back (stdlib only).

  python3 python/cudal2/store_csv.py export STORE.db DIR   # DIR/schema.sql + one CSV per table (.csv.gz if > 1 MB)
  python3 python/cudal2/store_csv.py import DIR STORE.db   # a store `cudal2 export/show/tune --db` opens as it was

Results are committed as DIR (text that diffs and reviews), never as SQLite files. NULL is written
as \\N, so it stays distinct from the empty string. The import recreates the exact schema (with the
store's application_id and user_version): a newer cudal2 migrates it on open as it would the
original file. bench/cublaslt/portfolio.py reads DIR directly. Tested by tests/replay/replay_test.py.
"""
import csv
import gzip
import os
import sqlite3
import sys

NULL = "\\N"
# Parents before children (foreign keys).
TABLE_ORDER = ["specs", "runs", "builds", "measurements", "best"]
GZIP_ABOVE = 1 << 20


def tables(c):
    names = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    return [t for t in TABLE_ORDER if t in names] + [t for t in names if t not in TABLE_ORDER]


def export(db, out):
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    os.makedirs(out, exist_ok=True)
    app_id = c.execute("PRAGMA application_id").fetchone()[0]
    version = c.execute("PRAGMA user_version").fetchone()[0]
    with open(os.path.join(out, "schema.sql"), "w") as f:
        f.write(f"-- cudal2 store, schema version {version}\n")
        for (sql,) in c.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                                "ORDER BY type = 'index', rowid"):
            f.write(sql + ";\n")
        f.write(f"PRAGMA application_id = {app_id};\nPRAGMA user_version = {version};\n")
    for t in tables(c):
        cur = c.execute(f"SELECT * FROM {t} ORDER BY rowid")
        path = os.path.join(out, t + ".csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow([d[0] for d in cur.description])
            for row in cur:
                w.writerow([NULL if v is None else repr(v) if isinstance(v, float) else v for v in row])
        for old in (path + ".gz",):
            if os.path.exists(old):
                os.remove(old)
        if os.path.getsize(path) > GZIP_ABOVE:
            with open(path, "rb") as src, gzip.GzipFile(path + ".gz", "wb", mtime=0) as dst:
                dst.write(src.read())
            os.remove(path)


def open_csv(path):
    return gzip.open(path + ".gz", "rt", newline="") if os.path.exists(path + ".gz") else open(path, newline="")


def load(src, db):
    """Creates store `db` (a path or ":memory:") from directory `src`; returns the connection."""
    if db != ":memory:" and os.path.exists(db):
        sys.exit(f"store_csv: {db} exists; refusing to overwrite it")
    c = sqlite3.connect(db)
    c.executescript(open(os.path.join(src, "schema.sql")).read())
    for t in tables(c):
        path = os.path.join(src, t + ".csv")
        if not (os.path.exists(path) or os.path.exists(path + ".gz")):
            continue
        with open_csv(path) as f:
            r = csv.reader(f)
            cols = next(r)
            types = {row[1]: row[2].upper() for row in c.execute(f"PRAGMA table_info({t})")}

            def conv(col, v):
                if v == NULL:
                    return None
                if types.get(col) == "INTEGER":
                    return int(v)
                if types.get(col) == "REAL":
                    return float(v)
                return v

            c.executemany(f"INSERT INTO {t} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                          ([conv(col, v) for col, v in zip(cols, row)] for row in r))
    c.commit()
    return c


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("export", "import"):
        sys.exit(__doc__)
    if sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3])
    else:
        load(sys.argv[2], sys.argv[3]).close()


if __name__ == "__main__":
    main()
