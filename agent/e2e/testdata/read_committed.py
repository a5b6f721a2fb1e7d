"""Read a topic to its end with Confluent's Python client, as a consumer
with isolation.level=read_committed (or read_uncommitted) sees it, and print
what it read as JSON: {"count": n, "ids": [...], "values": {...}, "updates": [...]}.

The id of a record is the "id" of its JSON value, of the value's "after"
(Debezium) or "data" rows (Canal), or of "payload"."after" (Debezium with
its schema); a tombstone has the id of its JSON key's "id", or none. With
--values, "values" maps each id to the last value read for it; with
--updates, "updates" lists the values of the update events read (Debezium op
"u", Canal type "UPDATE"), in order; with --headers, "headers" maps each id
to the headers of the last record read for it, [[name, value], ...] in the
record's order (a null value as null). Usage:

    read_committed.py --bootstrap HOST:PORT --topic T [--isolation read_uncommitted] [--values] [--updates] [--headers]

Reading ends once every partition's position reached the high watermark
(read_committed skips the records of aborted transactions and the
transaction markers, so its position still gets there once no
transaction is open), or after 120 s of no progress.
"""
import argparse
import json
import sys
import time
import uuid

from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING


def ids_of(key, value):
    if value is None:
        if key:
            try:
                k = json.loads(key)
                if isinstance(k, dict) and "id" in k:
                    return [k["id"]]
            except ValueError:
                pass
        return []
    v = json.loads(value)
    if isinstance(v, dict) and isinstance(v.get("payload"), dict):
        v = v["payload"]
    if isinstance(v, dict) and isinstance(v.get("data"), list):
        return [row["id"] for row in v["data"]]
    if isinstance(v, dict) and "op" in v:
        image = v.get("before") if v["op"] == "d" else v.get("after")
        return [image["id"]] if image else []
    return [v["id"]]


def is_update(value):
    if value is None:
        return False
    v = json.loads(value)
    if isinstance(v, dict) and isinstance(v.get("payload"), dict):
        v = v["payload"]
    return isinstance(v, dict) and (v.get("op") == "u" or v.get("type") == "UPDATE")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--isolation", default="read_committed")
    ap.add_argument("--values", action="store_true")
    ap.add_argument("--updates", action="store_true")
    ap.add_argument("--headers", action="store_true")
    args = ap.parse_args()

    c = Consumer({"bootstrap.servers": args.bootstrap, "group.id": "tributary-e2e-" + uuid.uuid4().hex,
                  "enable.auto.commit": False, "isolation.level": args.isolation})
    md = c.list_topics(args.topic, timeout=30)
    parts = sorted(md.topics[args.topic].partitions)
    ends = {p: c.get_watermark_offsets(TopicPartition(args.topic, p), timeout=30)[1] for p in parts}
    c.assign([TopicPartition(args.topic, p, OFFSET_BEGINNING) for p in parts])
    ids, values, updates, headers = [], {}, [], {}
    last_progress = time.monotonic()
    while True:
        msgs = c.consume(500, timeout=1.0)
        for m in msgs:
            if m.error():
                print(f"error: {m.error()}", file=sys.stderr)
                sys.exit(1)
            got = ids_of(m.key(), m.value())
            ids.extend(got)
            for i in got:
                values[str(i)] = None if m.value() is None else json.loads(m.value())
                headers[str(i)] = [[k, None if v is None else v.decode()] for k, v in (m.headers() or [])]
            if is_update(m.value()):
                updates.append(json.loads(m.value()))
        if msgs:
            last_progress = time.monotonic()
        positions = c.position([TopicPartition(args.topic, p) for p in parts])
        if all(tp.offset >= ends[tp.partition] for tp in positions if tp.offset >= 0) and \
                all(tp.offset >= 0 or ends[tp.partition] == 0 for tp in positions):
            break
        if time.monotonic() - last_progress > 120:
            print(f"no progress for 120 s at {[(tp.partition, tp.offset) for tp in positions]}, ends {ends}",
                  file=sys.stderr)
            sys.exit(1)
    c.close()
    out = {"count": len(ids), "ids": ids}
    if args.values:
        out["values"] = values
    if args.updates:
        out["updates"] = updates
    if args.headers:
        out["headers"] = headers
    print(json.dumps(out))


if __name__ == "__main__":
    main()
