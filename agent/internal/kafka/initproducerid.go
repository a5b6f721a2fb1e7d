package kafka

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"

	kafkago "github.com/segmentio/kafka-go"
)

// This file gets a producer id for an idempotent producer that has no
// transactional id: InitProducerId v4 with a null transactional id, sent
// to any broker, as Kafka's own producer sends it. kafka-go sends every
// InitProducerId to a transaction coordinator it looks up first
// (FindCoordinator with the transactional id as key), which needs the
// transaction state topic (not created on a cluster with fewer brokers
// than its replication factor) and, on a cluster with ACLs, a grant on
// the transactional id "". A plain idempotent producer needs neither.

const (
	apiInitProducerID     = 22
	initProducerIDVersion = 4
)

// idempotentProducerID asks one of the bootstrap brokers for a new
// producer id and its epoch, for an idempotent producer without a
// transactional id. An error Kafka answered is a kafkago.Error.
func (c *Client) idempotentProducerID(ctx context.Context) (id int64, epoch int16, err error) {
	err = c.anyBroker(ctx, &defaultSettings, "get a producer id", func(conn net.Conn) error {
		id, epoch, err = initProducerID(ctx, conn, defaultSettings.clientID)
		return err
	})
	return id, epoch, err
}

// initProducerID sends InitProducerId with a null transactional id over
// conn, with client id clientID, and decodes the answer.
func initProducerID(ctx context.Context, conn net.Conn, clientID string) (int64, int16, error) {
	const correlationID = 1
	body, err := exchange(ctx, conn, encodeInitProducerID(correlationID, clientID), correlationID, "init producer id",
		metadataTimeout)
	if err != nil {
		return 0, 0, err
	}
	return parseInitProducerID(body)
}

// encodeInitProducerID returns a whole InitProducerId v4 request frame,
// from client id clientID, for a producer without a transactional id
// (null) that has no producer id yet (-1, -1). The transaction timeout is
// not used without a transactional id; Kafka's producer sends its
// default, and so do we.
func encodeInitProducerID(correlationID int32, clientID string) []byte {
	b := appendRequestHeader(make([]byte, 0, 48), apiInitProducerID, initProducerIDVersion, correlationID, clientID)
	b = append(b, 0)                                                                       // transactional id: null (compact)
	b = binary.BigEndian.AppendUint32(b, uint32(DefaultTransactionTimeout.Milliseconds())) // transaction timeout
	b = binary.BigEndian.AppendUint64(b, ^uint64(0))                                       // producer id -1
	b = binary.BigEndian.AppendUint16(b, ^uint16(0))                                       // producer epoch -1
	b = append(b, 0)                                                                       // tagged fields
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// parseInitProducerID decodes an InitProducerId v4 response body (after
// the correlation id) to the producer id and epoch, or the error Kafka
// answered.
func parseInitProducerID(body []byte) (int64, int16, error) {
	d := compactDecoder{wireDecoder{buf: body}}
	d.tags()  // response header tagged fields
	d.int32() // throttle time
	code := d.int16()
	id := d.int64()
	epoch := d.int16()
	d.tags()
	switch {
	case d.err != nil:
		return 0, 0, fmt.Errorf("decode the init producer id response: %w", d.err)
	case code != 0:
		return 0, 0, kafkago.Error(code)
	}
	return id, epoch, nil
}
