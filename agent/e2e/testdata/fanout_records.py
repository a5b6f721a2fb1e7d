"""Produce events of five types to one topic for a fanout schema, and check
the tables it routed them to.

    fanout_records.py produce --bootstrap B --topic T --manifest FILE
        --first ID --count N [--partitions P] [--invalid KIND,...]
        [--invalid-every K] [--rate R]

Produces N records with ids FIRST, FIRST+1, ...: key str(id), value the JSON
{"id": id, "event_type": TYPE, "n": id * 3, "payload": {...}} with TYPE
cycling over click, view, purchase, signup, logout (every seventh written
with a capital first letter, which routes to the same lowercase table).
With --invalid, every K-th record (K = --invalid-every, default 50; the
first one being record K-1) is instead an invalid route, its kind cycling
over the KINDs listed:

    missing    no event_type field: the route is NULL
    null       "event_type": null: NULL
    malformed  not JSON: NULL
    digits     "event_type": "123": entirely digits
    dotted     "event_type": "a.b": a dot
    space      "event_type": "has space": a space

A topic this creates has P partitions (default 4); records go to them by key
hash. Every delivered record is appended to the manifest, one JSON line
{"id", "topic", "partition", "offset", "table", "kind", "type", "key",
"value"}: table is the lowercase table it must land in (null for an invalid
route), kind is "valid" or the invalid kind, type the event_type written,
key and value are base64.

    fanout_records.py check SCHEMA_DIR --manifest FILE [--manifest FILE ...]
        [--typed]

Reads every table of the local folder SCHEMA_DIR (<warehouse>/<catalog>/
<schema>) and fails unless its tables are exactly those the manifests route
to, plus _fanout_errors when they hold invalid routes, and each holds exactly
its records, each once, as delta-rs, DuckDB and pyarrow read it, a row
identified by its key (the record's id, whose partition and offset the
manifest holds). A routed table's value column is a VARIANT of the produced
JSON, read with DuckDB; with --typed it is the typed columns id, event_type
and n of a json_options schema instead. A _fanout_errors row has the
record's raw key and value, its topic, partition and offset, and an error
that names the route when the route was a string.

Prints one line per table; exits non-zero at the first failure.
"""
import argparse
import base64
import collections
import json
import os
import sys
import time

import duckdb
import pyarrow.parquet as pq
from deltalake import DeltaTable

sys.path.insert(0, os.path.dirname(__file__))
from variant_records import load_duckdb_json, load_exact, same  # noqa: E402

TYPES = ["click", "view", "purchase", "signup", "logout"]
INVALID = {
    "missing": lambda i: {"id": i, "n": i * 3},
    "null": lambda i: {"id": i, "event_type": None, "n": i * 3},
    "malformed": None,
    "digits": lambda i: {"id": i, "event_type": "123", "n": i * 3},
    "dotted": lambda i: {"id": i, "event_type": "a.b", "n": i * 3},
    "space": lambda i: {"id": i, "event_type": "has space", "n": i * 3},
}
ERRORS_TABLE = "_fanout_errors"


def record(i, kind):
    """The value, event_type and table of record i of kind ("valid" or an
    invalid kind)."""
    if kind == "malformed":
        return b'{"id": %d, "event_type": "cli' % i, None, None
    if kind != "valid":
        v = INVALID[kind](i)
        return json.dumps(v, separators=(",", ":")).encode(), v.get("event_type"), None
    table = TYPES[i % len(TYPES)]
    typ = table.capitalize() if i % 7 == 0 else table
    v = {"id": i, "event_type": typ, "n": i * 3, "payload": {"tags": [f"t{i % 3}", "all"], "score": i / 8}}
    return json.dumps(v, separators=(",", ":")).encode(), typ, table


def b64(b):
    return base64.b64encode(b).decode()


def produce(args):
    from confluent_kafka import Producer
    from kafka_admin import create_topic, pace, produce_waiting

    create_topic(args.bootstrap, args.topic, args.partitions)
    kinds = [k for k in args.invalid.split(",") if k]
    unknown = [k for k in kinds if k not in INVALID]
    if unknown:
        sys.exit(f"unknown invalid kinds {unknown}; known: {sorted(INVALID)}")
    p = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 20, "enable.idempotence": True})
    lines, failed = [], []
    start = time.monotonic()
    for j in range(args.count):
        i = args.first + j
        kind = "valid"
        if kinds and j % args.invalid_every == args.invalid_every - 1:
            kind = kinds[(j // args.invalid_every) % len(kinds)]
        v, typ, table = record(i, kind)
        key = str(i).encode()

        def delivered(err, msg, i=i, kind=kind, typ=typ, table=table, key=key, v=v):
            if err:
                failed.append((i, err))
                return
            lines.append({"id": i, "topic": args.topic, "partition": msg.partition(), "offset": msg.offset(), "table": table,
                          "kind": kind, "type": typ, "key": b64(key), "value": b64(v)})

        produce_waiting(p, args.topic, key=key, value=v, on_delivery=delivered)
        pace(j + 1, args.rate, start)
        p.poll(0)
    p.flush(60)
    if failed or len(lines) != args.count:
        sys.exit(f"{len(failed)} records failed, {len(lines)} of {args.count} delivered: {failed[:3]}")
    with open(args.manifest, "a") as f:
        for line in sorted(lines, key=lambda m: m["id"]):
            f.write(json.dumps(line) + "\n")
    print(f"produced {args.count} records to {args.topic}, {sum(m['kind'] != 'valid' for m in lines)} invalid routes")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def compare(reader, table, ids, want):
    """Fails unless ids (one per row) are exactly the manifest records want
    ({id: record}), each once, naming the (partition, offset) of every
    difference."""
    seen = collections.Counter(ids)
    at = lambda i: (want[i]["partition"], want[i]["offset"]) if i in want else ("id", i)  # noqa: E731
    problems = []
    if extra := sorted(i for i in seen if i not in want):
        problems.append(f"{len(extra)} rows of records routed elsewhere or unknown (ids {extra[:5]})")
    if dup := sorted(at(i) for i, c in seen.items() if c > 1 and i in want):
        problems.append(f"{len(dup)} records more than once, at (partition, offset) {dup[:5]}")
    if missing := sorted(at(i) for i in want if i not in seen):
        problems.append(f"{len(missing)} records missing, at (partition, offset) {missing[:5]}")
    if problems:
        fail(f"{table}: {reader}: {len(ids)} rows, want {len(want)}: " + "; ".join(problems))


def read(location):
    """The table's rows as delta-rs, DuckDB (read_parquet of the files the
    log lists, the value column as JSON text when it is a VARIANT) and
    pyarrow read them."""
    dt = DeltaTable(location)
    files = dt.file_uris()
    readers = {"delta-rs": dt.to_pyarrow_table().to_pylist()}
    con = duckdb.connect()
    quoted = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet([{quoted}])")
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE t)").fetchall())
    cols = ["value::JSON::VARCHAR AS value" if (c, t) == ("value", "VARIANT") else f'"{c}"' for c, t in types.items()]
    rel = con.execute(f"SELECT {', '.join(cols)} FROM t")
    names = [d[0] for d in rel.description]
    readers["duckdb"] = [dict(zip(names, r)) for r in rel.fetchall()]
    readers["pyarrow"] = [r for f in files for r in pq.read_table(f.removeprefix("file://")).to_pylist()]
    return readers, types


def check_routed(table, location, want, typed):
    readers, types = read(location)
    for reader, rows in readers.items():
        compare(reader, table, [int(bytes(r["key"])) for r in rows], want)
    if typed:
        for r in readers["delta-rs"]:
            m = want[int(bytes(r["key"]))]
            got = {"id": r["id"], "event_type": r["event_type"], "n": r["n"]}
            if got != {"id": m["id"], "event_type": m["type"], "n": m["id"] * 3}:
                fail(f"{table}: record {m['id']}: typed columns {got}, want id, event_type and n as produced")
    else:
        if types.get("value") != "VARIANT":
            fail(f"{table}: duckdb: column types {types}, want value VARIANT")
        for r in readers["duckdb"]:
            m = want[int(bytes(r["key"]))]
            if (d := same(load_exact(base64.b64decode(m["value"])), load_duckdb_json(r["value"]))) is not None:
                fail(f"{table}: record {m['id']}: value {d}")
    print(f"{table}: {len(want)} rows ok, {'typed columns' if typed else 'VARIANT values'} as produced")


def check_errors(location, want):
    readers, _ = read(location)
    for reader, rows in readers.items():
        compare(reader, ERRORS_TABLE, [int(bytes(r["key"])) for r in rows], want)
    for r in readers["delta-rs"]:
        m = want[int(bytes(r["key"]))]
        got = (bytes(r["value"]), r["topic"], r["partition"], r["offset"])
        exp = (base64.b64decode(m["value"]), m["topic"], m["partition"], m["offset"])
        if got != exp:
            fail(f"{ERRORS_TABLE}: record {m['id']} ({m['kind']}): (value, topic, partition, offset) {got}, want {exp}")
        if not r["error"]:
            fail(f"{ERRORS_TABLE}: record {m['id']} ({m['kind']}): no error text")
        if isinstance(m["type"], str) and m["type"] not in r["error"]:
            fail(f"{ERRORS_TABLE}: record {m['id']} ({m['kind']}): error {r['error']!r} does not name the route {m['type']!r}")
        if r["timestamp"] is None:
            fail(f"{ERRORS_TABLE}: record {m['id']}: no timestamp")
    print(f"{ERRORS_TABLE}: {len(want)} rows ok, raw values, metadata and errors as produced, e.g. {r['error']!r}")


def check(args):
    records = {}
    for path in args.manifest:
        with open(path) as f:
            for line in f:
                m = json.loads(line)
                records[m["id"]] = m
    by_table = collections.defaultdict(dict)
    for i, m in records.items():
        by_table[m["table"] if m["table"] is not None else ERRORS_TABLE][i] = m
    present = sorted(e.name for e in os.scandir(args.schema_dir) if e.is_dir() and not e.name.startswith("."))
    if present != sorted(by_table):
        fail(f"{args.schema_dir}: tables {present}, want {sorted(by_table)}")
    for table, want in sorted(by_table.items()):
        location = os.path.join(args.schema_dir, table)
        if table == ERRORS_TABLE:
            check_errors(location, want)
        else:
            check_routed(table, location, want, args.typed)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("produce")
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--manifest", required=True)
    p.add_argument("--first", type=int, required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--invalid", default="")
    p.add_argument("--invalid-every", type=int, default=50)
    p.add_argument("--rate", type=float, default=0, help="records per second, 0 = as fast as possible")
    c = sub.add_parser("check")
    c.add_argument("schema_dir")
    c.add_argument("--manifest", action="append", required=True)
    c.add_argument("--typed", action="store_true")
    args = ap.parse_args()
    {"produce": produce, "check": check}[args.cmd](args)


if __name__ == "__main__":
    main()
