package encode_test

import (
	"fmt"
	"testing"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/encode"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestPartitionJavaVectors: the murmur2 hashes of Kafka's own
// UtilsTest.testMurmur2, as the partitions they give among 2^31-1
// partitions (the hash with its sign bit cleared), so the same keys land
// on the same partitions as from Kafka's Java producer.
func TestPartitionJavaVectors(t *testing.T) {
	for key, hash := range map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	} {
		want := int32(uint32(hash)&0x7fffffff) % (1<<31 - 1)
		if got := encode.Partition(spec.PartitionHashByKey, []byte(key), 1<<31-1); got != want {
			t.Errorf("key %q: partition %d, want %d", key, got, want)
		}
	}
}

// TestPartition: HASH_BY_KEY agrees with kafka-go's Java-compatible
// balancer; ALL_TO_ZERO, a null key and no partitions give 0.
func TestPartition(t *testing.T) {
	parts := make([]int, 12)
	for i := range parts {
		parts[i] = i
	}
	bal := kafkago.Murmur2Balancer{Consistent: true}
	for i := range 1000 {
		key := fmt.Appendf(nil, "key-%d-%s", i, make([]byte, i%7))
		want := bal.Balance(kafkago.Message{Key: key}, parts...)
		if got := encode.Partition(spec.PartitionHashByKey, key, len(parts)); int(got) != want {
			t.Fatalf("key %q: partition %d, kafka-go's %d", key, got, want)
		}
	}
	for _, tc := range []struct {
		strategy   string
		key        []byte
		partitions int
	}{
		{spec.PartitionAllToZero, []byte("k"), 12},
		{"", []byte("k"), 12},
		{spec.PartitionHashByKey, nil, 12},
		{spec.PartitionHashByKey, []byte("k"), 0},
	} {
		if got := encode.Partition(tc.strategy, tc.key, tc.partitions); got != 0 {
			t.Errorf("Partition(%q, %q, %d) = %d, want 0", tc.strategy, tc.key, tc.partitions, got)
		}
	}
}
