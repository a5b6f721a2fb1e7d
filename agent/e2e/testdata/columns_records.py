"""Records and readers of the column-shaping test (agent/e2e/columns_test.go).

    columns_records.py produce --bootstrap B --topic T --from N --to M [--extra]

Produces records N..M-1 to partition 0 of T (created with one partition):
record i has key {"id": i}, value {"id": 100+i, "name": "n<i>", "user":
{"name": "u<i>", "addr": {"city": "c<i>"}}, "ts": "2024-01-02 03:04:05.<i>",
"iso": "2024-01-02T03:04:05.<i>Z"} (with --extra also "z": true and
user.age = i) and the headers h=a, h=b (a repeated key) and n=null.

    columns_records.py read TABLE_DIR --order COLUMN

Reads the table with delta-rs (through the log, which applies column
mapping), DuckDB and pyarrow (the data files, their physical column names
mapped back to the log's) and prints, as JSON, the log's columns ([name,
type] with types as inference_records.delta_type gives them) and each
reader's rows ordered by COLUMN: timestamps as ISO text in UTC with
microseconds, binary values as {"bytes": text}.
"""
import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from inference_records import delta_type, physical_names, read_log, to_logical  # noqa: E402
from kafka_admin import create_topic, flush_all, produce_waiting  # noqa: E402


def record(i, extra):
    user = {"name": f"u{i}", "addr": {"city": f"c{i}"}}
    value = {"id": 100 + i, "name": f"n{i}", "user": user,
             "ts": f"2024-01-02 03:04:05.{i:03d}", "iso": f"2024-01-02T03:04:05.{i:03d}Z"}
    if extra:
        user["age"] = i
        value["z"] = True
    return json.dumps({"id": i}).encode(), json.dumps(value, separators=(",", ":")).encode()


def produce(args):
    from confluent_kafka import Producer

    create_topic(args.bootstrap, args.topic, 1)
    p = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 5})
    failed = []
    for i in range(args.start, args.to):
        key, value = record(i, args.extra)
        produce_waiting(p, args.topic, key=key, value=value, partition=0,
                        headers=[("h", b"a"), ("h", b"b"), ("n", None)],
                        on_delivery=lambda err, msg: err and failed.append(err))
    flush_all(p, failed)
    print(f"produced records {args.start}..{args.to - 1} to {args.topic}")


def norm(v):
    """A value in the form the Go test compares."""
    if isinstance(v, datetime.datetime):
        v = v.astimezone(datetime.timezone.utc) if v.tzinfo else v.replace(tzinfo=datetime.timezone.utc)
        return v.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"bytes": bytes(v).decode("utf-8", "replace")}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    return v


def read(args):
    import duckdb
    import pyarrow as pa
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq
    from deltalake import DeltaTable, QueryBuilder

    root = args.table
    fields = None
    for _, actions in read_log(root):
        for a in actions:
            if "metaData" in a:
                fields = json.loads(a["metaData"]["schemaString"])["fields"]
    mapping = physical_names(fields)
    dt = DeltaTable(root)
    files = [u.removeprefix("file://") for u in dt.file_uris()]

    def duck():
        con = duckdb.connect()
        rel = con.execute("SELECT * FROM read_parquet(?, union_by_name=true)", [files])
        cols = [d[0] for d in rel.description]
        return [to_logical(dict(zip(cols, t)), mapping) for t in rel.fetchall()]

    def arrow():
        schema = pa.unify_schemas([pq.read_schema(f) for f in files], promote_options="permissive")
        return [to_logical(r, mapping) for r in pads.dataset(files, schema=schema, format="parquet").to_table().to_pylist()]

    readers = {
        "delta-rs": lambda: pa.table(QueryBuilder().register("t", dt).execute("SELECT * FROM t").read_all()).to_pylist(),
        "duckdb": duck,
        "pyarrow": arrow,
    }
    out = {"columns": [[f["name"], delta_type(f["type"])] for f in fields], "readers": {}}
    for name, fn in readers.items():
        rows = []
        for r in fn():
            # Readers of the data files lack the columns a file was
            # written without (added later): they are null.
            rows.append({f["name"]: norm(r.get(f["name"])) for f in fields})
        rows.sort(key=lambda r: r[args.order])
        out["readers"][name] = rows
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("produce")
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--from", dest="start", type=int, required=True)
    p.add_argument("--to", type=int, required=True)
    p.add_argument("--extra", action="store_true")
    r = sub.add_parser("read")
    r.add_argument("table")
    r.add_argument("--order", required=True)
    args = ap.parse_args()
    produce(args) if args.cmd == "produce" else read(args)


if __name__ == "__main__":
    main()
