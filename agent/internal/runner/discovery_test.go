package runner

import (
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func TestDiscoveryInterval(t *testing.T) {
	for _, tc := range []struct {
		name string
		ko   spec.KafkaOptions
		want time.Duration
	}{
		{"unset: the default", spec.KafkaOptions{Topics: []string{"t"}}, 5 * time.Minute},
		{"set", spec.KafkaOptions{Topics: []string{"t"}, PartitionDiscoveryInterval: "2s"}, 2 * time.Second},
		{"zero turns it off", spec.KafkaOptions{TopicPattern: "t.*", PartitionDiscoveryInterval: "0s"}, 0},
		{"negative turns it off", spec.KafkaOptions{TopicPattern: "t.*", PartitionDiscoveryInterval: "-1m"}, 0},
		{"assign never discovers", spec.KafkaOptions{Assign: map[string][]int{"t": {0}}, PartitionDiscoveryInterval: "2s"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DiscoveryInterval(&tc.ko); got != tc.want {
				t.Errorf("DiscoveryInterval = %s, want %s", got, tc.want)
			}
		})
	}
	if ticks, stop := DiscoverTicks(0); ticks != nil {
		stop()
		t.Error("discovery turned off still ticks")
	}
}
