package kafka

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// OffsetForLeaderEpoch (KIP-320) is not in kafka-go; v4 (Kafka 2.8, the
// first flexible version) is encoded here. The agent asks it, as Kafka's
// own consumer does, to validate a position after a leader change: the
// partition's current leader answers where the leader epoch of the last
// record read ends in its log, and an end below the position means the
// log was truncated under it (an unclean leader election).
const (
	apiOffsetForLeaderEpoch     = 23
	offsetForLeaderEpochVersion = 4
)

// TruncationError reports that a partition's log no longer holds records
// at offsets up to Offset that were read: the leader's log ends the
// leader epoch Epoch of the last record read at End, below Offset. An
// unclean leader election (a replica that was not in sync became leader)
// truncated [End, Offset) and the offsets there may now hold other
// records. Kafka's consumer reports the same as a LogTruncationException.
type TruncationError struct {
	TP TopicPartition
	// Epoch is the leader epoch of the last record read before Offset.
	Epoch int32
	// End is where the leader's log ends that epoch; Offset the position
	// the reader had reached.
	End, Offset int64
}

// Error names the range and the leader epoch.
func (e *TruncationError) Error() string {
	return fmt.Sprintf("the log of %s was truncated at offset %d, below offset %d read so far: offsets [%d, %d) were read from leader "+
		"epoch %d, which the current leader's log ends at %d (an unclean leader election)", e.TP, e.End, e.Offset, e.End, e.Offset,
		e.Epoch, e.End)
}

// EpochEnd returns where the log of tp's current leader ends leader epoch
// epoch: the offset one past the epoch's last record (the start of the
// next epoch), or the high watermark when epoch is the current one. It
// returns -1 when the leader knows nothing of the epoch (older than its
// log start, or newer than it knows). A caller that read tp up to offset
// next with epoch as the last record's compares: an end below next is a
// truncation (see [TruncationError]).
func (c *Client) EpochEnd(ctx context.Context, tp TopicPartition, epoch int32) (int64, error) {
	rs := settingsOf(&spec.ClientSettings{})
	conn, addr, _, err := c.dialLeader(ctx, tp, &rs)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return c.leaderEpochEnd(ctx, conn, addr, clientID, tp, epoch)
}

// leaderEpochEnd asks the leader of tp, at addr over conn, where its log
// ends leader epoch epoch (see [Client.EpochEnd]), with client id id. A
// leader that does not answer OffsetForLeaderEpoch v4 (a broker older
// than the request, or a Kafka-compatible service without it) cannot
// validate an offset: the answer is -1, nothing known, as Kafka's consumer
// skips validation with a leader too old for it.
func (c *Client) leaderEpochEnd(ctx context.Context, conn net.Conn, addr, id string, tp TopicPartition, epoch int32) (int64, error) {
	ok, err := c.knowsEpochLookup(ctx, addr)
	if err != nil || !ok {
		return -1, err
	}
	return epochEnd(ctx, conn, id, tp, epoch)
}

// knowsEpochLookup reports whether the broker at addr answers
// OffsetForLeaderEpoch v4, asking it once and remembering the answer.
func (c *Client) knowsEpochLookup(ctx context.Context, addr string) (bool, error) {
	if ok, found := c.epochLookup.Load(addr); found {
		return ok.(bool), nil
	}
	ok, err := c.brokerKnows(ctx, addr, apiOffsetForLeaderEpoch, offsetForLeaderEpochVersion)
	if err != nil {
		return false, err
	}
	c.epochLookup.Store(addr, ok)
	return ok, nil
}

// epochEnd asks the leader of tp on conn, with client id id, where its log
// ends leader epoch epoch (see [Client.EpochEnd]).
func epochEnd(ctx context.Context, conn net.Conn, id string, tp TopicPartition, epoch int32) (int64, error) {
	const correlationID = 1
	body, err := exchange(ctx, conn, encodeOffsetForLeaderEpoch(correlationID, id, tp, epoch), correlationID, "offset for leader epoch",
		metadataTimeout)
	if err != nil {
		return 0, fmt.Errorf("look up where leader epoch %d of %s ends: %w", epoch, tp, err)
	}
	return parseOffsetForLeaderEpoch(body, tp, epoch)
}

// encodeOffsetForLeaderEpoch returns a whole OffsetForLeaderEpoch v4
// request frame, from client id id, asking where the leader's log of tp
// ends leader epoch epoch, as a consumer (replica id -1), without fencing
// on the current leader epoch (-1): the fetch session that follows finds
// a leader change by itself.
func encodeOffsetForLeaderEpoch(correlationID int32, id string, tp TopicPartition, epoch int32) []byte {
	b := appendRequestHeader(make([]byte, 0, 64), apiOffsetForLeaderEpoch, offsetForLeaderEpochVersion, correlationID, id)
	b = binary.BigEndian.AppendUint32(b, ^uint32(0)) // replica id -1: a consumer
	b = append(b, 2)                                 // one topic
	b = appendCompactString(b, tp.Topic)
	b = append(b, 2) // one partition
	b = binary.BigEndian.AppendUint32(b, uint32(tp.Partition))
	b = binary.BigEndian.AppendUint32(b, ^uint32(0)) // current leader epoch: -1, no fencing
	b = binary.BigEndian.AppendUint32(b, uint32(epoch))
	b = append(b, 0, 0, 0) // tagged fields of the partition, the topic, the request
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// parseOffsetForLeaderEpoch decodes an OffsetForLeaderEpoch v4 response
// body (after the correlation id) to the end offset of epoch in tp, -1
// when the leader does not know the epoch.
func parseOffsetForLeaderEpoch(body []byte, tp TopicPartition, epoch int32) (int64, error) {
	d := compactDecoder{wireDecoder{buf: body}}
	d.tags()  // response header tagged fields
	d.int32() // throttle time
	end, found := int64(-1), false
	var partErr error
	for range d.compactLen() {
		topic := d.compactString()
		for range d.compactLen() {
			code := d.int16()
			partition := d.int32()
			gotEpoch := d.int32()
			offset := d.int64()
			d.tags()
			if topic != tp.Topic || int(partition) != tp.Partition {
				continue
			}
			found = true
			switch {
			case code != 0:
				partErr = kafkago.Error(code)
			case gotEpoch >= 0 && offset >= 0:
				end = offset
			}
		}
		d.tags()
	}
	d.tags()
	switch {
	case d.err != nil:
		return 0, fmt.Errorf("decode the offset for leader epoch response of %s: %w", tp, d.err)
	case partErr != nil:
		return 0, fmt.Errorf("look up where leader epoch %d of %s ends: %w", epoch, tp, partErr)
	case !found:
		return 0, fmt.Errorf("look up where leader epoch %d of %s ends: the response does not hold the partition", epoch, tp)
	}
	return end, nil
}
