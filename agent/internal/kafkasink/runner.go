package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/columns"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/changelog"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/encode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/position"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file runs Kafka sinks of Kafka topics: the records of a sink's
// source topics, decoded as a table with the same kafka_options would
// decode them, encoded as change events (or JSON rows) and written to
// Kafka.
//
// Where a sink is comes from Kafka, not from a table's log: the next
// source offsets are committed to the consumer group
// "tributary-sink.<name>". An exactly-once sink commits them in the same
// Kafka transaction as the records written from them (AddOffsetsToTxn +
// TxnOffsetCommit, the Kafka Streams pattern), so a restart resumes exactly
// after the last committed transaction: a read_committed consumer of the
// sink's topics sees every source record's output once. This departs from
// "the consumer group is never the source of truth": a Delta log and a
// Kafka transaction cannot commit atomically, the group and the records
// can. An at-least-once sink commits the offsets after the records are
// acked, outside any transaction: a crash between the two writes those
// records again. Its producer is idempotent unless enable_idempotence is
// false, so a batch retried within a session is written once.
//
// A round of the loop reads what the source delivered during
// flush_interval (or until maxPendingBytes), decodes it, and writes it
// in one transaction. Any error ends the session: the open transaction is
// aborted (best effort: a new InitProducerId aborts it anyway), and the
// session starts again from the group's offsets. A producer fenced by a
// newer one of the same transactional id (another agent running the same
// sink) stops the sink, FAILED; one told it is fenced after its
// transaction timed out first tries to recover (see recover). Partitions
// and topic_pattern topics that appear later are read from their earliest
// offset, found every partition_discovery_interval.
//
// A table source (source_table) is read from the table's log: see
// table.go.

// newSource returns the source a session of a topic source reads
// through: [ingest.NewSource], which tests wrap to watch it.
var newSource = ingest.NewSource

// maxPendingBytes is how much fetched data a sink holds before it
// writes a round early, even before its flush_interval is over.
const maxPendingBytes = 16 << 20

// retryMax bounds the wait between two sessions of a failing sink.
const retryMax = 30 * time.Second

// Runner runs one Kafka sink until stopped, or until it fails.
type Runner struct {
	spec   spec.KafkaSink
	conn   spec.Connection
	regs   map[string]spec.SchemaRegistry
	client *kafka.Client
	deps   Deps
	log    *slog.Logger
	// sup runs the sink's sessions and holds its state and last error.
	sup *runner.Supervisor
	// missing counts the sessions in a row that ended on a missing
	// output topic; used by the sink's goroutine only.
	missing int

	mu     sync.Mutex
	status spec.KafkaSinkStatus
}

// Deps is what a Runner takes from the agent that runs it.
type Deps struct {
	// Memory is the budget the fetched source records draw from.
	Memory *memory.Budget
	// Registries makes the clients of the schema registries the source's
	// decoders use, shared with the agent's other readers.
	Registries *ingest.Registries
	// SourceTable finds the table a source_table names among those this
	// agent writes; ok is false when none does (yet, or any more).
	SourceTable func(qualified string) (src SourceTable, ok bool, err error)
	// Log receives the sink's logs.
	Log *slog.Logger
}

// Start starts Kafka sink k writing through conn, from the sink's
// consumer group. regs holds the schema registries of the other
// connections k's source's transformers name. The sink runs until Stop,
// or until it fails; k must be normalized and valid. The error is that of
// a connection the agent cannot use.
func Start(ctx context.Context, k *spec.KafkaSink, conn *spec.Connection, regs map[string]spec.SchemaRegistry, deps Deps) (*Runner, error) {
	client, err := kafka.NewClient(conn)
	if err != nil {
		return nil, err
	}
	r := &Runner{spec: *k, conn: *conn, regs: regs, client: client, deps: deps, log: deps.Log.With("kafka_sink", k.Name)}
	r.sup = runner.NewSupervisor("kafka sink", "kafka sink restarts from its consumer group", retryMax, r.log)
	r.sup.Start(ctx, r.attempt, r.failure)
	return r, nil
}

// Runs reports whether r runs sink k through conn with regs: whether
// applying them again would change nothing.
func (r *Runner) Runs(k *spec.KafkaSink, conn *spec.Connection, regs map[string]spec.SchemaRegistry) bool {
	return reflect.DeepEqual(r.spec, *k) && reflect.DeepEqual(r.conn, *conn) && reflect.DeepEqual(r.regs, regs)
}

// Stop ends the sink's session and waits for it; what the open
// transaction held is aborted, and read again by the next start.
func (r *Runner) Stop() {
	r.sup.Stop()
	r.client.Close()
}

// Status returns a copy of the sink's status.
func (r *Runner) Status() spec.KafkaSinkStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.status
	st.Positions = maps.Clone(st.Positions)
	st.State, st.LastError = r.sup.Status()
	return st
}

// committed records a round written: n records, and the source's next
// offsets, now committed (at a session's start: where it resumes).
func (r *Runner) committed(n int, next map[kafka.TopicPartition]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.Records += int64(n)
	if r.status.Positions == nil {
		r.status.Positions = map[string]int64{}
	}
	for tp, off := range next {
		r.status.Positions[tp.String()] = off
	}
}

// attempt runs a session; nil once ctx ended, since stopping aborts the
// open transaction, which the next start reads again.
func (r *Runner) attempt(ctx context.Context) error {
	err := r.session(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// missingTopicTries is how many sessions in a row may end on an
// output topic that does not exist before the sink fails.
const missingTopicTries = 3

// session is one session of a sink: a producer, the subscriptions to the
// source partitions from the group's offsets, and the decoder.
type session struct {
	r        *Runner
	producer *kafka.Producer
	// next is the next source offset of every partition, committed once
	// the round that read up to it is.
	next map[kafka.TopicPartition]int64
	// pending holds the batches fetched since the last round, and
	// pendingBytes their size.
	pending      []*ingest.SharedBatch
	pendingBytes int64

	layout  *spec.Layout
	sources *decode.Sources
	dec     *decode.Decoder
	// asked is what the record that ended the last decoding asks for: the
	// columns the next decoding adds first.
	asked *decode.NewColumnsError
	// before decodes the before images of updates (encode.Befores): a
	// decoder of layout beside dec, built again with it.
	before *decode.Decoder
	enc    encode.Encoder
	router *encode.Router
	// partitions caches the partition count of each output topic.
	partitions map[string]int
	value      []byte
}

// session writes the source to the sink's topics until ctx ends or an
// error happens, and returns that error.
func (r *Runner) session(ctx context.Context) (err error) {
	s := &session{r: r, partitions: map[string]int{}, enc: encode.New(&r.spec)}
	if s.router, err = encode.NewRouter(&r.spec); err != nil {
		return runner.Fatal(fmt.Errorf("table_topic_mapping: %w", err))
	}
	cfg := kafka.ProducerConfig{Compression: strings.ToLower(r.spec.Compression), Idempotent: r.spec.Idempotent(),
		OnNewProducerID: func(tp kafka.TopicPartition, lostAcked bool, err error) {
			if lostAcked {
				r.log.Warn("the broker lost records it had acknowledged (an unclean leader election on the output topic?); "+
					"the sink goes on with a new producer id, and those records are not in the topic",
					"topic", tp.Topic, "partition", tp.Partition, "err", err)
				return
			}
			r.log.Info("the broker forgot the sink's producer id; it goes on with a new one", "topic", tp.Topic, "partition", tp.Partition)
		}}
	if r.spec.ExactlyOnce() {
		cfg.TransactionalID, cfg.TransactionTimeout = r.spec.TxnID(), transactionTimeout(r.spec.FlushEvery())
	}
	s.producer = r.client.NewProducer(cfg)
	// InitProducerId first: it aborts what an earlier instance left open,
	// so the group's offsets read next are those of its last commit.
	if err := s.producer.Init(ctx); err != nil {
		return fmt.Errorf("start the producer: %w", err)
	}
	if r.spec.SourceTable != "" {
		return s.runTable(ctx)
	}
	if err := s.prepare(ctx); err != nil {
		return err
	}
	tps, err := r.client.Partitions(ctx, r.spec.Source)
	if err != nil {
		return fmt.Errorf("list the source partitions: %w", err)
	}
	if s.next, err = r.starts(ctx, tps, r.spec.Source.StartingOffset); err != nil {
		return err
	}
	settings, err := runner.ClientSettings(r.spec.Source)
	if err != nil {
		return err
	}
	r.committed(0, s.next)
	r.sup.SetState(spec.StateRunning, nil)

	// The source's records come through ingest, as a pipeline's do: a
	// source of the session's own (the sink has its own connection),
	// whose fetches draw from the agent's memory budget.
	source := newSource(r.client, r.deps.Memory, r.log)
	fetchCtx, stopFetch := context.WithCancel(ctx)
	in := make(chan *ingest.SharedBatch)
	fetchErrs := make(chan error, 1)
	var wg sync.WaitGroup
	defer func() {
		stopFetch()
		wg.Wait()
		source.Close()
		s.release()
	}()
	fetch := func(tps []kafka.TopicPartition) {
		for _, tp := range tps {
			// From: rounds move s.next while the partitions are read.
			sub := ingest.Subscription{TP: tp, From: s.next[tp], ReadCommitted: r.spec.Source.ReadCommitted(), Settings: settings}
			source.Forward(fetchCtx, &wg, sub, in, fetchErrs)
		}
	}
	fetch(tps)
	tick := time.NewTicker(r.spec.FlushEvery())
	defer tick.Stop()
	discover, stopDiscover := runner.DiscoverTicks(runner.DiscoveryInterval(r.spec.Source))
	defer stopDiscover()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-fetchErrs:
			return r.fetchError(err)
		case <-discover:
			fresh, err := s.discover(ctx)
			if err != nil {
				return err
			}
			fetch(fresh)
			continue
		case b := <-in:
			s.pending = append(s.pending, b)
			s.pendingBytes += b.Bytes
			if s.pendingBytes < maxPendingBytes {
				continue
			}
		case <-tick.C:
		}
		if err := s.round(ctx); err != nil {
			return s.recover(ctx, err)
		}
	}
}

// fetchError returns the error a fetch of the source ended with, worded
// for a sink: records gone from Kafka before the sink read them fail it,
// since it cannot skip them (fail_on_data_loss = false is refused on a
// sink), and starting over means forgetting its positions.
func (r *Runner) fetchError(err error) error {
	var loss *kafka.DataLossError
	var recreated *kafka.TopicRecreatedError
	restart := fmt.Sprintf("to start again from the source's starting_offset, delete the sink's consumer group %q "+
		"(kafka-consumer-groups.sh --delete --group %s) and apply the sink again", r.spec.Group(), r.spec.Group())
	switch {
	case errors.As(err, &loss):
		if from, to, ok := loss.Gap(); ok {
			return runner.Fatal(fmt.Errorf("offsets [%d, %d) of %s (%d records) are gone from Kafka: retention deleted them "+
				"before the sink read them, and those records are lost; %s: %w", from, to, loss.TP, to-from, restart, loss.Err))

		}
		return runner.Fatal(fmt.Errorf("%s ends at offset %d, before offset %d the sink's group says to read next: Kafka lost "+
			"records the sink had read (an unclean leader election, or the topic was re-created); %s: %w",
			loss.TP, loss.Latest, loss.Offset, restart, loss.Err))

	case errors.As(err, &recreated):
		return runner.Fatal(fmt.Errorf("source topic %q was deleted and created again (topic id %s, now %s): the offsets "+
			"of the sink's group belong to the old topic; %s", recreated.Topic, recreated.Was, recreated.Now, restart))

	}
	return fmt.Errorf("fetch the source: %w", err)
}

// transactionTimeout is the transaction timeout of an exactly-once
// sink writing every flushEvery: six rounds, at least a minute, so that a
// slow round is not aborted; flush_interval is at most 1m, which keeps it
// under the brokers' default transaction.max.timeout.ms (15m).
func transactionTimeout(flushEvery time.Duration) time.Duration {
	return max(time.Minute, 6*flushEvery)
}

// recover returns the error a round ended with, err. A producer told it
// is fenced while its transaction had been open longer than its timeout
// may only have been aborted by the coordinator (a round slower than the
// timeout): when InitProducerId with its id and epoch is accepted, no
// other instance took over, and the session starts again (the error no
// longer says fenced); when it is refused, the sink was fenced.
func (s *session) recover(ctx context.Context, err error) error {
	if !errors.Is(err, kafka.ErrFenced) || !s.producer.TimedOut() {
		return err
	}
	if rerr := s.producer.Recover(ctx); errors.Is(rerr, kafka.ErrFenced) {
		return fmt.Errorf("%w (the transaction had also timed out, but the coordinator refuses the recovery: %w)", err, rerr)
	} else if rerr != nil {
		return fmt.Errorf("the transaction timed out (%w), and recovering from that failed: %w", err, rerr)
	}
	return fmt.Errorf("the transaction was open longer than its timeout and the coordinator aborted it (%v); "+
		"the sink starts again from its group", err)
}

// discover returns the source partitions that appeared since the session
// started (new partitions, new topics of a topic_pattern), whose starts
// it adds to s.next: the group's offset, else the earliest offset, so that
// none of their records is skipped.
func (s *session) discover(ctx context.Context) ([]kafka.TopicPartition, error) {
	tps, err := s.r.client.Partitions(ctx, s.r.spec.Source)
	if err != nil {
		return nil, fmt.Errorf("list the source partitions: %w", err)
	}
	var fresh []kafka.TopicPartition
	for _, tp := range tps {
		if _, ok := s.next[tp]; !ok {
			fresh = append(fresh, tp)
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	starts, err := s.r.starts(ctx, fresh, spec.StartingOffsetEarliest)
	if err != nil {
		return nil, err
	}
	maps.Copy(s.next, starts)
	s.r.committed(0, starts)
	s.r.log.Info("new source partitions", "partitions", fresh)
	return fresh, nil
}

// starts returns where each of tps resumes: the sink's group's committed
// offset, else where starting mode starting says.
func (r *Runner) starts(ctx context.Context, tps []kafka.TopicPartition, starting string) (map[kafka.TopicPartition]int64, error) {
	group := r.spec.Group()
	// Stable offsets: those of the last transaction committed, not older
	// ones the coordinator still answers while it completes it.
	next, err := r.client.StableGroupOffsets(ctx, group, tps)
	if err != nil {
		return nil, fmt.Errorf("read the sink's positions: %w", err)
	}
	var fresh []kafka.TopicPartition
	for _, tp := range tps {
		if _, ok := next[tp]; !ok {
			fresh = append(fresh, tp)
		}
	}
	if len(fresh) > 0 {
		pos := &position.Finder{Client: r.client, Options: r.spec.Source, Group: group, Owner: "the kafka sink"}
		starts, err := pos.Starts(ctx, fresh, starting)
		if err != nil {
			return nil, err
		}
		maps.Copy(next, starts)
	}
	return next, nil
}

// prepare builds the source's layout and what decodes into it.
func (s *session) prepare(ctx context.Context) error {
	r := s.r
	t := r.spec.SourceTableSpec()
	layout, errs := t.Layout()
	if len(errs) > 0 {
		return runner.Fatal(fmt.Errorf("source: %w", errs))
	}
	sources, err := decode.Resolve(ctx, layout, nil, r.deps.Registries.ClientsOf(ingest.TableRegistries(&t, &r.conn, r.regs)))
	if err != nil {
		return fmt.Errorf("resolve the source's schemas: %w", err)
	}
	s.layout, s.sources = layout, sources
	return nil
}

// release gives back the memory of the batches not written.
func (s *session) release() {
	for _, b := range s.pending {
		b.Release()
	}
	s.pending, s.pendingBytes = nil, 0
}

// round writes the pending batches and commits the source offsets past
// them: in one transaction for an exactly-once sink.
func (s *session) round(ctx context.Context) (err error) {
	defer s.release()
	next := map[kafka.TopicPartition]int64{}
	out := map[string]map[int32][]kafka.OutRecord{}
	n := 0
	for _, b := range s.pending {
		if b.Next > s.next[b.TP] {
			next[b.TP] = b.Next
		}
		// A batch may start before the offset the partition is at (see
		// ingest.Subscribe): the records before it were written already.
		recs := b.Records
		for len(recs) > 0 && recs[0].Offset < s.next[b.TP] {
			recs = recs[1:]
		}
		if len(recs) == 0 {
			continue
		}
		c, err := s.encode(ctx, recs, out)
		if err != nil {
			return fmt.Errorf("%s: %w", b.TP, err)
		}
		n += c
	}
	if len(next) == 0 {
		return nil // nothing read, nothing to commit
	}
	offsets := map[string]map[int32]int64{}
	for tp, off := range next {
		if offsets[tp.Topic] == nil {
			offsets[tp.Topic] = map[int32]int64{}
		}
		offsets[tp.Topic][int32(tp.Partition)] = off
	}
	if err := s.write(ctx, out, offsets); err != nil {
		return err
	}
	maps.Copy(s.next, next)
	s.r.committed(n, next)
	return nil
}

// write writes out, the records of a round by topic and partition, and
// commits offsets, the source positions past them, to the sink's group:
// in one transaction for an exactly-once sink, one after the other for an
// at-least-once sink.
func (s *session) write(ctx context.Context, out map[string]map[int32][]kafka.OutRecord, offsets map[string]map[int32]int64) (err error) {
	p := s.producer
	if s.r.spec.ExactlyOnce() {
		if err := p.Begin(); err != nil {
			return err
		}
		defer func() {
			if err != nil && !errors.Is(err, kafka.ErrFenced) {
				// Best effort: the next session's InitProducerId aborts it
				// anyway.
				abortCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				_ = p.Abort(abortCtx)
				cancel()
			}
		}()
	}
	for topic, parts := range out {
		for partition, recs := range parts {
			if err := p.Send(ctx, topic, partition, recs); err != nil {
				err = fmt.Errorf("write to %s/%d: %w", topic, partition, err)
				if fix := kafka.Rejected(err); fix != "" {
					return runner.Fatal(fmt.Errorf("%w; %s, then apply the sink again", err, fix))
				}
				if kafka.MissingTopic(err) {
					return missingTopicError{err}
				}
				return err
			}
		}
	}
	if err := p.SendOffsets(ctx, s.r.spec.Group(), offsets); err != nil {
		return fmt.Errorf("commit the source offsets to group %q: %w", s.r.spec.Group(), err)
	}
	if s.r.spec.ExactlyOnce() {
		if err := p.Commit(ctx); err != nil {
			return fmt.Errorf("commit the transaction: %w", err)
		}
	}
	return nil
}

// encode decodes recs, of one source partition, and appends what their
// rows become to out, by topic and partition. It returns how many records
// it added.
func (s *session) encode(ctx context.Context, recs []record.Record, out map[string]map[int32][]kafka.OutRecord) (int, error) {
	added := 0
	for len(recs) > 0 {
		batch, n, err := s.decode(ctx, recs)
		if err != nil {
			return 0, err
		}
		k, err := s.encodeBatch(ctx, &batch, recs[:n], out)
		if err != nil {
			return 0, err
		}
		added, recs = added+k, recs[n:]
	}
	return added, nil
}

// encodeBatch appends what the rows of batch, decoded from recs, become to
// out, and returns how many they are.
func (s *session) encodeBatch(ctx context.Context, b *decode.Batch, recs []record.Record, out map[string]map[int32][]kafka.OutRecord) (int, error) {
	batch := *b
	columns := s.layout.Columns()
	if i := encode.CorruptRow(columns, &batch); i >= 0 {
		src := &recs[encode.RecordOf(&batch, i)]
		return 0, runner.Fatal(fmt.Errorf("the record at offset %d of %s/%d does not decode (a table would keep it in %s): "+
			"the sink stops rather than write an event of nulls; fix the source's transformers and apply the sink again, or, "+
			"to skip the record, set group %q to offset %d of %s:%d (kafka-consumer-groups.sh --reset-offsets --to-offset) "+
			"and apply the sink again", src.Offset, src.Topic, src.Partition, spec.CorruptRecordColumn, s.r.spec.Group(),
			src.Offset+1, src.Topic, src.Partition))

	}
	rows, err := encode.Rows(s.layout, columns, &batch, recs)
	if err != nil {
		return 0, fmt.Errorf("read the decoded rows: %w", err)
	}
	// Only change events have before images, and only Debezium and Canal
	// output writes them.
	if f := s.layout.Value.Format; (f == spec.FormatDebeziumJSON || f == spec.FormatCanalJSON) &&
		s.r.spec.ValueFormat != spec.SinkFormatJSON {
		if s.before == nil {
			if s.before, err = changelog.New(s.layout, s.sources); err != nil {
				return 0, runner.Fatal(fmt.Errorf("build the decoder of the before images: %w", err))
			}
		}
		if err := encode.Befores(ctx, s.before, s.layout, columns, &batch, recs, rows); err != nil {
			return 0, err
		}
	}
	for i := range rows {
		src := &recs[encode.RecordOf(&batch, i)]
		if err := s.add(ctx, &rows[i], src.Timestamp, out); err != nil {
			return 0, fmt.Errorf("the row of offset %d: %w", src.Offset, err)
		}
	}
	return len(rows), nil
}

// add encodes row and appends its record to out, by topic and partition.
// The record takes ts: a topic source's record time, or for a table
// source the time the row is read. A change event's own time stays in its
// payload (source.ts_ms, Canal es).
func (s *session) add(ctx context.Context, row *encode.Row, ts time.Time, out map[string]map[int32][]kafka.OutRecord) (err error) {
	topic := s.router.Topic(row)
	count, ok := s.partitions[topic]
	if !ok {
		if ko := s.r.spec.Source; ko != nil && ko.ReadsTopic(topic) {
			return runner.Fatal(fmt.Errorf("it goes to topic %q, which the sink's source reads: the sink would read back "+
				"what it writes, forever; set topic or table_topic_mapping to another topic (a %q column of the row "+
				"names its topic too)", topic, encode.TopicColumn))

		}
		if count, err = s.r.client.PartitionCount(ctx, topic); err != nil {
			if fix := kafka.Rejected(err); fix != "" {
				return runner.Fatal(fmt.Errorf("%w; %s", err, fix))
			}
			if kafka.MissingTopic(err) {
				return missingTopicError{err}
			}
			return err
		}
		s.partitions[topic] = count
	}
	// Never the change time: it can be older than the output topic's
	// retention, which would delete the record at once.
	rec := kafka.OutRecord{Timestamp: ts}
	if s.value, err = s.enc.Value(s.value[:0], row); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	// The records are written after every chunk of the round is
	// encoded, and the fetched records' memory goes back to the pool
	// then: each keeps its own copy. A nil value (a JSON delete) stays
	// a tombstone.
	if s.value != nil {
		rec.Value = append([]byte{}, s.value...)
	}
	if k := s.enc.Key(row); k != nil {
		rec.Key = append([]byte{}, k...)
	}
	if s.r.spec.Headers() {
		rec.Headers = deltasink.CopyHeaders(row.Headers)
	}
	partition := encode.Partition(s.r.spec.PartitionStrategy, rec.Key, count)
	if out[topic] == nil {
		out[topic] = map[int32][]kafka.OutRecord{}
	}
	out[topic][partition] = append(out[topic][partition], rec)
	return nil
}

// decode decodes recs, or the first of them, into the source's columns,
// and returns how many it decoded. An inferred part takes its first
// columns from the first records it sees, and new ones as later records
// bring them: the sink keeps no schema, so its columns start again from
// the records at every session. A record that
// brings new columns ends the batch before it, in the columns the records
// before it have; the next call adds them and goes on from that record.
func (s *session) decode(ctx context.Context, recs []record.Record) (decode.Batch, int, error) {
	if s.dec == nil {
		p, err := columns.InferredPart(s.layout)
		if err != nil {
			return decode.Batch{}, 0, err
		}
		if p != nil && p.Fields == nil {
			// A change event's columns are those of its row images, not
			// of the event (see columns.InferFrom).
			base, err := columns.InferFrom(ctx, p, recs)
			if err != nil {
				return decode.Batch{}, 0, err
			}
			if err := columns.WithHints(s.layout, p, base); err != nil {
				return decode.Batch{}, 0, err
			}
		}
		s.before = nil
		if s.dec, err = changelog.New(s.layout, s.sources); err != nil {
			return decode.Batch{}, 0, runner.Fatal(fmt.Errorf("build the source's decoder: %w", err))
		}
	}
	if nc := s.asked; nc != nil {
		s.asked = nil
		if err := s.addColumns(nc); err != nil {
			return decode.Batch{}, 0, err
		}
	}
	for {
		batch, err := s.dec.Decode(ctx, recs)
		var nc *decode.NewColumnsError
		switch {
		case !errors.As(err, &nc):
			return batch, len(recs), err
		case nc.Record > 0 && !nc.Fail:
			// The batch holds the decoder's buffers until it is encoded:
			// the next call adds the columns, then decodes the rest.
			s.asked = nc
			return batch, nc.Record, nil
		}
		if err := s.addColumns(nc); err != nil {
			return decode.Batch{}, 0, err
		}
	}
}

// addColumns gives the source the columns nc asks for, with a decoder of
// them.
func (s *session) addColumns(nc *decode.NewColumnsError) error {
	side := &s.layout.Value
	if nc.Side == "key" {
		side = &s.layout.Key
	}
	fields, changed := nc.Apply(side.Fields)
	if !changed || nc.Fail {
		return runner.Fatal(nc)
	}
	side.Fields = fields
	s.before = nil
	var err error
	if s.dec, err = changelog.New(s.layout, s.sources); err != nil {
		return runner.Fatal(fmt.Errorf("build the decoder of the new columns: %w", err))
	}
	s.r.log.Info("new source columns", "columns", nc.Columns)
	return nil
}
