package encode

import "github.com/tributary-io/terraform-provider-tributary/agent/spec"

// Partition returns the partition of a record with key among partitions
// by strategy: 0 for [spec.PartitionAllToZero] (and an empty strategy);
// for [spec.PartitionHashByKey] the partition Kafka's Java producer picks
// for the key (its murmur2 hash, sign bit cleared, modulo partitions), and
// 0 for a null key, which that producer spreads instead. No partitions at
// all is 0 too.
func Partition(strategy string, key []byte, partitions int) int32 {
	if strategy != spec.PartitionHashByKey || key == nil || partitions <= 0 {
		return 0
	}
	return int32((murmur2(key) & 0x7fffffff) % uint32(partitions))
}

// murmur2 is the 32-bit murmur2 hash with the seed Kafka's Java client
// uses (org.apache.kafka.common.utils.Utils.murmur2).
func murmur2(data []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	n := len(data)
	h := uint32(seed) ^ uint32(n)
	for ; len(data) >= 4; data = data[4:] {
		k := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16 | uint32(data[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch len(data) {
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
