"""Reads an Iceberg table through a REST catalog as users would, with
pyiceberg and with DuckDB (its iceberg extension, ATTACH ... TYPE iceberg),
and prints one JSON object: each reader's rows, as lists of the columns
named in argv[3] sorted, or its error; how many files pyiceberg plans for
the whole table and, when an offset column is named, for offset >= 5; and the current snapshot's summary.

Usage: read_iceberg.py CATALOG_URI NAMESPACE.TABLE COLUMN,COLUMN,...
"""
import json
import sys

import duckext
from pyiceberg.catalog import load_catalog


def rows_of(dicts, columns):
    return sorted(([d[c] for c in columns] for d in dicts), key=lambda r: json.dumps(r, default=str))


def main():
    uri, name, columns = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    out = {}
    table = load_catalog("mirror", **{"type": "rest", "uri": uri}).load_table(name)
    out["pyiceberg"] = rows_of(table.scan().to_arrow().to_pylist(), columns)
    # The files a reader plans for a filter: the manifests' bounds prune.
    out["files"] = len(list(table.scan().plan_files()))
    if "offset" in columns:
        out["files_offset_ge_5"] = len(list(table.scan(row_filter="offset >= 5").plan_files()))
    snap = table.current_snapshot()
    out["summary"] = dict(snap.summary.additional_properties) | {"operation": snap.summary.operation.value}
    try:
        con = duckext.connect(iceberg=True)
        con.sql(f"ATTACH '' AS cat (TYPE iceberg, ENDPOINT '{uri}', AUTHORIZATION_TYPE 'none')")
        quoted = ", ".join('"' + c + '"' for c in columns)
        rel = con.sql(f"SELECT {quoted} FROM cat.{name}")
        out["duckdb"] = rows_of([dict(zip(columns, r)) for r in rel.fetchall()], columns)
    except Exception as e:  # noqa: BLE001 - the test prints what the reader said
        out["duckdb"] = f"error: {e}"
    print(json.dumps(out, default=str, separators=(",", ":")))


if __name__ == "__main__":
    main()
