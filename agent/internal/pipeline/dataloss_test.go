package pipeline

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink/deltasinktest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// lossTables returns testPipeline(topic) with two tables of topic: "keeps"
// with fail_on_data_loss = false, and "fails" with the default, true.
func lossTables(topic string) *spec.Pipeline {
	p := testPipeline(topic)
	fails := p.Tables[0]
	fails.DestinationTable = "fails"
	off := false
	p.Tables[0].DestinationTable = "keeps"
	p.Tables[0].ConnectorOptions.KafkaOptions.FailOnDataLoss = &off
	p.Tables = append(p.Tables, fails)
	p.Normalize()
	return p
}

// Records retention deleted before two tables of a pipeline read them:
// the table with fail_on_data_loss = false goes on from the earliest offset
// and records the gap in its status, counter and log (the commit that moves
// past it), and its counter survives a restart; the one with the default
// fails with the gap and the fix in its error.
func TestManagerDataLoss(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	warehouse := t.TempDir()
	p := lossTables("events")
	run := func() *Manager {
		m := NewManager(Config{Warehouse: warehouse})
		if err := m.Apply(context.Background(), p, conn, nil); err != nil {
			t.Fatal(err)
		}
		return m
	}
	value := func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) }
	produce(t, producer, 0, 20, value)
	m := run()
	waitFor(t, 10*time.Second, "20 rows in both tables", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 20 && st.Tables[1].Rows == 20
	})
	m.Close(context.Background())

	produce(t, producer, 20, 100, value)
	deleteRecords(t, producer, "events", 60)
	m = run()
	waitFor(t, 10*time.Second, "60 rows in the table that goes on, and the other failed", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 60 && st.Tables[1].State == spec.StateFailed
	})
	st, _ := m.Status("p")
	keeps, fails := st.Tables[0], st.Tables[1]
	if g := keeps.DataLoss; len(g) != 1 || g[0].Topic != "events" || g[0].From != 20 || g[0].To != 60 {
		t.Errorf("status data_loss %+v, want events/0 from 20 to 60", g)
	}
	if keeps.DataLossOffsets != 40 {
		t.Errorf("status counts %d offsets lost, want 40", keeps.DataLossOffsets)
	}
	if want := "offsets [20, 60) of events/0 (40 records) are no longer in Kafka"; !strings.Contains(fails.LastError, want) ||
		!strings.Contains(fails.LastError, "set fail_on_data_loss = false") || fails.Rows != 20 {
		t.Errorf("the failing table: %d rows, error %q; want 20 rows and an error with %q and the fix", fails.Rows, fails.LastError, want)
	}
	if logged := loggedGaps(t, keeps.Location); len(logged) != 1 || logged[0] != keeps.DataLoss[0] {
		t.Errorf("the log's commitInfo records gaps %+v, want %+v", logged, keeps.DataLoss)
	}
	m.Close(context.Background())

	m = run()
	defer m.Close(context.Background())
	waitFor(t, 10*time.Second, "the table that goes on running again", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].State == spec.StateRunning
	})
	if st, _ := m.Status("p"); st.Tables[0].DataLossOffsets != 40 {
		t.Errorf("after a restart the status counts %d offsets lost, want 40 (from the log)", st.Tables[0].DataLossOffsets)
	}
}

// loggedGaps returns the gaps the log of the table at dir records.
var loggedGaps = deltasinktest.LoggedGaps

// A topic deleted and created again while two tables read it: the table
// with fail_on_data_loss = false records the new topic id and reads the
// new topic from its earliest offset, its offsets going back, with the gap
// in its status and log; the other fails saying the topic was re-created
// and how to go on.
func TestManagerRecreatedTopic(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	p := lossTables("events")
	m := startManager(t, addr, p)
	value := func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) }
	produce(t, producer, 0, 20, value)
	waitFor(t, 10*time.Second, "20 rows in both tables", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 20 && st.Tables[1].Rows == 20
	})
	recreateTopic(t, producer, "events")
	fresh := topicProducer(t, addr, "events") // the old producer knows the old topic's id
	produce(t, fresh, 100, 105, value)
	waitFor(t, 20*time.Second, "25 rows in the table that goes on, and the other failed", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 25 && len(st.Tables[0].Partitions) == 1 && st.Tables[0].Partitions[0].NextOffset == 5 &&
			st.Tables[1].State == spec.StateFailed
	})
	st, _ := m.Status("p")
	keeps, fails := st.Tables[0], st.Tables[1]
	if g := keeps.DataLoss; len(g) != 1 || g[0].From != 20 || g[0].To != 0 || g[0].Reason != "topic re-created" {
		t.Errorf("status data_loss %+v, want events/0 from 20 to 0, re-created", g)
	}
	if logged := loggedGaps(t, keeps.Location); len(logged) != 1 || logged[0] != keeps.DataLoss[0] {
		t.Errorf("the log's commitInfo records gaps %+v, want %+v", logged, keeps.DataLoss)
	}
	if !strings.Contains(fails.LastError, "deleted and created again") || !strings.Contains(fails.LastError, "fail_on_data_loss = false") {
		t.Errorf("the failing table's error %q: want the re-created topic and the fix", fails.LastError)
	}
}

// A triggered run whose end lies inside a gap retention left (fail_on_data_loss
// = false) commits its end, and the next run goes on from there: the log
// records the whole gap, in two parts, and the status counts each offset
// once.
func TestTriggeredRunEndsInsideGap(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	produce(t, producer, 0, 100, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	p := triggeredPipeline("events")
	off := false
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.FailOnDataLoss = &off
	endAt := func(end int64) {
		ko.EndingOffset, ko.EndingOffsets = spec.EndingOffsetSpecific, map[string]map[string]int64{"events": {"0": end}}
	}
	endAt(20)
	p.Normalize()
	m := startManager(t, addr, p)
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	idle := func(rows int64) {
		t.Helper()
		waitFor(t, 10*time.Second, fmt.Sprintf("the run IDLE with %d rows", rows), func() bool {
			st, _ := m.Status("p")
			return st.State == spec.StateIdle && st.Tables[0].Rows == rows
		})
	}
	idle(20)
	deleteRecords(t, producer, "events", 60)
	// The next run ends at 40, inside the gap [20, 60).
	endAt(40)
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the run at 40 IDLE", func() bool {
		st, _ := m.Status("p")
		return st.State == spec.StateIdle && len(st.Tables[0].Partitions) == 1 && st.Tables[0].Partitions[0].NextOffset == 40
	})
	// And the one after it at latest.
	ko.EndingOffset, ko.EndingOffsets = spec.EndingOffsetLatest, nil
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	idle(60)
	st, _ := m.Status("p")
	var logged int64
	for _, g := range loggedGaps(t, st.Tables[0].Location) {
		logged += deltasink.LostOffsets(&g)
	}
	if logged != 40 || st.Tables[0].DataLossOffsets != 40 {
		t.Fatalf("the log records %d lost offsets and the status counts %d; want the gap [20, 60), 40", logged,
			st.Tables[0].DataLossOffsets)
	}
}

// A triggered run keeps the ends it fixed at its start when it restarts
// after a retryable error, here a topic re-created (fail_on_data_loss =
// false): it does not read what was written to its other topic meanwhile,
// and the re-created topic's partitions end at the new topic's end.
func TestTriggeredRunKeepsItsEndsAcrossRestarts(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	newProducer := func() *kgo.Client {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	producer := newProducer()
	send := func(topic string, from, to int) {
		t.Helper()
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, `{"id":%d}`, i)})
		}
		if err := producer.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	send("a", 0, 100)
	send("b", 0, 100)
	// Every fetch fails (and is retried) until released: the run cannot
	// end before the topic is re-created.
	var held atomic.Bool
	held.Store(true)
	c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !held.Load() {
			return nil, nil, false
		}
		fetch := req.(*kmsg.FetchRequest)
		resp := fetch.ResponseKind().(*kmsg.FetchResponse)
		for _, rt := range fetch.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.NotLeaderForPartition.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	p := triggeredPipeline("a")
	off := false
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.Topics, ko.FailOnDataLoss = []string{"a", "b"}, &off
	p.Normalize()
	m := startManager(t, addr, p)
	waitFor(t, 10*time.Second, "the starting offsets recorded", func() bool {
		st, _ := m.Status("p")
		return len(st.Tables[0].Partitions) == 2
	})
	send("a", 100, 150)
	recreateTopic(t, producer, "b")
	producer = newProducer() // the old one knows the old topic's id
	send("b", 0, 10)
	waitFor(t, 30*time.Second, "the re-created topic recorded", func() bool {
		st, _ := m.Status("p")
		return len(st.Tables[0].DataLoss) == 1
	})
	held.Store(false)
	waitFor(t, 30*time.Second, "the run IDLE", func() bool { st, _ := m.Status("p"); return st.State == spec.StateIdle })
	if st, _ := m.Status("p"); st.Tables[0].Rows != 110 {
		t.Fatalf("%d rows; want 110: a up to 100, where the run ended when it started, and the 10 of the new b", st.Tables[0].Rows)
	}
}

// recreateTopic deletes topic through the client c and creates it again
// with one partition.
func recreateTopic(t testing.TB, c *kgo.Client, topic string) {
	t.Helper()
	adm := kadm.NewClient(c)
	if _, err := adm.DeleteTopic(context.Background(), topic); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
}

// topicProducer returns a new producer to topic at addr, closed when the
// test ends.
func topicProducer(t testing.TB, addr, topic string) *kgo.Client {
	t.Helper()
	c, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
