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
	// pressed says that its agent is under memory pressure.
	pressed bool
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
//
// A pressed member (its agent's memory is under pressure) is given no
// partition it does not own: it keeps what it owns up to its share, as
// any member does (moving a partition costs its new owner a re-read, so
// pressure alone takes nothing away), and what balance would have moved to
// it goes to the members not pressed, past their share if need be. A
// partition only pressed members can read, and every partition when every
// member is pressed, is balanced as if none were: no partition is left
// without an owner.
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
	// Each member's share of every partition.
	every := make([]int, len(claims))
	for i := range every {
		every[i] = i
	}
	limit := make([]int, len(claims))
	share(limit, every, len(all), target)
	// A pressed member keeps what it owns up to that share and takes
	// nothing more: its share is what it keeps, and the others share the
	// rest. When every member is pressed, none counts as pressed.
	pressed := make([]bool, len(claims))
	if slices.ContainsFunc(claims, func(c claim) bool { return !c.pressed }) {
		var others []int
		left := len(all)
		for i, c := range claims {
			if pressed[i] = c.pressed; pressed[i] {
				limit[i] = min(len(target[i]), limit[i])
				left -= limit[i]
			} else {
				others = append(others, i)
			}
		}
		share(limit, others, left, target)
	}
	placed := make(map[kafka.TopicPartition]bool, len(all))
	for i := range target {
		target[i] = target[i][:min(len(target[i]), limit[i])]
		for _, tp := range target[i] {
			placed[tp] = true
		}
	}
	// The rest goes to the reader holding least, below its share when one
	// is; above it only when no reader below its share can read it; to a
	// pressed reader only when no other can read it. The partitions fewest
	// members can read go first, while those have room.
	rest := slices.DeleteFunc(slices.Clone(all), func(tp kafka.TopicPartition) bool { return placed[tp] })
	slices.SortStableFunc(rest, func(a, b kafka.TopicPartition) int { return len(readers[a]) - len(readers[b]) })
	for _, tp := range rest {
		candidates := readers[tp]
		if free := slices.DeleteFunc(slices.Clone(candidates), func(i int) bool { return pressed[i] }); len(free) > 0 {
			candidates = free
		}
		best := -1
		for _, i := range candidates {
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
	// hands what others below their share can read to them; a pressed
	// member past it (given what only pressed members could read) keeps
	// what it owns rather than have it re-read elsewhere.
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
		for !pressed[i] && len(target[i]) > limit[i] {
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

// share sets limit[i], for each member i of members, to its share of n
// partitions: n/m, one more for the n%m members that keep the most in
// target (so the fewest partitions move).
func share(limit, members []int, n int, target [][]kafka.TopicPartition) {
	if len(members) == 0 {
		return
	}
	byKept := slices.Clone(members)
	slices.SortStableFunc(byKept, func(a, b int) int { return len(target[b]) - len(target[a]) })
	for rank, i := range byKept {
		limit[i] = n / len(members)
		if rank < n%len(members) {
			limit[i]++
		}
	}
}
