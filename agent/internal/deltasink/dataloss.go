package deltasink

import (
	"encoding/json"
	"log/slog"
	"slices"
	"sync"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file is fail_on_data_loss = false: when records a table has
// not read are gone from Kafka (retention deleted them), the table's
// fetches go on from the earliest offset the partition still holds, and
// the gap is recorded: logged at WARN, listed in the table's status, counted
// in its status (and the Prometheus counter made from it), and written in
// the operation parameters of the commit that moves the partition's offset
// past it, which makes it durable. With true (the default) the
// [*kafka.DataLossError] fails the table, its message giving the gap and
// the fix.

// Where a gap is recorded.
const (
	// counterDataLoss is the commit counter that sums the offsets skipped,
	// which the status's DataLossOffsets reads back on restart.
	counterDataLoss = "numDataLossOffsets"
	// ParamDataLoss is the operation parameter of a commit that lists, as
	// a JSON array of [spec.DataLossGap], the gaps it moves past.
	ParamDataLoss = "tributaryDataLoss"
	// maxLossGaps bounds the gaps a status lists: the newest are kept.
	maxLossGaps = 100
)

// Reasons of a [spec.DataLossGap] besides the retention of
// [ingest.LossRetention].
const (
	// lossRecreated: the topic was deleted and created again. Records of
	// the old topic from offset From on, if any, are lost; the new topic is
	// read from offset To, its earliest.
	LossRecreated = "topic re-created"
)

// DataLoss keeps the gaps a table loop, or fanout run, skipped and has not
// committed yet, and shows every gap in the status of its tables. It is
// safe for concurrent use: fetchers report gaps, the loop commits them.
type DataLoss struct {
	log *slog.Logger
	// states are the statuses that list the gaps.
	states func() []*TableState

	mu sync.Mutex
	// pending are the gaps found since the loop started and not
	// committed yet.
	pending []spec.DataLossGap
}

// newDataLoss returns the gap keeper of a loop whose tables' statuses
// states returns.
func newDataLoss(log *slog.Logger, states func() []*TableState) *DataLoss {
	return &DataLoss{log: log, states: states}
}

// skip records gap, which a fetch skipped, unless a pending gap covers it:
// a micro-batch of a trigger that ends inside a gap is followed by one
// that starts there and finds the rest of it. A gap is listed once in the
// statuses, also when a loop that restarted before committing past it
// finds it again.
func (d *DataLoss) skip(gap spec.DataLossGap) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if slices.ContainsFunc(d.pending, func(g spec.DataLossGap) bool { return covers(&g, &gap) }) {
		return
	}
	d.log.Warn("data loss: offsets skipped (fail_on_data_loss = false)", "topic", gap.Topic, "partition", gap.Partition,
		"from", gap.From, "to", gap.To, "lost", LostOffsets(&gap), "reason", gap.Reason)
	d.pending = append(d.pending, gap)
	for _, st := range d.states() {
		st.mu.Lock()
		st.Status.DataLossOffsets += LostOffsets(&gap)
		if !slices.ContainsFunc(st.Status.DataLoss, func(g spec.DataLossGap) bool { return covers(&g, &gap) }) {
			st.Status.DataLoss = append(st.Status.DataLoss, gap)
			if n := len(st.Status.DataLoss); n > maxLossGaps {
				st.Status.DataLoss = slices.Delete(st.Status.DataLoss, 0, n-maxLossGaps)
			}
		}
		st.mu.Unlock()
	}
}

// LostOffsets returns the offsets g skipped: none for a re-created topic,
// whose new offsets may start below the old ones.
func LostOffsets(g *spec.DataLossGap) int64 {
	return max(g.To-g.From, 0)
}

// covers reports whether gap a holds all of gap b: the same partition,
// and b's range within a's.
func covers(a, b *spec.DataLossGap) bool {
	return a.Topic == b.Topic && a.Partition == b.Partition && a.From <= b.From && b.To <= a.To
}

// AddTo puts into c the pending gaps it moves past, which next (the
// offsets c records) shows: their list as an operation parameter, and the
// offsets they skipped as a counter; of a gap c moves into, the part
// before c's offset. What c records is no longer pending: if the commit
// fails, the loop starts again from the log and finds it again.
func (d *DataLoss) AddTo(c *table.Commit, next map[kafka.TopicPartition]int64) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var gaps []spec.DataLossGap
	var lost int64
	kept := d.pending[:0]
	for _, g := range d.pending {
		n, ok := next[kafka.TopicPartition{Topic: g.Topic, Partition: g.Partition}]
		switch {
		case ok && n >= g.To:
			gaps = append(gaps, g)
			lost += LostOffsets(&g)
		case ok && n > g.From:
			// c moves into the gap: a micro-batch, or a triggered run,
			// ends inside it. c records the part it moves past, and the
			// rest stays pending, so that a loop that starts again from
			// c, and finds only the rest, leaves no part unrecorded.
			part := g
			part.To = n
			gaps = append(gaps, part)
			lost += LostOffsets(&part)
			g.From = n
			kept = append(kept, g)
		default:
			kept = append(kept, g)
		}
	}
	clear(d.pending[len(kept):])
	d.pending = kept
	if len(gaps) == 0 {
		return
	}
	text, _ := json.Marshal(gaps) // strings and numbers only: cannot fail
	if c.Parameters == nil {
		c.Parameters = map[string]string{}
	}
	c.Parameters[ParamDataLoss] = string(text)
	if c.Counters == nil {
		c.Counters = map[string]int64{}
	}
	c.Counters[counterDataLoss] += lost
}

// LossOf returns the gap keeper of a loop with options ko whose tables'
// statuses states returns; nil when ko fails on data loss.
func LossOf(ko *spec.KafkaOptions, log *slog.Logger, states func() []*TableState) *DataLoss {
	if ko.FailsOnDataLoss() {
		return nil
	}
	return newDataLoss(log, states)
}

// OnGap returns the OnDataLoss of the subscriptions whose gaps d keeps:
// nil, which fails them on data loss, when d is nil.
func (d *DataLoss) OnGap() func(spec.DataLossGap) {
	if d == nil {
		return nil
	}
	return d.skip
}

// Rewind commits the offsets of to as the next to read of their
// partitions, where the offsets may go back (the log's txns of them are
// rewound), with the configuration conf and the gaps, which it records as
// skipped (logged, in the statuses, and in the commit; a fanout table has
// none: its fanout schema's progress log records them). The dirty records
// table rewinds first, so that the bad records read again are not taken
// for records written already. The partitions read on from to's offsets,
// without a leader epoch until they read a record.
func (s *Sink) Rewind(to map[kafka.TopicPartition]int64, gaps []spec.DataLossGap, conf map[string]string) error {
	c := RewindCommit(s.tbl.Snapshot().Txns, to, gaps, s.loss)
	c.Schema, c.Configuration = s.columns, conf
	if s.errs != nil {
		if err := s.errs.dirty.Rewind(s.errs.dest, to, s.errs.opts); err != nil {
			return err
		}
	}
	if err := s.commit(c); err != nil {
		return err
	}
	for tp, next := range to {
		if _, ok := s.committed[tp]; ok {
			s.committed[tp] = next
		}
		delete(s.epochs, tp)
	}
	return nil
}

// RewindCommit returns the commit that moves the offsets of to, from those
// txns holds, where they may go back, recording gaps as skipped by loss.
// Each gap is recorded whole: the commit moves its partition to where the
// gap's accounting ends, as far as addTo sees.
func RewindCommit(txns map[string]int64, to map[kafka.TopicPartition]int64, gaps []spec.DataLossGap, loss *DataLoss) table.Commit {
	c := table.Commit{Txns: map[string]int64{}, From: map[string]int64{}}
	for tp, next := range to {
		id := AppID(tp)
		c.Txns[id] = next
		if old, ok := txns[id]; ok {
			c.From[id] = old
			c.Rewinds = append(c.Rewinds, id)
		}
	}
	slices.Sort(c.Rewinds)
	past := map[kafka.TopicPartition]int64{}
	for _, g := range gaps {
		loss.skip(g)
		past[kafka.TopicPartition{Topic: g.Topic, Partition: g.Partition}] = g.To
	}
	loss.AddTo(&c, past)
	return c
}
