#!/usr/bin/env python3
"""A cudal2 results store (SQLite) as plain files, and back (stdlib only).

  python3 python/cudal2/store_csv.py export STORE.db DIR   # DIR/schema.sql + one CSV per table (.csv.gz if > 16 KiB)
  python3 python/cudal2/store_csv.py import DIR STORE.db   # a store `cudal2 export/show/tune --db` opens as it was

import also reads a table recompressed to .csv.xz (the committed stores' largest: bench/results/README.md).

Results are committed as DIR (text that diffs and reviews), never as SQLite files. NULL is written
as \\N, so it stays distinct from the empty string. The import recreates the exact schema (with the
store's application_id and user_version): a newer cudal2 migrates it on open as it would the
original file. bench/cublaslt/portfolio.py reads DIR directly. Tested by tests/replay/replay_test.py.

The Python side reads stores only through open_store (here) and the queries of analysis.py, so the
check of what a store is (application_id, schema version) is made in one place.
"""
import csv
import gzip
import lzma
import os
import sqlite3
import sys
import urllib.parse

NULL = "\\N"
# Parents before children (foreign keys).
TABLE_ORDER = ["specs", "runs", "builds", "measurements", "best"]
# Tables above this many bytes are written gzipped (mtime 0: the same bytes every export); the
# committed results stay small enough for the device tool to carry the tree.
GZIP_ABOVE = 16 << 10
# How a table file x.csv may be stored: as exported (x.csv.gz), recompressed by hand to save room
# (x.csv.xz: the committed stores' largest tables), or plain; looked for in this order.
COMPRESSED = {".gz": gzip.open, ".xz": lzma.open}
# What a cudal2 store is: src/store/schema.hpp's kApplicationId and the newest schema version its
# migrations reach (tests/unit/store_test.cpp keeps both in step). A store of a newer schema is
# refused, as cudal2 refuses it: a later schema may change what these readers' queries mean.
APPLICATION_ID = 0x63756432
SCHEMA_VERSION = 5


class StoreError(Exception):
    """Not a cudal2 store, one of a schema newer than SCHEMA_VERSION, or one that cannot be read."""


def check_schema(c, name):
    """The schema version of the store on connection c (name: for messages); StoreError unless it
    is a cudal2 store of a schema this code knows."""
    app_id = c.execute("PRAGMA application_id").fetchone()[0]
    version = c.execute("PRAGMA user_version").fetchone()[0]
    if app_id != APPLICATION_ID or version < 1:
        raise StoreError(f"{name}: not a cudal2 store (application_id {app_id}, schema {version})")
    if version > SCHEMA_VERSION:
        raise StoreError(f"{name}: store schema {version} is newer than this reader knows ({SCHEMA_VERSION}); "
                         "read it with the cudal2 that wrote it")
    return version


def open_store(path, write=False):
    """A connection to the cudal2 store at path, its schema checked (check_schema). A directory (an
    export of this module) is loaded into memory. A file is opened read-only, as immutable where
    this process cannot write beside it (a WAL store on a read-only mount: SQLite cannot make its
    -shm file), or read-write with write=True (maintenance scripts that delete rows)."""
    try:
        if os.path.isdir(path):
            c = load(path, ":memory:")
            check_schema(c, path)
            return c
        if not os.path.isfile(path):
            raise StoreError(f"{path}: no such store")
        if write:
            c = sqlite3.connect(path)
            check_schema(c, path)
            return c
        uri = "file:" + urllib.parse.quote(os.path.abspath(path))
        for mode in ("mode=ro", "immutable=1"):
            c = sqlite3.connect(f"{uri}?{mode}", uri=True)
            try:
                check_schema(c, path)
                return c
            except sqlite3.OperationalError:
                c.close()
                if mode != "mode=ro" or os.access(os.path.dirname(os.path.abspath(path)), os.W_OK):
                    raise
            except StoreError:
                c.close()
                raise
    except sqlite3.Error as e:
        raise StoreError(f"{path}: not a cudal2 store ({e})") from e


# Readers of an open store (open_store): the queries other modules ask, so that the schema's
# tables and columns are named here only.

def spec_hashes_by_text(c):
    """{canonical spec text: spec hash} of every spec the store holds."""
    return {t: h for h, t in c.execute("SELECT hash, text FROM specs")}


def recorded_gpus(c):
    """The GPUs the store has measurements of, the first recorded first (None for an empty store)."""
    first = c.execute("SELECT gpu FROM measurements ORDER BY id LIMIT 1").fetchone()
    rest = [r[0] for r in c.execute("SELECT DISTINCT gpu FROM measurements")]
    return (first[0] if first else None), rest


def recorded_layouts(c):
    return [r[0] for r in c.execute("SELECT DISTINCT layout FROM measurements")]


def recorded_problems(c):
    """Every (m, n, k) the store has measurements of."""
    return {tuple(r) for r in c.execute("SELECT DISTINCT m, n, k FROM measurements")}


def offline_graph_ok_rows(c, gpus, dtype, layouts, m, n, k):
    """The ok offline graph-timer measurements of problem (m, n, k) in dtype on any of gpus and
    layouts, in row order: (id, layout, spec_hash, spec text, median_us, p10_us, p90_us, min_us,
    n_samples, baseline_json). gpus and layouts lead the store's index, so naming them all keeps the
    lookup indexed (without them every problem scanned the whole table)."""
    return c.execute(
        "SELECT me.id, me.layout, me.spec_hash, s.text, me.median_us, me.p10_us, me.p90_us, me.min_us, "
        "me.n_samples, me.baseline_json FROM measurements me JOIN specs s ON s.hash = me.spec_hash "
        f"WHERE me.gpu IN ({','.join('?' * len(gpus))}) AND me.dtype = ? "
        f"AND me.layout IN ({','.join('?' * len(layouts))}) AND me.m = ? AND me.n = ? AND me.k = ? "
        "AND me.mode = 'offline' AND me.timer = 'graph' AND me.status = 'ok' ORDER BY me.id",
        (*gpus, dtype, *layouts, m, n, k)).fetchall()


def drop_family_measurements(path, family, problems):
    """Deletes the measurements of specs of `family` (None: of every family) on each (m, n, k, layout)
    of `problems` from the store at path (schema checked; rows only, `best` is left as it is: the
    caller re-exports from other stores); returns how many were deleted."""
    c = open_store(path, write=True)
    try:
        n = 0
        which = "" if family is None else " AND spec_hash IN (SELECT hash FROM specs WHERE family = ?)"
        for m, nn, k, layout in problems:
            args = (m, nn, k, layout) + (() if family is None else (family,))
            n += c.execute("DELETE FROM measurements WHERE m = ? AND n = ? AND k = ? AND layout = ?" + which,
                           args).rowcount
        c.commit()
        return n
    finally:
        c.close()


def shuffle_measurements(path, seed):
    """Renumbers the measurement rows of the store at path (schema checked) in a seeded random order:
    a replay that lists a shape's specs in row order (replay_judge.py) then sees no trace of the order
    in which they were first measured."""
    import random
    c = open_store(path, write=True)
    try:
        cols = [r[1] for r in c.execute("PRAGMA table_info(measurements)")]
        rows = c.execute(f"SELECT {','.join(cols)} FROM measurements ORDER BY id").fetchall()
        random.Random(seed).shuffle(rows)
        i = cols.index("id")
        rows = [r[:i] + (n + 1,) + r[i + 1:] for n, r in enumerate(rows)]
        c.execute("DELETE FROM measurements")
        c.executemany(f"INSERT INTO measurements ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})", rows)
        c.commit()
    finally:
        c.close()


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
        for ext in COMPRESSED:
            if os.path.exists(path + ext):
                os.remove(path + ext)
        if os.path.getsize(path) > GZIP_ABOVE:
            with open(path, "rb") as src, gzip.GzipFile(path + ".gz", "wb", mtime=0) as dst:
                dst.write(src.read())
            os.remove(path)


def table_file(path):
    """The file holding table file `path` (x.csv); None when there is none."""
    return next((path + ext for ext in [*COMPRESSED, ""] if os.path.exists(path + ext)), None)


def open_csv(path):
    name = table_file(path) or path
    return COMPRESSED.get(os.path.splitext(name)[1], open)(name, "rt", newline="")


def load(src, db):
    """Creates store `db` (a path or ":memory:") from directory `src`; returns the connection."""
    if db != ":memory:" and os.path.exists(db):
        sys.exit(f"store_csv: {db} exists; refusing to overwrite it")
    c = sqlite3.connect(db)
    c.executescript(open(os.path.join(src, "schema.sql")).read())
    for t in tables(c):
        path = os.path.join(src, t + ".csv")
        if table_file(path) is None:
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
