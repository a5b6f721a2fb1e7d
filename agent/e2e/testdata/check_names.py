"""Check a table of produce.py --names records, read by its real column names.

    check_names.py TABLE --count N

Reads TABLE with delta-rs (its DataFusion reader, which applies Delta column
mapping) and with DuckDB's delta_scan, and checks that both see exactly N
rows, ids 0 to N-1, with "first name" = "user-<id>", "a.b" = id and
"(cost)" = id * 1.25. Prints the table's protocol and exits non-zero on the
first failure.
"""
import argparse
import sys

import duckext
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--count", type=int, required=True)
    args = ap.parse_args()

    dt = DeltaTable(args.table)
    query = 'SELECT id, "first name", "a.b", "(cost)" FROM t ORDER BY id'
    readers = {
        "delta-rs": pa.table(QueryBuilder().register("t", dt).execute(query).read_all()).to_pylist(),
        "duckdb": [dict(zip(["id", "first name", "a.b", "(cost)"], r)) for r in duckext.connect().execute(
            'SELECT id, "first name", "a.b", "(cost)" FROM delta_scan(?) ORDER BY id', [args.table]).fetchall()],
    }
    want = [{"id": i, "first name": f"user-{i}", "a.b": i, "(cost)": i * 1.25} for i in range(args.count)]
    for name, rows in readers.items():
        if len(rows) != args.count:
            fail(f"{name} reads {len(rows)} rows, want {args.count}")
        for got, w in zip(rows, want):
            if got != w:
                fail(f"{name} reads {got}, want {w}")
    p = dt.protocol()
    print(f"ok: {args.count} rows by name; protocol {p.min_reader_version}/{p.min_writer_version}")


if __name__ == "__main__":
    main()
