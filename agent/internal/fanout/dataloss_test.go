package fanout

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink/deltasinktest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// A fanout schema with fail_on_data_loss = false skips records retention
// deleted: every other record is routed once, and the gap is in its tables'
// status and in the commitInfo of its progress log.
func TestFanoutDataLoss(t *testing.T) {
	fx := newFanoutFixture(t)
	warehouse := t.TempDir()
	produce(t, fx.producer, 0, 100, fanoutEvent)
	cfg := testFanoutConfig(warehouse, "events", fx.conn)
	off := false
	cfg.Fanout.ConnectorOptions.KafkaOptions.FailOnDataLoss = &off
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "100 records", func() bool { return fanoutRows(r) == 100 })
	r.Stop()
	prog, err := openProgress(filepath.Join(cfg.Dir, progressDir), table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tp := kafka.TopicPartition{Topic: "events"}
	from := prog.next[tp]
	prog.close()

	produce(t, fx.producer, 100, 200, fanoutEvent)
	ends, err := fx.client.Offsets(context.Background(), []kafka.TopicPartition{tp}, kafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	to := ends[tp]
	deleteRecords(t, fx.producer, "events", to)
	r = fx.run(t, cfg, routeByType, nil, nil)
	lost := to - from
	waitFor(t, 20*time.Second, fmt.Sprintf("%d records, all but the %d lost", 200-lost, lost), func() bool {
		return fanoutRows(r) == 200-lost && len(r.Status().Tables) > 0 && len(r.Status().Tables[0].DataLoss) == 1
	})
	// No record follows the gap: the position past it is recorded at the
	// next flush all the same.
	waitFor(t, 20*time.Second, fmt.Sprintf("the progress of events/0 at %d", to), func() bool {
		return slices.ContainsFunc(r.Status().Partitions, func(p spec.PartitionStatus) bool {
			return p.Topic == "events" && p.Partition == 0 && p.NextOffset == to
		})
	})
	want := spec.DataLossGap{Topic: "events", Partition: 0, From: from, To: to}
	for _, ts := range r.Status().Tables {
		if g := ts.DataLoss; len(g) != 1 || g[0].Topic != want.Topic || g[0].From != from || g[0].To != to {
			t.Errorf("table %s: data_loss %+v, want %+v", ts.DestinationTable, g, want)
		}
	}
	r.Stop()
	if logged := deltasinktest.LoggedGaps(t, filepath.Join(cfg.Dir, progressDir)); len(logged) != 1 || logged[0].From != from || logged[0].To != to {
		t.Errorf("the progress log records gaps %+v, want %+v", logged, want)
	}
}
