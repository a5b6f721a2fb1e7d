"""Read a Tributary table with three independent readers and check it.

    check_table.py TABLE_DIR --count N [--malformed i,j,...] [--values]
                   [--metadata COLUMN] [--exactly-once]

Readers: delta-rs (deltalake.DeltaTable, through the transaction log), DuckDB
(read_parquet over the data files) and pyarrow.parquet (the data files).
Checks: each reader sees exactly N rows; with --malformed, exactly those
records (by key) have _corrupt_record set to the bytes produce.py wrote and
null parsed columns; with --values, every other row equals what produce.py
wrote; with --exactly-once, every (partition, offset) of the metadata column
appears once and each partition's offsets are 0..max without a gap.
Prints one line per reader and exits non-zero on the first failure.
"""
import argparse
import collections
import datetime
import glob
import os
import sys

import duckdb
import pyarrow.parquet as pq
from deltalake import DeltaTable

sys.path.insert(0, os.path.dirname(__file__))
from produce import malformed, value  # noqa: E402
import json  # noqa: E402


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check_rows(reader, rows, args, bad):
    if len(rows) != args.count:
        fail(f"{reader}: {len(rows)} rows, want {args.count}")
    if args.values or bad:
        corrupt = 0
        for r in rows:
            i = int(r["key"])
            if i in bad:
                corrupt += 1
                if bytes(r["_corrupt_record"]) != malformed(i):
                    fail(f"{reader}: record {i}: _corrupt_record is {r['_corrupt_record']!r}")
                if r["id"] is not None or r["name"] is not None:
                    fail(f"{reader}: malformed record {i} has parsed values {r['id']!r} {r['name']!r}")
                continue
            if r.get("_corrupt_record") is not None:
                fail(f"{reader}: good record {i} has _corrupt_record set")
            if args.values:
                want = json.loads(value(i))
                ts = r["ts"]
                if isinstance(ts, datetime.datetime):
                    ts = ts.astimezone(datetime.timezone.utc)
                    got_ts = ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"
                else:
                    got_ts = str(ts)
                got = {"id": r["id"], "name": r["name"], "amount": r["amount"], "ts": got_ts, "tags": list(r["tags"])}
                if got != want:
                    fail(f"{reader}: record {i}: got {got}, want {want}")
        if corrupt != len(bad):
            fail(f"{reader}: {corrupt} corrupt records, want {len(bad)}")
    if args.exactly_once:
        by_part = collections.defaultdict(list)
        for r in rows:
            m = r[args.metadata]
            by_part[m["partition"]].append(m["offset"])
        for part, offs in sorted(by_part.items()):
            dup = [o for o, c in collections.Counter(offs).items() if c > 1]
            if dup:
                fail(f"{reader}: partition {part}: offsets {dup[:10]} appear more than once")
            if sorted(offs) != list(range(max(offs) + 1)):
                missing = sorted(set(range(max(offs) + 1)) - set(offs))
                fail(f"{reader}: partition {part}: offsets {missing[:10]} are missing")
    print(f"{reader}: {len(rows)} rows ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--malformed", default="")
    ap.add_argument("--values", action="store_true")
    ap.add_argument("--metadata", default="_kafka")
    ap.add_argument("--exactly-once", action="store_true")
    ap.add_argument("--no-orphans", action="store_true", help="fail if a data file on disk is not in the log")
    args = ap.parse_args()
    bad = {int(x) for x in args.malformed.split(",") if x}

    dt = DeltaTable(args.table)
    delta_rows = dt.to_pyarrow_table().to_pylist()
    check_rows("delta-rs", delta_rows, args, bad)

    # The plain readers read the files the log references: an uncommitted
    # file left by a crash is not part of the table until garbage collected.
    files = [u.removeprefix("file://") for u in dt.file_uris()]
    on_disk = glob.glob(os.path.join(args.table, "*.parquet"))
    con = duckdb.connect()
    rel = con.execute("SELECT * FROM read_parquet(?)", [files])
    cols = [d[0] for d in rel.description]
    duck_rows = [dict(zip(cols, t)) for t in rel.fetchall()]
    check_rows("duckdb", duck_rows, args, bad)

    arrow_rows = []
    for f in files:
        arrow_rows.extend(pq.read_table(f).to_pylist())
    check_rows("pyarrow", arrow_rows, args, bad)
    if args.no_orphans and len(on_disk) != len(files):
        fail(f"{len(on_disk)} data files on disk but {len(files)} in the log")
    print(f"files: {len(files)} committed, {len(on_disk)} on disk")


if __name__ == "__main__":
    main()
