"""Reads an Iceberg table through a REST catalog with pyiceberg, as a user
would, and prints its rows as JSON lines sorted by every column, then one
line with the snapshot's summary.

Usage: read_iceberg.py CATALOG_URI NAMESPACE.TABLE
"""
import json
import sys

from pyiceberg.catalog import load_catalog


def main():
    uri, name = sys.argv[1], sys.argv[2]
    catalog = load_catalog("mirror", **{"type": "rest", "uri": uri})
    table = catalog.load_table(name)
    rows = table.scan().to_arrow().to_pylist()
    for row in sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str)):
        print(json.dumps(row, sort_keys=True, default=str))
    snap = table.current_snapshot()
    print(json.dumps({"summary": dict(snap.summary.additional_properties) | {"operation": snap.summary.operation.value}}))


if __name__ == "__main__":
    main()
