package runner

import (
	"maps"
	"slices"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// Ownership says which partitions a runner (a table loop, a fanout schema)
// may read: every one, for a single agent (the zero Ownership), or, when
// the agent shares its pipeline's partitions with the other agents of a
// cluster, those its members group gave it. It is fixed for the runner's
// life: an assignment that changes it restarts the runner, which commits
// what it buffered as it stops and starts again from its logs.
type Ownership struct {
	// Shared is true in a cluster.
	Shared bool
	// Assigned is false until the group's first assignment: the runner
	// waits, STARTING, without opening its logs.
	Assigned bool
	// Owned holds the partitions the runner may read, in a cluster.
	Owned map[kafka.TopicPartition]bool
}

// Owns returns the ownership of the partitions in owned, after an
// assignment (nil owned: before the first one).
func Owns(owned map[kafka.TopicPartition]bool) Ownership {
	return Ownership{Shared: true, Assigned: owned != nil, Owned: maps.Clone(owned)}
}

// Of returns the partitions of tps the runner may read.
func (o *Ownership) Of(tps []kafka.TopicPartition) []kafka.TopicPartition {
	if !o.Shared {
		return tps
	}
	return slices.DeleteFunc(slices.Clone(tps), func(tp kafka.TopicPartition) bool { return !o.Owned[tp] })
}

// Others returns the partitions of tps other agents own: none for a
// single agent.
func (o *Ownership) Others(tps []kafka.TopicPartition) []kafka.TopicPartition {
	if !o.Shared {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(tps), func(tp kafka.TopicPartition) bool { return o.Owned[tp] })
}

// Waits reports whether the runner waits for the first assignment.
func (o *Ownership) Waits() bool { return o.Shared && !o.Assigned }
