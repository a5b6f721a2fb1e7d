"""Read a local Tributary table with three independent readers and print
what each sees, for a Go test to compare with what it expects.

    read_table.py TABLE_DIR [--columns c1,c2,...] [--order c1,c2,...]

Readers: delta-rs (DeltaTable, through the transaction log), DuckDB
(delta_scan, the delta extension) and pyarrow.parquet (the data files the
log lists). Prints one JSON object
    {"columns": [[name, type]...],           # the log's schema, top level
     "rows": {reader: [{column: value}...]}}  # rows sorted by --order
with only the --columns (default: all). Values are JSON-friendly: a
timestamp as "YYYY-MM-DDTHH:MM:SS.ffffff" in UTC (naive ones as they are),
a date as "YYYY-MM-DD", bytes as their UTF-8 text (or "0x" and hex when
they are not UTF-8), a decimal as its string, structs as objects.
"""
import argparse
import datetime
import decimal
import json
import os
import sys

import pyarrow.parquet as pq
from deltalake import DeltaTable

sys.path.insert(0, os.path.dirname(__file__))
import duckext  # noqa: E402


def plain(v):
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return v.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        try:
            return b.decode()
        except UnicodeDecodeError:
            return "0x" + b.hex()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, float):
        return round(v, 6)
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def rows_of(pylist, columns, order):
    out = []
    for r in pylist:
        out.append({c: plain(r.get(c)) for c in (columns or r.keys())})
    out.sort(key=lambda r: tuple(json.dumps(r.get(c), sort_keys=True) for c in order))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--columns", default="")
    ap.add_argument("--order", default="")
    args = ap.parse_args()
    columns = [c for c in args.columns.split(",") if c]
    order = [c for c in args.order.split(",") if c] or columns

    dt = DeltaTable(args.table)
    schema = [[f.name, str(f.type)] for f in dt.schema().fields]
    res = {"columns": schema, "rows": {}}
    res["rows"]["delta-rs"] = rows_of(dt.to_pyarrow_table().to_pylist(), columns, order)

    con = duckext.connect()
    rel = con.execute("SELECT * FROM delta_scan(?)", [os.path.abspath(args.table)])
    names = [d[0] for d in rel.description]
    res["rows"]["duckdb"] = rows_of([dict(zip(names, t)) for t in rel.fetchall()], columns, order)

    files = [u.removeprefix("file://") for u in dt.file_uris()]
    pa_rows = []
    for f in files:
        pa_rows.extend(pq.read_table(f).to_pylist())
    res["rows"]["pyarrow"] = rows_of(pa_rows, columns, order)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
