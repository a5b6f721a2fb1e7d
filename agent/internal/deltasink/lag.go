package deltasink

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// sizeBuckets is how many buckets a window of record sizes is cut into: a
// fetch older than the window leaves the estimate at most a bucket's width
// (a thirtieth of the window) late, and a partition holds at most
// sizeBuckets+1 buckets however often it fetches.
const sizeBuckets = 30

// RecordSizes measures, per partition, the records fetched and their
// bytes (keys, values and headers) over a sliding window of time, whose
// mean record size turns a lag in records into an estimate in bytes, as
// Spark's bytesEstimateWindowLength does. The window ends at the
// partition's latest fetch, so a partition that stops fetching keeps the
// sizes of its last window rather than forgetting them. Used by one
// goroutine.
type RecordSizes struct {
	window time.Duration
	parts  map[kafka.TopicPartition][]sizeBucket
}

// sizeBucket counts the records fetched from one partition from start for
// a bucket's width, and their total size.
type sizeBucket struct {
	start          time.Time
	records, bytes int64
}

// NewRecordSizes returns recordSizes that average over window
// (kafka_options.bytes_estimate_window_length).
func NewRecordSizes(window time.Duration) RecordSizes {
	return RecordSizes{window: window, parts: map[kafka.TopicPartition][]sizeBucket{}}
}

// Add counts recs, records fetched from tp at now, and forgets the buckets
// of tp that started a window or more before now.
func (rs RecordSizes) Add(tp kafka.TopicPartition, recs []record.Record, now time.Time) {
	if len(recs) == 0 {
		return
	}
	var size int64
	for i := range recs {
		r := &recs[i]
		n := len(r.Key) + len(r.Value)
		for _, h := range r.Headers {
			n += len(h.Key) + len(h.Value)
		}
		size += int64(n)
	}
	bs := rs.parts[tp]
	if n := len(bs); n > 0 && now.Sub(bs[n-1].start) < rs.window/sizeBuckets {
		bs[n-1].records += int64(len(recs))
		bs[n-1].bytes += size
	} else {
		bs = append(bs, sizeBucket{start: now, records: int64(len(recs)), bytes: size})
	}
	old := 0
	for old < len(bs)-1 && now.Sub(bs[old].start) >= rs.window {
		old++
	}
	rs.parts[tp] = append(bs[:0], bs[old:]...)
}

// lagBytes estimates the bytes of lag records of tp: lag times the mean
// size of the records fetched from it in the window, 0 before any was.
func (rs RecordSizes) lagBytes(tp kafka.TopicPartition, lag int64) int64 {
	var records, bytes int64
	for _, b := range rs.parts[tp] {
		records += b.records
		bytes += b.bytes
	}
	if records == 0 {
		return 0
	}
	return int64(float64(lag) * float64(bytes) / float64(records))
}

// PartitionStatus returns the status of tp, whose next offset to read is
// next, with the lag behind end (the offset up to which the last fetch
// could read) in records and bytes.
func (rs RecordSizes) PartitionStatus(tp kafka.TopicPartition, next, end int64) spec.PartitionStatus {
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

// SortPartitions sorts partition statuses by topic, then partition.
func SortPartitions(ps []spec.PartitionStatus) {
	slices.SortFunc(ps, func(a, b spec.PartitionStatus) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), a.Partition-b.Partition)
	})
}
