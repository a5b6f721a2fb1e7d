package pipeline

import (
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// recordSizes measures, per partition, the records fetched and their
// bytes (keys, values and headers), whose mean turns a lag in records into
// an estimate in bytes (S-11). Used by one goroutine.
type recordSizes map[kafka.TopicPartition]*sizeSum

// sizeSum is the count and total size of the records fetched from one
// partition.
type sizeSum struct{ records, bytes int64 }

// add counts recs, records fetched from tp.
func (rs recordSizes) add(tp kafka.TopicPartition, recs []decode.Record) {
	if len(recs) == 0 {
		return
	}
	s := rs[tp]
	if s == nil {
		s = &sizeSum{}
		rs[tp] = s
	}
	for i := range recs {
		r := &recs[i]
		n := len(r.Key) + len(r.Value)
		for _, h := range r.Headers {
			n += len(h.Key) + len(h.Value)
		}
		s.records++
		s.bytes += int64(n)
	}
}

// lagBytes estimates the bytes of lag records of tp: lag times the mean
// size of the records fetched from it, 0 before any was.
func (rs recordSizes) lagBytes(tp kafka.TopicPartition, lag int64) int64 {
	s := rs[tp]
	if s == nil || s.records == 0 {
		return 0
	}
	return int64(float64(lag) * float64(s.bytes) / float64(s.records))
}

// partitionStatus returns the status of tp, whose next offset to read is
// next, with the lag behind end (the offset up to which the last fetch
// could read) in records and bytes.
func (rs recordSizes) partitionStatus(tp kafka.TopicPartition, next, end int64) spec.PartitionStatus {
	lag := max(end-next, 0)
	return spec.PartitionStatus{Topic: tp.Topic, Partition: tp.Partition, NextOffset: next, Lag: lag, LagBytes: rs.lagBytes(tp, lag)}
}

// lagTotals returns the sums of the lags of ps, in records and bytes.
func lagTotals(ps []spec.PartitionStatus) (lag, lagBytes int64) {
	for i := range ps {
		lag += ps[i].Lag
		lagBytes += ps[i].LagBytes
	}
	return lag, lagBytes
}
