package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/protocol"
)

// This file writes records to Kafka, in transactions or not, on kafka-go's
// protocol messages: kafka-go's Writer has neither an idempotent nor a
// transactional producer. An idempotent producer without transactions gets
// a producer id from InitProducerId with a null transactional id, and
// numbers its batches per partition, so that the broker drops a batch
// sent again after its answer was lost, as Kafka's Java producer with
// enable.idempotence does. A transaction is the Kafka Streams pattern:
// InitProducerId once (which fences an older producer of the same
// transactional id), then per transaction AddPartitionsToTxn before a
// partition's first batch, Produce of batches this package encodes with the
// producer's id, epoch and sequence numbers, AddOffsetsToTxn and
// TxnOffsetCommit of the source positions, and EndTxn. Every request goes
// through the client's connections, with the connection's TLS and SASL.

// ErrFenced is wrapped by the errors of a [Producer] that a newer producer
// of the same transactional id fenced (INVALID_PRODUCER_EPOCH,
// PRODUCER_FENCED): it must stop writing; another instance runs.
var ErrFenced = errors.New("producer fenced by a newer producer with the same transactional id")

// DefaultTransactionTimeout is the transaction timeout of a [Producer]
// whose [ProducerConfig.TransactionTimeout] is zero: the coordinator aborts
// a transaction open longer.
const DefaultTransactionTimeout = time.Minute

// maxBatchRecordBytes bounds the uncompressed record bytes of one batch
// [Producer.Send] produces: a larger send is split into several batches,
// each under the brokers' default message.max.bytes (1 MiB).
const maxBatchRecordBytes = 512 << 10

// Backoff of the retried requests: from retryFirst doubling up to
// retryMax, for at most retryFor in all.
const (
	retryFirst = 20 * time.Millisecond
	retryMax   = time.Second
	retryFor   = 30 * time.Second
)

// ProducerConfig configures a [Producer].
type ProducerConfig struct {
	// TransactionalID is the producer's transactional.id; "" writes
	// without transactions (at least once).
	TransactionalID string
	// TransactionTimeout is transaction.timeout.ms; zero means
	// [DefaultTransactionTimeout].
	TransactionTimeout time.Duration
	// Compression is compression.type: none (or ""), gzip, snappy, lz4 or
	// zstd.
	Compression string
	// Idempotent makes a producer without a transactional id idempotent
	// (enable.idempotence): its batches carry a producer id, epoch and
	// sequence numbers, so a batch retried after a lost answer is written
	// once. A transactional producer always is.
	Idempotent bool
	// OnNewProducerID, if set, is told when an idempotent producer starts
	// over with a new producer id after err, the broker's answer to a
	// batch of tp (see [Producer.produce]); lostAcked when that answer
	// was an out-of-order sequence, which means the broker lost batches
	// it had acked: the caller should make that known.
	OnNewProducerID func(tp TopicPartition, lostAcked bool, err error)
}

// Producer writes records to partitions of a cluster: in transactions
// when its [ProducerConfig.TransactionalID] is set, each record acked by
// every in-sync replica otherwise, idempotently with
// [ProducerConfig.Idempotent]. It is not safe for concurrent use.
type Producer struct {
	c     *Client
	cfg   ProducerConfig
	codec compress.Compression
	// err is the configuration error Init reports.
	err error
	// id and epoch are what InitProducerId gave: -1 before Init and for
	// a producer neither transactional nor idempotent.
	id    int64
	epoch int16
	// seq is the next sequence number per partition, since Init.
	seq map[TopicPartition]int32
	// inTxn says a transaction is open (Begin was called); added lists
	// the partitions added to it and groups the groups whose offsets it
	// commits.
	inTxn bool
	// began is when the open, or last, transaction began.
	began  time.Time
	added  map[TopicPartition]bool
	groups map[string]bool
	// failed says a produce failed: the broker may hold its batch, whose
	// sequence numbers a later batch would reuse, so transactions wait for
	// Init.
	failed bool
	buf    []byte
}

// NewProducer returns a producer of cfg writing through c. It sends
// nothing until used; a bad cfg.Compression is reported by
// [Producer.Init].
func (c *Client) NewProducer(cfg ProducerConfig) *Producer {
	p := &Producer{c: c, cfg: cfg, id: -1, epoch: -1, seq: map[TopicPartition]int32{},
		added: map[TopicPartition]bool{}, groups: map[string]bool{}}
	if p.cfg.TransactionTimeout <= 0 {
		p.cfg.TransactionTimeout = DefaultTransactionTimeout
	}
	if cfg.Compression != "" {
		if err := p.codec.UnmarshalText([]byte(cfg.Compression)); err != nil {
			p.err = fmt.Errorf("producer compression: %w", err)
		}
	}
	return p
}

// transactional reports whether the producer writes in transactions.
func (p *Producer) transactional() bool { return p.cfg.TransactionalID != "" }

// idempotent reports whether the producer numbers its batches: in
// transactions, or with [ProducerConfig.Idempotent].
func (p *Producer) idempotent() bool { return p.transactional() || p.cfg.Idempotent }

// Init gets the producer's id and epoch (InitProducerId) for its
// transactional id. The coordinator aborts the transaction an older
// producer of the same id left open, and fences that producer: its next
// request fails with [ErrFenced]. It retries while the coordinator is
// busy finishing that transaction or moving. Init may be called again to
// start over after a failed transaction; sequence numbers restart. An
// idempotent producer without a transactional id gets a new producer id
// of its own; one neither transactional nor idempotent only checks the
// configuration.
func (p *Producer) Init(ctx context.Context) error { return p.init(ctx, -1, -1) }

// init is InitProducerId with the current id and epoch, -1 for none.
func (p *Producer) init(ctx context.Context, id int64, epoch int16) error {
	if p.err != nil {
		return p.err
	}
	p.inTxn, p.failed = false, false
	clear(p.added)
	clear(p.groups)
	clear(p.seq)
	if !p.idempotent() {
		return nil
	}
	if !p.transactional() {
		// Any broker hands out a plain idempotent producer's id; see
		// idempotentProducerID.
		var id int64
		var epoch int16
		err := p.retry(ctx, "init the producer id", func() (err error) {
			id, epoch, err = p.c.idempotentProducerID(ctx)
			return err
		})
		if err != nil {
			return err
		}
		p.id, p.epoch = id, epoch
		return nil
	}
	var res *kafkago.InitProducerIDResponse
	err := p.retry(ctx, "init the producer id", func() (err error) {
		res, err = p.c.admin.InitProducerID(ctx, &kafkago.InitProducerIDRequest{
			TransactionalID:      p.cfg.TransactionalID,
			TransactionTimeoutMs: int(p.cfg.TransactionTimeout.Milliseconds()),
			ProducerID:           int(id),
			ProducerEpoch:        int(epoch),
		})
		if err != nil {
			return err
		}
		return res.Error
	})
	if err != nil {
		return err
	}
	p.id, p.epoch = int64(res.Producer.ProducerID), int16(res.Producer.ProducerEpoch)
	return nil
}

// Begin starts a transaction. It sends nothing: the first [Producer.Send]
// or [Producer.SendOffsets] adds to the transaction on the coordinator.
// After a Send that failed, abort the transaction and call
// [Producer.Init] before the next one.
func (p *Producer) Begin() error {
	switch {
	case !p.transactional():
		return errors.New("begin a transaction: the producer has no transactional id")
	case p.id < 0:
		return errors.New("begin a transaction: the producer has no producer id (call Init first)")
	case p.inTxn:
		return errors.New("begin a transaction: one is already open")
	case p.failed:
		return errors.New("begin a transaction: a write of the last one failed (call Init to start over)")
	}
	p.inTxn, p.began = true, time.Now()
	return nil
}

// TimedOut reports whether the open, or last, transaction has been open
// longer than the transaction timeout: the coordinator may have aborted
// it, bumping the epoch, which the producer's next request is told as
// fencing ([ErrFenced]).
func (p *Producer) TimedOut() bool {
	return p.transactional() && !p.began.IsZero() && time.Since(p.began) >= p.cfg.TransactionTimeout
}

// Recover starts over after a transaction the coordinator aborted on its
// timeout (KIP-360, KIP-588): InitProducerId with the producer's current
// id and epoch, which the coordinator accepts only from the producer it
// last gave them to. It fails with [ErrFenced] when a newer producer of
// the same transactional id took over. Brokers before 2.5 (InitProducerId
// v3) do not know the request: on them it is plain [Producer.Init].
func (p *Producer) Recover(ctx context.Context) error {
	return p.init(ctx, p.id, p.epoch)
}

// Send writes recs, in order, to partition of topic, in batches of at
// most [maxBatchRecordBytes] record bytes, and returns once every in-sync
// replica has them. In a transaction the records are visible to
// read_committed consumers only after [Producer.Commit]; a transactional
// producer must have begun one. A batch of an idempotent producer retried
// after a timeout or a broken connection is not written twice: the broker
// drops a batch whose sequence number it already has. No records is
// nothing to do.
func (p *Producer) Send(ctx context.Context, topic string, partition int32, recs []OutRecord) error {
	tp := TopicPartition{Topic: topic, Partition: int(partition)}
	if len(recs) == 0 {
		return nil
	}
	if p.transactional() {
		if !p.inTxn {
			return fmt.Errorf("produce to %s: no transaction is open (call Begin first)", tp)
		}
		if err := p.addPartition(ctx, tp); err != nil {
			return err
		}
	}
	for len(recs) > 0 {
		n := batchLen(recs)
		if err := p.produce(ctx, tp, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// batchLen returns how many of recs, at least one, the next batch takes.
func batchLen(recs []OutRecord) int {
	size := 0
	for i := range recs {
		r := &recs[i]
		size += len(r.Key) + len(r.Value) + 16
		for _, h := range r.Headers {
			size += len(h.Key) + len(h.Value) + 4
		}
		if size > maxBatchRecordBytes && i > 0 {
			return i
		}
	}
	return len(recs)
}

// addPartition adds tp to the open transaction unless it is already in.
func (p *Producer) addPartition(ctx context.Context, tp TopicPartition) error {
	if p.added[tp] {
		return nil
	}
	err := p.retry(ctx, fmt.Sprintf("add %s to the transaction", tp), func() error {
		res, err := p.c.admin.AddPartitionsToTxn(ctx, &kafkago.AddPartitionsToTxnRequest{
			TransactionalID: p.cfg.TransactionalID, ProducerID: int(p.id), ProducerEpoch: int(p.epoch),
			Topics: map[string][]kafkago.AddPartitionToTxn{tp.Topic: {{Partition: tp.Partition}}},
		})
		if err != nil {
			return err
		}
		for _, parts := range res.Topics {
			for _, part := range parts {
				if part.Error != nil {
					return part.Error
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.added[tp] = true
	return nil
}

// produce writes one batch of recs to tp and advances tp's sequence. An
// idempotent producer without transactions whose producer the broker does
// not know (UNKNOWN_PRODUCER_ID: its state expired) or whose sequence is
// not the next the broker expects (OUT_OF_ORDER_SEQUENCE_NUMBER: the
// broker lost batches it had acked, after an unclean leader election)
// starts over with a new producer id, as Kafka's Java producer does, and
// sends the batch once more: the broker wrote none of it, so nothing is
// written twice. A transactional producer cannot: its transaction lost
// records, and fails.
func (p *Producer) produce(ctx context.Context, tp TopicPartition, recs []OutRecord) error {
	err := p.produceOnce(ctx, tp, recs)
	if err == nil || p.transactional() || !p.idempotent() ||
		!errors.Is(err, kafkago.UnknownProducerId) && !errors.Is(err, kafkago.OutOfOrderSequenceNumber) {
		return err
	}
	if p.cfg.OnNewProducerID != nil {
		p.cfg.OnNewProducerID(tp, errors.Is(err, kafkago.OutOfOrderSequenceNumber), err)
	}
	if ierr := p.Init(ctx); ierr != nil {
		return fmt.Errorf("%w; starting over with a new producer id failed: %w", err, ierr)
	}
	return p.produceOnce(ctx, tp, recs)
}

// produceOnce writes one batch of recs to tp and advances tp's sequence.
// A duplicate sequence number (DUPLICATE_SEQUENCE_NUMBER) is success: the
// broker already has the batch, from an attempt whose answer was lost.
func (p *Producer) produceOnce(ctx context.Context, tp TopicPartition, recs []OutRecord) error {
	bp := noProducer
	if p.idempotent() {
		bp = batchProducer{id: p.id, epoch: p.epoch, sequence: p.seq[tp], transactional: p.transactional()}
	}
	// A RawRecordSet is the request's record set field whole: its int32
	// size, then the batch.
	buf, err := appendRecordBatch(append(p.buf[:0], 0, 0, 0, 0), bp, p.codec, recs)
	p.buf = buf
	if err != nil {
		return fmt.Errorf("produce to %s: %w", tp, err)
	}
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	err = p.retry(ctx, fmt.Sprintf("produce %d records to %s", len(recs), tp), func() error {
		res, err := p.c.admin.RawProduce(ctx, &kafkago.RawProduceRequest{
			Topic: tp.Topic, Partition: tp.Partition, RequiredAcks: kafkago.RequireAll,
			TransactionalID: p.cfg.TransactionalID,
			RawRecords:      protocol.RawRecordSet{Reader: bytes.NewReader(buf)},
		})
		if err != nil {
			return err
		}
		if bp.id >= 0 && errors.Is(res.Error, kafkago.DuplicateSequenceNumber) {
			return nil
		}
		return res.Error
	})
	if err != nil {
		p.failed = true
		return err
	}
	if bp.id >= 0 {
		// Sequence numbers wrap around past the largest int32, as
		// Kafka's do.
		p.seq[tp] = int32((int64(bp.sequence) + int64(len(recs))) % (1 << 31))
	}
	return nil
}

// SendOffsets commits offsets (the next offset per topic and partition)
// to group: in the open transaction (AddOffsetsToTxn and TxnOffsetCommit,
// committed or aborted with it) for a transactional producer, as a plain
// standalone commit otherwise.
func (p *Producer) SendOffsets(ctx context.Context, group string, offsets map[string]map[int32]int64) error {
	if !p.transactional() {
		flat := map[TopicPartition]int64{}
		for topic, parts := range offsets {
			for part, off := range parts {
				flat[TopicPartition{Topic: topic, Partition: int(part)}] = off
			}
		}
		return p.c.CommitGroupOffsets(ctx, group, flat)
	}
	if !p.inTxn {
		return fmt.Errorf("commit the offsets of group %q: no transaction is open (call Begin first)", group)
	}
	if !p.groups[group] {
		err := p.retry(ctx, fmt.Sprintf("add the offsets of group %q to the transaction", group), func() error {
			res, err := p.c.admin.AddOffsetsToTxn(ctx, &kafkago.AddOffsetsToTxnRequest{
				TransactionalID: p.cfg.TransactionalID, ProducerID: int(p.id), ProducerEpoch: int(p.epoch), GroupID: group,
			})
			if err != nil {
				return err
			}
			return res.Error
		})
		if err != nil {
			return err
		}
		p.groups[group] = true
	}
	req := &kafkago.TxnOffsetCommitRequest{
		TransactionalID: p.cfg.TransactionalID, GroupID: group, ProducerID: int(p.id), ProducerEpoch: int(p.epoch),
		GenerationID: -1, Topics: map[string][]kafkago.TxnOffsetCommit{},
	}
	for topic, parts := range offsets {
		for part, off := range parts {
			req.Topics[topic] = append(req.Topics[topic], kafkago.TxnOffsetCommit{Partition: int(part), Offset: off})
		}
	}
	return p.retry(ctx, fmt.Sprintf("commit the offsets of group %q in the transaction", group), func() error {
		res, err := p.c.admin.TxnOffsetCommit(ctx, req)
		if err != nil {
			return err
		}
		for topic, parts := range res.Topics {
			for _, part := range parts {
				if part.Error != nil {
					return fmt.Errorf("%s/%d: %w", topic, part.Partition, part.Error)
				}
			}
		}
		return nil
	})
}

// Commit commits the open transaction (EndTxn): its records become
// visible to read_committed consumers and its offsets the group's. A
// transaction that added nothing ends without a request.
func (p *Producer) Commit(ctx context.Context) error { return p.end(ctx, true) }

// Abort aborts the open transaction (EndTxn): read_committed consumers
// never see its records and its offsets are dropped.
func (p *Producer) Abort(ctx context.Context) error { return p.end(ctx, false) }

// end ends the open transaction, committing it or not.
func (p *Producer) end(ctx context.Context, commit bool) error {
	what := "abort the transaction"
	if commit {
		what = "commit the transaction"
	}
	if !p.inTxn {
		return fmt.Errorf("%s: no transaction is open", what)
	}
	if len(p.added) > 0 || len(p.groups) > 0 {
		err := p.retry(ctx, what, func() error {
			res, err := p.c.admin.EndTxn(ctx, &kafkago.EndTxnRequest{
				TransactionalID: p.cfg.TransactionalID, ProducerID: int(p.id), ProducerEpoch: int(p.epoch), Committed: commit,
			})
			if err != nil {
				return err
			}
			return res.Error
		})
		if err != nil {
			return err
		}
	}
	p.inTxn = false
	clear(p.added)
	clear(p.groups)
	return nil
}

// retry calls f until it succeeds, fails with an error that retrying does
// not cure, or retryFor passed, backing off between calls, and returns its
// error wrapped with what it did. The errors retried are those of a
// coordinator or leader that is busy or moving (CONCURRENT_TRANSACTIONS
// while an older transaction of the id completes, COORDINATOR_LOAD_IN_PROGRESS,
// COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, NOT_LEADER_OR_FOLLOWER,
// LEADER_NOT_AVAILABLE, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS, an unknown
// partition while a topic is created), and broken connections (see
// retriable). INVALID_PRODUCER_EPOCH and PRODUCER_FENCED wrap [ErrFenced].
func (p *Producer) retry(ctx context.Context, what string, f func() error) error {
	deadline := time.Now().Add(retryFor)
	wait := retryFirst
	for {
		err := f()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, kafkago.InvalidProducerEpoch) || errors.Is(err, kafkago.ProducerFenced):
			return fmt.Errorf("%s (transactional id %q): %w: %w", what, p.cfg.TransactionalID, ErrFenced, err)
		case !retriable(err) || time.Now().Add(wait).After(deadline):
			return p.c.fail("", err, "%s", what)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last error: %w)", what, ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, retryMax)
	}
}

// retriable reports whether err is one that [Producer.retry] retries. A
// connection that broke is retried too: an idempotent producer's batch the
// broker already has is dropped by its sequence number, and the
// coordinator answers a repeated AddPartitionsToTxn, TxnOffsetCommit or
// EndTxn as the first; a producer that is not idempotent may write a
// record twice.
func retriable(err error) bool {
	var code kafkago.Error
	if !errors.As(err, &code) {
		return isNetError(err)
	}
	switch code {
	case kafkago.ConcurrentTransactions, kafkago.GroupLoadInProgress, kafkago.GroupCoordinatorNotAvailable,
		kafkago.NotCoordinatorForGroup, kafkago.NotLeaderForPartition, kafkago.LeaderNotAvailable,
		kafkago.RequestTimedOut, kafkago.NotEnoughReplicas, kafkago.NotEnoughReplicasAfterAppend,
		kafkago.UnknownTopicOrPartition:
		return true
	}
	return false
}

// Rejected returns, when Kafka refused the records of err for good
// (retrying the same records cannot help), what to do about it; "" for
// any other error. UNKNOWN_TOPIC_OR_PARTITION is not one: a topic may be
// being created (see [Producer.Send], which retries it).
func Rejected(err error) string {
	var code kafkago.Error
	if !errors.As(err, &code) {
		return ""
	}
	switch code {
	case kafkago.MessageSizeTooLarge:
		return "a record is larger than the topic's max.message.bytes (the brokers' message.max.bytes): raise it on the topic"
	case kafkago.InvalidTopic:
		return "the topic name is not one Kafka accepts: fix topic, table_topic_mapping or the rows' topic column"
	case kafkago.InvalidTimestamp:
		return "a record's timestamp is too far from the broker's clock for the topic's message.timestamp.*.max.ms: " +
			"raise them on the topic"
	case kafkago.InvalidRecord:
		return "the broker refused a record (a compacted topic needs a key on every record, for one): write to a " +
			"topic that takes the records"
	}
	return ""
}

// MissingTopic reports whether err says a topic or partition does not
// exist (UNKNOWN_TOPIC_OR_PARTITION).
func MissingTopic(err error) bool { return errors.Is(err, kafkago.UnknownTopicOrPartition) }

// PartitionCount returns the number of partitions of topic, those
// without a leader at the moment included; a topic that does not exist is
// an error saying so.
func (c *Client) PartitionCount(ctx context.Context, topic string) (int, error) {
	md, err := c.admin.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, c.fail("", err, "count the partitions of topic %q", topic)
	}
	for _, t := range md.Topics {
		switch {
		case t.Name != topic:
		case errors.Is(t.Error, kafkago.UnknownTopicOrPartition):
			return 0, fmt.Errorf("topic %q does not exist (create it, or enable auto-creation on the brokers): %w", topic, t.Error)
		case t.Error != nil:
			return 0, fmt.Errorf("count the partitions of topic %q: %w", topic, t.Error)
		default:
			return len(t.Partitions), nil
		}
	}
	return 0, fmt.Errorf("count the partitions of topic %q: the metadata does not list it", topic)
}
