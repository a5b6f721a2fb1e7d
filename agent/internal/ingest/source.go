package ingest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// errSourceClosed is what a subscription to a closed source gets on its
// error channel.
var errSourceClosed = errors.New("the pipeline's source is closed")

// Source fetches the partitions an applied pipeline reads for every
// subscriber at once (its table loops, its fanout runners): one fetcher per
// topic-partition, isolation level and topic id, however many subscribers
// read it. A fetcher reads from the lowest offset any of its subscribers
// needs, and each subscriber skips the records before its own offset. A
// fetcher hands every batch to its subscribers one after the other: a slow
// subscriber holds back the others of that partition, so that what the
// partition holds in memory stays bounded by the budget.
type Source struct {
	client *kafka.Client
	budget *memory.Budget
	log    *slog.Logger
	// ctx ends when the source is closed, which stops every fetcher; wg
	// counts the fetchers' goroutines.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	fetchers map[fetchKey]*fetcher
	// started counts the fetchers ever started, and runs the fetches they
	// started (a fetcher starts again when a subscriber joins behind it).
	started, runs int
}

// NewSource returns a source that fetches through client, whose fetches
// draw from budget.
func NewSource(client *kafka.Client, budget *memory.Budget, log *slog.Logger) *Source {
	ctx, cancel := context.WithCancel(context.Background())
	return &Source{client: client, budget: budget, log: log, ctx: ctx, cancel: cancel, fetchers: map[fetchKey]*fetcher{}}
}

// Fetches returns how many fetchers the source started so far, and how
// many fetches they started (a fetcher starts again when a subscriber
// joins behind it): what sharing saved, for tests to check.
func (s *Source) Fetches() (fetchers, runs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started, s.runs
}

// Close stops every fetcher and waits for them. The subscribers should
// be gone by then: those left get nothing more.
func (s *Source) Close() {
	s.cancel()
	s.wg.Wait()
}

// Subscription is what a subscriber reads of one partition.
type Subscription struct {
	TP            kafka.TopicPartition
	From          int64 // the subscriber's next offset; batches may start before it (the subscriber skips)
	Until         int64 // a triggered run's end; 0 none
	ReadCommitted bool
	// TopicID is the id the topic must have (see [kafka.Fetcher.TopicID]).
	// Subscribers that expect different ids have fetchers of their own.
	TopicID string
	// Settings are the client properties of the subscriber's fetches:
	// subscribers with different ones have fetchers of their own.
	Settings spec.ClientSettings
	OnRetry  func(error) // a fetch of TP fails and is retried
	// OnDataLoss, if set, makes the subscription go on after data loss
	// (fail_on_data_loss = false): it is told each gap, from the fetcher's
	// goroutine, before the batches after it come; nil fails the
	// subscription with the [*kafka.DataLossError].
	OnDataLoss func(spec.DataLossGap)
	// Range, when not 0, gives the subscription a fetcher of its own,
	// which no other subscription shares: a split range's (see
	// splitter), which draws from Budget rather than from the source's.
	Range  uint64
	Budget kafka.Budget
}

// Subscribe delivers TP's batches on the returned channel until ctx ends; a
// fatal fetch error (re-created topic, data loss, ...) comes on errs, after
// which nothing more comes. Each delivered *sharedBatch must be released
// once. The first batch delivered may start before From, never after it;
// with an Until, delivery ends with the batch that reaches it. The batch
// channel is never closed.
//
// A subscriber ahead of the others gets the batches it needs once the fetch
// reaches its From; one whose From lies past the partition's end gets the
// data-loss error only once no subscriber behind it remains.
func (s *Source) Subscribe(ctx context.Context, sub Subscription) (batches <-chan *SharedBatch, errs <-chan error) {
	out, errc := make(chan *SharedBatch), make(chan error, 1)
	if sub.Until > 0 && sub.From >= sub.Until {
		return out, errc // nothing to read
	}
	sr := &subscriber{sub: sub, ctx: ctx, out: out, errs: errc, pos: sub.From}
	key := fetchKey{tp: sub.TP, readCommitted: sub.ReadCommitted, topicID: sub.TopicID, settings: sub.Settings, rng: sub.Range}
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		errc <- errSourceClosed
		return out, errc
	}
	f := s.fetchers[key]
	if f == nil {
		f = &fetcher{key: key, subs: map[*subscriber]struct{}{}, changed: make(chan struct{}, 1), budget: s.budget}
		if sub.Range != 0 {
			f.budget = sub.Budget
		}
		s.fetchers[key] = f
		s.started++
		s.wg.Add(1)
		go s.fetch(f)
	}
	f.subs[sr] = struct{}{}
	s.mu.Unlock()
	f.signal()
	context.AfterFunc(ctx, func() {
		s.mu.Lock()
		delete(f.subs, sr)
		s.mu.Unlock()
		f.signal()
	})
	return out, errc
}

// Forward subscribes to sub and, in a goroutine that wg counts, hands the
// batches it delivers to in and its fatal fetch error to errs, until ctx
// ends: a subscriber reading several partitions merges them so. The
// error is not waited for: errs should have room for the first, which
// ends the reading anyway. A batch in receives is the receiver's to
// release.
func (s *Source) Forward(ctx context.Context, wg *sync.WaitGroup, sub Subscription, in chan<- *SharedBatch, errs chan<- error) {
	Relay(ctx, wg, s, sub, func(b *SharedBatch) *SharedBatch { return b }, in, errs)
}

// Relay is Forward with a step: on the subscription's goroutine, each
// batch goes through step, and what step makes of it is handed to in. Work
// on a batch that needs none of the receiver's state (the routing of a
// fanout schema) so runs for each partition side by side, and on the next
// batches while the receiver is busy with one. What in receives holds the
// batch, and releasing it releases the batch: it is the receiver's to
// release, or Relay's when ctx ends before in takes it; step must not
// release the batch.
func Relay[T interface{ Release() }](ctx context.Context, wg *sync.WaitGroup, s *Source, sub Subscription, step func(*SharedBatch) T,
	in chan<- T, errs chan<- error) {
	batches, fetchErrs := s.Subscribe(ctx, sub)
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case err := <-fetchErrs:
				select {
				case errs <- err:
				default:
				}
				return
			case b := <-batches:
				v := step(b)
				select {
				case in <- v:
				case <-ctx.Done():
					v.Release()
					return
				}
			}
		}
	})
}

// fetchKey identifies a fetcher.
type fetchKey struct {
	tp            kafka.TopicPartition
	readCommitted bool
	topicID       string
	settings      spec.ClientSettings
	rng           uint64 // a split range's, see [subscription.Range]
}

// fetcher is the state of one partition's fetches.
type fetcher struct {
	key fetchKey
	// subs are the current subscribers; guarded by source.mu.
	subs map[*subscriber]struct{}
	// changed tells the fetcher's goroutine that subs changed.
	changed chan struct{}
	// to is the fetcher goroutine's list of a batch's receivers, reused.
	to []*subscriber
	// budget is what its fetches acquire memory from.
	budget kafka.Budget
}

// signal wakes the fetcher's goroutine to look at its subscribers.
func (f *fetcher) signal() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// subscriber is one subscription to a fetcher.
type subscriber struct {
	sub  Subscription
	ctx  context.Context
	out  chan *SharedBatch
	errs chan error
	// pos is the offset of the first record the subscriber has not been
	// sent yet: its From, then the Next of the last batch sent to it. Set
	// by subscribe, then only the fetcher's goroutine uses it.
	pos int64
}

// fetchRun is one run of a [kafka.Fetcher].
type fetchRun struct {
	cancel  context.CancelFunc
	batches chan kafka.Batch
	done    chan error
}

// fetch runs fetcher f until it has no subscribers or the source closes.
func (s *Source) fetch(f *fetcher) {
	defer s.wg.Done()
	var run *fetchRun
	// at is where the running fetch reads: the next batch it sends starts
	// there.
	var at int64
	for {
		s.mu.Lock()
		if len(f.subs) == 0 || s.ctx.Err() != nil {
			delete(s.fetchers, f.key)
			s.mu.Unlock()
			s.stop(run)
			return
		}
		from, until := plan(f.subs)
		s.mu.Unlock()
		if run != nil && from != at {
			// A subscriber joined behind the fetch: read again from there,
			// the others skip what they have. Or every subscriber is ahead
			// of it (the one behind left): skip to the first that needs
			// records.
			s.stop(run)
			run = nil
		}
		if run == nil {
			run, at = s.start(f, from, until), from
		}
		select {
		case <-f.changed:
		case <-s.ctx.Done():
		case b := <-run.batches:
			s.deliver(f, at, b)
			at = b.Next
		case err := <-run.done:
			// nil: the fetch reached its Until, and the subscribers that
			// have one got all they asked for; the next run serves those
			// that joined since without one, or with a later one.
			run = nil
			if err != nil {
				s.fail(f, err, at)
			}
		}
	}
}

// plan returns where a fetch for subs starts, and where it ends: the lowest
// offset any needs, and the highest Until (0 when any has none). s.mu must
// be held.
func plan(subs map[*subscriber]struct{}) (from, until int64) {
	first := true
	for sr := range subs {
		if first || sr.pos < from {
			from = sr.pos
		}
		if first || (until > 0 && (sr.sub.Until == 0 || sr.sub.Until > until)) {
			until = sr.sub.Until
		}
		first = false
	}
	return from, until
}

// start starts fetching f's partition from offset from up to until.
func (s *Source) start(f *fetcher, from, until int64) *fetchRun {
	ctx, cancel := context.WithCancel(s.ctx)
	run := &fetchRun{cancel: cancel, batches: make(chan kafka.Batch), done: make(chan error, 1)}
	k := &kafka.Fetcher{Client: s.client, TP: f.key.tp, ReadCommitted: f.key.readCommitted, TopicID: f.key.topicID,
		Settings: f.key.settings, Until: until, Budget: f.budget, OnRetry: func(err error) { s.retry(f, err) }}
	s.mu.Lock()
	s.runs++
	s.mu.Unlock()
	go func() {
		err := k.Run(ctx, from, run.batches)
		if ctx.Err() != nil {
			err = nil // stopped
		}
		run.done <- err
	}()
	return run
}

// stop ends run, if any, giving back what it fetched and nobody received.
func (s *Source) stop(run *fetchRun) {
	if run == nil {
		return
	}
	run.cancel()
	for {
		select {
		case b := <-run.batches:
			s.budget.Release(b.Bytes)
			b.Release()
		case <-run.done: //nolint:errcheck // the run was stopped here: how it ended says nothing more
			return
		}
	}
}

// deliver sends batch b, fetched from offset at, to every subscriber of f
// that needs it: not those behind at (the fetch starts again for them),
// nor those past b. A subscriber that reached its Until leaves.
func (s *Source) deliver(f *fetcher, at int64, b kafka.Batch) {
	s.mu.Lock()
	f.to = f.to[:0]
	for sr := range f.subs {
		if sr.pos >= at && b.Next >= sr.pos {
			f.to = append(f.to, sr)
		}
	}
	s.mu.Unlock()
	sb := shareBatch(b, s.budget, len(f.to)+1)
	for _, sr := range f.to {
		select {
		case sr.out <- sb:
			sr.pos = max(sr.pos, b.Next)
			if sr.sub.Until > 0 && sr.pos >= sr.sub.Until {
				s.mu.Lock()
				delete(f.subs, sr)
				s.mu.Unlock()
			}
		case <-sr.ctx.Done():
			sb.Release()
		case <-s.ctx.Done():
			sb.Release()
		}
	}
	clear(f.to)
	sb.Release()
}

// fail hands err, which ended f's fetch reading at offset at, to the
// subscribers that fetch was reading for, which leave: those at or behind
// at, but for those that go on after data loss, which skip the gap of a
// [*kafka.DataLossError] (see skipLoss). A subscriber ahead of it is not
// concerned by an error of that offset
// (records lost to retention before a stale subscriber's position): the next
// fetch starts where the first of the others needs, and fails them too if
// the error is not the offset's (a re-created topic). A truncated log
// ([*kafka.TruncationError]) concerns every subscriber: one ahead of
// at may have read records it lost, which the next fetch, starting
// without a leader epoch, would not find out.
func (s *Source) fail(f *fetcher, err error, at int64) {
	var truncated *kafka.TruncationError
	all := errors.As(err, &truncated)
	s.mu.Lock()
	defer s.mu.Unlock()
	for sr := range f.subs {
		if (sr.pos <= at || all) && !sr.skipLoss(err) {
			sr.errs <- err // the only error it gets: errs has room for it
			delete(f.subs, sr)
		}
	}
}

// retry tells every subscriber of f that a fetch failed and is retried.
func (s *Source) retry(f *fetcher, err error) {
	s.mu.Lock()
	var tell []func(error)
	for sr := range f.subs {
		if sr.sub.OnRetry != nil {
			tell = append(tell, sr.sub.OnRetry)
		}
	}
	s.mu.Unlock()
	for _, fn := range tell {
		fn(err)
	}
}

// SharedBatch is a fetched batch delivered to several subscribers, which
// must not change it: what it holds (its memory in the budget, its pooled
// buffers, see [kafka.Batch]) goes back once every one released it.
type SharedBatch struct {
	kafka.Batch
	refs   atomic.Int32
	budget kafka.Budget
}

// shareBatch returns b for refs receivers, which give its memory back to
// budget.
func shareBatch(b kafka.Batch, budget kafka.Budget, refs int) *SharedBatch {
	sb := &SharedBatch{Batch: b, budget: budget}
	sb.refs.Store(int32(refs))
	return sb
}

// Release gives the batch up; the last Release gives back what it holds.
func (b *SharedBatch) Release() {
	if b.refs.Add(-1) == 0 {
		b.budget.Release(b.Bytes)
		b.Batch.Release()
	}
}

// LossRetention is the reason of a [spec.DataLossGap] whose offsets
// [From, To) were deleted (by retention, or a delete-records request)
// before the subscriber read them.
const LossRetention = "retention"

// skipLoss moves subscriber sr, which a fetch reading at its position
// failed with err, past the gap when err is a [*kafka.DataLossError] with
// one and sr goes on after data loss, telling sr's OnDataLoss the gap; it
// reports whether it did. The Source's mu must be held.
func (sr *subscriber) skipLoss(err error) bool {
	var lost *kafka.DataLossError
	if sr.sub.OnDataLoss == nil || !errors.As(err, &lost) {
		return false
	}
	_, to, ok := lost.Gap()
	if !ok || sr.pos >= to {
		return false
	}
	sr.sub.OnDataLoss(spec.DataLossGap{Topic: sr.sub.TP.Topic, Partition: sr.sub.TP.Partition, From: sr.pos, To: to,
		Reason: LossRetention, DetectedAt: time.Now().UTC().Format(time.RFC3339)})
	sr.pos = to
	return true
}
