package runner

import (
	"slices"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

func TestOwnership(t *testing.T) {
	tp := func(p int) kafka.TopicPartition { return kafka.TopicPartition{Topic: "t", Partition: p} }
	all := []kafka.TopicPartition{tp(0), tp(1), tp(2)}
	for _, tc := range []struct {
		name       string
		own        Ownership
		of, others []kafka.TopicPartition
		waits      bool
	}{
		{"a single agent reads every partition", Ownership{}, all, nil, false},
		{"before the first assignment: nothing, and waits", Owns(nil), nil, all, true},
		{"assigned none", Owns(map[kafka.TopicPartition]bool{}), nil, all, false},
		{"assigned some", Owns(map[kafka.TopicPartition]bool{tp(1): true, tp(5): true}), []kafka.TopicPartition{tp(1)},
			[]kafka.TopicPartition{tp(0), tp(2)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.own.Of(all); !slices.Equal(got, tc.of) && len(got)+len(tc.of) > 0 {
				t.Errorf("Of = %v, want %v", got, tc.of)
			}
			if got := tc.own.Others(all); !slices.Equal(got, tc.others) && len(got)+len(tc.others) > 0 {
				t.Errorf("Others = %v, want %v", got, tc.others)
			}
			if got := tc.own.Waits(); got != tc.waits {
				t.Errorf("Waits = %v, want %v", got, tc.waits)
			}
		})
	}
	// The owned set is the runner's own: a later assignment does not
	// change what a running runner reads.
	owned := map[kafka.TopicPartition]bool{tp(0): true}
	o := Owns(owned)
	owned[tp(1)] = true
	if got := o.Of(all); len(got) != 1 {
		t.Errorf("Of = %v after the set it was made from changed, want [t/0]", got)
	}
}
