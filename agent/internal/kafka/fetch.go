package kafka

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"time"
	"unsafe"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Fetch sizes: by default a fetch waits at most fetchMaxWait for at least
// one byte and asks for twice what the previous one returned, between
// fetchMinBytes and fetchMaxBytes, and no more than would hold about
// fetchMaxBytes of memory (see [requestSettings.nextFetch]): a partition
// that is behind holds about 1 MiB a fetch, and an idle one holds little of
// the memory budget while it waits. client_properties change them (see
// settingsOf).
const (
	fetchMinBytes = 64 << 10
	fetchMaxBytes = 1 << 20
	fetchMaxWait  = 250 * time.Millisecond
)

// recordSize is the memory a decoded record takes besides the bytes of the
// response it points into.
const recordSize = int64(unsafe.Sizeof(record.Record{}))

// Batch is what one fetch returned for one partition. Its records live in
// memory the fetchers of the agent share and reuse: the receiver calls
// [Batch.Release] once it has written them (or dropped them).
type Batch struct {
	TP TopicPartition
	// Records are the fetched data records in offset order: never control
	// records (transaction markers), and under read_committed never records
	// of aborted transactions. The slice, and the keys, values and header
	// values, which point into the fetch response or into the buffers
	// compressed record batches were decompressed into, are valid until
	// [Batch.Release].
	Records []record.Record
	// Next is the offset to read after this batch: one past the last record
	// batch returned, which also moves past records the broker skipped
	// (compaction, transaction markers, aborted transactions).
	Next int64
	// End is the offset up to which the partition could be read at fetch
	// time: the last stable offset under read_committed, else the high
	// watermark. End minus the next offset to read is the lag.
	End int64
	// LeaderEpoch is the partition leader epoch of the last record batch
	// the fetch returned, data or control, which ends at Next: the epoch
	// to validate Next with after a leader change (see [Client.EpochEnd]);
	// -1 when the fetch returned no batch.
	LeaderEpoch int32
	// Bytes is the memory the batch holds until [Batch.Release]: the
	// buffers the records point into (the fetch response, unless every
	// record is in a compressed record batch, and the buffers those were
	// decompressed into), the records and their headers. With a
	// [Fetcher.Budget], the receiver releases Bytes from it once it has
	// written the batch.
	Bytes int64
	// mem is the pooled memory that Bytes counts; nil in a zero Batch
	// and once released.
	mem *held
}

// Release gives the memory of b's records back to the pools the fetchers
// of the agent take memory from, for later fetches to reuse. Call it once
// the records are no longer used: once everything made from them that
// still points into their keys, values or header values (decoded rows,
// say) has been written or dropped. From then on Records and the bytes of
// its records may change under any reader; Release sets b.Records to nil.
// It does not give Bytes back to a [Fetcher.Budget]: the receiver still
// does that.
//
// Release is safe on a zero Batch, and idempotent: calling it again, also
// on a copy of b made before the first call (but not concurrently with
// it), gives nothing back twice.
func (b *Batch) Release() {
	if b.mem != nil {
		b.mem.release()
		b.mem = nil
	}
	b.Records = nil
}

// Budget is memory a fetcher shares with the rest of the agent (the
// agent's is a memory.Budget).
type Budget interface {
	// Acquire takes n bytes, waiting while they do not fit, or returns
	// ctx's error when ctx ends first.
	Acquire(ctx context.Context, n int64) error
	// Grow takes n bytes at once, past the limit if need be.
	Grow(n int64)
	// Release gives back n bytes.
	Release(n int64)
}

// DataLossError reports that a partition no longer holds the offset the
// table's log says to read next: retention deleted it (the offset is before
// the partition's earliest), or the partition lost records the table had
// read (it ends before the offset: an unclean leader election, a topic
// re-created). Under fail_on_data_loss = true (the default) ingestion of
// the table stops rather than skip records silently.
type DataLossError struct {
	TP     TopicPartition
	Offset int64
	// Earliest and Latest are the partition's first offset and its high
	// watermark when the loss was found.
	Earliest, Latest int64
	Err              error
}

// Gap returns the offsets lost, [from, to), and true when records the table
// had not read are gone: from is the offset the table was to read, to the
// earliest the partition still holds, where reading can go on. It returns
// false when the partition ends before the offset instead, which no skip
// can mend.
func (e *DataLossError) Gap() (from, to int64, ok bool) {
	return e.Offset, e.Earliest, e.Offset < e.Earliest
}

// Error says which offsets are gone and what to do.
func (e *DataLossError) Error() string {
	if from, to, ok := e.Gap(); ok {
		return fmt.Sprintf("offsets [%d, %d) of %s (%d records) are no longer in Kafka: retention deleted them before the "+
			"table read them; set fail_on_data_loss = false to skip them and go on from offset %d, recording the gap in the "+
			"table's status, or ingest into a new destination table to start over: %v", from, to, e.TP, to-from, to, e.Err)
	}
	return fmt.Sprintf("%s ends at offset %d, before offset %d the table's log says to read next: Kafka lost records the "+
		"table had read (an unclean leader election, or the topic was re-created); going on would skip or repeat records, "+
		"whatever fail_on_data_loss says: ingest into a new destination table to start over: %v", e.TP, e.Latest, e.Offset, e.Err)
}

// Unwrap returns the broker's error.
func (e *DataLossError) Unwrap() error { return e.Err }

// TopicRecreatedError reports that a topic was deleted and created again
// under the same name: the offsets a table recorded belong to the old topic,
// so reading on from them would skip the new topic's first records or mix
// two topics. Ingestion of the table stops.
type TopicRecreatedError struct {
	Topic    string
	Was, Now string // topic ids
}

// Error says what happened and what to do.
func (e *TopicRecreatedError) Error() string {
	return fmt.Sprintf("topic %q was deleted and created again (topic id %s, now %s): the offsets the table recorded "+
		"belong to the old topic, and records may have been lost; to read the new topic from its earliest offset, set "+
		"fail_on_data_loss = false on the pipeline table (the gap is recorded), or ingest it into a new destination table "+
		"(a fanout schema: new destination tables)", e.Topic, e.Was, e.Now)
}

// Fetcher reads one partition from a starting offset and sends batches to
// its channel until its context ends or an error it cannot retry happens.
type Fetcher struct {
	Client *Client
	TP     TopicPartition
	// ReadCommitted reads only records of committed transactions (and of
	// non-transactional producers), up to the last stable offset, as the
	// Kafka consumer's isolation.level=read_committed; false reads every
	// data record up to the high watermark.
	ReadCommitted bool
	// TopicID, if set, is the id the topic must have: a topic of the same
	// name with another id was created after the one the table read, and
	// Run returns a [*TopicRecreatedError].
	TopicID string
	// Settings are the client properties the fetches honour (fetch sizes
	// and wait, client id, metadata age, request and connect timeouts);
	// zero fields keep the agent's defaults.
	Settings spec.ClientSettings
	// Until, if positive, is where Run stops: once it has sent a batch whose
	// Next is at or past it, Run returns nil (a triggered run's end).
	Until int64
	// OnRetry, if set, is told about errors Run recovers from by reconnecting.
	OnRetry func(error)
	// Budget, if set, bounds what the fetcher holds: before each fetch it
	// acquires what the batch is expected to hold (see
	// [requestSettings.nextFetch]), waiting while the budget is full; once
	// the response is decoded it keeps what the batch really holds
	// ([Batch.Bytes]), growing past the limit when that is more: a record
	// batch larger than the fetch asked for, which Kafka returns whole, or
	// records that hold more than the last ones did. The receiver of a
	// batch releases its Bytes once it has written the batch, when it also
	// calls [Batch.Release]; Run does both for a batch it could not
	// deliver.
	Budget Budget
}

// Run reads from offset and sends every batch, including empty ones that
// report a new end offset, to out. The receiver calls [Batch.Release] on
// each batch once it has written it, and releases its Bytes from the
// Budget; Run does both for a batch it fails to deliver. It returns nil
// once it reached Until, ctx.Err() when ctx ends, a [*DataLossError], a [*TopicRecreatedError], a
// [*TruncationError] (a new leader's log no longer holds records Run sent)
// or an error wrapping [ErrUnsupportedRecords]; connection, leadership and
// other broker errors are retried with backoff and reported to OnRetry.
func (f *Fetcher) Run(ctx context.Context, offset int64, out chan<- Batch) error {
	backoff := 100 * time.Millisecond
	rs := settingsOf(&f.Settings)
	// epoch is the leader epoch of the last record sent, -1 before the
	// first: each session validates the offset it starts from with it.
	epoch := int32(-1)
	for {
		next, err := f.session(ctx, offset, &epoch, out, &rs)
		if next > offset {
			backoff = 100 * time.Millisecond // the session made progress
		}
		offset = next
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil { // reached Until
			return nil
		}
		if errors.Is(err, errSessionAged) {
			continue
		}
		if errors.Is(err, kafkago.OffsetOutOfRange) {
			var lost *DataLossError
			if lost, err = f.dataLoss(ctx, offset, err); lost != nil {
				return lost
			}
		}
		var recreated *TopicRecreatedError
		var truncated *TruncationError
		if errors.As(err, &recreated) || errors.As(err, &truncated) || errors.Is(err, ErrUnsupportedRecords) {
			return err
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

// errSessionAged ends a fetch session older than metadata.max.age.ms: the
// next one looks the leader and the topic id up again.
var errSessionAged = errors.New("the fetch session reached metadata.max.age.ms")

// dataLoss looks up the bounds of the partition after a fetch at offset
// was out of range (err): a [*DataLossError] when the offset is outside
// them, else the error to retry after: a [*TopicRecreatedError] when the
// topic's id is no longer TopicID, the look-up's, or err when the offset
// is in range again (a leader that changed meanwhile).
func (f *Fetcher) dataLoss(ctx context.Context, offset int64, err error) (*DataLossError, error) {
	// A topic deleted and created again while a session was open answers
	// its fetches out of range (the new topic ends before the offset), which
	// would read as records Kafka lost: its id says what happened.
	if f.TopicID != "" {
		ids, lerr := f.Client.TopicIDs(ctx, []string{f.TP.Topic})
		if lerr != nil {
			return nil, fmt.Errorf("offset %d is out of range; look up the topic's id: %w", offset, lerr)
		}
		if now := ids[f.TP.Topic]; now != "" && now != f.TopicID {
			return nil, &TopicRecreatedError{Topic: f.TP.Topic, Was: f.TopicID, Now: now}
		}
	}
	tps := []TopicPartition{f.TP}
	earliest, lerr := f.Client.Offsets(ctx, tps, Earliest)
	if lerr != nil {
		return nil, fmt.Errorf("offset %d is out of range; look up the earliest: %w", offset, lerr)
	}
	latest, lerr := f.Client.Offsets(ctx, tps, Latest)
	if lerr != nil {
		return nil, fmt.Errorf("offset %d is out of range; look up the latest: %w", offset, lerr)
	}
	if e, l := earliest[f.TP], latest[f.TP]; offset < e || offset > l {
		return &DataLossError{TP: f.TP, Offset: offset, Earliest: e, Latest: l, Err: err}, nil
	}
	return nil, err
}

// session fetches over one connection to the partition's leader, with the
// request settings rs, until an error or, with a metadata.max.age.ms,
// until that long has passed ([errSessionAged]); it returns the offset to
// continue from. epoch is the leader epoch of the last record sent (-1
// none yet), which the session keeps up to date: a session that starts
// after one that sent records validates offset with it first, as Kafka's
// consumer does after a leader change, and returns a [*TruncationError]
// when the leader's log no longer holds what was read.
func (f *Fetcher) session(ctx context.Context, offset int64, epoch *int32, out chan<- Batch, rs *requestSettings) (int64, error) {
	conn, addr, topicID, err := f.Client.dialLeader(ctx, f.TP, rs)
	if err != nil {
		return offset, err
	}
	if f.TopicID != "" && topicID != f.TopicID {
		_ = conn.Close() // the fetch ends here: the re-created topic is what matters
		return offset, &TopicRecreatedError{Topic: f.TP.Topic, Was: f.TopicID, Now: topicID}
	}
	defer conn.Close()
	if *epoch >= 0 {
		end, err := f.Client.leaderEpochEnd(ctx, conn, addr, rs.clientID, f.TP, *epoch)
		if err != nil {
			return offset, err
		}
		if end >= 0 && end < offset {
			return offset, &TruncationError{TP: f.TP, Epoch: *epoch, End: end, Offset: offset}
		}
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	// Each response is read into a buffer of its own from the pool (see
	// readFetch), which bufio fills directly: its buffer only saves calls
	// for the header.
	r := bufio.NewReaderSize(conn, 8<<10)
	// sizeHint is the previous batch's record count: batches are similar in
	// size, and growing the slice record by record costs a copy per growth.
	sizeHint := 64
	maxBytes, reserved := rs.startBytes, 2*int64(rs.startBytes)
	var aged <-chan time.Time
	if rs.metadataMaxAge > 0 {
		t := time.NewTimer(rs.metadataMaxAge)
		defer t.Stop()
		aged = t.C
	}
	for correlationID := int32(1); ; correlationID++ {
		select {
		case <-aged:
			return offset, errSessionAged
		default:
		}
		if f.Budget != nil {
			if err := f.Budget.Acquire(ctx, reserved); err != nil {
				return offset, err
			}
		}
		b, size, err := f.fetch(conn, r, correlationID, offset, maxBytes, sizeHint, rs)
		f.settle(reserved, b.Bytes)
		if err != nil {
			return offset, err
		}
		if b.LeaderEpoch >= 0 {
			*epoch = b.LeaderEpoch
		}
		sizeHint = max(len(b.Records), 64)
		maxBytes, reserved = rs.nextFetch(size, b.Bytes)
		offset = b.Next
		select {
		case out <- b:
		case <-ctx.Done():
			f.settle(b.Bytes, 0)
			b.Release()
			return offset, ctx.Err()
		}
		if f.Until > 0 && offset >= f.Until {
			return offset, nil
		}
	}
}

// fetch asks the leader on conn for up to maxBytes of the partition from
// offset, with the request settings rs, and returns the batch, and the
// size of the response. After an error the batch is empty and holds
// nothing.
func (f *Fetcher) fetch(conn net.Conn, r *bufio.Reader, correlationID int32, offset int64, maxBytes int32, sizeHint int,
	rs *requestSettings) (Batch, int, error) {
	if err := conn.SetDeadline(time.Now().Add(rs.maxWait + rs.timeout(fetchTimeout))); err != nil {
		return Batch{}, 0, err
	}
	if err := writeFetch(conn, correlationID, f.TP, offset, f.ReadCommitted, maxBytes, rs); err != nil {
		return Batch{}, 0, fmt.Errorf("send fetch request: %w", err)
	}
	p, err := readFetch(r, correlationID, f.TP)
	if err != nil {
		return Batch{}, 0, err
	}
	if err := p.check(f.TP); err != nil {
		p.release()
		return Batch{}, 0, err
	}
	b, err := f.batch(&p, offset, sizeHint)
	return b, p.size, err
}

// batch decodes the records of the fetched partition p at or after offset
// into a batch, laid out in memory from the pools (the records slice
// starts with room for sizeHint records), which takes p's response buffer
// when records point into it and else gives it back. After an error the
// batch is empty and holds nothing.
func (f *Fetcher) batch(p *fetchedPartition, offset int64, sizeHint int) (Batch, error) {
	bd := newBuilder(f.TP, sizeHint)
	next, epoch, err := f.records(p, offset, bd)
	if err == nil && bd.fromResponse && p.resp != nil {
		bd.mem.buffers = append(bd.mem.buffers, p.resp)
		p.resp = nil
	}
	p.release()
	if err != nil {
		bd.mem.release()
		return Batch{}, err
	}
	b := Batch{TP: f.TP, Records: bd.records(), Next: next, End: p.highWatermark, LeaderEpoch: epoch, Bytes: bd.mem.size(), mem: bd.mem}
	if f.ReadCommitted {
		b.End = p.lastStable
	}
	return b, nil
}

// settle turns what the fetcher took of its budget for a fetch, reserved,
// into what it holds now, held.
func (f *Fetcher) settle(reserved, held int64) {
	switch {
	case f.Budget == nil:
	case held > reserved:
		f.Budget.Grow(held - reserved)
	case held < reserved:
		f.Budget.Release(reserved - held)
	}
}

// check returns the error the broker reported for the partition, if any.
func (p *fetchedPartition) check(tp TopicPartition) error {
	if p.errorCode != 0 {
		return kafkago.Error(p.errorCode)
	}
	if p.preferredReplica >= 0 && len(p.records) == 0 {
		// The leader answers at once, with no records, until the client
		// fetches from that replica: retried at once, a busy loop.
		return fmt.Errorf("the leader of %s asks to fetch from replica %d (a replica.selector.class on the brokers); "+
			"the agent fetches from partition leaders only: have the selector keep clients without a rack id on the leader",
			tp, p.preferredReplica)
	}
	return nil
}

// records appends the data records of the fetched partition at or after
// offset to bd and returns the offset to fetch next, and the leader epoch
// of the last record batch before it (-1 when there is none).
func (f *Fetcher) records(p *fetchedPartition, offset int64, bd *builder) (int64, int32, error) {
	// Without aborted transactions in the fetched range, every record is
	// committed.
	var aborts *abortFilter
	if f.ReadCommitted && len(p.aborted) > 0 {
		aborts = newAbortFilter(p.aborted)
	}
	next, epoch := offset, int32(-1)
	for buf := p.records; len(buf) > 0; {
		rb, rest, err := nextBatch(buf)
		if errors.Is(err, errTruncatedBatch) && len(buf) == len(p.records) {
			// Brokers return the first batch whole, whatever its size
			// (KIP-74): fetching again would get the same part.
			return offset, -1, fmt.Errorf("%s: the fetch at offset %d returned only part of a record batch", f.TP, offset)
		}
		if errors.Is(err, errTruncatedBatch) {
			break // the next fetch starts at it
		}
		if err != nil {
			return offset, -1, fmt.Errorf("%s: %w", f.TP, err)
		}
		buf = rest
		if rb.lastOffset() < next {
			continue // already read; a fetch may start inside a batch
		}
		switch {
		case rb.control():
			if aborts != nil {
				marker, err := rb.controlType()
				if err != nil {
					return offset, -1, fmt.Errorf("%s: %w", f.TP, err)
				}
				aborts.sawControl(&rb, marker)
			}
		case aborts != nil && aborts.skipData(&rb):
			// records of an aborted transaction
		default:
			if err := bd.appendRecords(&rb, next, len(rest)); err != nil {
				return offset, -1, err
			}
		}
		next = rb.lastOffset() + 1
		if rb.leaderEpoch >= 0 {
			epoch = rb.leaderEpoch
		}
	}
	return next, epoch, nil
}
