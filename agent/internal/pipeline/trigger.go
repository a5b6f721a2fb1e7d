package pipeline

import (
	"cmp"
	"context"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// trigger is the rate control of a table loop: max_offsets_per_trigger,
// min_offsets_per_trigger and max_trigger_delay, as Spark's Kafka source
// has them. A table with a trigger reads in micro-batches: each trigger
// fixes, per partition, an end offset past the partition's next one, reads
// every partition up to its end (through the source's Until, as a triggered
// run does), and commits once all reached their ends. The flush rules (rows,
// bytes, age, memory) may commit part of a micro-batch before that, so that
// no commit covers more offsets than the micro-batch does.
//
// The ends of a micro-batch are the offsets available (the latest, as
// [positions.latest] has it, or a triggered run's ends), capped by
// max_offsets_per_trigger, which [allowances] splits across the
// partitions in proportion to their lag. With min_offsets_per_trigger, a
// trigger that finds fewer offsets available in all waits for more, until
// max_trigger_delay has passed since the last micro-batch committed (or
// the loop started), and then reads what there is.
//
// A triggered run (continuous = false) with a cap ends at its end offsets
// after as many capped micro-batches as it takes (Spark's AvailableNow);
// min_offsets_per_trigger does not apply to it, since a run must end.
//
// One table loop uses a trigger, from its goroutine.
type trigger struct {
	// maxOffsets caps the offsets of a micro-batch; 0 is no cap.
	maxOffsets int64
	// minOffsets is the fewest offsets a trigger reads before maxDelay
	// has passed since last; 0 is no minimum.
	minOffsets int64
	maxDelay   time.Duration
	// poll is how long the loop waits before it looks again at what is
	// available, when a trigger found too little to read.
	poll time.Duration
	// last is when the last micro-batch committed, or the loop started.
	last time.Time
	// ends holds the current micro-batch's end offsets; nil between
	// micro-batches.
	ends map[kafka.TopicPartition]int64
	// timer fires at the next trigger.
	timer *time.Timer
}

// newTrigger returns the trigger of a table reading with ko, or nil when
// the table has no rate control. continuous is false for a triggered run;
// flushEvery is the pipeline's flush interval, which bounds how long a
// trigger that found too little waits before it looks again. The first
// trigger fires at once. End it with stop.
func newTrigger(ko *spec.KafkaOptions, continuous bool, flushEvery time.Duration) *trigger {
	t := &trigger{maxOffsets: deref(ko.MaxOffsetsPerTrigger), maxDelay: ko.TriggerDelay(), last: time.Now(),
		poll: min(flushEvery, time.Second)}
	if continuous {
		t.minOffsets = deref(ko.MinOffsetsPerTrigger)
	}
	if t.maxOffsets <= 0 && t.minOffsets <= 0 {
		return nil
	}
	t.timer = time.NewTimer(0)
	return t
}

// deref returns *p, or 0 for nil.
func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// C is the channel of the next trigger; nil (never ready) without a trigger.
func (t *trigger) C() <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.timer.C
}

// stop stops the timer, if any.
func (t *trigger) stop() {
	if t != nil {
		t.timer.Stop()
	}
}

// plan returns the end offsets of the next micro-batch, for the partitions
// that have offsets to read in it, from next (each partition's next offset)
// and available (the offset up to which each can be read), at time now; nil
// when the trigger waits: nothing is available, or less than minOffsets
// while maxDelay has not passed since the last micro-batch.
func (t *trigger) plan(next, available map[kafka.TopicPartition]int64, now time.Time) map[kafka.TopicPartition]int64 {
	lags := map[kafka.TopicPartition]int64{}
	var total int64
	for tp, end := range available {
		from, ok := next[tp]
		if !ok || end <= from {
			continue
		}
		lags[tp] = end - from
		total += end - from
	}
	if total == 0 || (t.minOffsets > 0 && total < t.minOffsets && now.Sub(t.last) < t.maxDelay) {
		return nil
	}
	ends := map[kafka.TopicPartition]int64{}
	for tp, n := range allowances(lags, t.maxOffsets) {
		ends[tp] = next[tp] + n
	}
	return ends
}

// allowances splits limit offsets across the partitions that lag behind by
// lags (each positive), in proportion to their lag, and returns how many
// offsets each may read; limit 0 (no cap), or one at least their total,
// gives every partition its whole lag. Under a cap the allowances add up
// to the limit exactly, none exceeds its partition's lag, and every
// lagging partition gets at least one offset, so that none starves behind
// a busier one: each gets one, plus its share of the rest, rounded down,
// and the offsets the rounding leaves go one each to the partitions with
// the largest remainders. When the limit is below the number of lagging
// partitions, it goes one offset each to those that lag the most: the
// limit wins.
func allowances(lags map[kafka.TopicPartition]int64, limit int64) map[kafka.TopicPartition]int64 {
	// Unsigned: the lags of two partitions near the largest offset add up
	// past int64.
	var total uint64
	for _, n := range lags {
		total += uint64(n)
	}
	out := make(map[kafka.TopicPartition]int64, len(lags))
	if limit <= 0 || total <= uint64(limit) {
		for tp, n := range lags {
			out[tp] = n
		}
		return out
	}
	type share struct {
		tp       kafka.TopicPartition
		lag, got int64
		rem      uint64 // the remainder of the division of its share
	}
	shares := make([]share, 0, len(lags))
	for tp, n := range lags {
		shares = append(shares, share{tp: tp, lag: n})
	}
	// The largest lags first, then in partition order: stable results.
	slices.SortFunc(shares, func(a, b share) int {
		return cmp.Or(cmp.Compare(b.lag, a.lag), strings.Compare(a.tp.Topic, b.tp.Topic), cmp.Compare(a.tp.Partition, b.tp.Partition))
	})
	if limit < int64(len(shares)) {
		for _, s := range shares[:limit] {
			out[s.tp] = 1
		}
		return out
	}
	// rest < total, so rest × lag / total fits in 64 bits and is below lag.
	rest := limit - int64(len(shares))
	left := rest
	for i := range shares {
		s := &shares[i]
		hi, lo := bits.Mul64(uint64(rest), uint64(s.lag))
		q, r := bits.Div64(hi, lo, total)
		s.got, s.rem = 1+int64(q), r
		left -= int64(q)
	}
	slices.SortStableFunc(shares, func(a, b share) int { return cmp.Compare(b.rem, a.rem) })
	// The partitions together have room for what is left (their lags add
	// up to more than the limit), though not each: go round until it is
	// placed.
	for left > 0 {
		for i := range shares {
			if s := &shares[i]; left > 0 && s.got < s.lag {
				s.got++
				left--
			}
		}
	}
	for _, s := range shares {
		out[s.tp] = s.got
	}
	return out
}

// fire is a trigger of l's table: it starts the next micro-batch with read
// (which reads each partition of until from its offset in from up to its
// end in until) when there is enough to read, and otherwise looks again
// after t.poll. A failed look-up of the offsets available is logged and
// tried again then.
func (l *loop) fire(ctx context.Context, t *trigger, read func(from, until map[kafka.TopicPartition]int64)) {
	next := l.sink.NextOffsets()
	available := l.end // a triggered run reads up to its ends
	if l.r.cfg.Continuous {
		var err error
		if available, err = l.pos.Lookup(ctx, slices.Collect(maps.Keys(next)), l.pos.Latest()); err != nil {
			l.r.log.Warn("looking up the offsets to read failed; the trigger looks again", "err", err, "in", t.poll)
			t.timer.Reset(t.poll)
			return
		}
		// No fetch runs while the trigger waits for more offsets: the lag
		// in the status counts from what is available now.
		for tp, end := range available {
			l.sink.SetReadEnd(tp, end)
		}
		l.sink.PublishOffsets()
	}
	if t.ends = t.plan(next, available, time.Now()); t.ends == nil {
		t.timer.Reset(t.poll)
		return
	}
	read(next, t.ends)
}

// endBatch commits l's micro-batch once every partition of it reached its
// end, and sets the next trigger off at once.
func (l *loop) endBatch(ctx context.Context, t *trigger) error {
	if t == nil || t.ends == nil {
		return nil
	}
	for tp, end := range t.ends {
		if l.sink.NextOffset(tp) < end {
			return nil
		}
	}
	if err := l.flush(ctx); err != nil {
		return err
	}
	t.ends, t.last = nil, time.Now()
	t.timer.Reset(0)
	return nil
}
