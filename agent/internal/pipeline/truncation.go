package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/position"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file validates a table's positions with the leader epochs its log
// records, as Kafka's consumer validates its position (KIP-320): after an
// unclean leader election, a replica that was not in sync becomes leader,
// the other replicas truncate their logs to its, and the offsets past its
// end are written again with other records. A table that read the lost
// records would otherwise never read the ones that replaced them.
//
// Each commit records, with each partition's next offset, the leader epoch
// of the last record read before it. When a table starts, it asks each
// partition's leader where its log ends that epoch: an end below the
// recorded offset is a truncation. The fetchers validate the same way on
// every new connection to a partition's leader (a leader change, a
// reconnection), from the last record they fetched; a truncation they find
// restarts the table, which then validates from its log, so that records
// fetched but not committed are not counted as lost.
//
// A fanout schema validates the same way when it starts, each offset of
// its progress log and of its tables' logs with the epoch recorded beside
// it: its tables may have committed records past its progress.

// checkTruncation validates the offsets of tps the loop starts from (its
// committed offsets) with the leader epochs the log records with them. A
// truncation below an offset stops the table with a data-loss
// [runner.FatalError] naming the partition and the offsets lost; with
// fail_on_data_loss = false, the table goes on from where the log was
// truncated, as Spark does, recording the gap. A partition without a
// recorded epoch (a log written before epochs were recorded, or whose
// last commit read no record) is not validated.
func (l *loop) checkTruncation(ctx context.Context, tps []kafka.TopicPartition) error {
	snap := l.sink.Table().Snapshot()
	ends := position.NewEpochEnds(l.r.client)
	to := map[kafka.TopicPartition]int64{}
	var gaps []spec.DataLossGap
	for _, tp := range tps {
		epoch, ok := snap.Epochs[deltasink.AppID(tp)]
		if !ok {
			continue
		}
		next, _ := l.sink.CommittedOffset(tp)
		truncated, err := ends.Truncated(ctx, tp, epoch, next)
		if err != nil {
			return err
		}
		if truncated == nil {
			continue
		}
		end := truncated.End
		if l.loss == nil {
			return position.TruncationFailure(truncated, "table")
		}
		l.r.log.Warn("log truncated under the table's offset; it reads on from the truncation (fail_on_data_loss = false)",
			"topic", tp.Topic, "partition", tp.Partition, "epoch", epoch, "from", end, "to", next)
		to[tp] = end
		gaps = append(gaps, spec.DataLossGap{Topic: tp.Topic, Partition: tp.Partition, From: end, To: next, Reason: position.LossTruncated,
			DetectedAt: time.Now().UTC().Format(time.RFC3339)})
	}
	if len(to) == 0 {
		return nil
	}
	if err := l.sink.Rewind(to, gaps, nil); err != nil {
		return fmt.Errorf("record the offsets of truncated partitions: %w", err)
	}
	return nil
}

// checkTruncation validates the offsets of tps the fanout schema starts
// from with the leader epochs recorded beside them: its progress log's,
// and those of the tables open, which may be past the progress. A
// truncation below any of them stops the fanout schema with a data-loss
// error; with fail_on_data_loss = false, the tables that hold offsets past
// the truncation and the progress log go back to it, the progress log
// recording the gap, and the partition is read on from there.
func (run *fanoutRun) checkTruncation(ctx context.Context, tps []kafka.TopicPartition) error {
	ends := position.NewEpochEnds(run.r.client)
	found := map[kafka.TopicPartition]*kafka.TruncationError{}
	check := func(tp kafka.TopicPartition, epochs map[string]int32, next int64) error {
		epoch, ok := epochs[deltasink.AppID(tp)]
		if !ok {
			return nil
		}
		t, err := ends.Truncated(ctx, tp, epoch, next)
		if t == nil || err != nil {
			return err
		}
		// Several offsets of a partition may find the truncation: the range
		// lost runs from the lowest end to the highest offset read.
		if was := found[tp]; was != nil {
			if was.End < t.End {
				t.End, t.Epoch = was.End, was.Epoch
			}
			t.Offset = max(t.Offset, was.Offset)
		}
		found[tp] = t
		return nil
	}
	progress := run.progress.tbl.Snapshot().Epochs
	for _, tp := range tps {
		if next, ok := run.progress.next[tp]; ok {
			if err := check(tp, progress, next); err != nil {
				return err
			}
		}
		for _, t := range run.order {
			if next, ok := t.CommittedOffset(tp); ok {
				if err := check(tp, t.Table().Snapshot().Epochs, next); err != nil {
					return err
				}
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	truncated := slices.SortedFunc(maps.Values(found), func(a, b *kafka.TruncationError) int {
		return cmp.Or(strings.Compare(a.TP.Topic, b.TP.Topic), cmp.Compare(a.TP.Partition, b.TP.Partition))
	})
	if run.progress.loss == nil {
		return position.TruncationFailure(truncated[0], "fanout schema")
	}
	// The tables, whose epochs show the truncation, go back last: a crash
	// before they do finds it again. The dirty records and the progress log
	// go back first, the progress log only where it is past the
	// truncation: a table ahead of it may be what found it.
	to := map[kafka.TopicPartition]int64{}
	progressTo := map[kafka.TopicPartition]int64{}
	for _, t := range truncated {
		to[t.TP] = t.End
		if next, ok := run.progress.next[t.TP]; ok && next > t.End {
			progressTo[t.TP] = t.End
		}
	}
	if err := run.leaveOutRewind(to); err != nil {
		return err
	}
	var gaps []spec.DataLossGap
	now := time.Now().UTC().Format(time.RFC3339)
	for _, t := range truncated {
		run.r.log.Warn("log truncated under the fanout schema's offset; it reads on from the truncation (fail_on_data_loss = false)",
			"topic", t.TP.Topic, "partition", t.TP.Partition, "epoch", t.Epoch, "from", t.End, "to", t.Offset)
		gaps = append(gaps, spec.DataLossGap{Topic: t.TP.Topic, Partition: t.TP.Partition, From: t.End, To: t.Offset,
			Reason: position.LossTruncated, DetectedAt: now})
	}
	if err := run.progress.rewind(progressTo, gaps); err != nil {
		return fmt.Errorf("record the offsets of truncated partitions: %w", err)
	}
	for _, t := range run.order {
		back := map[kafka.TopicPartition]int64{}
		for tp, end := range to {
			if next, ok := t.CommittedOffset(tp); ok && next > end {
				back[tp] = end
			}
		}
		if len(back) > 0 {
			if err := t.Rewind(back, nil, nil); err != nil {
				return fmt.Errorf("table %s: record the offsets of truncated partitions: %w", t.name, err)
			}
		}
	}
	return nil
}
