package ingest

import (
	"cmp"
	"container/heap"
	"context"
	"log/slog"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// A table whose kafka_options set max_records_per_partition or
// min_partitions (Spark's maxRecordsPerPartition and minPartitions) reads
// the backlog of a partition that is far behind as several offset ranges at
// once: each range has a fetcher and a decoder of its own, and a splitter
// hands the decoded chunks to the table loop in offset order, so that every
// commit still covers a prefix of the partition and exactly-once holds. Once
// the backlog is read, the partition's live tail is read as any other
// partition.

// offsetRange is the offsets [from, until) of one partition.
type offsetRange struct{ from, until int64 }

// size is how many offsets r spans.
func (r offsetRange) size() int64 { return r.until - r.from }

// splitBacklogs returns the ranges to read the partitions of backlogs as,
// for those it splits: each partition's backlog (from its next offset to
// its end) is one range, cut into ranges of at most maxRecords offsets when
// maxRecords is positive; then, while the table would read fewer ranges
// than minPartitions (which validation bounds to spec.MaxMinPartitions),
// the partition whose ranges are the largest is cut into one more, as long
// as its ranges stay at least decodeChunk offsets long (a range costs a
// connection and a fetcher, which a smaller one would not repay). A
// partition without backlog counts as one range. A partition left whole is
// not in the result.
func splitBacklogs(backlogs map[kafka.TopicPartition]offsetRange, maxRecords, minPartitions int64) map[kafka.TopicPartition]cut {
	h := &partsHeap{}
	var total int64
	for tp, r := range backlogs {
		n := max(r.size(), 0)
		p := int64(1)
		if maxRecords > 0 && n > maxRecords {
			p = (n + maxRecords - 1) / maxRecords
		}
		h.parts = append(h.parts, partitionParts{tp: tp, n: n, parts: p})
		total += p
	}
	heap.Init(h)
	for h.Len() > 0 && total < minPartitions && h.parts[0].n/(h.parts[0].parts+1) >= DecodeChunk {
		h.parts[0].parts++
		heap.Fix(h, 0)
		total++
	}
	out := map[kafka.TopicPartition]cut{}
	for _, pp := range h.parts {
		if pp.parts > 1 {
			out[pp.tp] = cut{backlogs[pp.tp], pp.parts}
		}
	}
	return out
}

// partitionParts is how many ranges a partition's backlog of n offsets is
// cut into.
type partitionParts struct {
	tp       kafka.TopicPartition
	n, parts int64
}

// partsHeap orders partitions by the size of their ranges, the largest
// first (then by topic and partition): the next to cut once more.
type partsHeap struct{ parts []partitionParts }

// Len, Less, Swap, Push and Pop make partsHeap a [heap.Interface].
func (h *partsHeap) Len() int { return len(h.parts) }
func (h *partsHeap) Less(i, j int) bool {
	a, b := &h.parts[i], &h.parts[j]
	// a.n/a.parts > b.n/b.parts, compared as 128-bit products.
	ahi, alo := bits.Mul64(uint64(a.n), uint64(b.parts))
	bhi, blo := bits.Mul64(uint64(b.n), uint64(a.parts))
	if ahi != bhi || alo != blo {
		return ahi > bhi || (ahi == bhi && alo > blo)
	}
	return cmp.Or(cmp.Compare(a.tp.Topic, b.tp.Topic), cmp.Compare(a.tp.Partition, b.tp.Partition)) < 0
}
func (h *partsHeap) Swap(i, j int) { h.parts[i], h.parts[j] = h.parts[j], h.parts[i] }
func (h *partsHeap) Push(x any)    { h.parts = append(h.parts, x.(partitionParts)) }
func (h *partsHeap) Pop() any {
	x := h.parts[len(h.parts)-1]
	h.parts = h.parts[:len(h.parts)-1]
	return x
}

// cut is a backlog cut into parts ranges whose sizes differ by one at
// most, the larger first; each is worked out when needed, so that a large
// backlog cut small takes no memory.
type cut struct {
	offsetRange
	parts int64
}

// at returns range i of c, from 0.
func (c cut) at(i int64) offsetRange {
	base, rem := c.size()/c.parts, c.size()%c.parts
	from := c.from + i*base + min(i, rem)
	if i < rem {
		return offsetRange{from, from + base + 1}
	}
	return offsetRange{from, from + base}
}

// ReadAll starts reading each partition of until from its offset in from,
// up to its offset in until (0: on, without end), with the subscription
// settings of sub, the topic's id in topicIDs and onRetry told of its
// failing fetches. The backlog of a partition up to its offset in ends is
// read as ranges in parallel when maxRecords or minPartitions, if set,
// split it (see splitBacklogs).
func (pr *PartitionReader) ReadAll(sub Subscription, from, until, ends map[kafka.TopicPartition]int64, maxRecords, minPartitions int64,
	topicIDs map[string]string, onRetry func(kafka.TopicPartition, error)) {
	var splits map[kafka.TopicPartition]cut
	if maxRecords > 0 || minPartitions > 0 {
		backlogs := map[kafka.TopicPartition]offsetRange{}
		for tp := range until {
			if end, ok := ends[tp]; ok {
				backlogs[tp] = offsetRange{from[tp], end}
			}
		}
		splits = splitBacklogs(backlogs, maxRecords, minPartitions)
		for tp, c := range splits {
			pr.Log.Info("the partition's backlog is read as ranges in parallel", "topic", tp.Topic, "partition", tp.Partition,
				"from", c.from, "to", c.until, "ranges", c.parts)
		}
	}
	for tp, end := range until {
		sub.TP, sub.From, sub.Until, sub.TopicID = tp, from[tp], end, topicIDs[tp.Topic]
		sub.OnRetry = func(err error) { onRetry(tp, err) }
		pr.start(sub, splits[tp])
	}
}

// PartitionReader starts the goroutines that read a table loop's
// partitions: for each, a subscription to the pipeline's source, which
// fetches, and a decoder of what it fetches, which sends the decoded chunks
// to the loop. Its goroutines count in wg.
type PartitionReader struct {
	Source *Source
	// Fetch ends the subscriptions; Decode the decoders, once the loop
	// has returned (the table loop's run).
	Fetch, Decode context.Context
	WG            *sync.WaitGroup
	Pool          *DecoderPool
	Chunks        chan<- Decoded
	// Errs gets the first fatal fetch error of any subscription.
	Errs chan<- error
	Log  *slog.Logger
}

// start reads sub's partition: as the ranges of c, when it has more than
// one (see readSplit), else at once.
func (pr *PartitionReader) start(sub Subscription, c cut) {
	if c.parts > 1 {
		pr.readSplit(sub, c)
		return
	}
	pr.read(pr.Fetch, sub, pr.Chunks, pr.Pool)
}

// read subscribes to sub until ctx ends, or, with an Until, until its
// decoder has it all, and decodes its batches with decoders to out.
func (pr *PartitionReader) read(ctx context.Context, sub Subscription, out chan<- Decoded, decoders decoderSource) {
	ctx, done := context.WithCancel(ctx)
	batches, errs := pr.Source.Subscribe(ctx, sub)
	pr.WG.Add(2)
	go func() {
		defer pr.WG.Done()
		select {
		case err := <-errs:
			select {
			case pr.Errs <- err:
			default:
			}
		case <-ctx.Done():
		}
	}()
	go func() {
		defer pr.WG.Done()
		defer done()
		decodePartition(pr.Decode, sub.TP, batches, out, decoders, sub.From, sub.Until)
	}()
}

// rangeIDs numbers the split ranges of the agent (see [subscription.Range]).
var rangeIDs atomic.Uint64

// readSplit reads sub's partition as the ranges of c, its backlog from
// sub.From on (see splitter); then, unless sub.Until ends there, from there
// on as read does. It returns the splitter.
func (pr *PartitionReader) readSplit(sub Subscription, c cut) *splitter {
	s := &splitter{pr: pr, sub: sub, cut: c, window: max(2, runtime.GOMAXPROCS(0)), merged: make(chan rangeChunk)}
	pr.WG.Add(1)
	go func() {
		defer pr.WG.Done()
		s.run()
	}()
	return s
}

// splitter reads a partition's backlog as offset ranges, window of them
// decoding at once, and hands their chunks to the table loop in offset
// order.
//
// The range of the partition's next offset, the head, is the one the loop
// writes; those after it decode ahead, and their chunks wait in their
// queues until it is done. A range that has decoded all its records leaves
// the window, so that the cores go on decoding while the head is written,
// but keeps its chunks: at most maxQueuedWindows times window ranges are
// started and not yet handed over. Two rules keep that from stalling the table:
// ranges ahead decode with extra decoders rather than the pool's tokens
// (their waiting chunks would otherwise hold every token, which the head
// needs), and only the head's fetcher may take memory past the budget
// without waiting (the ranges ahead wait when the budget is full, and what
// they hold goes back once the head is done, so the head never waits for
// them). What the ranges ahead hold is their fetched batches, which count
// in the budget, and the chunks decoded from them.
type splitter struct {
	pr     *PartitionReader
	sub    Subscription
	cut    cut
	window int
	// merged carries the chunks of every range to the splitter's
	// goroutine, which queues them in their range.
	merged chan rangeChunk
	// ahead counts the chunks decoded by a range before it was the head,
	// and aheadRanges the ranges whose every chunk was: work done in
	// parallel with the head's.
	ahead, aheadRanges atomic.Int64
}

// rangeChunk is a chunk of one range.
type rangeChunk struct {
	r *rangeRead
	d Decoded
}

// rangeRead is a range being read.
type rangeRead struct {
	offsetRange
	// cancel ends its subscription.
	cancel context.CancelFunc
	// head ends when the range becomes the head, by lead.
	head context.Context
	lead context.CancelFunc
	// queue holds its decoded chunks until the loop may have them; done
	// is set once its last came.
	queue []Decoded
	done  bool
}

// maxQueuedWindows bounds the ranges a splitter starts ahead of the head,
// in windows (see splitter).
const maxQueuedWindows = 4

// run starts the ranges, window at a time, and hands their chunks to the
// loop in order until every range is done, then reads the live tail; or
// until the loop's decoders stop, when it gives back what it holds.
func (s *splitter) run() {
	var active []*rangeRead // started, in order; the first is the head
	defer func() {
		for _, r := range active {
			r.cancel()
			r.lead()
			for _, d := range r.queue {
				d.Free()
			}
		}
	}()
	next, decoding := int64(0), 0 // decoding counts the active ranges not done
	for {
		for decoding < s.window && len(active) < maxQueuedWindows*s.window && next < s.cut.parts {
			active = append(active, s.startRange(s.cut.at(next)))
			next++
			decoding++
		}
		if len(active) == 0 {
			last := s.cut.until
			s.pr.Log.Info("the partition's backlog is read", "topic", s.sub.TP.Topic, "partition", s.sub.TP.Partition, "to", last,
				"ranges", s.cut.parts, "rangesDecodedAhead", s.aheadRanges.Load(), "chunksDecodedAhead", s.ahead.Load())
			if s.sub.Until == 0 || last < s.sub.Until {
				tail := s.sub
				tail.From = last
				s.pr.read(s.pr.Fetch, tail, s.pr.Chunks, s.pr.Pool)
			}
			return
		}
		h := active[0]
		h.lead()
		var send chan<- Decoded
		var front Decoded
		if len(h.queue) > 0 {
			send, front = s.pr.Chunks, h.queue[0]
		}
		select {
		case <-s.pr.Decode.Done():
			return
		case send <- front:
			h.queue[0] = Decoded{}
			h.queue = h.queue[1:]
			if h.done && len(h.queue) == 0 {
				h.cancel()
				active[0] = nil
				active = active[1:]
			}
		case c := <-s.merged:
			c.r.queue = append(c.r.queue, c.d)
			if c.d.Last && c.d.Next >= c.r.until {
				c.r.done = true
				decoding--
			}
		}
	}
}

// startRange starts reading r: its own fetcher, with a budget it waits for
// only until it is the head, and a decoder that takes extra decoders until
// then; its chunks come to the splitter on merged.
func (s *splitter) startRange(r offsetRange) *rangeRead {
	ctx, cancel := context.WithCancel(s.pr.Fetch)
	head, lead := context.WithCancel(context.Background())
	rr := &rangeRead{offsetRange: r, cancel: cancel, head: head, lead: lead}
	sub := s.sub
	sub.From, sub.Until = r.from, r.until
	sub.Range, sub.Budget = rangeIDs.Add(1), rangeBudget{Budget: s.pr.Source.budget, head: head}
	out := make(chan Decoded)
	s.pr.read(ctx, sub, out, rangeDecoders{pool: s.pr.Pool, head: head})
	s.pr.WG.Add(1)
	go func() {
		defer s.pr.WG.Done()
		for {
			select {
			case d := <-out:
				last := d.Last && d.Next >= r.until
				if head.Err() == nil {
					s.ahead.Add(1) // decoded before its range became the head
					if last {
						s.aheadRanges.Add(1)
					}
				}
				select {
				case s.merged <- rangeChunk{rr, d}:
				case <-s.pr.Decode.Done():
					d.Free()
					return
				}
				if last {
					return
				}
			case <-s.pr.Decode.Done():
				return
			}
		}
	}()
	return rr
}

// rangeBudget is the memory budget of a split range's fetcher: the
// table's, where it waits for room only until its range is the head (see
// splitter); from then on, or once it stops waiting, it takes memory past
// the limit if need be, as a fetch response larger than asked for does.
type rangeBudget struct {
	kafka.Budget
	head context.Context
}

// Acquire takes n bytes, waiting while they do not fit unless the range is
// the head.
func (b rangeBudget) Acquire(ctx context.Context, n int64) error {
	if b.head.Err() == nil {
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(b.head, cancel)
		defer stop()
		err := b.Budget.Acquire(actx, n)
		if err == nil || ctx.Err() != nil {
			return err
		}
	}
	b.Grow(n)
	return nil
}

// rangeDecoders hands a split range's decodePartition its decoders: extra
// ones while the range waits for those before it, the pool's once it is the
// head (see splitter).
type rangeDecoders struct {
	pool *DecoderPool
	head context.Context
}

// Get takes a decoder from the pool once the range is the head, else an
// extra one.
func (d rangeDecoders) Get(ctx context.Context) (*decode.Decoder, int, error) {
	if d.head.Err() != nil {
		return d.pool.Get(ctx)
	}
	return d.pool.extra()
}

// Put gives a decoder back to the pool.
func (d rangeDecoders) Put(dec *decode.Decoder) { d.pool.Put(dec) }
