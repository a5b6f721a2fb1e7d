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
// it fetches is counted in the source's memory budget like every other
// fetch, taken at once rather than waited for (see sampleBudget).
// onRetry, if set, is told each failed fetch that is retried.
func (s *Source) Head(ctx context.Context, tp kafka.TopicPartition, from, until, n int64, readCommitted bool,
	onRetry func(error), fn func(*record.Record)) error {
	if from >= until || n <= 0 {
		return nil
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches, errs := s.Subscribe(hctx, Subscription{TP: tp, From: from, Until: until, ReadCommitted: readCommitted,
		OnRetry: onRetry, Range: rangeIDs.Add(1), Budget: sampleBudget{s.budget}})
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

// sampleBudget is the memory budget of a sample's fetcher: the source's,
// from which it takes memory at once, past the limit if need be, as a split
// range at the head does. A table samples before it starts, so it must not
// wait for memory the running tables hold; a sample is small (a few records
// per partition), and its memory goes back as soon as it is read.
type sampleBudget struct{ kafka.Budget }

// Acquire takes n bytes without waiting.
func (b sampleBudget) Acquire(_ context.Context, n int64) error {
	b.Grow(n)
	return nil
}
