"""Scan a Delta table with DuckDB (delta_scan) and delta-rs, for make bench.

    scan.py TABLE

Reads every row and column of the table into Arrow with each reader, three
times, and prints {"files": number of data files, "seconds": {reader: the
fastest of the three}} as JSON.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "agent", "e2e", "testdata"))
import duckext  # noqa: E402 - the e2e tests' offline loader of DuckDB's delta extension
from deltalake import DeltaTable  # noqa: E402


def best(f):
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    path = sys.argv[1]
    con = duckext.connect()
    seconds = {
        "duckdb": best(lambda: con.execute("SELECT * FROM delta_scan(?)", [path]).fetch_arrow_table()),
        "delta-rs": best(lambda: DeltaTable(path).to_pyarrow_table()),
    }
    print(json.dumps({"files": len(DeltaTable(path).file_uris()), "seconds": seconds}), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
