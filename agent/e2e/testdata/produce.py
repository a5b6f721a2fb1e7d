"""Produce JSON records to a topic with Confluent's Python client.

Record i (0-based) has key str(i) and a JSON value
{"id": i, "name": "user-i", "amount": i*1.25, "ts": <ISO time>, "tags": [...]},
except every record whose index is in --malformed, which gets an invalid JSON
value. With --names the value is {"id": i, "first name": "user-i", "a.b": i,
"(cost)": i*1.25}: keys a plain Delta column name cannot hold. Records are
spread over the partitions by key hash. Usage:

    produce.py --bootstrap HOST:PORT --topic T --count N [--partitions P]
               [--malformed i,j,...] [--rate R] [--header] [--names]
               [--timestamp MS] [--topic-config NAME=VALUE ...]

--timestamp sets every record's producer timestamp (epoch milliseconds);
--topic-config sets a config of the topic if this creates it.
"""
import argparse
import datetime
import json
import time

from confluent_kafka import Producer
from kafka_admin import create_topic, flush_all, pace, produce_waiting

BASE = datetime.datetime(2024, 5, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)


def value(i):
    ts = BASE + datetime.timedelta(milliseconds=i * 37)
    return json.dumps({
        "id": i,
        "name": f"user-{i}",
        "amount": i * 1.25,
        "ts": ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z",
        "tags": ["t%d" % (i % 3), "all"],
    }, separators=(",", ":")).encode()


def names_value(i):
    return json.dumps({"id": i, "first name": f"user-{i}", "a.b": i, "(cost)": i * 1.25},
                      separators=(",", ":")).encode()


def malformed(i):
    return b'{"id": %d, "name": "broken' % i


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--malformed", default="")
    ap.add_argument("--rate", type=float, default=0, help="records per second, 0 = as fast as possible")
    ap.add_argument("--header", action="store_true", help="add a header 'source: produce.py'")
    ap.add_argument("--names", action="store_true", help="values with keys a plain Delta column name cannot hold")
    ap.add_argument("--timestamp", type=int, default=0, help="producer timestamp of every record, epoch ms")
    ap.add_argument("--topic-config", action="append", default=[], help="NAME=VALUE for a created topic")
    args = ap.parse_args()
    bad = {int(x) for x in args.malformed.split(",") if x}

    create_topic(args.bootstrap, args.topic, args.partitions, dict(c.split("=", 1) for c in args.topic_config))

    p = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 20, "enable.idempotence": True,
                  "compression.type": "lz4"})
    failed = []
    start = time.monotonic()
    headers = [("source", b"produce.py")] if args.header else None
    extra = {"timestamp": args.timestamp} if args.timestamp else {}
    for i in range(args.count):
        v = malformed(i) if i in bad else names_value(i) if args.names else value(i)
        produce_waiting(p, args.topic, key=str(i).encode(), value=v, headers=headers,
                        on_delivery=lambda err, msg: err and failed.append(err), **extra)
        pace(i + 1, args.rate, start)
        if i % 1000 == 0:
            p.poll(0)
    flush_all(p, failed)
    print(f"produced {args.count} records to {args.topic}")


if __name__ == "__main__":
    main()
