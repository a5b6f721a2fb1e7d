package runner

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// DiscoveryInterval returns how often a table loop or fanout run with
// options ko looks for new partitions and, with topic_pattern, new
// matching topics: partition_discovery_interval (see
// [spec.KafkaOptions.DiscoverEvery]); 0, never, for assign, whose
// partitions are fixed.
func DiscoveryInterval(ko *spec.KafkaOptions) time.Duration {
	if len(ko.Assign) > 0 {
		return 0
	}
	return ko.DiscoverEvery()
}

// DiscoverTicks returns a channel that ticks every d, with the function
// that stops it; with d 0 a channel that never ticks.
func DiscoverTicks(d time.Duration) (<-chan time.Time, func()) {
	if d <= 0 {
		return nil, func() {}
	}
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Unstarted returns the partitions of tps that started does not hold.
func Unstarted(tps []kafka.TopicPartition, started map[kafka.TopicPartition]bool) []kafka.TopicPartition {
	return slices.DeleteFunc(slices.Clone(tps), func(tp kafka.TopicPartition) bool { return started[tp] })
}

// DiscoverPartitions looks up the partitions ko reads and starts the new
// ones among them with start, from the earliest offset. A look-up that
// failed is logged and tried again at the next discovery; any other error
// (a re-created topic, a commit that failed) is returned: it restarts the
// runner from its log or fails it.
func DiscoverPartitions(ctx context.Context, client *kafka.Client, ko *spec.KafkaOptions, log *slog.Logger,
	start func(tps []kafka.TopicPartition, starting string) error) error {
	tps, err := client.Partitions(ctx, ko)
	if err != nil {
		log.Warn("partition discovery failed", "err", err)
		return nil
	}
	var lookup LookupError
	if err := start(tps, spec.StartingOffsetEarliest); errors.As(err, &lookup) {
		log.Warn("starting new partitions failed", "err", err)
	} else if err != nil {
		return err
	}
	return nil
}
