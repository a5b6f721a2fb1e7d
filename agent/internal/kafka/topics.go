package kafka

import (
	"context"
	"errors"
	"fmt"

	kafkago "github.com/segmentio/kafka-go"
)

// EnsureTopic creates topic with the given number of partitions and the
// brokers' default replication factor, unless it exists. A topic that
// exists, with whatever partitions, is no error.
func (c *Client) EnsureTopic(ctx context.Context, topic string, partitions int) error {
	if _, err := c.PartitionCount(ctx, topic); err == nil {
		return nil
	}
	res, err := c.admin.CreateTopics(ctx, &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{{
		Topic: topic, NumPartitions: partitions, ReplicationFactor: -1,
	}}})
	if err != nil {
		return c.fail("", err, "create topic %q", topic)
	}
	if err := res.Errors[topic]; err != nil && !errors.Is(err, kafkago.TopicAlreadyExists) {
		return fmt.Errorf("create topic %q: %w", topic, err)
	}
	return nil
}
