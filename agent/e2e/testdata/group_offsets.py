"""Print the sum of a consumer group's committed offsets, read with
Confluent's admin client: group_offsets.py BOOTSTRAP GROUP"""
import sys

from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka.admin import AdminClient

admin = AdminClient({"bootstrap.servers": sys.argv[1]})
res = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(sys.argv[2])])
print(sum(max(tp.offset, 0) for f in res.values() for tp in f.result().topic_partitions))
