package pipeline

import (
	"context"
	"fmt"
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
// A fanout schema validates the same way (the fanout package's
// truncation.go).

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
