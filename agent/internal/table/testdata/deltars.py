"""Run delta-rs (the deltalake package) on a table the table package's tests
wrote, as a user would between agent runs, and report what it sees.

    deltars.py maintain PATH      compact, checkpoint, clean up the log and
                                  vacuum everything unreferenced
    deltars.py compact PATH       compact (OPTIMIZE) only: the small files
                                  are removed, not deleted
    deltars.py read PATH APPID    the table's version, rows, files and the
                                  txn version of APPID
    deltars.py stats PATH         every file's stats as delta-rs parses them
                                  (get_add_actions(flatten=True))
    deltars.py rows PATH COL...   the values of columns COL of every row,
                                  sorted (partition columns included)

Each prints one JSON object (stats: a list, one per file, of the flattened
columns: "min.s.a", "null_count.id", ...; timestamps as ISO 8601 with
milliseconds, dates as yyyy-mm-dd, decimals as strings, binaries as hex
and structs as objects).
"""
import datetime
import decimal
import json
import os
import sys

import pyarrow as pa
from deltalake import DeltaTable


def maintain(path):
    DeltaTable(path).optimize.compact()
    dt = DeltaTable(path)
    dt.create_checkpoint()
    dt.cleanup_metadata()
    vacuumed = dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    return {"version": dt.version(), "vacuumed": len(vacuumed)}


def compact(path):
    metrics = DeltaTable(path).optimize.compact()
    return {"version": DeltaTable(path).version(), "removed": metrics["numFilesRemoved"]}


def read(path, app_id):
    dt = DeltaTable(path)
    return {"version": dt.version(), "rows": dt.to_pyarrow_table().num_rows,
            "files": len(dt.file_uris()), "txn": dt.transaction_version(app_id)}


def plain(v):
    if isinstance(v, datetime.datetime):
        s = v.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
        return s + "Z" if v.tzinfo is not None else s
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


def stats(path):
    actions = pa.table(DeltaTable(path).get_add_actions(flatten=True)).to_pylist()
    return [{k: plain(v) for k, v in a.items()
             if k.startswith(("min.", "max.", "null_count.")) or k == "num_records"} for a in actions]


def rows(path, *cols):
    t = DeltaTable(path).to_pyarrow_table(columns=list(cols))
    return sorted([[plain(v) for v in r.values()] for r in t.to_pylist()], key=json.dumps)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    print(json.dumps({"maintain": maintain, "compact": compact, "read": read, "stats": stats, "rows": rows}[cmd](*args)), flush=True)
    # Skip the interpreter's teardown, where delta-rs's runtime threads
    # have been seen to abort the process after the work was done.
    os._exit(0)
