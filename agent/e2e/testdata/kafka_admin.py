"""Small admin operations with Confluent's client, for the tests.

    kafka_admin.py BOOTSTRAP partitions TOPIC N
        grow TOPIC to N partitions
    kafka_admin.py BOOTSTRAP end-offsets TOPIC...
        print {topic: {partition: high watermark}} as JSON
    kafka_admin.py BOOTSTRAP delete TOPIC
        delete TOPIC and wait until the broker no longer lists it
"""
import json
import sys
import time

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions


def main():
    bootstrap, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if cmd == "partitions":
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_partitions([NewPartitions(args[0], int(args[1]))]).values():
            f.result()
    elif cmd == "end-offsets":
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "tributary-e2e-admin", "enable.auto.commit": False})
        md = c.list_topics(timeout=30)
        out = {}
        for topic in args:
            out[topic] = {}
            for p in sorted(md.topics[topic].partitions):
                _, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
                out[topic][str(p)] = high
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
