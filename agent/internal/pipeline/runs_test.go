package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/fanout/fanouttest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestStartRun runs a triggered pipeline with a table and a fanout schema
// to IDLE, then starts its next runs: each reads exactly the records
// produced since the last, in the table and in the fanout's table. Runs of
// a continuous pipeline, and of one whose table has not finished its run,
// are refused.
func TestStartRun(t *testing.T) {
	addr, producer := newCluster(t, 3, "events")
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d","type":"a"}`, i, i) }
	produce(t, producer, 0, 300, value)
	ctx := context.Background()
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	m := startManager(t, addr, triggeredPipeline("events"))
	f := fanouttest.Schema("events")
	f.Normalize()
	if err := m.ApplyFanout(ctx, &f); err != nil {
		t.Fatal(err)
	}

	// waitRun waits until the pipeline is IDLE and checks the rows of its
	// table and of the fanout's.
	waitRun := func(rows int64) {
		t.Helper()
		waitFor(t, 30*time.Second, "IDLE", func() bool {
			st, _ := m.Status("p")
			if st.State == spec.StateFailed {
				t.Fatalf("pipeline failed: %+v", st)
			}
			return st.State == spec.StateIdle
		})
		st, _ := m.Status("p")
		fst, _ := m.FanoutStatus("f")
		if st.Tables[0].Rows != rows || len(fst.Tables) != 1 || fst.Tables[0].Rows != rows {
			t.Fatalf("table has %d rows, fanout tables %+v; want %d rows in each", st.Tables[0].Rows, fst.Tables, rows)
		}
	}
	waitRun(300)

	// A run with nothing new commits nothing new.
	if err := m.StartRun(ctx, "p"); err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	waitRun(300)
	produce(t, producer, 300, 500, value)
	if err := m.StartRun(ctx, "p"); err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	waitRun(500)

	var refused *spec.RunRefusedError
	if err := m.StartRun(ctx, "nope"); !errors.As(err, &refused) {
		t.Fatalf("StartRun of an unknown pipeline: %v, want a refusal", err)
	}
	live := testPipeline("events")
	live.Name, live.Tables[0].DestinationTable = "live", "live"
	if err := m.Apply(ctx, live, conn, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.StartRun(ctx, "live"); !errors.As(err, &refused) || !strings.Contains(err.Error(), "continuous") {
		t.Fatalf("StartRun of a continuous pipeline: %v, want a refusal saying it is continuous", err)
	}
	// A table reading a topic that does not exist stays STARTING: its run
	// never ends, and no other may start.
	stuck := triggeredPipeline("missing")
	stuck.Name, stuck.Tables[0].DestinationTable = "stuck", "stuck"
	if err := m.Apply(ctx, stuck, conn, nil); err != nil {
		t.Fatal(err)
	}
	err := m.StartRun(ctx, "stuck")
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "table main.raw.stuck is "+spec.StateStarting) {
		t.Fatalf("StartRun of a pipeline whose run goes on: %v, want a refusal naming the table", err)
	}
}
