"""Produce change events (Debezium, Canal) from a fixture file to a topic
with Confluent's Python client, in the file's order, to one partition.

    cdc_records.py --bootstrap HOST:PORT --topic T --file F [--repeat N]
                   [--partitions P]

F is a JSON-lines file (testdata/cdc/*.jsonl), one record per line:
{"key": K, "value": V, "headers": {"name": "value", ...}}, where K and V
are JSON values written as their compact JSON text, or null for a null
key or value (a tombstone); headers are optional. Lines starting with
"//" are comments. With --repeat N the file is produced N times, and every
id ("id" of a Debezium key, after or before image, of a Canal data or old
row, as a number or a string) of the k-th copy (from 0) is raised by
k * 10000, so the copies are rows of their own. Every record goes to
partition 0 of T (created with P partitions, default 1, if it does not
exist), so that the events of one table keep their order: record i of
the file's records (comments left out), copy k, is at offset k * n + i for
a new topic of n records per copy.
"""
import argparse
import copy
import json
import sys

from confluent_kafka import Producer
from kafka_admin import create_topic, flush_all, produce_waiting

SHIFT = 10000


def shifted(v, k):
    """v, an id, raised by k * SHIFT, keeping its JSON type."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return v + k * SHIFT
    if isinstance(v, str) and v.isdigit():
        return str(int(v) + k * SHIFT)
    return v


def shift_row(row, k):
    if isinstance(row, dict) and "id" in row:
        row["id"] = shifted(row["id"], k)


def shift(doc, k, key):
    """Raises the ids of a key (key true) or value document of copy k in
    place, inside its schema-include wrapper if it has one."""
    if not isinstance(doc, dict) or k == 0:
        return doc
    body = doc.get("payload", doc)
    if not isinstance(body, dict):
        return doc
    if key:
        shift_row(body, k)
        return doc
    for side in ("after", "before"):
        shift_row(body.get(side), k)
    for side in ("data", "old"):
        rows = body.get(side)
        if isinstance(rows, list):
            for r in rows:
                shift_row(r, k)
    return doc


def encode(doc):
    if doc is None:
        return None
    return json.dumps(doc, separators=(",", ":")).encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--partitions", type=int, default=1)
    args = ap.parse_args()

    lines = []
    with open(args.file) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if line and not line.startswith("//"):
                try:
                    lines.append(json.loads(line))
                except ValueError as e:
                    sys.exit(f"{args.file}:{n}: {e}")

    create_topic(args.bootstrap, args.topic, args.partitions)
    p = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 5, "enable.idempotence": True})
    failed = []
    produced = 0

    for k in range(args.repeat):
        for rec in lines:
            key = encode(shift(copy.deepcopy(rec.get("key")), k, True))
            value = encode(shift(copy.deepcopy(rec.get("value")), k, False))
            headers = [(h, v.encode()) for h, v in (rec.get("headers") or {}).items()]
            produce_waiting(p, args.topic, partition=0, key=key, value=value, headers=headers or None,
                            on_delivery=lambda err, msg: err and failed.append(err))
            produced += 1
            p.poll(0)
    flush_all(p, failed)
    print(f"produced {produced} records to {args.topic}")


if __name__ == "__main__":
    main()
