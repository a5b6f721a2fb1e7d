package membership

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// parts returns partitions from to to-1 of topic.
func parts(topic string, from, to int) []kafka.TopicPartition {
	var tps []kafka.TopicPartition
	for p := from; p < to; p++ {
		tps = append(tps, kafka.TopicPartition{Topic: topic, Partition: p})
	}
	return tps
}

// every returns the partitions each member of ids can read: tps.
func every(tps []kafka.TopicPartition, ids ...string) map[string][]kafka.TopicPartition {
	m := map[string][]kafka.TopicPartition{}
	for _, id := range ids {
		m[id] = tps
	}
	return m
}

// settle runs generations of the balancer from owned (by member id, every
// member reading readable[id], those of pressed under memory pressure) as
// the members would: each takes what it is assigned, and another
// generation follows while any member gave partitions up. It fails the
// test when a partition is ever assigned to a member while another owns
// it, and returns the owned sets once stable with the number of
// generations it took.
func settle(t *testing.T, readable, owned map[string][]kafka.TopicPartition, pressed ...string) (map[string][]kafka.TopicPartition, int) {
	t.Helper()
	owned = maps.Clone(owned)
	gen := 1
	for ; gen <= 10; gen++ {
		var claims []claim
		for _, id := range slices.Sorted(maps.Keys(readable)) {
			claims = append(claims, claim{id: id, readable: readable[id], owned: owned[id], generation: gen - 1,
				pressed: slices.Contains(pressed, id)})
		}
		assigned := balance(claims)
		revoked := false
		for id, tps := range assigned {
			for _, tp := range tps {
				for other, theirs := range owned {
					if other != id && slices.Contains(theirs, tp) {
						t.Fatalf("generation %d: %s assigned to %s while %s owns it", gen, tp, id, other)
					}
				}
			}
			revoked = revoked || slices.ContainsFunc(owned[id], func(tp kafka.TopicPartition) bool { return !slices.Contains(tps, tp) })
		}
		// Members leave as they take what they are assigned; the owned
		// sets of members gone are dropped.
		owned = assigned
		if !revoked {
			return owned, gen
		}
	}
	t.Fatalf("no stable assignment after %d generations: %v", gen, owned)
	return nil, 0
}

// checkCovered fails unless owned covers want, each partition once.
func checkCovered(t *testing.T, owned map[string][]kafka.TopicPartition, want []kafka.TopicPartition) {
	t.Helper()
	var all []kafka.TopicPartition
	for _, tps := range owned {
		all = append(all, tps...)
	}
	slices.SortFunc(all, kafka.CompareTopicPartitions)
	if !slices.Equal(all, want) {
		t.Fatalf("owned %v, want each of %v once", all, want)
	}
}

// checkBalanced fails unless owned covers want, each partition once, and
// every member holds within one partition of the others.
func checkBalanced(t *testing.T, owned map[string][]kafka.TopicPartition, want []kafka.TopicPartition) {
	t.Helper()
	checkCovered(t, owned, want)
	least, most := len(want)+1, -1
	for _, tps := range owned {
		least, most = min(least, len(tps)), max(most, len(tps))
	}
	if most-least > 1 {
		t.Fatalf("not balanced: members hold %d to %d partitions: %v", least, most, owned)
	}
}

// moved counts the partitions whose owner differs between before and
// after (a partition new in after counts as not moved).
func moved(before, after map[string][]kafka.TopicPartition) int {
	n := 0
	for id, tps := range before {
		for _, tp := range tps {
			for other, theirs := range after {
				if other != id && slices.Contains(theirs, tp) {
					n++
				}
			}
		}
	}
	return n
}

func TestBalance(t *testing.T) {
	twelve := parts("t", 0, 12)
	for _, tc := range []struct {
		name     string
		readable map[string][]kafka.TopicPartition
		owned    map[string][]kafka.TopicPartition
		want     []kafka.TopicPartition
		// maxMoved is how many partitions may change owner; maxGens, how
		// many generations settling may take.
		maxMoved, maxGens int
	}{
		{name: "first join of three", readable: every(twelve, "a", "b", "c"), want: twelve, maxGens: 1},
		{name: "a fourth member joins", readable: every(twelve, "a", "b", "c", "d"),
			owned: map[string][]kafka.TopicPartition{"a": parts("t", 0, 4), "b": parts("t", 4, 8), "c": parts("t", 8, 12)},
			want:  twelve, maxMoved: 3, maxGens: 2},
		{name: "a member leaves", readable: every(twelve, "a", "b"),
			owned: map[string][]kafka.TopicPartition{"a": parts("t", 0, 4), "b": parts("t", 4, 8)},
			want:  twelve, maxMoved: 0, maxGens: 1},
		{name: "new partitions", readable: every(parts("t", 0, 18), "a", "b", "c"),
			owned: map[string][]kafka.TopicPartition{"a": parts("t", 0, 4), "b": parts("t", 4, 8), "c": parts("t", 8, 12)},
			want:  parts("t", 0, 18), maxMoved: 0, maxGens: 1},
		{name: "a new topic", readable: every(append(parts("t", 0, 4), parts("u", 0, 4)...), "a", "b"),
			owned: map[string][]kafka.TopicPartition{"a": parts("t", 0, 2), "b": parts("t", 2, 4)},
			want:  append(parts("t", 0, 4), parts("u", 0, 4)...), maxMoved: 0, maxGens: 1},
		{name: "uneven: 10 over 4", readable: every(parts("t", 0, 10), "a", "b", "c", "d"), want: parts("t", 0, 10), maxGens: 1},
		{name: "uneven owners keep their extra", readable: every(parts("t", 0, 10), "a", "b", "c"),
			owned: map[string][]kafka.TopicPartition{"a": parts("t", 0, 6), "b": parts("t", 6, 10)},
			want:  parts("t", 0, 10), maxMoved: 3, maxGens: 2},
		{name: "more members than partitions", readable: every(parts("t", 0, 2), "a", "b", "c", "d"),
			owned: map[string][]kafka.TopicPartition{"d": parts("t", 0, 2)},
			want:  parts("t", 0, 2), maxMoved: 1, maxGens: 2},
		{name: "sticky: balanced owners keep everything", readable: every(twelve, "a", "b", "c"),
			owned: map[string][]kafka.TopicPartition{"a": {twelve[0], twelve[5], twelve[7], twelve[11]},
				"b": {twelve[1], twelve[2], twelve[3], twelve[4]}, "c": {twelve[6], twelve[8], twelve[9], twelve[10]}},
			want: twelve, maxMoved: 0, maxGens: 1},
		{name: "all on one member", readable: every(twelve, "a", "b", "c"),
			owned: map[string][]kafka.TopicPartition{"b": twelve}, want: twelve, maxMoved: 8, maxGens: 2},
		{name: "a partition its owner can no longer read", readable: map[string][]kafka.TopicPartition{"a": parts("t", 1, 4), "b": parts("t", 0, 4)},
			owned: map[string][]kafka.TopicPartition{"a": parts("t", 0, 2), "b": parts("t", 2, 4)},
			want:  parts("t", 0, 4), maxMoved: 2, maxGens: 2},
		{name: "a topic deleted", readable: every(parts("t", 0, 4), "a", "b"),
			owned: map[string][]kafka.TopicPartition{"a": append(parts("t", 0, 2), parts("gone", 0, 1)...), "b": parts("t", 2, 4)},
			want:  parts("t", 0, 4), maxMoved: 0, maxGens: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owned, gens := settle(t, tc.readable, tc.owned)
			checkBalanced(t, owned, tc.want)
			if gens > tc.maxGens {
				t.Errorf("settled in %d generations, want at most %d", gens, tc.maxGens)
			}
			if n := moved(tc.owned, owned); n > tc.maxMoved {
				t.Errorf("%d partitions changed owner, want at most %d: %v -> %v", n, tc.maxMoved, tc.owned, owned)
			}
		})
	}
}

// TestBalancePressed: a member under memory pressure is given no partition
// it does not own, and what would have gone to it goes to the others; it
// keeps what it owns up to its share; a partition only pressed members can
// read, and every partition when every member is pressed, still gets an
// owner.
func TestBalancePressed(t *testing.T) {
	twelve := parts("t", 0, 12)
	thirds := map[string][]kafka.TopicPartition{"a": parts("t", 0, 4), "b": parts("t", 4, 8), "c": parts("t", 8, 12)}
	for _, tc := range []struct {
		name     string
		readable map[string][]kafka.TopicPartition
		owned    map[string][]kafka.TopicPartition
		pressed  []string
		// held is how many partitions each member holds once settled.
		held map[string]int
	}{
		{name: "new partitions skip a pressed member", readable: every(parts("t", 0, 18), "a", "b", "c"), owned: thirds,
			pressed: []string{"a"}, held: map[string]int{"a": 4, "b": 7, "c": 7}},
		{name: "a pressed member joining gets nothing", readable: every(twelve, "a", "b", "c", "d"), owned: thirds,
			pressed: []string{"d"}, held: map[string]int{"a": 4, "b": 4, "c": 4, "d": 0}},
		{name: "a pressed member keeps what it owns", readable: every(twelve, "a", "b", "c"), owned: thirds,
			pressed: []string{"a", "b"}, held: map[string]int{"a": 4, "b": 4, "c": 4}},
		{name: "a leaving member's partitions skip a pressed one", readable: every(twelve, "a", "b"),
			owned:   map[string][]kafka.TopicPartition{"a": thirds["a"], "b": thirds["b"]},
			pressed: []string{"a"}, held: map[string]int{"a": 4, "b": 8}},
		{name: "a pressed member gives its excess as any member does", readable: every(twelve, "a", "b", "c"),
			owned: map[string][]kafka.TopicPartition{"a": twelve}, pressed: []string{"a"}, held: map[string]int{"a": 4, "b": 4, "c": 4}},
		{name: "a member joining takes its share of a pressed one", readable: every(twelve, "a", "b", "c", "d"), owned: thirds,
			pressed: []string{"a"}, held: map[string]int{"a": 3, "b": 3, "c": 3, "d": 3}},
		{name: "every member pressed: balanced as if none were", readable: every(parts("t", 0, 18), "a", "b", "c"), owned: thirds,
			pressed: []string{"a", "b", "c"}, held: map[string]int{"a": 6, "b": 6, "c": 6}},
		{name: "a partition only a pressed member can read", readable: map[string][]kafka.TopicPartition{"a": parts("t", 0, 6), "b": parts("t", 0, 4)},
			owned: map[string][]kafka.TopicPartition{"a": parts("t", 0, 2), "b": parts("t", 2, 4)}, pressed: []string{"a"},
			held: map[string]int{"a": 4, "b": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owned, _ := settle(t, tc.readable, tc.owned, tc.pressed...)
			var all []kafka.TopicPartition
			for id, tps := range tc.readable {
				all = append(all, tps...)
				if len(owned[id]) != tc.held[id] {
					t.Errorf("%s holds %d partitions, want %d: %v", id, len(owned[id]), tc.held[id], owned)
				}
			}
			slices.SortFunc(all, kafka.CompareTopicPartitions)
			checkCovered(t, owned, slices.Compact(all))
			if len(tc.pressed) == len(tc.readable) {
				return
			}
			for _, id := range tc.pressed {
				for _, tp := range owned[id] {
					if slices.Contains(tc.owned[id], tp) {
						continue
					}
					for other, tps := range tc.readable {
						if !slices.Contains(tc.pressed, other) && slices.Contains(tps, tp) {
							t.Errorf("pressed %s was given %s, which %s (not pressed) can read", id, tp, other)
						}
					}
				}
			}
		})
	}
}

// TestBalanceReadersOnly: a partition goes only to a member that can read
// it, even past the others' share; one nobody can read goes to nobody.
func TestBalanceReadersOnly(t *testing.T) {
	readable := map[string][]kafka.TopicPartition{"a": parts("t", 0, 6), "b": parts("t", 0, 2), "c": nil}
	owned, _ := settle(t, readable, nil)
	if len(owned["c"]) != 0 {
		t.Errorf("c, which reads nothing, was assigned %v", owned["c"])
	}
	for _, tp := range owned["b"] {
		if tp.Partition >= 2 {
			t.Errorf("b was assigned %s, which it cannot read", tp)
		}
	}
	if len(owned["a"])+len(owned["b"]) != 6 || len(owned["b"]) != 2 {
		t.Errorf("owned %v, want b with t/0 and t/1, a with the rest", owned)
	}
}

// TestBalanceConflict: two members claiming one partition (one of them
// left behind by the group) are settled by generation, with no generation
// assigning it to both.
func TestBalanceConflict(t *testing.T) {
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	got := balance([]claim{
		{id: "old", readable: parts("t", 0, 2), owned: []kafka.TopicPartition{tp}, generation: 3},
		{id: "new", readable: parts("t", 0, 2), owned: []kafka.TopicPartition{tp}, generation: 7},
	})
	if slices.Contains(got["old"], tp) || !slices.Contains(got["new"], tp) {
		t.Fatalf("got %v, want t/0 with the member of the later generation only", got)
	}
}

// TestBalanceLarge: 300 partitions over 30 members in random-ish owned
// states settle balanced within two generations.
func TestBalanceLarge(t *testing.T) {
	all := parts("t", 0, 300)
	readable := map[string][]kafka.TopicPartition{}
	owned := map[string][]kafka.TopicPartition{}
	for i := range 30 {
		id := fmt.Sprintf("m%02d", i)
		readable[id] = all
		if i < 7 { // seven members own everything, unevenly
			for j, tp := range all {
				if j%7 == i && (i > 0 || j%2 == 0) {
					owned[id] = append(owned[id], tp)
				}
			}
		}
	}
	got, gens := settle(t, readable, owned)
	checkBalanced(t, got, all)
	if gens > 2 {
		t.Errorf("settled in %d generations, want 2", gens)
	}
}
