"""Small admin operations with Confluent's client, for the tests.

    kafka_admin.py BOOTSTRAP partitions TOPIC N
        grow TOPIC to N partitions
    kafka_admin.py BOOTSTRAP end-offsets TOPIC...
        print {topic: {partition: high watermark}} as JSON
    kafka_admin.py BOOTSTRAP start-offsets TOPIC...
        print {topic: {partition: first offset still in the log}} as JSON
    kafka_admin.py BOOTSTRAP delete TOPIC
        delete TOPIC and wait until the broker no longer lists it

As a module, it holds what the producing scripts share: create_topic,
produce_waiting, pace and flush_all.
"""
import json
import sys
import time

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic


def create_topic(bootstrap, topic, partitions, config=None):
    """Creates topic with partitions partitions (and the topic config, a
    dict), unless it exists."""
    admin = AdminClient({"bootstrap.servers": bootstrap})  # alive until the results are in
    fs = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1, config=config or {})])
    for f in fs.values():
        try:
            f.result()
        except Exception as e:  # already exists is fine
            if "TOPIC_ALREADY_EXISTS" not in str(e):
                raise


def produce_waiting(producer, topic, **kwargs):
    """producer.produce(topic, **kwargs), serving delivery callbacks while
    the producer's queue is full."""
    while True:
        try:
            producer.produce(topic, **kwargs)
            return
        except BufferError:
            producer.poll(0.05)


def pace(n, rate, start):
    """Sleeps until n records, produced at rate records per second from
    start (a time.monotonic()), are due; a rate of 0 never waits."""
    if rate:
        ahead = n / rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)


def flush_all(producer, failed):
    """Flushes producer and exits with an error when any of its records
    failed: failed is the list its delivery callbacks append errors to."""
    producer.flush(60)
    if failed:
        sys.exit(f"{len(failed)} records failed: {failed[:3]}")


def main():
    bootstrap, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if cmd == "partitions":
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_partitions([NewPartitions(args[0], int(args[1]))]).values():
            f.result()
    elif cmd in ("end-offsets", "start-offsets"):
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "tributary-e2e-admin", "enable.auto.commit": False})
        md = c.list_topics(timeout=30)
        out = {}
        for topic in args:
            out[topic] = {}
            for p in sorted(md.topics[topic].partitions):
                low, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
                out[topic][str(p)] = high if cmd == "end-offsets" else low
        c.close()
        print(json.dumps(out))
    elif cmd == "delete":
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.delete_topics([args[0]]).values():
            f.result()
        for _ in range(300):
            if args[0] not in admin.list_topics(timeout=30).topics:
                break
            time.sleep(0.1)
        else:
            sys.exit(f"topic {args[0]} is still listed after deletion")
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
