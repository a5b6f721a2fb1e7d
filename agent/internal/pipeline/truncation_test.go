package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/position"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// truncateAt makes every OffsetForLeaderEpoch answer of c say that the
// partition's log ends the epoch asked about at end: a log truncated there
// (kfake cannot truncate a log; the real broker test does).
func truncateAt(c *kfake.Cluster, end int64) {
	c.ControlKey(int16(kmsg.OffsetForLeaderEpoch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.OffsetForLeaderEpochRequest)
		res := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewOffsetForLeaderEpochResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, rp.LeaderEpoch, end
				st.Partitions = append(st.Partitions, sp)
			}
			res.Topics = append(res.Topics, st)
		}
		return res, nil, true
	})
}

// Two tables read 20 records, recording the leader epoch of the last with
// their offset; then the partition's log turns out truncated at 12 when
// they start again (an unclean leader election). The table with the
// default fail_on_data_loss fails with the range lost and the fix; the
// one with false reads on from 12, its status and log recording the gap.
func TestManagerLogTruncation(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("events"))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	conn := &spec.Connection{Name: "c", BootstrapServers: c.ListenAddrs()}
	warehouse := t.TempDir()
	p := lossTables("events")
	run := func() *Manager {
		m := NewManager(Config{Warehouse: warehouse})
		if err := m.Apply(context.Background(), p, conn, nil); err != nil {
			t.Fatal(err)
		}
		return m
	}
	produce(t, producer, 0, 20, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	m := run()
	waitFor(t, 10*time.Second, "20 rows in both tables", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 20 && st.Tables[1].Rows == 20
	})
	m.Close(context.Background())
	st, _ := m.Status("p")
	for _, ts := range st.Tables {
		snap, err := table.ReadSnapshot(ts.Location)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := snap.Epochs["events/0"]; !ok {
			t.Fatalf("the log of %s records no leader epoch with its offset: %+v", ts.DestinationTable, snap)
		}
	}

	truncateAt(c, 12)
	m = run()
	defer m.Close(context.Background())
	waitFor(t, 10*time.Second, "28 rows in the table that goes on, and the other failed", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 28 && st.Tables[1].State == spec.StateFailed
	})
	st, _ = m.Status("p")
	keeps, fails := st.Tables[0], st.Tables[1]
	if want := "offsets [12, 20) were read from leader epoch"; !strings.Contains(fails.LastError, want) ||
		!strings.Contains(fails.LastError, "set fail_on_data_loss = false") || fails.Rows != 20 {
		t.Errorf("the failing table: %d rows, error %q; want 20 rows and an error with %q and the fix", fails.Rows, fails.LastError, want)
	}
	if g := keeps.DataLoss; len(g) != 1 || g[0].Topic != "events" || g[0].From != 12 || g[0].To != 20 || g[0].Reason != position.LossTruncated {
		t.Errorf("status data_loss %+v, want events/0 from 12 to 20, truncated", g)
	}
	if keeps.DataLossOffsets != 8 {
		t.Errorf("status counts %d offsets lost, want 8", keeps.DataLossOffsets)
	}
	if logged := loggedGaps(t, keeps.Location); len(logged) != 1 || logged[0] != keeps.DataLoss[0] {
		t.Errorf("the log's commitInfo records gaps %+v, want %+v", logged, keeps.DataLoss)
	}
	if len(keeps.Partitions) != 1 || keeps.Partitions[0].NextOffset != 20 {
		t.Errorf("partitions %+v, want events/0 at 20", keeps.Partitions)
	}
}
