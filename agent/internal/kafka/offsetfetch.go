package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// OffsetFetch v7 (Kafka 2.5, KIP-447) with require_stable is not in
// kafka-go, which sends up to v5; it is encoded here.
const (
	apiOffsetFetch            = 9
	stableOffsetFetchVersion  = 7
	stableOffsetFetchMaxRetry = 30 * time.Second
)

// StableGroupOffsets is [Client.GroupOffsets] for a group that
// transactions commit offsets to: it asks with require_stable, so that
// the coordinator answers UNSTABLE_OFFSET_COMMIT, retried here with a
// backoff for up to 30 seconds, while a transaction that commits offsets
// of one of tps is not finished, instead of offsets that transaction is
// about to replace. A coordinator before Kafka 2.5 does not know it: it is
// asked as GroupOffsets does.
func (c *Client) StableGroupOffsets(ctx context.Context, group string, tps []TopicPartition) (map[TopicPartition]int64, error) {
	deadline := time.Now().Add(stableOffsetFetchMaxRetry)
	wait := retryFirst
	for {
		out, err := c.stableGroupOffsets(ctx, group, tps)
		if errors.Is(err, errOldCoordinator) {
			return c.GroupOffsets(ctx, group, tps)
		}
		if err == nil || !retriable(err) && !errors.Is(err, kafkago.UnstableOffsetCommit) || time.Now().Add(wait).After(deadline) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("read the committed offsets of group %q: %w (last error: %w)", group, ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, retryMax)
	}
}

// errOldCoordinator says a group's coordinator does not know OffsetFetch
// v7.
var errOldCoordinator = errors.New("the coordinator does not know OffsetFetch v7")

// stableGroupOffsets sends one OffsetFetch v7 with require_stable.
func (c *Client) stableGroupOffsets(ctx context.Context, group string, tps []TopicPartition) (map[TopicPartition]int64, error) {
	addr, ok, err := c.coordinatorWith(ctx, group, apiOffsetFetch, stableOffsetFetchVersion)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errOldCoordinator
	}
	conn, err := c.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, c.fail(addr, err, "connect to %s, the coordinator of group %q", addr, group)
	}
	defer conn.Close()
	const correlationID = 1
	body, err := exchange(ctx, conn, encodeOffsetFetch(correlationID, group, tps), correlationID, "offset fetch", metadataTimeout)
	if err != nil {
		return nil, c.fail(addr, err, "read the committed offsets of group %q at %s", group, addr)
	}
	return parseOffsetFetch(body, group)
}

// encodeOffsetFetch returns a whole OffsetFetch v7 request frame asking
// for the offsets group committed for tps, with require_stable.
func encodeOffsetFetch(correlationID int32, group string, tps []TopicPartition) []byte {
	byTopic := map[string][]int{}
	for _, tp := range tps {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	topics := make([]string, 0, len(byTopic))
	for t := range byTopic {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	b := appendRequestHeader(make([]byte, 0, 64), apiOffsetFetch, stableOffsetFetchVersion, correlationID, clientID)
	b = appendCompactString(b, group)
	b = binary.AppendUvarint(b, uint64(len(topics)+1))
	for _, t := range topics {
		b = appendCompactString(b, t)
		b = binary.AppendUvarint(b, uint64(len(byTopic[t])+1))
		for _, p := range byTopic[t] {
			b = binary.BigEndian.AppendUint32(b, uint32(p))
		}
		b = append(b, 0) // topic tagged fields
	}
	b = append(b, 1, 0) // require_stable: true; tagged fields
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// appendCompactString appends s as a compact string.
func appendCompactString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)+1))
	return append(b, s...)
}

// parseOffsetFetch decodes an OffsetFetch v7 response body (after the
// correlation id): the next offsets group committed, a partition without
// one left out. A group that does not exist has committed nothing.
func parseOffsetFetch(body []byte, group string) (map[TopicPartition]int64, error) {
	d := compactDecoder{wireDecoder{buf: body}}
	d.tags()  // response header tagged fields
	d.int32() // throttle time
	out := map[TopicPartition]int64{}
	var partErr error
	for range d.compactLen() {
		topic := d.compactString()
		for range d.compactLen() {
			partition := d.int32()
			offset := d.int64()
			d.int32()         // leader epoch
			d.compactString() // metadata
			code := d.int16()
			d.tags()
			switch {
			case code != 0:
				if partErr == nil {
					partErr = fmt.Errorf("read the committed offset of group %q for %s/%d: %w", group, topic, partition, kafkago.Error(code))
				}
			case offset >= 0: // -1: nothing committed
				out[TopicPartition{Topic: topic, Partition: int(partition)}] = offset
			}
		}
		d.tags()
	}
	code := d.int16()
	d.tags()
	switch {
	case d.err != nil:
		return nil, fmt.Errorf("decode the offset fetch response of group %q: %w", group, d.err)
	case errors.Is(kafkago.Error(code), kafkago.GroupIdNotFound):
		return map[TopicPartition]int64{}, nil
	case code != 0:
		return nil, fmt.Errorf("read the committed offsets of group %q: %w", group, kafkago.Error(code))
	case partErr != nil:
		return nil, partErr
	}
	return out, nil
}
