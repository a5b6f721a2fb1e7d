package pipeline

// A stand-in for the shared source (source.go, helper source) with its API,
// one fetcher per subscription and no sharing, so that the fanout runner
// builds and is tested before the source lands. Delete it at merge.

import (
	"context"
	"log/slog"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
)

// source fetches partitions for its subscribers.
type source struct {
	client *kafka.Client
	budget *memory.Budget
	log    *slog.Logger
}

func newSource(client *kafka.Client, budget *memory.Budget, log *slog.Logger) *source {
	return &source{client: client, budget: budget, log: log}
}

// subscription is what one subscriber reads of one partition.
type subscription struct {
	TP            kafka.TopicPartition
	From          int64 // the subscriber's next offset; batches may start before it (the subscriber skips)
	Until         int64 // a triggered run's end; 0 none
	ReadCommitted bool
	TopicID       string
	OnRetry       func(error) // a fetch of TP fails and is retried
}

// sharedBatch is a fetched batch that every subscriber releases once.
type sharedBatch struct {
	kafka.Batch
	budget *memory.Budget
}

// release gives the batch's memory back.
func (b *sharedBatch) release() {
	b.budget.Release(b.Bytes)
	b.Release()
}

// subscribe delivers sub.TP's batches until ctx ends; a fatal fetch error
// comes on errs.
func (s *source) subscribe(ctx context.Context, sub subscription) (<-chan *sharedBatch, <-chan error) {
	out := make(chan *sharedBatch)
	errs := make(chan error, 1)
	f := &kafka.Fetcher{Client: s.client, TP: sub.TP, ReadCommitted: sub.ReadCommitted, TopicID: sub.TopicID, Until: sub.Until,
		OnRetry: sub.OnRetry, Budget: s.budget}
	fetched := make(chan kafka.Batch)
	go func() {
		if err := f.Run(ctx, sub.From, fetched); err != nil && ctx.Err() == nil {
			errs <- err
		}
	}()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case b := <-fetched:
				sb := &sharedBatch{Batch: b, budget: s.budget}
				select {
				case out <- sb:
				case <-ctx.Done():
					sb.release()
					return
				}
			}
		}
	}()
	return out, errs
}

// sharedSource returns the source of the pipeline's readers: with the real
// source, the pipeline's own (r.source), which replaces the calls.
func (r *running) sharedSource(budget *memory.Budget, log *slog.Logger) *source {
	return newSource(r.client, budget, log)
}
