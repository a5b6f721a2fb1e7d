package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
)

// Fetch sizes: a fetch asks for up to fetchMaxBytes and waits at most
// fetchMaxWait for at least one byte.
const (
	fetchMaxBytes = 1 << 20
	fetchMaxWait  = 250 * time.Millisecond
)

// Batch is what one fetch returned for one partition.
type Batch struct {
	TP      TopicPartition
	Records []decode.Record
	// Next is the offset to read after this batch: one past the last record,
	// or past records the broker skipped (compaction, transaction markers).
	Next int64
	// HighWatermark is the partition's high watermark at fetch time.
	HighWatermark int64
}

// DataLossError reports that a partition no longer holds the offset the
// table's log says to read next: retention deleted it, or the topic was
// deleted and re-created. Ingestion of the table stops rather than skip
// records silently.
type DataLossError struct {
	TP     TopicPartition
	Offset int64
	Err    error
}

// Error says which offset is gone and what to do.
func (e *DataLossError) Error() string {
	return fmt.Sprintf("offset %d of %s is no longer in Kafka (deleted by retention, or the topic was re-created): "+
		"records may have been lost; to start over, ingest into a new destination table: %v", e.Offset, e.TP, e.Err)
}

// Unwrap returns the broker's error.
func (e *DataLossError) Unwrap() error { return e.Err }

// Fetcher reads one partition from a starting offset and sends batches to
// its channel until its context ends or an error it cannot retry happens.
type Fetcher struct {
	Client        *Client
	TP            TopicPartition
	TimestampType int8
	// OnRetry, if set, is told about errors Run recovers from by reconnecting.
	OnRetry func(error)
}

// Run reads from offset and sends every batch, including empty ones that
// report a new high watermark, to out. It returns ctx.Err() when ctx ends,
// or a [*DataLossError]; connection and leadership errors are retried with
// backoff.
func (f *Fetcher) Run(ctx context.Context, offset int64, out chan<- Batch) error {
	backoff := 100 * time.Millisecond
	for {
		next, err := f.session(ctx, offset, out)
		if next > offset {
			backoff = 100 * time.Millisecond // the session made progress
		}
		offset = next
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, kafkago.OffsetOutOfRange) {
			return &DataLossError{TP: f.TP, Offset: offset, Err: err}
		}
		if f.OnRetry != nil {
			f.OnRetry(fmt.Errorf("fetch %s at offset %d: %w", f.TP, offset, err))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

// session fetches over one connection until an error; it returns the offset
// to continue from.
func (f *Fetcher) session(ctx context.Context, offset int64, out chan<- Batch) (int64, error) {
	conn, err := f.Client.dialLeader(ctx, f.TP)
	if err != nil {
		return offset, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := conn.Seek(offset, kafkago.SeekAbsolute|kafkago.SeekDontCheck); err != nil {
		return offset, err
	}
	// sizeHint is the previous batch's record count: batches are similar in
	// size, and growing the slice record by record costs a copy per growth.
	sizeHint := 64
	for {
		if err := conn.SetReadDeadline(time.Now().Add(fetchMaxWait + 30*time.Second)); err != nil {
			return offset, err
		}
		kb := conn.ReadBatchWith(kafkago.ReadBatchConfig{MinBytes: 1, MaxBytes: fetchMaxBytes, MaxWait: fetchMaxWait})
		b := Batch{TP: f.TP, HighWatermark: kb.HighWaterMark(), Records: make([]decode.Record, 0, sizeHint)}
		var readErr error
		for {
			m, err := kb.ReadMessage()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr = err
				}
				break
			}
			b.Records = append(b.Records, decode.Record{
				Topic: f.TP.Topic, Partition: int32(f.TP.Partition), Offset: m.Offset,
				Timestamp: m.Time, TimestampType: f.TimestampType,
				Key: m.Key, Value: m.Value, Headers: headers(m.Headers),
			})
		}
		closeErr := kb.Close()
		if errors.Is(readErr, kafkago.RequestTimedOut) {
			// Some brokers (kfake among them) answer a fetch that waited
			// out MaxWait with no records this way: an empty fetch.
			readErr, closeErr = nil, nil
		}
		sizeHint = max(len(b.Records), 64)
		if n := len(b.Records); n > 0 {
			offset = b.Records[n-1].Offset + 1
		}
		if o, _ := conn.Offset(); o > offset {
			offset = o
		}
		b.Next = offset
		if len(b.Records) > 0 || readErr == nil {
			select {
			case out <- b:
			case <-ctx.Done():
				return offset, ctx.Err()
			}
		}
		if readErr != nil {
			return offset, readErr
		}
		if closeErr != nil {
			return offset, closeErr
		}
	}
}

func headers(hs []kafkago.Header) []decode.Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]decode.Header, len(hs))
	for i, h := range hs {
		out[i] = decode.Header{Key: h.Key, Value: h.Value}
	}
	return out
}
