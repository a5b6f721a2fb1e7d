"""Produce JSON records with Confluent's transactional producer and write a
manifest of what was produced.

Every record gets a unique id (0, 1, 2, ...), key str(id) and the value
produce.value(id). The manifest (--manifest FILE, JSON) lists every record as
{"id", "partition", "offset", "kind"}, with the partition and offset from the
delivery report, so a checker knows exactly which rows a table must hold.
Kinds: "committed" (in a committed transaction), "aborted" (in an aborted
one, written to the log before the abort), "plain" (non-transactional
producer), "open" (in the transaction left open), "after" (plain, on the
open transaction's partition after it) and "after_other" (plain, on the
other partitions after it).

    produce_txn.py interleaved --bootstrap B --topic T --manifest FILE
        [--partitions 3] [--transactions 30] [--per-txn 20] [--abort-every 3]
        [--plain-per-round 10] [--open 25] [--after 15] [--after-other 15]

Two transactional producers run their transactions two at a time,
interleaved record by record on every partition, with plain records in
between; transaction k (0-based) is aborted when k % abort-every is
abort-every - 1. With --open N, a third transaction of N records is then
left open on partition 0, followed by --after plain records on partition 0
and --after-other on the other partitions; the script prints "open", waits
for a line on stdin, commits the open transaction and prints "committed".

    produce_txn.py stream --bootstrap B --topic T --manifest FILE --count N
        [--txn-size 500] [--abort-every 4] [--rate R]

One transactional producer writes N records in transactions of --txn-size
records, aborting every --abort-every-th, at about --rate records/s.
"""
import argparse
import json
import os
import sys
import time

from confluent_kafka import Producer

sys.path.insert(0, os.path.dirname(__file__))
from kafka_admin import create_topic, pace, produce_waiting  # noqa: E402
from produce import value  # noqa: E402


class Manifest:
    def __init__(self):
        self.records = []
        self.failed = []
        self.next_id = 0

    def produce(self, producer, topic, kind, partition=None):
        i = self.next_id
        self.next_id += 1

        def delivered(err, msg, i=i):
            if err:
                self.failed.append((i, kind, err))
            else:
                self.records.append({"id": i, "partition": msg.partition(), "offset": msg.offset(), "kind": kind})

        kw = {} if partition is None else {"partition": partition}
        produce_waiting(producer, topic, key=str(i).encode(), value=value(i), on_delivery=delivered, **kw)
        producer.poll(0)

    def write(self, path):
        if self.failed:
            print(f"{len(self.failed)} records failed: {self.failed[:3]}", file=sys.stderr)
            sys.exit(1)
        self.records.sort(key=lambda r: r["id"])
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(json.dumps({"records": self.records}, separators=(",", ":")))
        os.replace(tmp, path)


def txn_producer(bootstrap, txn_id):
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5,
                  "transaction.timeout.ms": 300000})
    p.init_transactions(30)
    return p


def end(p, abort):
    # Flush first: aborted records are then in the log (a read_uncommitted
    # reader sees them) and have offsets; and commit_transaction returns
    # sooner after a flush than when it flushes itself.
    p.flush(30)
    if abort:
        p.abort_transaction(30)
    else:
        p.commit_transaction(30)


def interleaved(args):
    create_topic(args.bootstrap, args.topic, args.partitions)
    m = Manifest()
    p1 = txn_producer(args.bootstrap, args.topic + "-txn-1")
    p2 = txn_producer(args.bootstrap, args.topic + "-txn-2")
    plain = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 5, "enable.idempotence": True})

    def aborted(k):
        return k % args.abort_every == args.abort_every - 1

    part = 0
    for r in range((args.transactions + 1) // 2):
        k1, k2 = 2 * r, 2 * r + 1
        both = k2 < args.transactions
        p1.begin_transaction()
        if both:
            p2.begin_transaction()
        for j in range(args.per_txn):
            part = (part + 1) % args.partitions
            m.produce(p1, args.topic, "aborted" if aborted(k1) else "committed", part)
            if both:
                m.produce(p2, args.topic, "aborted" if aborted(k2) else "committed", (part + 1) % args.partitions)
            if args.plain_per_round and j % max(1, args.per_txn // args.plain_per_round) == 0:
                m.produce(plain, args.topic, "plain", (part + 2) % args.partitions)
        # Alternate which transaction ends first, so markers interleave too.
        order = [(p1, k1), (p2, k2)] if r % 2 == 0 else [(p2, k2), (p1, k1)]
        for p, k in order:
            if p is p2 and not both:
                continue
            end(p, aborted(k))
        plain.flush(30)
    p1.flush(30)
    p2.flush(30)
    plain.flush(30)
    n = len(m.records)
    if not args.open:
        m.write(args.manifest)
        print(f"produced {n} records to {args.topic}")
        return
    p1.begin_transaction()
    for _ in range(args.open):
        m.produce(p1, args.topic, "open", 0)
    p1.flush(30)
    for _ in range(args.after):
        m.produce(plain, args.topic, "after", 0)
    for j in range(args.after_other):
        m.produce(plain, args.topic, "after_other", 1 + j % (args.partitions - 1))
    plain.flush(30)
    m.write(args.manifest)
    print("open", flush=True)
    sys.stdin.readline()
    p1.commit_transaction(30)
    print("committed", flush=True)


def stream(args):
    create_topic(args.bootstrap, args.topic, args.partitions)
    m = Manifest()
    p = txn_producer(args.bootstrap, args.topic + "-txn")
    start = time.monotonic()
    k = 0
    for i in range(args.count):
        if i % args.txn_size == 0:
            p.begin_transaction()
        kind = "aborted" if k % args.abort_every == args.abort_every - 1 else "committed"
        m.produce(p, args.topic, kind)
        if i % args.txn_size == args.txn_size - 1 or i == args.count - 1:
            end(p, kind == "aborted")
            k += 1
        pace(i + 1, args.rate, start)
    p.flush(60)
    m.write(args.manifest)
    print(f"produced {args.count} records to {args.topic} in {k} transactions")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="mode", required=True)
    for name in ("interleaved", "stream"):
        s = sub.add_parser(name)
        s.add_argument("--bootstrap", required=True)
        s.add_argument("--topic", required=True)
        s.add_argument("--manifest", required=True)
        s.add_argument("--abort-every", type=int, default=3 if name == "interleaved" else 4)
        s.add_argument("--partitions", type=int, default=3 if name == "interleaved" else 4)
    s = sub.choices["interleaved"]
    s.add_argument("--transactions", type=int, default=30)
    s.add_argument("--per-txn", type=int, default=20)
    s.add_argument("--plain-per-round", type=int, default=10)
    s.add_argument("--open", type=int, default=0)
    s.add_argument("--after", type=int, default=0)
    s.add_argument("--after-other", type=int, default=0)
    s = sub.choices["stream"]
    s.add_argument("--count", type=int, required=True)
    s.add_argument("--txn-size", type=int, default=500)
    s.add_argument("--rate", type=float, default=0, help="records per second, 0 = as fast as possible")
    args = ap.parse_args()
    if args.mode == "interleaved":
        interleaved(args)
    else:
        stream(args)


if __name__ == "__main__":
    main()
