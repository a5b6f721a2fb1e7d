package kafka

import (
	"context"
	"testing"

	kafkago "github.com/segmentio/kafka-go"
)

// TestAzureScope is the scope the stand-in of Entra ID of UseFakeEntraID
// hands tokens out for.
const TestAzureScope = testAzureScope

// UseFakeEntraID makes AZURE_EVENT_HUBS_ENTRA_ID connections of the test
// get token from a stand-in of Microsoft Entra ID, through the agent's
// Azure credential chain, until the test ends.
func UseFakeEntraID(t *testing.T, token string) { useFakeEntraID(t, newFakeEntraID(t, token)) }

// SetSequence sets the sequence number p gives the next batch it writes to
// tp: tests use it to send a batch again as if its answer had been lost
// (an earlier number), or to skip numbers (a later one).
func (p *Producer) SetSequence(tp TopicPartition, seq int32) { p.seq[tp] = seq }

// ProducerID returns the producer id InitProducerId gave p, -1 for none.
func (p *Producer) ProducerID() int64 { return p.id }

// DataLoss is the fetcher's classification of a fetch at offset answered
// out of range: a data loss, or the error to go on with.
func (f *Fetcher) DataLoss(ctx context.Context, offset int64) (*DataLossError, error) {
	return f.dataLoss(ctx, offset, kafkago.OffsetOutOfRange)
}
