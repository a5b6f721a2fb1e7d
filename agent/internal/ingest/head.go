package ingest

import (
	"context"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// Head passes fn the first n records of tp from offset from on, reading
// no further than until: the records a table samples to infer its columns
// before it starts. The records are valid only during the call. It reads
// through a fetcher of its own, as a split range does, so that sampling
// never moves the pipeline's shared fetches back to its offsets, and what
// it fetches draws from the source's memory budget like every other fetch.
// onRetry, if set, is told each failed fetch that is retried.
func (s *Source) Head(ctx context.Context, tp kafka.TopicPartition, from, until, n int64, readCommitted bool,
	onRetry func(error), fn func(*record.Record)) error {
	if from >= until || n <= 0 {
		return nil
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches, errs := s.Subscribe(hctx, Subscription{TP: tp, From: from, Until: until, ReadCommitted: readCommitted,
		OnRetry: onRetry, Range: rangeIDs.Add(1), Budget: s.budget})
	var seen int64
	for seen < n {
		select {
		case b := <-batches:
			for i := range b.Records {
				if r := &b.Records[i]; r.Offset >= from && r.Offset < until && seen < n {
					fn(r)
					seen++
				}
			}
			next := b.Next
			b.Release()
			if next >= until {
				return nil
			}
		case err := <-errs:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
