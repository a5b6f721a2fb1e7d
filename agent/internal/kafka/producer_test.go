package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// records returns OutRecords with the given values, each with a key and
// a header.
func records(values ...string) []kafka.OutRecord {
	out := make([]kafka.OutRecord, len(values))
	for i, v := range values {
		out[i] = kafka.OutRecord{Key: []byte("k-" + v), Value: []byte(v), Headers: []record.Header{{Key: "h", Value: []byte(v)}}}
	}
	return out
}

// newProducer returns a producer of cfg on cl, initialized.
func newProducer(t *testing.T, cl *kafka.Client, cfg kafka.ProducerConfig) *kafka.Producer {
	t.Helper()
	p := cl.NewProducer(cfg)
	if err := p.Init(context.Background()); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return p
}

// producerTest is a test of a producer writing to partition 0 of topic
// dst and committing offsets of partition 0 of topic src to group.
type producerTest struct {
	t               *testing.T
	cl              *kafka.Client
	dst, src, group string
}

// txn runs one transaction of p: values to the destination, then offset
// committed, then commit or abort.
func (pt *producerTest) txn(p *kafka.Producer, commit bool, offset int64, values ...string) {
	t := pt.t
	t.Helper()
	ctx := context.Background()
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, pt.dst, 0, records(values...)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if err := pt.sendOffset(p, offset); err != nil {
		t.Fatalf("SendOffsets: %v", err)
	}
	end := p.Abort
	if commit {
		end = p.Commit
	}
	if err := end(ctx); err != nil {
		t.Fatalf("end the transaction (commit %v): %v", commit, err)
	}
}

// sendOffset commits offset of the source partition with p.
func (pt *producerTest) sendOffset(p *kafka.Producer, offset int64) error {
	return p.SendOffsets(context.Background(), pt.group, map[string]map[int32]int64{pt.src: {0: offset}})
}

// groupOffset returns the offset the group committed for the source
// partition, -1 for none: a stable read, since the coordinator applies a
// committed transaction's offsets after EndTxn answers.
func (pt *producerTest) groupOffset() int64 {
	t := pt.t
	t.Helper()
	tp := kafka.TopicPartition{Topic: pt.src}
	got, err := pt.cl.StableGroupOffsets(context.Background(), pt.group, []kafka.TopicPartition{tp})
	if err != nil {
		t.Fatal(err)
	}
	if off, ok := got[tp]; ok {
		return off
	}
	return -1
}

// read returns the values of the destination a read_committed consumer
// reads.
func (pt *producerTest) read() []string {
	pt.t.Helper()
	got, _, _ := fetchTopic(pt.t, pt.cl, pt.dst, true)
	return got
}

// tail returns the last three of values, for failure messages: the
// values of a destination may be large.
func tail(values []string) []string {
	return values[max(0, len(values)-3):]
}

// readWant reads the destination as read does until it holds want, for up
// to 30 seconds, and returns what it read last. A transaction coordinator
// writes the markers of a transaction after EndTxn (or the InitProducerId
// that aborts a fenced one) has answered, so until they are written the
// last stable offset stays before the transaction and a read_committed
// consumer stops there.
func (pt *producerTest) readWant(want []string) []string {
	pt.t.Helper()
	got := pt.read()
	for deadline := time.Now().Add(30 * time.Second); !slices.Equal(got, want) && time.Now().Before(deadline); got = pt.read() {
		time.Sleep(100 * time.Millisecond)
	}
	return got
}

// run runs the producer's transactions, fencing and at-least-once writes.
// Kafka fails a produce of a fenced producer with INVALID_PRODUCER_EPOCH
// (ErrFenced); kfake, when fake, with INVALID_TXN_STATE.
func (pt *producerTest) run(fake bool) {
	t, cl := pt.t, pt.cl
	ctx := context.Background()
	if n, err := cl.PartitionCount(ctx, pt.dst); err != nil || n != 1 {
		t.Fatalf("PartitionCount(%s) = %d, %v", pt.dst, n, err)
	}
	if _, err := cl.PartitionCount(ctx, "missing-topic"); err == nil {
		t.Fatal("PartitionCount of a missing topic: no error")
	}

	id := fmt.Sprintf("tributary-test-%d", time.Now().UnixNano())
	p := newProducer(t, cl, kafka.ProducerConfig{TransactionalID: id, Compression: "zstd"})
	pt.txn(p, true, 10, "a1", "a2")
	pt.txn(p, false, 20, "b1-aborted")
	// Values of 200 KiB: the send is split into batches, whose sequence
	// numbers follow each other.
	big := make([]string, 6)
	for i := range big {
		big[i] = fmt.Sprintf("c%d-%0204800d", i, i)
	}
	pt.txn(p, true, 30, big...)
	want := append([]string{"a1", "a2"}, big...)
	if got := pt.readWant(want); !slices.Equal(got, want) {
		t.Fatalf("read_committed after commit, abort, commit: %d records %.20q..., want %d", len(got), got, len(want))
	}
	if off := pt.groupOffset(); off != 30 {
		t.Fatalf("the group's offset is %d, want 30 (the aborted 20 must not count)", off)
	}
	// A transaction that added nothing ends without a request.
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(ctx); err != nil {
		t.Fatalf("commit of an empty transaction: %v", err)
	}

	// A newer producer of the same id aborts the older one's open
	// transaction and fences it.
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, pt.dst, 0, records("z1-zombie")); err != nil {
		t.Fatal(err)
	}
	newer := newProducer(t, cl, kafka.ProducerConfig{TransactionalID: id})
	if err := p.Send(ctx, pt.dst, 0, records("z2-zombie")); err == nil || !fake && !errors.Is(err, kafka.ErrFenced) {
		t.Fatalf("Send of the fenced producer: %v, want ErrFenced", err)
	}
	if err := p.Commit(ctx); !errors.Is(err, kafka.ErrFenced) {
		t.Fatalf("Commit of the fenced producer: %v, want ErrFenced", err)
	}
	pt.txn(newer, true, 40, "d1")
	want = append(want, "d1")
	if got := pt.readWant(want); !slices.Equal(got, want) {
		t.Fatalf("read_committed after fencing: %d values ending %.20q, want %d ending %.20q", len(got), tail(got), len(want), tail(want))
	}
	if off := pt.groupOffset(); off != 40 {
		t.Fatalf("the group's offset is %d, want 40", off)
	}

	// A transaction of offsets alone (the records read gave no rows).
	if err := newer.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := pt.sendOffset(newer, 45); err != nil {
		t.Fatal(err)
	}
	if err := newer.Commit(ctx); err != nil {
		t.Fatalf("commit of a transaction of offsets alone: %v", err)
	}
	if off := pt.groupOffset(); off != 45 {
		t.Fatalf("the group's offset is %d, want 45", off)
	}

	// At least once: plain produce, plain commit, with every codec.
	plain := newProducer(t, cl, kafka.ProducerConfig{})
	if err := plain.Begin(); err == nil {
		t.Fatal("Begin without a transactional id: no error")
	}
	if err := plain.Send(ctx, pt.dst, 0, records("e1", "e2")); err != nil {
		t.Fatal(err)
	}
	if err := pt.sendOffset(plain, 50); err != nil {
		t.Fatal(err)
	}
	want = append(want, "e1", "e2")
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		if err := newProducer(t, cl, kafka.ProducerConfig{Compression: codec}).Send(ctx, pt.dst, 0, records(codec)); err != nil {
			t.Fatalf("Send with %s: %v", codec, err)
		}
		want = append(want, codec)
	}
	if got := pt.readWant(want); !slices.Equal(got, want) {
		t.Fatalf("read_committed after plain writes: %d values ending %.20q, want %d ending %.20q", len(got), tail(got), len(want), tail(want))
	}
	if off := pt.groupOffset(); off != 50 {
		t.Fatalf("the group's offset is %d, want 50", off)
	}

	// The fenced producer was not slow: its transaction did not time out,
	// and Kafka refuses it the recovery of a timed-out one (kfake, when
	// fake, does not check the epoch).
	if p.TimedOut() {
		t.Fatal("the fenced producer's transaction counts as timed out")
	}
	if err := p.Recover(ctx); !fake && !errors.Is(err, kafka.ErrFenced) {
		t.Fatalf("Recover of the fenced producer: %v, want ErrFenced", err)
	}
}

// timeout runs a transaction of id open longer than timeout (wait): the
// coordinator aborts it, and the producer's next request is answered as
// fencing; the producer knows it timed out, recovers (its InitProducerId
// with its id and epoch is accepted) and writes on.
func (pt *producerTest) timeout(id string, timeout, wait time.Duration) {
	t, ctx := pt.t, context.Background()
	p := newProducer(t, pt.cl, kafka.ProducerConfig{TransactionalID: id, TransactionTimeout: timeout})
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, pt.dst, 0, records("timed-out")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait) // longer than the timeout: the coordinator aborts
	if err := p.Commit(ctx); !errors.Is(err, kafka.ErrFenced) {
		t.Fatalf("Commit after the timeout: %v, want ErrFenced", err)
	}
	if !p.TimedOut() {
		t.Fatal("TimedOut is false after the timeout")
	}
	if err := p.Recover(ctx); err != nil {
		t.Fatalf("Recover: %v", err)
	}
	want := append(pt.read(), "after")
	pt.txn(p, true, 1, "after")
	if got := pt.readWant(want); !slices.Equal(got, want) {
		t.Fatalf("read_committed: %d values ending %.20q, want %d ending %.20q", len(got), tail(got), len(want), tail(want))
	}
}

// TestProducerTransactionTimeout: see producerTest.timeout.
func TestProducerTransactionTimeout(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t", "src"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	pt := &producerTest{t: t, cl: plainClient(t, c.ListenAddrs()...), dst: "t", src: "src", group: "g"}
	pt.timeout("slow", 100*time.Millisecond, 500*time.Millisecond)
}

func TestProducer(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t", "src"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	pt := &producerTest{t: t, cl: plainClient(t, c.ListenAddrs()...), dst: "t", src: "src", group: "g"}
	pt.run(true)
}

func TestProducerMisuse(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl := plainClient(t, c.ListenAddrs()...)
	ctx := context.Background()
	if err := cl.NewProducer(kafka.ProducerConfig{Compression: "brotli"}).Init(ctx); err == nil {
		t.Fatal("Init with an unknown compression: no error")
	}
	p := cl.NewProducer(kafka.ProducerConfig{TransactionalID: "x"})
	if err := p.Begin(); err == nil {
		t.Fatal("Begin before Init: no error")
	}
	if err := p.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, "t", 0, records("v")); err == nil {
		t.Fatal("Send outside a transaction: no error")
	}
	if err := p.Commit(ctx); err == nil {
		t.Fatal("Commit outside a transaction: no error")
	}
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Begin(); err == nil {
		t.Fatal("Begin twice: no error")
	}
	if err := p.Send(ctx, "t", 0, nil); err != nil {
		t.Fatalf("Send of nothing: %v", err)
	}
	// After a failed write the next transaction waits for Init.
	if err := p.Send(ctx, "t", 0, []kafka.OutRecord{{Value: make([]byte, 2<<20)}}); err == nil {
		t.Fatal("Send of a record larger than the broker takes: no error")
	}
	if err := p.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Begin(); err == nil {
		t.Fatal("Begin after a failed Send: no error")
	}
	if err := p.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Begin(); err != nil {
		t.Fatalf("Begin after Init: %v", err)
	}
}

// TestRealBrokerProducer runs the producer against the real broker
// (tools/kafka.sh up) when KAFKA_BOOTSTRAP says where it is: Kafka's own
// transaction coordinator, fencing and read_committed fetches, with topics
// of their own. tools/test.sh runs it in its real-broker step; the unit
// step (-short) runs before the broker is up.
func TestRealBrokerProducer(t *testing.T) {
	bootstrap := os.Getenv("KAFKA_BOOTSTRAP")
	if bootstrap == "" || testing.Short() {
		t.Skip("KAFKA_BOOTSTRAP is not set (tools/kafka.sh up), or -short")
	}
	suffix := time.Now().UnixNano()
	pt := &producerTest{t: t, cl: plainClient(t, bootstrap), dst: fmt.Sprintf("producer-dst-%d", suffix),
		src: fmt.Sprintf("producer-src-%d", suffix), group: fmt.Sprintf("producer-group-%d", suffix)}
	createRealTopics(t, bootstrap, pt.dst, pt.src)
	pt.run(false)
	pt.stableOffsets(fmt.Sprintf("tributary-stable-%d", suffix))
	// The brokers look for timed-out transactions every 10 seconds
	// (transaction.abort.timed.out.transaction.cleanup.interval.ms).
	pt.timeout(fmt.Sprintf("tributary-slow-%d", suffix), time.Second, 15*time.Second)
}

// createRealTopics creates topics, of one partition each, on the real
// broker at bootstrap.
func createRealTopics(t *testing.T, bootstrap string, topics ...string) {
	t.Helper()
	adm, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(adm).CreateTopics(ctx, 1, 1, nil, topics...); err != nil {
		t.Fatal(err)
	}
}

// TestProducerRetries: a coordinator that is loading or busy with a
// concurrent transaction, and a connection that breaks during a produce,
// are retried; each record is written once.
func TestProducerRetries(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t", "src"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var (
		mu       sync.Mutex
		answered []string
	)
	busy := func(key kmsg.Key, code int16) {
		c.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
			mu.Lock()
			answered = append(answered, key.Name())
			mu.Unlock()
			switch res := req.ResponseKind().(type) {
			case *kmsg.InitProducerIDResponse:
				res.ErrorCode = code
				return res, nil, true
			case *kmsg.AddPartitionsToTxnResponse:
				r := req.(*kmsg.AddPartitionsToTxnRequest)
				for _, rt := range r.Topics {
					tr := kmsg.NewAddPartitionsToTxnResponseTopic()
					tr.Topic = rt.Topic
					for _, p := range rt.Partitions {
						pr := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
						pr.Partition, pr.ErrorCode = p, code
						tr.Partitions = append(tr.Partitions, pr)
					}
					res.Topics = append(res.Topics, tr)
				}
				return res, nil, true
			case *kmsg.EndTxnResponse:
				res.ErrorCode = code
				return res, nil, true
			}
			return nil, errors.New("connection dropped"), true
		})
	}
	busy(kmsg.InitProducerID, 14)     // COORDINATOR_LOAD_IN_PROGRESS
	busy(kmsg.AddPartitionsToTxn, 51) // CONCURRENT_TRANSACTIONS
	busy(kmsg.Produce, 0)             // the connection closes
	busy(kmsg.EndTxn, 51)
	pt := &producerTest{t: t, cl: plainClient(t, c.ListenAddrs()...), dst: "t", src: "src", group: "g"}
	p := newProducer(t, pt.cl, kafka.ProducerConfig{TransactionalID: "retries"})
	pt.txn(p, true, 3, "a", "b")
	if got := pt.readWant([]string{"a", "b"}); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("read_committed: %v", got)
	}
	if off := pt.groupOffset(); off != 3 {
		t.Fatalf("the group's offset is %d, want 3", off)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"InitProducerID", "AddPartitionsToTxn", "Produce", "EndTxn"}; !slices.Equal(answered, want) {
		t.Fatalf("failures injected: %v, want %v", answered, want)
	}
}

// stableOffsets runs the StableGroupOffsets checks of pt: the offset a
// committed transaction left, and, while a transaction with an offset
// commit is open, no answer until it commits (UNSTABLE_OFFSET_COMMIT is
// retried), then the offset it committed.
func (pt *producerTest) stableOffsets(id string) {
	t, ctx := pt.t, context.Background()
	tp := kafka.TopicPartition{Topic: pt.src}
	p := newProducer(t, pt.cl, kafka.ProducerConfig{TransactionalID: id})
	pt.txn(p, true, 7, "s1")
	got, err := pt.cl.StableGroupOffsets(ctx, pt.group, []kafka.TopicPartition{tp})
	if err != nil || got[tp] != 7 {
		t.Fatalf("StableGroupOffsets = %v, %v; want 7", got, err)
	}
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := pt.sendOffset(p, 9); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond) // the fetch below is asked while the transaction is open
		done <- p.Commit(ctx)
	}()
	got, err = pt.cl.StableGroupOffsets(ctx, pt.group, []kafka.TopicPartition{tp})
	if cerr := <-done; cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil || got[tp] != 9 {
		t.Fatalf("StableGroupOffsets during the transaction = %v, %v; want 9, the offset it commits", got, err)
	}
	missing := kafka.TopicPartition{Topic: pt.src, Partition: 0}
	if got, err := pt.cl.StableGroupOffsets(ctx, pt.group+"-none", []kafka.TopicPartition{missing}); err != nil || len(got) != 0 {
		t.Fatalf("StableGroupOffsets of a group without offsets = %v, %v", got, err)
	}
}

func TestStableGroupOffsets(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t", "src"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	pt := &producerTest{t: t, cl: plainClient(t, c.ListenAddrs()...), dst: "t", src: "src", group: "g"}
	pt.stableOffsets("stable")
}
