package fanout

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

// A fanout schema validates its positions with the leader epochs its logs
// record as a table loop does (see the pipeline package's truncation.go),
// when it starts: each offset of its progress log and of its tables' logs
// with the epoch recorded beside it, since its tables may have committed
// records past its progress.

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
