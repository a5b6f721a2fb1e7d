"""Produce change events (Debezium, Canal) from a fixture file to a topic
with Confluent's Python client, in the file's order, to one partition.

    cdc_records.py --bootstrap HOST:PORT --topic T --file F [--repeat N]
                   [--partitions P] [--manifest FILE]

F is a JSON-lines file (testdata/cdc/*.jsonl), one record per line:
{"key": K, "value": V, "headers": {"name": "value", ...}}, where K and V
are JSON values written as their compact JSON text, or null for a null
key or value (a tombstone), or strings written as they are when the line
has "raw": true (bytes that are not a change event). Lines starting with
"//" are comments. With --repeat N the file is produced N times, and every
id ("id" of a Debezium key, after or before image, of a Canal data or old
row, as a number or a string) of the k-th copy (from 0) is raised by
k * 10000, so the copies are rows of their own. Every record goes to
partition 0 of T (created with P partitions, default 1, if it does not
exist), so that the events of one table keep their order. With
--manifest, one JSON line per record {"offset", "line", "copy"} is written.
"""
import argparse
import json
import sys

from confluent_kafka import Producer
from kafka_admin import create_topic, produce_waiting

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


def shift(doc, k):
    """Raises the ids of a key or value document of copy k in place."""
    if not isinstance(doc, dict) or k == 0:
        return doc
    body = doc.get("payload", doc) if "payload" in doc else doc
    if not isinstance(body, dict):
        return doc
    shift_row(body, k)  # a key {"id": ...}
    for side in ("after", "before"):
        shift_row(body.get(side), k)
    for side in ("data", "old"):
        rows = body.get(side)
        if isinstance(rows, list):
            for r in rows:
                shift_row(r, k)
    return doc


def encode(doc, raw):
    if doc is None:
        return None
    if raw and isinstance(doc, str):
        return doc.encode()
    return json.dumps(doc, separators=(",", ":")).encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--manifest")
    args = ap.parse_args()

    lines = []
    with open(args.file) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if line and not line.startswith("//"):
                lines.append((n, json.loads(line)))

    create_topic(args.bootstrap, args.topic, args.partitions)
    p = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 5, "enable.idempotence": True})
    delivered, failed = [], []

    def report(err, msg, line, copy):
        if err:
            failed.append(err)
        else:
            delivered.append({"offset": msg.offset(), "line": line, "copy": copy})

    for k in range(args.repeat):
        for n, rec in lines:
            raw = rec.get("raw", False)
            key = encode(shift(json.loads(json.dumps(rec.get("key"))), k), raw)
            value = encode(shift(json.loads(json.dumps(rec.get("value"))), k), raw)
            headers = [(h, v.encode()) for h, v in (rec.get("headers") or {}).items()]
            produce_waiting(p, args.topic, partition=0, key=key, value=value, headers=headers or None,
                            on_delivery=lambda err, msg, n=n, k=k: report(err, msg, n, k))
            p.poll(0)
    p.flush(60)
    if failed:
        print(f"{len(failed)} records failed: {failed[:3]}", file=sys.stderr)
        sys.exit(1)
    if args.manifest:
        with open(args.manifest, "w") as f:
            for d in sorted(delivered, key=lambda d: d["offset"]):
                f.write(json.dumps(d) + "\n")
    print(f"produced {len(delivered)} records to {args.topic}")


if __name__ == "__main__":
    main()
