package membership

import (
	"cmp"
	"maps"
	"slices"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// claim is what one member told the group when it joined.
type claim struct {
	// id is its member id.
	id string
	// readable are the partitions it can read (what its partitions
	// function returned), sorted.
	readable []kafka.TopicPartition
	// owned are the partitions it owns, assigned in generation.
	owned      []kafka.TopicPartition
	generation int
}

// balance is the leader's assignment of one generation: the partitions of
// each member id (every member of claims has an entry, sorted).
//
// It first computes a target: every partition some member can read goes to
// one member that can read it; members hold within one partition of each
// other where what they can read allows; a partition stays with its owner
// where balance allows (the owners holding most keep one partition more
// when the count does not divide evenly). Then, so that no partition has
// two owners at once, a partition whose target is not its current owner is
// assigned to nobody in this generation: its owner, assigned its target
// without it, stops reading it and joins again at once, and the next
// generation, where nobody owns it, gives it to its new owner (the
// cooperative rebalancing of Kafka's KIP-429).
//
// Two members that claim one partition (a member whose earlier generation
// the group left behind) are settled by generation: the later one owns
// it, the other is assigned its set without it.
func balance(claims []claim) map[string][]kafka.TopicPartition {
	claims = slices.SortedFunc(slices.Values(claims), func(a, b claim) int { return cmp.Compare(a.id, b.id) })
	owner := make(map[kafka.TopicPartition]int) // index in claims
	for i, c := range claims {
		for _, tp := range c.owned {
			if o, ok := owner[tp]; !ok || c.generation > claims[o].generation {
				owner[tp] = i
			}
		}
	}
	readers := make(map[kafka.TopicPartition][]int)
	for i, c := range claims {
		for _, tp := range c.readable {
			readers[tp] = append(readers[tp], i)
		}
	}
	all := slices.SortedFunc(maps.Keys(readers), kafka.CompareTopicPartitions)
	canRead := func(i int, tp kafka.TopicPartition) bool { return slices.Contains(readers[tp], i) }

	// What each member keeps of what it owns and can still read.
	target := make([][]kafka.TopicPartition, len(claims))
	for _, tp := range all {
		if o, ok := owner[tp]; ok && canRead(o, tp) {
			target[o] = append(target[o], tp)
		}
	}
	// Each member's share: n/m, one more for the n%m members that keep
	// the most (so the fewest partitions move).
	limit := make([]int, len(claims))
	if len(claims) > 0 {
		byKept := make([]int, len(claims))
		for i := range byKept {
			byKept[i] = i
		}
		slices.SortStableFunc(byKept, func(a, b int) int { return len(target[b]) - len(target[a]) })
		for rank, i := range byKept {
			limit[i] = len(all) / len(claims)
			if rank < len(all)%len(claims) {
				limit[i]++
			}
		}
	}
	placed := make(map[kafka.TopicPartition]bool, len(all))
	for i := range target {
		target[i] = target[i][:min(len(target[i]), limit[i])]
		for _, tp := range target[i] {
			placed[tp] = true
		}
	}
	// The rest goes to the reader holding least, below its share when one
	// is; above it only when no reader below its share can read it. The
	// partitions fewest members can read go first, while those have room.
	rest := slices.DeleteFunc(slices.Clone(all), func(tp kafka.TopicPartition) bool { return placed[tp] })
	slices.SortStableFunc(rest, func(a, b kafka.TopicPartition) int { return len(readers[a]) - len(readers[b]) })
	for _, tp := range rest {
		best := -1
		for _, i := range readers[tp] {
			switch {
			case best < 0:
				best = i
			case (len(target[i]) < limit[i]) != (len(target[best]) < limit[best]):
				if len(target[i]) < limit[i] {
					best = i
				}
			case len(target[i]) < len(target[best]):
				best = i
			}
		}
		target[best] = append(target[best], tp)
	}
	// A member past its share (it alone could read what it was given)
	// hands what others below their share can read to them.
	giveAway := func(i int) (k, to int) {
		for k := len(target[i]) - 1; k >= 0; k-- {
			for _, r := range readers[target[i][k]] {
				if r != i && len(target[r]) < limit[r] {
					return k, r
				}
			}
		}
		return -1, -1
	}
	for i := range target {
		for len(target[i]) > limit[i] {
			k, to := giveAway(i)
			if k < 0 {
				break
			}
			target[to] = append(target[to], target[i][k])
			target[i] = slices.Delete(target[i], k, k+1)
		}
	}

	out := make(map[string][]kafka.TopicPartition, len(claims))
	for i, c := range claims {
		assigned := []kafka.TopicPartition{}
		for _, tp := range target[i] {
			if o, ok := owner[tp]; !ok || o == i {
				assigned = append(assigned, tp)
			}
		}
		slices.SortFunc(assigned, kafka.CompareTopicPartitions)
		out[c.id] = assigned
	}
	return out
}
