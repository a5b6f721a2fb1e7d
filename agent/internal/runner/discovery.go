package runner

import (
	"time"

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
