package position

import (
	"context"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
)

// LossTruncated is the reason of a [spec.DataLossGap] of offsets [From,
// To) that a partition's log lost after the table read them: the table
// holds rows of records Kafka no longer has, and reads the records now at
// those offsets from From on.
const LossTruncated = "log truncated (unclean leader election)"

// TruncationFailure is the data-loss error that stops a table, or a fanout
// schema (what), that holds rows of offsets a truncated log no longer has.
func TruncationFailure(truncated *kafka.TruncationError, what string) error {
	tp, end, next := truncated.TP, truncated.End, truncated.Offset
	return runner.Fatal(fmt.Errorf("data loss: %w: the %s holds rows of offsets [%d, %d) of %s that Kafka no longer has, "+
		"and has not read the records now at those offsets; set fail_on_data_loss = false to read them from offset %d on "+
		"(the %s keeps the rows it has, and records the gap in its status), or ingest into a new destination to start over",
		truncated, what, end, next, tp, end, what))
}

// EpochEnds looks up where partitions' logs end leader epochs, asking the
// leader once per partition and epoch.
type EpochEnds struct {
	client *kafka.Client
	known  map[epochOf]int64
}

// NewEpochEnds returns the look-ups of client, with nothing known yet.
func NewEpochEnds(client *kafka.Client) *EpochEnds {
	return &EpochEnds{client: client, known: map[epochOf]int64{}}
}

// epochOf is a leader epoch of a partition.
type epochOf struct {
	tp    kafka.TopicPartition
	epoch int32
}

// Truncated returns the truncation of tp's log below offset next, read
// with the leader epoch epoch as its last record's; nil when the log still
// holds everything before next, or its leader knows nothing of the epoch.
func (e *EpochEnds) Truncated(ctx context.Context, tp kafka.TopicPartition, epoch int32, next int64) (*kafka.TruncationError, error) {
	key := epochOf{tp, epoch}
	end, ok := e.known[key]
	if !ok {
		var err error
		if end, err = e.client.EpochEnd(ctx, tp, epoch); err != nil {
			return nil, runner.Lookup(err)
		}
		e.known[key] = end
	}
	if end < 0 || end >= next {
		return nil, nil
	}
	return &kafka.TruncationError{TP: tp, Epoch: epoch, End: end, Offset: next}, nil
}
