package runner

import (
	"maps"
	"slices"
	"strings"

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

// Maintains reports whether the runner maintains the tables it writes
// (compaction and vacuum, see package maintenance), the partitions it
// reads being tps: a single agent always does; in a cluster, the agent
// that owns the first of tps (by topic, then partition) does, so that one
// agent compacts a table and no two compact the same files.
func (o *Ownership) Maintains(tps []kafka.TopicPartition) bool {
	if !o.Shared {
		return true
	}
	if len(tps) == 0 {
		return false
	}
	first := slices.MinFunc(tps, func(a, b kafka.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return a.Partition - b.Partition
	})
	return o.Owned[first]
}
