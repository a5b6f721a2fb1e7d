package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
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

// lossTruncated is the reason of a [spec.DataLossGap] of offsets [From,
// To) that a partition's log lost after the table read them: the table
// holds rows of records Kafka no longer has, and reads the records now at
// those offsets from From on.
const lossTruncated = "log truncated (unclean leader election)"

// checkTruncation validates the offsets of tps the loop starts from (its
// committed offsets) with the leader epochs the log records with them. A
// truncation below an offset stops the table with a data-loss
// [fatalError] naming the partition and the offsets lost; with
// fail_on_data_loss = false, the table goes on from where the log was
// truncated, as Spark does, recording the gap. A partition without a
// recorded epoch (a log written before epochs were recorded, or whose
// last commit read no record) is not validated.
func (l *loop) checkTruncation(ctx context.Context, tps []kafka.TopicPartition) error {
	snap := l.tbl.Snapshot()
	to := map[kafka.TopicPartition]int64{}
	var gaps []spec.DataLossGap
	for _, tp := range tps {
		epoch, ok := snap.Epochs[appID(tp)]
		if !ok || l.legacy[tp] {
			continue
		}
		l.epochs[tp] = epoch
		next := l.committed[tp]
		end, err := l.r.client.EpochEnd(ctx, tp, epoch)
		if err != nil {
			return lookupError{err}
		}
		if end < 0 || end >= next {
			continue
		}
		truncated := &kafka.TruncationError{TP: tp, Epoch: epoch, End: end, Offset: next}
		if l.loss == nil {
			return fatalError{fmt.Errorf("data loss: %w: the table holds rows of offsets [%d, %d) of %s that Kafka no longer has, "+
				"and has not read the records now at those offsets; set fail_on_data_loss = false to read them from offset %d on "+
				"(the table keeps the rows it has, and records the gap in its status), or ingest into a new destination table to start over",
				truncated, end, next, tp, end)}
		}
		l.r.log.Warn("log truncated under the table's offset; it reads on from the truncation (fail_on_data_loss = false)",
			"topic", tp.Topic, "partition", tp.Partition, "epoch", epoch, "from", end, "to", next)
		to[tp] = end
		gaps = append(gaps, spec.DataLossGap{Topic: tp.Topic, Partition: tp.Partition, From: end, To: next, Reason: lossTruncated,
			DetectedAt: time.Now().UTC().Format(time.RFC3339)})
	}
	if len(to) == 0 {
		return nil
	}
	if err := l.rewind(to, gaps, nil); err != nil {
		return fmt.Errorf("record the offsets of truncated partitions: %w", err)
	}
	return nil
}
