"""Records, consumer groups and table read-backs for the start and end
position tests (positions_test.go), with Confluent's Python client and
delta-rs.

    positions.py produce BOOTSTRAP TOPIC PARTITIONS FROM TO BASE_MS
        produce records FROM..TO-1 to every partition of TOPIC (created with
        PARTITIONS partitions if new): record i of a partition has key
        "<partition>-<i>", value {"i": i} and timestamp BASE_MS + i*1000, so
        that on a new topic record i is at offset i
    positions.py commit BOOTSTRAP GROUP TOPIC PARTITION=OFFSET...
        commit the offsets under GROUP without joining it
    positions.py member BOOTSTRAP GROUP TOPIC CLIENT_ID PROTOCOL
        join GROUP as a consumer of TOPIC with group.protocol PROTOCOL
        (classic, or consumer for KIP-848's), print "joined" once it has an
        assignment, and stay a member until stdin closes; then leave the
        group
    positions.py ranges TABLE_DIR
        print {partition: [first offset, last offset, rows]} of the table
        read through its log by delta-rs, from the _kafka metadata column;
        fails when pyarrow, reading the files the log adds, disagrees
"""
import json
import os
import sys
import threading

import pyarrow.parquet as pq
from confluent_kafka import Consumer, Producer, TopicPartition
from deltalake import DeltaTable

from kafka_admin import create_topic, flush_all, produce_waiting


def produce(bootstrap, topic, partitions, first, end, base):
    create_topic(bootstrap, topic, partitions, {"retention.ms": "-1"})
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    failed = []
    for part in range(partitions):
        for i in range(first, end):
            produce_waiting(p, topic, partition=part, key=f"{part}-{i}".encode(), value=json.dumps({"i": i}).encode(),
                            timestamp=base + i * 1000, on_delivery=lambda err, msg: err and failed.append(err))
    flush_all(p, failed)


def commit(bootstrap, group, topic, offsets):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    tps = [TopicPartition(topic, int(p), int(o)) for p, o in (x.split("=") for x in offsets)]
    for tp in c.commit(offsets=tps, asynchronous=False):
        if tp.error:
            sys.exit(f"commit {tp}: {tp.error}")
    c.close()


def member(bootstrap, group, topic, client_id, protocol):
    joined = threading.Event()

    def on_assign(consumer, partitions):
        if not joined.is_set():
            print("joined", flush=True)
            joined.set()

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id, "group.protocol": protocol,
                  "enable.auto.commit": False, "auto.offset.reset": "latest"})
    c.subscribe([topic], on_assign=on_assign)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    while not done.is_set():
        c.poll(0.2)
    c.close()  # leaves the group


def ranges(location):
    dt = DeltaTable(location)
    out = {}
    for row in dt.to_pyarrow_table(columns=["_kafka"]).column("_kafka").to_pylist():
        part, off = str(row["partition"]), row["offset"]
        lo, hi, n = out.get(part, (off, off, 0))
        out[part] = (min(lo, off), max(hi, off), n + 1)
    n = sum(pq.read_metadata(uri.removeprefix("file://")).num_rows for uri in dt.file_uris())
    total = sum(v[2] for v in out.values())
    if n != total:
        sys.exit(f"pyarrow reads {n} rows in the files of the log, delta-rs {total}")
    print(json.dumps({k: list(v) for k, v in sorted(out.items())}))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "produce":
        produce(args[0], args[1], int(args[2]), int(args[3]), int(args[4]), int(args[5]))
    elif cmd == "commit":
        commit(args[0], args[1], args[2], args[3:])
    elif cmd == "member":
        member(*args)
    elif cmd == "ranges":
        ranges(args[0])
        # With delta-rs and librdkafka loaded, the interpreter's teardown
        # sometimes aborts ("terminate called without an active exception")
        # after the answer is out: leave without it.
        sys.stdout.flush()
        os._exit(0)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
